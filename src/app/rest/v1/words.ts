import {
  GraphQLError,
  GraphQLInputType,
  GraphQLNamedType,
  GraphQLSchema,
  OperationDefinitionNode,
  coerceInputValue,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
} from 'graphql';
import { FieldProblem } from '../../../common/errors';
import { camelToSnake } from '../../../common/names';

/**
 * A /v1 route's GraphQL documents speak of camelCase input fields, arguments and GraphQL types; a REST
 * client sent snake_case body fields and query parameters as JSON. These are the route's words.
 */
export interface RestWords {
  /** A message with each GraphQL name of the route's inputs written as the REST name. */
  text(message: string): string;
  /** What was wrong with the request's variables, in REST's names and JSON's types; empty when they coerce. */
  coercionProblems(values: Record<string, unknown>, body: unknown): FieldProblem[];
}

interface Variable {
  name: string;
  type: GraphQLInputType;
  hasDefault: boolean;
  /** Body keys the variable is also read from (routes.ts `aliases`). */
  aliases: string[];
}

/** How a value of each leaf type is written in JSON (a query parameter's text is read the same way). */
const IN_JSON: Record<string, string> = {
  String: 'a string',
  ID: 'a string',
  Int: 'an integer',
  Float: 'a number',
  Boolean: 'true or false',
  Address: 'an address ("0x" followed by 40 hexadecimal digits)',
  TokenId: 'a decimal string of an unsigned 256-bit integer (0 to 2^256-1)',
  Price: 'a decimal string or number (up to 20 digits and 18 decimals)',
  Decimal: 'a decimal string or number (up to 20 digits and 18 decimals)',
  DateTimeISO: 'an ISO-8601 date-time string such as "2026-11-22T10:00:00.000Z"',
  JSON: 'JSON',
  JSONObject: 'a JSON object',
  Upload: 'a file',
};

const INT_RANGE = 'an integer from -2147483648 to 2147483647';

/** A JSON value as a message names it: its JSON type, and the value itself when it is short text or a number. */
function jsonKind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'string') return `string ${JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value)}`;
  if (typeof value === 'number') return `number ${value}`;
  return typeof value;
}

function leafWording(type: GraphQLNamedType, value: unknown, error: GraphQLError): string {
  if (isEnumType(type)) return `one of ${type.getValues().map((v) => String(v.value)).join(', ')}`;
  if (type.name === 'Int' && Number.isInteger(value)) return INT_RANGE;
  return IN_JSON[type.name] ?? error.message.replace(/^Expected type "\w+"\.\s*/, '');
}

/** The type a coercion path leads to; a list given one item is coerced as that item, at the same path. */
function typeAt(type: GraphQLInputType, path: readonly (string | number)[]): GraphQLInputType | undefined {
  let current: GraphQLInputType | undefined = type;
  for (const key of path) {
    if (!current) return undefined;
    if (isNonNullType(current)) current = current.ofType;
    if (isListType(current)) current = current.ofType as GraphQLInputType;
    if (typeof key === 'number') continue;
    if (isNonNullType(current)) current = current.ofType;
    current = isInputObjectType(current) ? current.getFields()[key]?.type : undefined;
  }
  return current;
}

/**
 * `fees[0].basis_points`: a coercion path as REST names it, under the body field or parameter it starts
 * at; `sent`, a key the client wrote (an unknown field), is named as written.
 */
function fieldName(root: string | undefined, path: readonly (string | number)[], sent?: string): string {
  const join = (name: string, key: string) => (name ? `${name}.${key}` : key);
  let name = root ?? '';
  for (const key of path) name = typeof key === 'number' ? `${name}[${key}]` : join(name, camelToSnake(key));
  return sent === undefined ? name : join(name, sent);
}

function problemOf(root: string | undefined, type: GraphQLInputType, path: readonly (string | number)[], value: unknown, error: GraphQLError): FieldProblem {
  const unknown = /^Field "([^"]+)" is not defined by type/.exec(error.message);
  const at = typeAt(type, path);
  const named = at && getNamedType(at);
  if (unknown) {
    const known = named && isInputObjectType(named) ? Object.keys(named.getFields()).map(camelToSnake) : [];
    return { field: fieldName(root, path, unknown[1]), message: `unknown field; the fields are ${known.join(', ')}` };
  }
  const missing = /^Field "(\w+)" of required type/.exec(error.message);
  if (missing) return { field: fieldName(root, path, camelToSnake(missing[1])), message: 'is required' };
  const field = fieldName(root, path) || 'body';
  if (value == null) return { field, message: value === null ? 'must not be null' : 'is required' };
  if (named && isInputObjectType(named)) return { field, message: `must be an object, got ${jsonKind(value)}` };
  if (!named) return { field, message: error.message };
  return { field, message: `must be ${leafWording(named, value, error)}, got ${jsonKind(value)}` };
}

