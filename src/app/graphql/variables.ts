import {
  ASTNode,
  DocumentNode,
  FieldNode,
  GraphQLField,
  GraphQLInputType,
  GraphQLSchema,
  isLeafType,
  isNonNullType,
  Kind,
  OperationDefinitionNode,
  TypeInfo,
  typeFromAST,
  valueFromAST,
  visit,
  visitWithTypeInfo,
} from 'graphql';
import { BadRequestError } from '../../common/errors';
import type { GraphQLError, GraphQLLeafType } from 'graphql';
import { getArgumentValues, getVariableValues } from 'graphql/execution/values';

type Coerced = { errors: ReadonlyArray<GraphQLError>; coerced?: never } | { coerced: Record<string, unknown>; errors?: never };

/** One variable of a leaf type (scalar or enum) without a default value. */
interface LeafVariable {
  name: string;
  type: GraphQLLeafType;
  nonNull: boolean;
}

/** Per operation: its leaf variables, or null when one of them is not such a variable (graphql-js coerces all). */
const compiled = new WeakMap<OperationDefinitionNode, LeafVariable[] | null>();

function leafVariables(schema: GraphQLSchema, operation: OperationDefinitionNode): LeafVariable[] | null {
  const out: LeafVariable[] = [];
  for (const definition of operation.variableDefinitions ?? []) {
    if (definition.defaultValue) return null;
    const type = typeFromAST(schema, definition.type as never) as GraphQLInputType | undefined;
    if (!type) return null;
    const nonNull = isNonNullType(type);
    const inner = nonNull ? type.ofType : type;
    if (!isLeafType(inner)) return null;
    out.push({ name: definition.variable.name.value, type: inner, nonNull });
  }
  return out;
}

/**
 * graphql-js's getVariableValues, with the same result, for a request's variables: an operation whose
 * variables are all scalars or enums without default values (every operation of the /v1 routes and of
 * the common queries) is coerced by a list made once per operation, doing for each variable exactly
 * what graphql-js does for a leaf type (absent: left out, or an error when non-null; null: null, or an
 * error when non-null; else the type's parseValue, whose throw or undefined is an error). Any error, and
 * any other operation, goes to getVariableValues itself, so errors keep graphql-js's words. graphql-js
 * walks the definitions, builds each type from its AST and wraps each value in calls on every request:
 * 3-4% of a one-row query's CPU.
 */
export function coerceVariables(schema: GraphQLSchema, operation: OperationDefinitionNode, variables: Record<string, unknown>): Coerced {
  let leaves = compiled.get(operation);
  if (leaves === undefined) compiled.set(operation, (leaves = leafVariables(schema, operation)));
  const coerced = leaves && coerceLeaves(leaves, variables);
  if (coerced) return { coerced };
  return getVariableValues(schema, operation.variableDefinitions ?? [], variables) as Coerced;
}

/** A request's variables as the operation runs them: coerceVariables, then no null where a non-null argument takes it. */
export function coerceRequestVariables(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode, variables: Record<string, unknown>): Coerced {
  const result = coerceVariables(schema, operation, variables);
  if (result.errors) return result;
  const nullInto = nullIntoNonNull(schema, document, operation, result.coerced);
  return nullInto ? { errors: [nullInto] } : result;
}

/** A nullable variable in a non-null place (an argument or input field whose type is `T!`): where, by name. */
interface NonNullPlace {
  variable: string;
  /** The argument and input fields it fills: `includeAssets`, `input.name`. */
  field: string;
}

const nonNullPlaces = new WeakMap<OperationDefinitionNode, NonNullPlace[]>();

/**
 * The places of an operation (its fragments' too) where a nullable variable fills a non-null argument or
 * input field: graphql-js allows it when either has a default, and a null sent in it is then refused only
 * while the field runs, as an error without a code (an INTERNAL answer, logged as unexpected). Found once
 * per operation.
 */
function placesOf(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode): NonNullPlace[] {
  let places = nonNullPlaces.get(operation);
  if (places) return places;
  places = [];
  const nullable = new Set((operation.variableDefinitions ?? []).filter((d) => d.type.kind !== Kind.NON_NULL_TYPE).map((d) => d.variable.name.value));
  if (nullable.size) {
    const typeInfo = new TypeInfo(schema);
    const found = places;
    const read = (node: ASTNode) =>
      visit(
        node,
        visitWithTypeInfo(typeInfo, {
          VariableDefinition: () => false,
          Variable(variable, _key, parent, _path, ancestors) {
            const type = typeInfo.getInputType();
            if (!nullable.has(variable.name.value) || !type || !isNonNullType(type)) return;
            // `ancestors` stops above the parent (the argument or input field the variable is the value of).
            const names = [...ancestors, parent].flatMap((a) =>
              a && 'kind' in a && (a.kind === Kind.ARGUMENT || a.kind === Kind.OBJECT_FIELD) ? [a.name.value] : [],
            );
            found.push({ variable: variable.name.value, field: names.join('.') });
          },
        }),
      );
    read(operation);
    for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) read(definition);
  }
  nonNullPlaces.set(operation, places);
  return places;
}

