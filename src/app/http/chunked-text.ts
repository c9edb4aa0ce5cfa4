import crypto, { createHash } from 'node:crypto';

/**
 * A response body as text: one string, or pieces in order, each a string or the UTF-8 bytes of one (a
 * streamed REST text plan sends a page as one piece per item, see sql-plan/page.ts's TextStream). Pieces are
 * written one by one and never joined: joining hundreds of KB makes a string V8 allocates in fresh memory,
 * and the same again for its UTF-8 copy when it is written, on every request.
 */
export type ResponseText = string | readonly (string | Buffer)[];

/**
 * A REST answer PostgreSQL wrote whole (a REST text plan, app/graphql/sql-plan): the route's body as it is
 * sent. Stored JSON values (metadata, description) come in PostgreSQL's own spelling of jsonb (`{"a": 1}`),
 * the same JSON as the resolvers' `{"a":1}` with other spacing.
 */
export class RawJson {
  constructor(readonly text: ResponseText) {}
}

export const piecesOf = (text: ResponseText): readonly (string | Buffer)[] => (typeof text === 'string' ? [text] : text);

/** The body as one string (for express's res.send, off the hot path). */
export const joined = (text: ResponseText): string => (typeof text === 'string' ? text : text.map((piece) => piece.toString()).join(''));

/** The body as one Buffer of its UTF-8 bytes (`length` of them). */
export const bytesOf = (text: ResponseText, length = byteLengthOf(text)): Buffer =>
  typeof text === 'string' ? Buffer.from(text, 'utf8') : Buffer.concat(text.map((piece) => (typeof piece === 'string' ? Buffer.from(piece, 'utf8') : piece)), length);

/** Its length in UTF-8 bytes. */
export function byteLengthOf(text: ResponseText): number {
  if (typeof text === 'string') return Buffer.byteLength(text, 'utf8');
  let length = 0;
  for (const piece of text) length += typeof piece === 'string' ? Buffer.byteLength(piece, 'utf8') : piece.length;
  return length;
}

/** crypto.hash where this Node has it (20.12 and later; @types/node may not know it). */
const oneShot = (crypto as unknown as { hash?: (algorithm: string, data: string, encoding: 'base64') => string }).hash;

/**
 * The weak ETag express's res.send gives the joined body (the etag package's: the UTF-8 length in hex and
 * the first 27 characters of the base64 SHA-1), hashed piece by piece.
 */
export function weakEtagOf(text: ResponseText, length = byteLengthOf(text)): string {
  if (length === 0) return 'W/"0-2jmj7l5rSw0yVb/vlWAYkK/YBwk"';
  // One string: hashed in one call, without a Hash object (crypto.hash, Node 20.12 and later).
  if (typeof text === 'string' && oneShot) return `W/"${length.toString(16)}-${oneShot('sha1', text, 'base64').substring(0, 27)}"`;
  const hash = createHash('sha1');
  for (const piece of piecesOf(text)) hash.update(piece);
  return `W/"${length.toString(16)}-${hash.digest('base64').substring(0, 27)}"`;
}
