/** Headers a browser may send from any origin: enough to read through GraphQL or REST, not to carry a key. */
const READ_HEADERS = ['content-type', 'apollo-require-preflight', 'x-apollo-operation-name', 'x-request-id'];
/** Headers a trusted origin may also send: the API key and the write controls. */
const WRITE_HEADERS = [...READ_HEADERS, 'access-token', 'authorization', 'idempotency-key'];
const EXPOSED = ['x-request-id', 'x-sql-statements', 'location', 'retry-after', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'].join(',');
/** A preflight's answer may be kept this long by the browser (seconds). */
const MAX_AGE = '600';

/** The CORS headers of one kind of caller, as name, value pairs, made once. */
export interface CorsHeaders {
  /** On every answer but a preflight's (and /metrics's). */
  answer: readonly string[];
  /**
   * `answer` with its `Vary` joined to compression's `Accept-Encoding` (one header, as the `vary` package
   * joins them); only for an origin whose answers vary by it (`varies`).
   */
  answerVaryingByEncoding: readonly string[];
  /** The answer is the origin's own (`Vary: Origin`). */
  varies: boolean;
  /** On a preflight's 204. */
  preflight: readonly string[];
}

/** Any origin, or none: it may read (GET, and POST to /graphql, whose queries are POSTs), not send a key. */
const ANY_ORIGIN: CorsHeaders = {
  answer: ['Access-Control-Allow-Origin', '*', 'Access-Control-Expose-Headers', EXPOSED],
  answerVaryingByEncoding: ['Access-Control-Allow-Origin', '*', 'Access-Control-Expose-Headers', EXPOSED],
  varies: false,
  preflight: [
    'Access-Control-Allow-Origin', '*',
    'Access-Control-Allow-Methods', 'GET,HEAD,POST',
    'Access-Control-Allow-Headers', READ_HEADERS.join(','),
    'Access-Control-Max-Age', MAX_AGE,
    'Access-Control-Expose-Headers', EXPOSED,
  ],
};

/** A trusted origin (CORS_ORIGINS): it may send an API key and write; its answers name it. */
function trustedOrigin(origin: string): CorsHeaders {
  return {
    answer: ['Access-Control-Allow-Origin', origin, 'Vary', 'Origin', 'Access-Control-Expose-Headers', EXPOSED],
    answerVaryingByEncoding: ['Access-Control-Allow-Origin', origin, 'Vary', 'Origin, Accept-Encoding', 'Access-Control-Expose-Headers', EXPOSED],
    varies: true,
    preflight: [
      'Access-Control-Allow-Origin', origin,
      'Vary', 'Origin',
      'Access-Control-Allow-Methods', 'GET,HEAD,POST,PUT,DELETE',
      'Access-Control-Allow-Headers', WRITE_HEADERS.join(','),
      'Access-Control-Max-Age', MAX_AGE,
      'Access-Control-Expose-Headers', EXPOSED,
    ],
  };
}

/**
 * CORS, stated once for every request (the entry writes it, entry/door.ts). Any origin may read; only the
 * origins in `trusted` (CORS_ORIGINS) may send an API key, so only they can write from a browser.
 * Credentials (cookies) are never allowed: keys travel in headers that a page must set itself. The
 * headers are those the `cors` package wrote before (a preflight is any OPTIONS request, answered 204).
 * No allocation per request: every origin's headers are made here.
 */
export function corsOf(trusted: readonly string[]): (origin: string | undefined) => CorsHeaders {
  const byOrigin = new Map(trusted.map((origin): [string, CorsHeaders] => [origin, trustedOrigin(origin)]));
  return (origin) => (origin === undefined ? ANY_ORIGIN : (byOrigin.get(origin) ?? ANY_ORIGIN));
}
