import type { IncomingMessage, ServerResponse } from 'node:http';
import { Request, Response } from 'express';
import type { GraphQLError } from 'graphql';
import { AppError, httpStatusOf } from '../../common/errors';
import type { ResponseText } from './chunked-text';

/**
 * A request's answer, decided whole before a byte is written: the road that ran the request builds it
 * (data or errors alike) and whichever writer holds the response (the lean door on node:http, or
 * express) writes it. `headers`: name, value pairs beyond those every answer gets (the request id,
 * CORS, the statement count, type, ETag and length).
 */
export interface HttpAnswer {
  status: number;
  headers: string[];
  body: ResponseText;
  /** The content type, when not the one the request negotiated (GraphQL) or JSON (REST). */
  type?: string;
  /** A refusal before anything ran (a 429, a body that is not JSON): no statement count, as express's middlewares send none. */
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
 * An error raised by HTTP middleware (before GraphQL runs), in the shape of the door it came through:
 * GraphQL `{"errors": [{message, extensions: {code, details, requestId}}]}` on /graphql, the REST error
 * body on /v1. The status is the code's.
 */
export function sendMiddlewareError(req: Request, res: Response, error: AppError): void {
  res.status(httpStatusOf[String(error.extensions.code)] ?? 500).json(errorBodyOf(req.originalUrl, req.requestId, error));
}

/**
 * sendMiddlewareError on node:http, for answers given before (or outside) express, that end the connection
 * too: the rest of a body the server will not read is not waited for (Connection: close).
 */
export function sendErrorAndClose(req: IncomingMessage & { requestId?: string }, res: ServerResponse, error: AppError, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(errorBodyOf(req.url ?? '', req.requestId, error));
  res.writeHead(httpStatusOf[String(error.extensions.code)] ?? 500, {
    ...headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    connection: 'close',
  });
  res.end(body);
}
