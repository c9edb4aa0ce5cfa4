import type { IncomingMessage, ServerResponse } from 'node:http';
import { RequestTimeoutError } from '../../common/errors';
import { hasBody } from './body-type';
import { sendErrorAndClose } from './respond';

/**
 * Ends a request whose body stalls: once the client has sent no byte of it for `timeoutMs`, the request is
 * answered 408 REQUEST_TIMEOUT and its connection closed, so a client that opens an upload and goes quiet
 * holds no socket, parser or import for longer. Node's own requestTimeout bounds the whole request, which
 * a large upload on a slow link may rightly exceed; this bounds only silence.
 *
 * Silence is the socket's: no byte read. While the server itself does not read (an import busy writing a
 * batch, the body waiting in the request's buffer), the client cannot send, and that is not its stall.
 */
export function endStalledBodies(timeoutMs: number): (req: IncomingMessage, res: ServerResponse) => void {
  const every = Math.max(10, Math.floor(timeoutMs / 4));
  return (req, res) => {
    if (!hasBody(req)) return;
    const socket = req.socket;
    let bytes = socket.bytesRead;
    let quietSince = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const stop = () => clearTimeout(timer);
    const check = () => {
      if (req.complete || res.writableEnded || socket.destroyed) return;
      if (socket.bytesRead !== bytes || req.readableLength > 0 || socket.isPaused()) {
        bytes = socket.bytesRead;
        quietSince = Date.now();
      } else if (Date.now() - quietSince >= timeoutMs) {
        if (res.headersSent) socket.destroy();
        else sendErrorAndClose(req, res, new RequestTimeoutError(`the request body sent nothing for ${timeoutMs} ms; send the request again`));
        return;
      }
      timer = setTimeout(check, every).unref();
    };
    timer = setTimeout(check, every).unref();
    req.once('end', stop);
    res.once('close', stop);
  };
}
