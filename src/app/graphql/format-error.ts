import { GraphQLError, GraphQLFormattedError, GraphQLSchema, isEnumType, Kind, parse, ValueNode, visit, BREAK } from 'graphql';
import { AppError, FieldProblem, RETRY_AFTER_SECONDS, StatementTimeoutError, UnavailableError } from '../../common/errors';
import { CLIENT_TIMEOUT_MESSAGE, isClientQueryTimeout, isConnectionFailure, isStatementCancelled, isTransientConflict } from '../../db/faults';
import { logger } from '../../common/logger';

/** Error codes of graphql-js and Apollo that mean "the request itself is wrong". */
const REQUEST_ERROR_CODES = new Set([
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_USER_INPUT',
  'BAD_REQUEST',
  'OPERATION_RESOLUTION_FAILURE',
]);

/** Codes of Apollo's persisted-query protocol: clients act on them (send the full query), so they pass as they are. */
const PROTOCOL_CODES = new Set(['PERSISTED_QUERY_NOT_FOUND', 'PERSISTED_QUERY_NOT_SUPPORTED']);

/**
 * Apollo's refusals of a persisted query's extension: an HTTP 400 but no code (which would read as
 * INTERNAL). The client's mistake, in words that say what to send.
 */
const PERSISTED_QUERY_REFUSALS = new Map([
  ['provided sha does not match query', 'extensions.persistedQuery.sha256Hash is not the SHA-256 (hex) of query: send the hash of the exact text'],
  ['Unsupported persisted query version', 'extensions.persistedQuery.version must be 1'],
]);

/** graphql-js's words for a variable that does not coerce: which variable, which field of it, and why. */
const VARIABLE_PROBLEM = /^Variable "\$(\w+)" got invalid value [\s\S]*?(?: at "([^"]+)")?; ([\s\S]*)$/;

/** The field a variable's coercion error is about (`input.totalSupply`, or `input.name` when a required one is missing). */
export function variableProblem(message: string): FieldProblem | null {
  const match = VARIABLE_PROBLEM.exec(message);
  if (!match) return null;
  const [, variable, at, why] = match;
  const missing = /^Field "(\w+)" of required type/.exec(why);
  const field = at ?? (missing ? `${variable}.${missing[1]}` : variable);
  return { field, message: why };
}

