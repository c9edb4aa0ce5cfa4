import { ExecutionResult, GraphQLError, GraphQLFormattedError, GraphQLSchema, Kind } from 'graphql';
import { httpStatusOf } from '../../common/errors';
import type { RequestScope } from '../../common/request/scope';
import type { HttpAnswer } from '../http/respond';
import { classifyError, formatGraphQLError, internalMessage, logIfInternal, RETRYABLE_CODES, retryAfterFor } from './format-error';

/**
 * The HTTP answer of a GraphQL result, byte for byte as Apollo Server 5 with this app's plugin writes it
 * (app/index.ts): `{ data }` with 200; with errors, each formatted by formatGraphQLError, with the request
 * id (an INTERNAL one logged and named by it), 400 when the operation did not run (no `data`), and 503
 * with Retry-After when the database could not answer anything. Every road that executes an operation
 * answers its own result with this, errors included: no operation is run a second time to have Apollo
 * word its errors.
 */
export function graphqlAnswer(schema: GraphQLSchema, production: boolean, scope: RequestScope, result: ExecutionResult): HttpAnswer {
  if (!result.errors?.length) return { status: 200, headers: [], body: `${JSON.stringify({ data: result.data })}\n` };
  const errors = result.errors.map(asApolloSees);
  for (const error of errors) logIfInternal(classifyError(schema, error), error, scope.requestId);
  const format = formatGraphQLError(schema, production);
  const formatted = errors.map((error) => withRequestId(format(error.toJSON(), error), scope.requestId));
  // Apollo answers variables that do not coerce (no `data`: the operation never ran) with 400.
  const status = result.data === undefined ? 400 : 200;
  const retry = retryOf(formatted, result.data);
  return { status: retry.status ?? status, headers: retry.headers, body: `${JSON.stringify({ ...result, errors: formatted })}\n` };
}

/**
 * The answer of a request refused before its operation ran (an API key that is not valid, a failure
 * while looking it up): `{ errors }` alone, with the error code's status, as Apollo answers an error its
 * plugins throw.
 */
export function graphqlRefusal(schema: GraphQLSchema, production: boolean, scope: RequestScope, thrown: unknown): HttpAnswer {
  const error = thrown instanceof GraphQLError ? thrown : new GraphQLError(thrown instanceof Error ? thrown.message : String(thrown), { originalError: thrown as Error });
  const client = classifyError(schema, error);
  logIfInternal(client, error, scope.requestId);
  const formatted = [withRequestId(formatGraphQLError(schema, production)(error.toJSON(), error), scope.requestId)];
  const retry = retryOf(formatted, undefined);
  return { status: retry.status ?? httpStatusOf[client.code] ?? 500, headers: retry.headers, body: `${JSON.stringify({ errors: formatted })}\n` };
}

/** A formatted error with the request's id in its extensions; an INTERNAL one's message names it (the plugin's part). */
export function withRequestId(formatted: GraphQLFormattedError, requestId: string): GraphQLFormattedError {
  const extensions = { ...formatted.extensions, requestId };
  return { ...formatted, message: formatted.extensions?.code === 'INTERNAL' ? internalMessage(requestId) : formatted.message, extensions };
}

/**
 * A database that could not answer (UNAVAILABLE, TIMEOUT): Retry-After, and the code's status when
 * nothing could be returned, as on the REST door.
 */
export function retryOf(errors: readonly GraphQLFormattedError[], data: unknown): { status?: number; headers: string[] } {
  const retryable = errors.find((e) => RETRYABLE_CODES.has(String(e.extensions?.code)));
  if (!retryable) return { headers: [] };
  const code = String(retryable.extensions!.code);
  const headers = Object.entries(retryAfterFor(code)).flat();
  const nothing = !data || Object.values(data as Record<string, unknown>).every((value) => value === null);
  return { status: nothing ? httpStatusOf[code] : undefined, headers };
}

/**
 * An error as Apollo's pipeline hands it to formatError: a variable that does not coerce becomes a
 * BAD_USER_INPUT error (Apollo's UserInputError), any other error stays as it is.
 */
function asApolloSees(error: GraphQLError): GraphQLError {
  const node = error.nodes?.length === 1 ? error.nodes[0] : undefined;
  if (node?.kind !== Kind.VARIABLE_DEFINITION || error.extensions?.code != null) return error;
  const variable = `Variable "$${node.variable.name.value}" `;
  const words = ['has invalid value', 'got invalid value ', 'of required type ', 'of non-null type '];
  if (!words.some((w) => error.message.startsWith(variable + w))) return error;
  return new GraphQLError(error.message, { nodes: error.nodes, originalError: error.originalError ?? error, extensions: { ...error.extensions, code: 'BAD_USER_INPUT' } });
}
