import { NextFunction, Request, Response } from 'express';
import { httpStatusOf } from '../../common/errors';
import { gotType, hasBody, mediaType } from '../http/body-type';

const GRAPHQL_BODY_TYPES = ['application/json', 'multipart/form-data'];

function errorBody(req: Request, code: string, message: string): string {
  return JSON.stringify({ errors: [{ message, extensions: { code, requestId: req.requestId } }] });
}

/**
 * /graphql before Apollo: a POST body of a type GraphQL does not read is a 415 naming the types (Apollo
 * would answer 400 with a CSRF or body message), and every error body Apollo writes itself (empty
 * body, CSRF block, batching, a GET without query) gets the request id, as the errors of operations do.
 */
export function graphqlHttpErrors(req: Request, res: Response, next: NextFunction): void {
  if (req.method === 'POST' && hasBody(req)) {
    const given = mediaType(req);
    if (!GRAPHQL_BODY_TYPES.includes(given)) {
      res.status(httpStatusOf.UNSUPPORTED_MEDIA_TYPE).type('json');
      res.send(errorBody(req, 'UNSUPPORTED_MEDIA_TYPE', `POST /graphql reads application/json (or multipart/form-data for uploads); ${gotType(given)}`));
      return;
    }
  }
  const send = res.send.bind(res);
  res.send = (body?: unknown) => {
    if (res.statusCode >= 400 && typeof body === 'string' && body.startsWith('{"errors"') && !body.includes('"requestId"')) {
      try {
        const parsed = JSON.parse(body) as { errors?: { extensions?: Record<string, unknown> }[] };
        for (const error of parsed.errors ?? []) error.extensions = { ...error.extensions, requestId: req.requestId };
        body = JSON.stringify(parsed);
      } catch {
        // not JSON after all: sent as it is
      }
    }
    return send(body);
  };
  next();
}
