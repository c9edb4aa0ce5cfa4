import type { IncomingMessage } from 'node:http';
import { Request } from 'express';

/** Whether a request carries a body (a length above 0, or a chunked one). */
export function hasBody(req: Pick<IncomingMessage, 'headers'>): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

/** The media type of a request's body, without its parameters ("" when none is given). */
export function mediaType(req: Request): string {
  return (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
}

/** A 415's account of what came: `got "text/plain"` or `got no content-type`. */
export function gotType(given: string): string {
  return `got ${given ? `"${given}"` : 'no content-type'}`;
}
