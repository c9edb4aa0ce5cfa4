import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** An id a client may give in x-request-id: letters, digits and . _ : -, 8 to 128 of them. */
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/** The client's own id, when it is a plain token, so its logs and ours share it; else a new one. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && CLIENT_REQUEST_ID.test(given) ? given : randomUUID();
}