/** The path of the value that starts at `start` inside `value` (which is at `path`): `input.fees[0].basisPoints`. */
function pathTo(value: ValueNode, path: string, start: number): string | undefined {
  if (value.loc?.start === start) return path;
  if (value.kind === Kind.OBJECT) {
    for (const field of value.fields) {
      const at = `${path}.${field.name.value}`;
      if (field.loc?.start === start) return at;
      const found = pathTo(field.value, at, start);
      if (found) return found;
    }
  }
  if (value.kind === Kind.LIST) {
    for (const [i, item] of value.values.entries()) {
      const found = pathTo(item, `${path}[${i}]`, start);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * The field an error about a value written in the document is about (`name: 5` inline, an unknown input
 * field, a bad inline Address): the argument and input fields that lead to it, as a variable's error
 * names them (`input.name`), so `details` names the field however the document is written.
 */
export function literalProblem(error: GraphQLError): FieldProblem | null {
  const missingArgument = /^Field "\w+" argument "(\w+)" of type "[^"]+" is required, but it was not provided\.$/.exec(error.message);
  if (missingArgument) return { field: missingArgument[1], message: error.message };
  const start = error.nodes?.[0]?.loc?.start;
  if (start === undefined || !error.source) return null;
  let document;
  try {
    document = parse(error.source);
  } catch {
    return null;
  }
  let field: string | undefined;
  visit(document, {
    Argument(argument) {
      field = pathTo(argument.value, argument.name.value, start);
      return field ? BREAK : undefined;
    },
  });
  if (!field) return null;
  const missing = /^Field "[^"]*\.(\w+)" of required type "[^"]+" was not provided\.$/.exec(error.message);
  return { field: missing ? `${field}.${missing[1]}` : field, message: error.message };
}

export interface ClientError {
  code: string;
  message: string;
  details: unknown[];
  /** Seconds before the client may try again, when the error says (a refresh asked too soon). */
  retryAfter?: number;
}

function withAllowedEnumValues(schema: GraphQLSchema, message: string): string {
  const match = /does not exist in "(\w+)" enum/.exec(message);
  const type = match && schema.getType(match[1]);
  if (!type || !isEnumType(type)) return message;
  return `${message} Allowed values: ${type.getValues().map((v) => v.name).join(', ')}.`;
}

/**
 * What a client may see of an error: our own errors as they are, request errors as BAD_REQUEST, and
 * anything else only as INTERNAL with the request id (the original goes to the log, never to the client).
 */
export function classifyError(schema: GraphQLSchema, error: unknown, requestError = false): ClientError {
  const original = error instanceof GraphQLError && error.originalError ? error.originalError : error;
  if (original instanceof AppError) {
    const { retryAfter } = original.extensions;
    return {
      code: String(original.extensions.code),
      message: original.message,
      details: (original.extensions.details as unknown[]) ?? [],
      ...(typeof retryAfter === 'number' && { retryAfter }),
    };
  }
  // A driver error that escaped the query runners' handling (db/faults.ts) still reads as retryable.
  if (isConnectionFailure(original)) return classifyError(schema, new UnavailableError());
  if (isStatementCancelled(original)) return classifyError(schema, new StatementTimeoutError());
  // A deadlock or serialization failure that was not retried away: the write was rolled back whole.
  if (isTransientConflict(original)) return classifyError(schema, new UnavailableError(TRANSIENT_CONFLICT_MESSAGE));
  // The client's own bound (DB_QUERY_TIMEOUT_MS) ran out: the database is too busy to answer; not the client's fault.
  if (isClientQueryTimeout(original)) return classifyError(schema, new UnavailableError(CLIENT_TIMEOUT_MESSAGE));
  const gqlError = error instanceof GraphQLError ? error : undefined;
  const code = gqlError?.extensions?.code as string | undefined;
  if (gqlError && code && PROTOCOL_CODES.has(code)) return { code, message: gqlError.message, details: [] };
  const refusal = !code && gqlError && PERSISTED_QUERY_REFUSALS.get(gqlError.message);
  if (refusal) return { code: 'BAD_REQUEST', message: refusal, details: [] };
  const isScalarParse = original instanceof TypeError && gqlError?.message.startsWith('Variable "$');
  if (gqlError && (requestError || (code && REQUEST_ERROR_CODES.has(code)) || isScalarParse)) {
    const problem = variableProblem(gqlError.message) ?? (code === 'GRAPHQL_VALIDATION_FAILED' ? literalProblem(gqlError) : null);
    return { code: 'BAD_REQUEST', message: withAllowedEnumValues(schema, gqlError.message), details: problem ? [problem] : [] };
  }
  return { code: 'INTERNAL', message: internalMessage(undefined), details: [] };
}

const TRANSIENT_CONFLICT_MESSAGE = 'this request met a concurrent write to the same rows and was rolled back; nothing was written; retry shortly';

export function internalMessage(requestId: string | undefined): string {
  return `internal error; quote request id ${requestId ?? 'unknown'} when reporting it`;
}

/** The codes of a database that cannot answer now (503): the request may be sent again after Retry-After. */
export const RETRYABLE_CODES: ReadonlySet<string> = new Set(['UNAVAILABLE', 'TIMEOUT']);

/** The Retry-After header that goes with a 503 UNAVAILABLE or TIMEOUT, on both doors, or with an error that says when (`retryAfter`). */
export function retryAfterFor(code: string, retryAfter?: number): Record<string, string> {
  if (retryAfter !== undefined) return { 'retry-after': String(retryAfter) };
  return RETRYABLE_CODES.has(code) ? { 'retry-after': String(RETRY_AFTER_SECONDS) } : {};
}

/** Writes an error the client sees only as INTERNAL to the log, with its request id; other errors are the client's. */
export function logIfInternal(client: ClientError, error: unknown, requestId: string | undefined): void {
  if (client.code !== 'INTERNAL') return;
  const original = error instanceof GraphQLError && error.originalError ? error.originalError : error;
  logger.error('unexpected error', {
    requestId,
    error: original instanceof Error ? original.message : String(original),
    stack: original instanceof Error ? original.stack : undefined,
    path: error instanceof GraphQLError ? error.path : undefined,
  });
}

/** graphql-js's "Did you mean ...?" sentences, which name the schema's fields and enum values. */
const SUGGESTIONS = / Did you mean [^?]*\?/g;

/** An error as production shows it: its message and its details' messages without suggestions of names. */
export function withoutSuggestions(client: ClientError): ClientError {
  const cut = (text: string) => text.replace(SUGGESTIONS, '');
  const details = client.details.map((d) => {
    const problem = d as Partial<FieldProblem>;
    return typeof problem.message === 'string' ? { ...problem, message: cut(problem.message) } : d;
  });
  return { ...client, message: cut(client.message), details };
}

/**
 * classifyError, with an INTERNAL error logged and its message naming the request id, and in
 * production (`hideSuggestions`) without suggestions of names.
 */
export function toClientError(schema: GraphQLSchema, error: unknown, requestError: boolean, requestId: string | undefined, hideSuggestions = false): ClientError {
  const client = classifyError(schema, error, requestError);
  logIfInternal(client, error, requestId);
  if (client.code === 'INTERNAL') return { ...client, message: internalMessage(requestId) };
  return hideSuggestions ? withoutSuggestions(client) : client;
}

/**
 * Apollo's formatError sees no context: the request id is added (and INTERNAL errors are logged) by
 * the plugin of app.ts, which does. In production (`hideSuggestions`) no suggestion of a name.
 */
export function formatGraphQLError(schema: GraphQLSchema, hideSuggestions: boolean) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const classified = classifyError(schema, error);
    const client = hideSuggestions ? withoutSuggestions(classified) : classified;
    return {
      message: client.message,
      locations: formatted.locations,
      path: formatted.path,
      extensions: { code: client.code, details: client.details, ...(client.retryAfter !== undefined && { retryAfter: client.retryAfter }) },
    };
  };
}
