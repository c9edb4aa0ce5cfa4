import cors, { CorsOptions } from 'cors';
import { Request } from 'express';

/** Headers a browser may send from any origin: enough to read through GraphQL or REST, not to carry a key. */
const READ_HEADERS = ['content-type', 'apollo-require-preflight', 'x-apollo-operation-name', 'x-request-id'];
/** Headers a trusted origin may also send: the API key and the write controls. */
const WRITE_HEADERS = [...READ_HEADERS, 'access-token', 'authorization', 'idempotency-key'];
const EXPOSED = ['x-request-id', 'x-sql-statements', 'location', 'retry-after', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'];

/**
 * CORS. Any origin may read (GET, and POST to /graphql, whose queries are POSTs); only the origins in
 * `trusted` (CORS_ORIGINS) may send an API key, so only they can write from a browser. Credentials
 * (cookies) are never allowed: keys travel in headers that a page must set itself.
 */
export function corsMiddleware(trusted: readonly string[]) {
  const trustedSet = new Set(trusted);
  return cors((req, callback) => {
    const origin = (req as Request).headers.origin;
    const options: CorsOptions = { credentials: false, exposedHeaders: EXPOSED, maxAge: 600 };
    if (origin && trustedSet.has(origin)) {
      callback(null, { ...options, origin, methods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'], allowedHeaders: WRITE_HEADERS });
    } else {
      callback(null, { ...options, origin: '*', methods: ['GET', 'HEAD', 'POST'], allowedHeaders: READ_HEADERS });
    }
  });
}

/**
 * What corsMiddleware sets on the response to a request without an Origin (any method but OPTIONS), as
 * name, value, name, value: the lean door's requests carry none, and these two headers are all the cors
 * package would compute for them.
 */
export const WITHOUT_ORIGIN_HEADERS: readonly string[] = ['Access-Control-Allow-Origin', '*', 'Access-Control-Expose-Headers', EXPOSED.join(',')];
