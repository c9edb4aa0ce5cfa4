import { createParameterDecorator } from 'type-graphql';

/**
 * The parent object of a field resolver, as it is. TypeGraphQL's Root decorator copies the parent into a
 * new instance of its reflected class on every call (every column of every row, per field); the rows
 * here are plain objects read from SQL and nothing needs their class.
 */
export const Parent = () => createParameterDecorator(({ root }) => root);