/**
 * Every field (but the root operations) and argument name of the schema, as REST writes it: what a
 * message or description may name.
 */
const schemaNames = new WeakMap<GraphQLSchema, Map<string, string>>();
function namesOfSchema(schema: GraphQLSchema): Map<string, string> {
  let names = schemaNames.get(schema);
  if (names) return names;
  names = new Map();
  const add = (name: string) => {
    if (camelToSnake(name) !== name) names!.set(name, camelToSnake(name));
  };
  const roots = new Set([schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()]);
  for (const type of Object.values(schema.getTypeMap())) {
    if (isInputObjectType(type)) Object.keys(type.getFields()).forEach(add);
    if (!isObjectType(type)) continue;
    for (const field of Object.values(type.getFields())) {
      if (!roots.has(type)) add(field.name);
      field.args.forEach((arg) => add(arg.name));
    }
  }
  schemaNames.set(schema, names);
  return names;
}

const replacer = (names: Map<string, string>) => {
  const pattern = names.size ? new RegExp(`\\b(${[...names.keys()].join('|')})\\b`, 'g') : undefined;
  return (text: string) => (pattern ? text.replace(pattern, (name) => names.get(name) ?? name) : text);
};

/** A text about the schema (a description) with its GraphQL names written as REST's. */
export function restNamesOf(schema: GraphQLSchema): (text: string) => string {
  return replacer(namesOfSchema(schema));
}

/**
 * The REST names of a route's GraphQL names: the schema's, and the root field's arguments under the
 * variable that fills each one (`webhookId` is the path's `id`).
 */
function namesOf(schema: GraphQLSchema, operation: OperationDefinitionNode): Map<string, string> {
  const names = new Map(namesOfSchema(schema));
  const root = operation.selectionSet.selections[0];
  if (root.kind === 'Field') {
    for (const arg of root.arguments ?? []) {
      if (arg.value.kind === 'Variable' && arg.value.name.value !== 'input') names.set(arg.name.value, arg.value.name.value);
      // An input object written in the route's document (the sweep's): each field by the variable that fills it (`collectionId` by the path's `address`).
      if (arg.value.kind === 'ObjectValue') {
        for (const field of arg.value.fields) if (field.value.kind === 'Variable') names.set(field.name.value, field.value.name.value);
      }
    }
  }
  for (const [graphql, rest] of names) if (graphql === rest) names.delete(graphql);
  return names;
}

export function restWords(schema: GraphQLSchema, operation: OperationDefinitionNode, variables: Variable[]): RestWords {
  return {
    text: replacer(namesOf(schema, operation)),
    coercionProblems(values, body) {
      const problems: FieldProblem[] = [];
      for (const { name, type, hasDefault, aliases } of variables) {
        const value = values[name];
        if (value === undefined) {
          if (isNonNullType(type) && !hasDefault) problems.push({ field: name, message: 'is required' });
          continue;
        }
        // The body as a whole fills `input`; any other variable is named by the key it came from.
        const given = body && typeof body === 'object' ? [name, ...aliases].find((key) => key in body) : undefined;
        const root = name === 'input' ? undefined : (given ?? name);
        coerceInputValue(value, type, (path, invalid, error) => problems.push(problemOf(root, type, path, invalid, error)));
      }
      return problems;
    },
  };
}

/**
 * The keys of a body that fills several variables (not one `$input`) that no variable takes: each an
 * unknown field, as an `$input` body's unknown keys are, so a misspelt `max_prise` is not silently ignored.
 */
export function unknownBodyFields(taken: readonly string[], body: unknown): FieldProblem[] {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return [];
  const message = taken.length ? `unknown field; the fields are ${taken.join(', ')}` : 'unknown field; this route takes no body fields';
  return Object.keys(body).filter((key) => !taken.includes(key)).map((field) => ({ field, message }));
}