/**
 * A null sent in a variable that fills a non-null argument or input field: the client's mistake, refused
 * before anything runs as a BAD_REQUEST naming the argument, the same on every road (graphql-js, the
 * compiled query, a SQL plan, /v1) and every use.
 */
function nullIntoNonNull(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode, coerced: Record<string, unknown>): BadRequestError | undefined {
  const problems = placesOf(schema, document, operation)
    .filter((p) => Object.prototype.hasOwnProperty.call(coerced, p.variable) && coerced[p.variable] === null)
    .map((p) => ({ field: p.field, message: `must not be null (variable $${p.variable} is null); leave the variable out for the default, or give a value` }));
  if (!problems.length) return undefined;
  return new BadRequestError(problems.map((p) => `${p.field}: ${p.message}`).join('; '), problems);
}

/** The variables coerced as graphql-js coerces leaf types, or undefined at the first that it refuses. */
function coerceLeaves(leaves: LeafVariable[], variables: Record<string, unknown>): Record<string, unknown> | undefined {
  const coerced: Record<string, unknown> = {};
  for (const { name, type, nonNull } of leaves) {
    if (!Object.prototype.hasOwnProperty.call(variables, name)) {
      if (nonNull) return undefined;
      continue;
    }
    const value = variables[name];
    if (value == null) {
      if (nonNull) return undefined;
      coerced[name] = null;
      continue;
    }
    let parsed: unknown;
    try {
      parsed = type.parseValue(value);
    } catch {
      return undefined;
    }
    if (parsed === undefined) return undefined;
    coerced[name] = parsed;
  }
  return coerced;
}

/** How one argument of a field gets its value: a constant (a default or a scalar literal), or a variable. */
type ArgumentSource = { name: string; constant: unknown } | { name: string; variable: string; nonNull: boolean; defaultValue: unknown };

/**
 * graphql-js's getArgumentValues(field, node, variables) as a function made once per field node (SQL
 * plans read their fields' arguments on every request): defaults and literals of scalars and enums are
 * worked out once, a variable's value is looked up. What graphql-js would refuse (a missing non-null
 * argument, a null for a non-null one, an undefined variable value) and any list or object literal go to
 * getArgumentValues itself, which then answers or throws as always.
 */
export function argumentReader(field: GraphQLField<unknown, unknown>, node: FieldNode): (variables: Record<string, unknown>) => Record<string, unknown> {
  const full = (variables: Record<string, unknown>) => getArgumentValues(field, node, variables);
  const sources: ArgumentSource[] = [];
  for (const definition of field.args) {
    const name = definition.name;
    const nonNull = isNonNullType(definition.type);
    const argument = node.arguments?.find((a) => a.name.value === name);
    if (!argument) {
      if (definition.defaultValue === undefined) {
        if (nonNull) return full;
        continue;
      }
      sources.push({ name, constant: definition.defaultValue });
    } else if (argument.value.kind === Kind.VARIABLE) {
      sources.push({ name, variable: argument.value.name.value, nonNull, defaultValue: definition.defaultValue });
    } else if (argument.value.kind === Kind.LIST || argument.value.kind === Kind.OBJECT) {
      return full;
    } else {
      if (argument.value.kind === Kind.NULL && nonNull) return full;
      const constant = valueFromAST(argument.value, definition.type);
      if (constant === undefined) return full;
      sources.push({ name, constant });
    }
  }
  return (variables) => {
    const args: Record<string, unknown> = {};
    for (const source of sources) {
      if ('constant' in source) {
        args[source.name] = source.constant;
        continue;
      }
      if (!Object.prototype.hasOwnProperty.call(variables, source.variable)) {
        if (source.defaultValue === undefined) {
          if (source.nonNull) return full(variables);
          continue;
        }
        args[source.name] = source.defaultValue;
        continue;
      }
      const value = variables[source.variable];
      if (value === undefined || (value === null && source.nonNull)) return full(variables);
      args[source.name] = value;
    }
    return args;
  };
}
