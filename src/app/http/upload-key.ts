import { NextFunction, Request, Response } from 'express';
import { AppError } from '../../common/errors';
import { mediaType } from './body-type';
import { sendErrorAndClose } from './respond';

/**
 * Uploads (the CSV import: `POST /v1/assets/import`, and multipart `POST /graphql`, whose only file
 * argument is importAssets') need a valid API key, and it is checked before a byte of the body is read:
 * else an anonymous client has the server read (and spool) up to 20 MB to be told 401. A refusal closes
 * the connection, so the client need not send the rest. `requireCaller` looks the key up (and throws 401).
 */
export function keyBeforeUpload(requireCaller: (req: Request) => Promise<unknown>) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const upload = req.method === 'POST' && (req.path === '/v1/assets/import' || (req.path === '/graphql' && mediaType(req) === 'multipart/form-data'));
    if (!upload) return next();
    try {
      await requireCaller(req);
    } catch (err) {
      if (!(err instanceof AppError)) return next(err);
      sendErrorAndClose(req, res, err);
      return;
    }
    next();
  };
}
