import { Response } from 'express';
import { GraphQLSchema } from 'graphql';
import { BadRequestError, FieldProblem, httpStatusOf } from '../../common/errors';
import { retryAfterFor, toClientError } from '../graphql/format-error';
import { camelToSnake } from '../../common/names';
import { sendAnswer, type HttpAnswer } from '../http/respond';


/**
 * A request error the REST door words itself: its message and fields are already the names the client
 * sent (a body key as written, `fees[0].basis_points`), so they are not renamed again.
 */
export class RestRequestError extends BadRequestError {
  constructor(problems: FieldProblem[]) {
    super(problems.map((p) => `${p.field}: ${p.message}`).join('; '), problems);
  }
}

/**
 * The REST error body of decisions.md: `{"error": {"code", "message", "details", "request_id"}}`, with its
 * status; in production (the app's `env` setting) without suggestions of names.
 */
export function sendRestError(
  res: Response,
  schema: GraphQLSchema,
  error: unknown,
  requestError: boolean,
  words: (text: string) => string = (text) => text,
): void {
  const { requestId, scope } = res.req;
  sendAnswer(res, restErrorAnswer(schema, error, requestError, requestId, res.app.get('env') === 'production', words), scope);
}

/** sendRestError's status, headers and body, for whichever writer holds the response (express or the lean door). */
export function restErrorAnswer(
  schema: GraphQLSchema,
  error: unknown,
  requestError: boolean,
  requestId: string | undefined,
  production: boolean,
  words: (text: string) => string = (text) => text,
): HttpAnswer {
  const client = toClientError(schema, error, requestError, requestId, production);
  const worded = error instanceof RestRequestError;
  // REST fields are the body's and the parameters' own names: `total_supply`, not `input.totalSupply`.
  const details = worded
    ? client.details
    : client.details.map((d) => {
        const detail = d as { field?: string };
        // A list argument `input` filled by a body field (a bulk create's `listings`) is named by that field.
        // An argument filled by a variable of another name (`listingId` by the path's `id`) is named as the client sent it.
        // `input` filled by the whole body is the body.
        const whole = words('input') === 'input' ? 'body' : words('input');
        const field = detail.field === 'input' ? whole : detail.field && camelToSnake(words(detail.field.replace(/^input\./, '')));
        const named = detail.field ? { ...detail, field } : detail;
        return 'message' in named ? { ...named, message: words(String(named.message)) } : named;
      });
  // A validation message that just lists its fields is rebuilt with the REST (snake_case) names.
  const describe = (list: unknown[]) => list.map((d) => `${(d as { field: string }).field}: ${(d as { message: string }).message}`).join('; ');
  const fieldMessage = worded
    ? client.message
    : client.code === 'VALIDATION_FAILED' && details.length && client.message === describe(client.details)
      ? describe(details)
      : words(restFieldNames(client.message));
  return {
    status: httpStatusOf[client.code] ?? 500,
    headers: Object.entries(retryAfterFor(client.code, client.retryAfter)).flat(),
    body: JSON.stringify({ error: { code: client.code, message: fieldMessage, details, request_id: requestId } }),
  };
}

/**
 * Several errors of one request (each bad variable or field its own): one 400 that lists them all, so a
 * client fixes every field at once.
 */
export function requestErrors(schema: GraphQLSchema, errors: readonly unknown[]): unknown {
  if (errors.length === 1) return errors[0];
  const clients = errors.map((e) => toClientError(schema, e, true, undefined));
  return new BadRequestError(
    clients.map((c) => restFieldNames(c.message)).join('; '),
    clients.flatMap((c) => c.details as FieldProblem[]),
  );
}

/**
 * GraphQL's coercion messages speak of variables and camelCase input fields; a REST client sent query
 * parameters and a snake_case body, so the message names those: `total_supply: Int cannot represent ...`.
 */
export function restFieldNames(message: string): string {
  const inBody = /^Variable "\$input" got invalid value (.*?) at "input\.([^"]+)"; ([\s\S]*)$/.exec(message);
  if (inBody) return `${camelToSnake(inBody[2])}: ${inBody[3]}`;
  const wholeBody = /^Variable "\$input" got invalid value [\s\S]*?; ([\s\S]*)$/.exec(message);
  if (wholeBody) return `body: ${wholeBody[1].replace(/Field "(\w+)"/g, (_, f: string) => `Field "${camelToSnake(f)}"`)}`;
  const parameter = /^Variable "\$(\w+)" got invalid value ([\s\S]*?); ([\s\S]*)$/.exec(message);
  if (parameter) return /\bgot\b/.test(parameter[3]) ? `${parameter[1]}: ${parameter[3]}` : `${parameter[1]}: ${parameter[3]} (got ${parameter[2]})`;
  return message;
}
