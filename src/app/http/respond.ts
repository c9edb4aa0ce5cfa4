import type { IncomingMessage, ServerResponse } from 'node:http';
import { Request, Response } from 'express';
import type { GraphQLError } from 'graphql';
import { AppError, httpStatusOf } from '../../common/errors';
import type { RequestScope } from '../../common/request/scope';
import { joined, type ResponseText } from './chunked-text';

export const APPLICATION_JSON = 'application/json; charset=utf-8';

/**
 * A request's answer, decided whole before a byte is written: the road that ran the request builds it
 * (data or errors alike) and whichever writer holds the response writes it: the lean door's `respond`
 * on node:http (entry/door.ts), or `sendAnswer` on express. `headers`: name, value pairs beyond those every
 * answer gets (the request id, CORS, the statement count, type, ETag and length).
 */
export interface HttpAnswer {
  status: number;
  headers: string[];
  body: ResponseText;
  /** The content type, when not the one the request negotiated (GraphQL) or JSON (REST). */
  type?: string;
  /** A refusal before anything ran (a 429, a body that cannot be read): no statement count. */
  uncounted?: boolean;
}

/** An error's body in the shape of the door at `path`: GraphQL's `{"errors": [...]}` on /graphql, REST's elsewhere. */
export function errorBodyOf(path: string, requestId: string | undefined, error: GraphQLError): unknown {
  const code = String(error.extensions.code);
  const details = (error.extensions.details as unknown[]) ?? [];
  return path.startsWith('/graphql')
    ? { errors: [{ message: error.message, extensions: { code, details, requestId } }] }
    : { error: { code, message: error.message, details, request_id: requestId } };
}

/**
 * The answer to a request refused outside any operation, whichever road holds it (the lean door or
 * express): a 429, a malformed x-min-lsn, a body that cannot be read (not JSON: 400, too large: 413, of a
 * type the door does not read: 415), an upload without a key, a refused document or Idempotency-Key. The
 * error in the shape of its door (errorBodyOf: `{"errors": [{message, extensions: {code, details,
 * requestId}}]}` on /graphql, `{"error": {code, message, details, request_id}}` on /v1), the code's status,
 * JSON, no statement count.
 */
export function refusalAnswer(path: string, requestId: string | undefined, error: GraphQLError, headers: string[] = []): HttpAnswer {
  const body = JSON.stringify(errorBodyOf(path, requestId, error));
  return { status: httpStatusOf[String(error.extensions.code)] ?? 500, headers, body, type: APPLICATION_JSON, uncounted: true };
}

/**
 * Writes an answer on express's response (every answer express gives to a GraphQL or REST request: a known
 * query's, Apollo's, a REST route's, an error), as the lean door's `respond` writes it on node:http: its status
 * and headers, its type (`type` when the answer names none: a GraphQL answer's negotiated one), the
 * statement count of `scope` unless uncounted, and the body by res.send (express's weak ETag and length).
 */
export function sendAnswer(res: Response, answer: HttpAnswer, scope?: RequestScope, type = APPLICATION_JSON): void {
  res.status(answer.status);
  for (let i = 0; i < answer.headers.length; i += 2) res.setHeader(answer.headers[i], answer.headers[i + 1]);
  res.setHeader('content-type', answer.type ?? type);
  if (scope && !answer.uncounted) res.setHeader('x-sql-statements', String(scope.sqlStatements));
  res.send(joined(answer.body));
}

/** A refusal (refusalAnswer) on express, in the shape of the door the request came through. */
export function sendMiddlewareError(req: Request, res: Response, error: AppError): void {
  sendAnswer(res, refusalAnswer(req.originalUrl, req.requestId, error));
}

/**
 * A refusal on node:http, for answers given before (or outside) express, that end the connection too:
 * the rest of a body the server will not read is not waited for (Connection: close).
 */
export function sendErrorAndClose(req: IncomingMessage & { requestId?: string }, res: ServerResponse, error: AppError, headers: Record<string, string> = {}): void {
  const answer = refusalAnswer(req.url ?? '', req.requestId, error);
  const body = answer.body as string;
  res.writeHead(answer.status, {
    ...headers,
    'content-type': APPLICATION_JSON,
    'content-length': String(Buffer.byteLength(body)),
    connection: 'close',
  });
  res.end(body);
}
