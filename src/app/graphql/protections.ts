import { ASTVisitor, GraphQLError, specifiedRules, ValidationContext } from 'graphql';
import { Problems, ValidationError } from '../../common/errors';
import { stringProblem } from '../../common/limits';
import { operationLimits } from './limits';

/** Response keys renamed by an alias in a /graphql document, by default (GRAPHQL_MAX_ALIASES; REST routes are not held to it). */
export const MAX_ALIASES = 15;
/** Directives (@include, @skip, ...) in a /graphql document. */
export const MAX_DIRECTIVES = 50;
/** Tokens of a /graphql document, counted by graphql-js's parser (Apollo's parseOptions.maxTokens). */
export const MAX_TOKENS = 2000;

/**
 * Aliases: each operation's field nodes with an alias other than the field's own name (`a: name` counts,
 * `name: name` does not), fragments included where they are spread. Aliases are how one request asks
 * the same field many times over (alias-based batching of expensive resolvers, brute force of keys).
 */
export const aliasLimit = (max: number) => (context: ValidationContext): ASTVisitor => {
  let count = 0;
  return {
    Field(node) {
      if (node.alias && node.alias.value !== node.name.value) count += 1;
    },
    Document: {
      leave(node) {
        if (count > max) {
          context.reportError(new GraphQLError(`the document uses ${count} aliases; the limit is ${max}`, { nodes: [node] }));
        }
      },
    },
  };
};

export function directiveLimit(context: ValidationContext): ASTVisitor {
  let count = 0;
  return {
    Directive() {
      count += 1;
    },
    Document: {
      leave(node) {
        if (count > MAX_DIRECTIVES) {
          context.reportError(new GraphQLError(`the document uses ${count} directives; the limit is ${MAX_DIRECTIVES}`, { nodes: [node] }));
        }
      },
    },
  };
}

/**
 * Strings written in the document itself (`name: "a\u0000b"`): the same rule as for variables
 * (checkVariables), as a VALIDATION_FAILED error naming the argument or input field.
 */
export function storableLiterals(context: ValidationContext): ASTVisitor {
  const problems = new Problems();
  const names: string[] = [];
  return {
    Argument: {
      enter: (node) => void names.push(node.name.value),
      leave: () => void names.pop(),
    },
    ObjectField: {
      enter: (node) => void names.push(node.name.value),
      leave: () => void names.pop(),
    },
    StringValue(node) {
      const problem = stringProblem(node.value);
      if (problem) problems.add(names.filter((n) => n !== 'input').join('.') || 'document', problem);
    },
    Document: {
      leave() {
        if (problems.list.length) context.reportError(new ValidationError(problems.list));
      },
    },
  };
}

export const protectionRules = (maxAliases = MAX_ALIASES) => [aliasLimit(maxAliases), directiveLimit, storableLiterals];

/**
 * Every rule a document of a client is validated by outside Apollo's pipeline (which adds the same to
 * graphql-js's own rules): WebSocket subscriptions and the documents of a manifest at registration.
 */
export const documentRules = (maxAliases = MAX_ALIASES) => [...specifiedRules, operationLimits, ...protectionRules(maxAliases)];
