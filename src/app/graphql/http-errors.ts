import { NextFunction, Request, RequestHandler, Response } from 'express';
import { BadRequestError, UnsupportedMediaTypeError } from '../../common/errors';
import { gotType, hasBody, mediaType } from '../http/body-type';
import { sendMiddlewareError } from '../http/respond';

const GRAPHQL_BODY_TYPES = ['application/json', 'multipart/form-data'];

/**
 * /graphql before Apollo: a POST body of a type GraphQL does not read is a 415 naming the types (Apollo
 * would answer 400 with a CSRF or body message).
 */
export function graphqlHttpErrors(req: Request, res: Response, next: NextFunction): void {
  if (req.method === 'POST' && hasBody(req)) {
    const given = mediaType(req);
    if (!GRAPHQL_BODY_TYPES.includes(given)) {
      return sendMiddlewareError(req, res, new UnsupportedMediaTypeError(`POST /graphql reads application/json (or multipart/form-data for uploads); ${gotType(given)}`));
    }
  }
  next();
}

/**
 * An error body Apollo wrote itself (no request id in it: empty body, CSRF block, batching, a GET without query), with
 * the request id, as the errors of operations have it (by-apollo.ts, on both doors).
 */
export function withRequestIds(status: number, body: string, requestId: string): string {
  if (status < 400 || !body.startsWith('{"errors"') || body.includes('"requestId"')) return body;
  try {
    const parsed = JSON.parse(body) as { errors?: { extensions?: Record<string, unknown> }[] };
    for (const error of parsed.errors ?? []) error.extensions = { ...error.extensions, requestId };
    return JSON.stringify(parsed);
  } catch {
    // not JSON after all: sent as it is
    return body;
  }
}

/**
 * The multipart parser of /graphql (graphql-upload) reads nothing but the request's body, so whatever it
 * refuses is the request's fault: its 4xx keep their status; one without a status (busboy refusing a
 * Content-Type without a boundary) or with a 5xx (graphql-upload's "couldn't find any files or JSON" when
 * the body has no parts) is a 400, never an INTERNAL.
 *
 * And it must not bring the process down: graphql-upload-minimal 1.6.4 listens `once` for its busboy
 * parser's 'error', then destroys the parser, and busboy's destroy of a form cut short ("Malformed part
 * header", then "Unexpected end of form") emits a second 'error' that nobody hears, an uncaught exception.
 * The parser is what the request is piped into: it gets a listener that ignores what comes after the first.
 */
export function uploadErrorsAreClientErrors(parser: RequestHandler): RequestHandler {
  return (req, res, next) => {
    const pipe = req.pipe;
    req.pipe = function pipeIntoParser<T extends NodeJS.WritableStream>(this: Request, destination: T, options?: { end?: boolean }): T {
      req.pipe = pipe;
      destination.on('error', () => undefined);
      return pipe.call(this, destination, options) as T;
    };
    parser(req, res, (err?: unknown) => {
      req.pipe = pipe;
      if (!(err instanceof Error)) return next(err);
      const status = (err as { status?: number }).status;
      if (status && status < 500) return next(err);
      const why = status ? 'it needs an "operations" field, then a "map" field, then the files the map names (graphql-multipart-request-spec)' : err.message;
      next(new BadRequestError(`the multipart request cannot be read: ${why}`));
    });
  };
}
