import { Request, Response } from 'express';
import { AppError, httpStatusOf } from '../../common/errors';

/**
 * An error raised by HTTP middleware (before GraphQL runs), in the shape of the door it came through:
 * GraphQL `{"errors": [{message, extensions: {code, details, requestId}}]}` on /graphql, the REST error
 * body on /v1. The status is the code's.
 */
export function sendMiddlewareError(req: Request, res: Response, error: AppError): void {
  const code = String(error.extensions.code);
  const details = (error.extensions.details as unknown[]) ?? [];
  res.status(httpStatusOf[code] ?? 500);
  if (req.originalUrl.startsWith('/graphql')) {
    res.json({ errors: [{ message: error.message, extensions: { code, details, requestId: req.requestId } }] });
  } else {
    res.json({ error: { code, message: error.message, details, request_id: req.requestId } });
  }
}
