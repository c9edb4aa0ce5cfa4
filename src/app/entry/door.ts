import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQueryString } from 'node:querystring';
import type { NextFunction, Request, Response } from 'express';
import { GraphQLError } from 'graphql';
import type { InFlight } from '../../common/in-flight';
import { logger } from '../../common/logger';
import { processCounters, type RequestScope } from '../../common/request/scope';
import { keyFromHeaders } from '../../modules/apikey/api-key.service';
import { internalMessage } from '../graphql/format-error';
import { GraphQLHttpRequest, getPrefersHtml, passesCsrf, readGetParams, readPostBody, responseTypeFor, APPLICATION_JSON } from '../graphql/http-request';
import { byteLengthOf, bytesOf, weakEtagOf } from '../http/chunked-text';
import { WITHOUT_ORIGIN_HEADERS } from '../http/cors';
import { observeRequest, ObserveOptions } from '../http/observe';
import type { RateLimit } from '../http/rate-limit';
import { errorBodyOf, type HttpAnswer } from '../http/respond';

/**
 * The GraphQL road as the door sees it (graphql/known.ts): the known operations, run with their answer
 * (errors included), or undefined before anything ran when the request is not one of them.
 */
export interface GraphqlRoad {
  /** Whether a GET's parameters may name an operation the road runs (a known text, or a registered id it may load). */
  mayRun(request: GraphQLHttpRequest): boolean;
  answer(request: GraphQLHttpRequest | undefined, apiKey: string | undefined, scope: RequestScope, req: IncomingMessage): Promise<HttpAnswer | undefined>;
}

/** The REST road as the door sees it (rest/v1/router.ts): the GET routes of /v1 and their answers, errors included. */
export interface RestRoad {
  /** The GET route a path is for, with its parameters; undefined when none is (or express's matching may differ). */
  matchGet(path: string): { route: string; params: Record<string, string> } | undefined;
  answerGet(route: string, params: Record<string, string>, query: Record<string, unknown>, scope: RequestScope): Promise<HttpAnswer>;
}

/** The express middlewares whose work the lean door does itself for the requests it answers. */
export interface LeanDoorDeps {
  graphql: GraphqlRoad;
  inFlight: InFlight;
  rateLimit?: RateLimit;
  observe: ObserveOptions;
  /**
   * The compression middleware express runs, and its threshold: the door calls it on a response of that
   * size or more, and answers a smaller one as it would (a `Vary: Accept-Encoding` header, nothing compressed).
   */
  compression?: { middleware: (req: IncomingMessage, res: ServerResponse, next: () => void) => void; threshold: number };
  /** The request id: the client's when it is a plain token, else a new one. */
  requestIdOf: (req: IncomingMessage) => string;
  /** The GET routes of /v1. */
  rest: RestRoad;
  /** The browser origins that may send an API key (CORS_ORIGINS): their requests get their own CORS headers, from express. */
  trustedOrigins: ReadonlySet<string>;
}

/** A response body this large is written after its head, not joined to it (see respond). */
const SEPARATE_HEAD = 64 * 1024;
/** Bodies the door reads itself; larger ones (and any without a length) go through express. */
const MAX_DOOR_BODY = 64 * 1024;
/** A body the door read and could not parse as JSON: express's body parser answers it (see bodyReadByDoor). */
const BAD_JSON = Symbol('leanDoorBadJson');
const JSON_TYPE = /^application\/json\s*(;\s*charset=utf-8\s*)?$/i;

type DoorRequest = IncomingMessage & {
  requestId?: string;
  scope?: RequestScope;
  body?: unknown;
  [BAD_JSON]?: boolean;
  /** The content type of a GraphQL answer (http-request.ts's negotiation); REST's is JSON. */
  responseType?: string;
};

/**
 * In front of express, on node:http, two kinds of request are answered without express's per-request
 * work (its router, request and response objects, and a dozen middlewares that each look at such a
 * request and pass it on), which cost more CPU than a small query itself:
 * - POST /graphql of a known query (CompiledOperations) with a JSON body;
 * - GET of a /v1 route (rest/v1/router.ts), without a body or conditional headers;
 * neither with an Origin, an API key, an Idempotency-Key, an x-min-lsn or an encoded body. What those
 * middlewares do for such a request, the door does too, with the same code: the request id, the rate
 * limit's token and headers, the log line and metrics, CORS headers, compression, in-flight tracking,
 * the statement count, the same status, body, ETag and headers. Whatever it cannot answer without an
 * error goes to express, which answers as always: when the body has been read by then, express's body
 * parser finds it read and takes the door's parse (a body that was not JSON is refused with express's
 * own 400, through bodyReadByDoor); a GET that met an error runs again there.
 */
export function leanDoor(deps: LeanDoorDeps, pass: (req: IncomingMessage, res: ServerResponse) => void) {

  /** Sends an answer as express's res.send would, after the middlewares' part. */
  const respond = (req: DoorRequest, res: ServerResponse, scope: RequestScope, answer: HttpAnswer, started: number) => {
    const text = answer.body;
    processCounters.requests += 1;
    req.scope = scope;
    observeRequest(req as unknown as Request, res as unknown as Response, deps.observe, started);
    const length = byteLengthOf(text);
    // The middleware compresses a body of its threshold or more for a client that accepts an encoding.
    // Otherwise all it does is `Vary: Accept-Encoding` (a request without Accept-Encoding gets its
    // default, identity), which the door sets itself below: the middleware wraps the response's methods
    // and looks at the headers on their way out, 7% of W2's CPU, to add just this.
    const mayCompress = deps.compression !== undefined && length >= deps.compression.threshold && req.headers['accept-encoding'] !== undefined;
    // The headers express's middlewares and res.send write, with their names' case: the request id, nosniff, the
    // rate limit, CORS (the door answers requests without an Origin), then res.send's type, statement
    // count, weak ETag of the body and its length. A string body is written as it is: a
    // Buffer copy of a large one, made per request, is external memory whose growth makes V8 collect the
    // whole heap far more often (the pieces of a streamed plan come as Buffers already, see chunked-text.ts).
    const head: string[] = ['x-request-id', req.requestId!, 'X-Content-Type-Options', 'nosniff'];
    // An answer for an API key is the key's own: no cache keeps it.
    if (hasApiKey(req)) head.push('Cache-Control', 'no-store');
    deps.rateLimit?.headers(req, head);
    for (const part of WITHOUT_ORIGIN_HEADERS) head.push(part);
    for (const part of answer.headers) head.push(part);
    head.push('Content-Type', req.responseType ?? APPLICATION_JSON, 'x-sql-statements', String(scope.sqlStatements), 'ETag', weakEtagOf(text, length), 'Content-Length', String(length));
    if (mayCompress) {
      // Compression decides the head when it is written (it may drop the length and add an encoding).
      deps.compression!.middleware(req, res, () => {});
      res.statusCode = answer.status;
      for (let i = 0; i < head.length; i += 2) res.setHeader(head[i], head[i + 1]);
      // A body in pieces in one write to the compressor: brotli fed the pieces one by one held 329 MB of
      // peak RSS at 32 connections for REST W1, against 189 MB given the whole body (it sizes its window by
      // what it is given).
      return void res.end(bytesOf(text, length));
    }
    // What the compression middleware does when it cannot compress (see above).
    if (deps.compression) head.push('Vary', 'Accept-Encoding');
    // In one call: setHeader per header stores each as its own pair under a lower-cased name first.
    res.writeHead(answer.status, head);
    // Node writes the head and a string body in one write by joining them into a new string, which for
    // a large body (418 KB) is a copy V8 must allocate, and collect, on every request: such a head goes
    // out on its own first.
    if (length >= SEPARATE_HEAD) res.flushHeaders();
    if (typeof text === 'string') return void res.end(text, 'utf8');
    // A body in pieces (a streamed REST text plan) is written piece by piece, never joined (chunked-text.ts).
    for (const piece of text) res.write(piece);
    res.end();
  };

  /**
   * Runs `answer` as the request's work, in flight, and writes what it answers, errors included: an
   * operation that ran is never handed on to be run again. Express answers only a request `answer` finds
   * is not its own (undefined) before anything has run. The request leaves the in-flight count once its
   * answer is written or handed to express.
   */
  const serve = (req: DoorRequest, res: ServerResponse, started: number, answer: (scope: RequestScope) => Promise<HttpAnswer | undefined>): Promise<void> => {
    const scope: RequestScope = { requestId: req.requestId!, sqlStatements: 0, entry: 'lean' };
    deps.inFlight.enter();
    const finish = (answered: HttpAnswer | undefined) => {
      try {
        if (answered === undefined) pass(req, res);
        else respond(req, res, scope, answered, started);
      } finally {
        deps.inFlight.leave();
      }
    };
    // Both roads answer their own failures; one that escapes them is a fault of the door's own.
    const failed = (err: unknown) => {
      logger.error('unexpected error', { requestId: scope.requestId, error: (err as Error)?.message, stack: (err as Error)?.stack });
      finish({ status: 500, headers: [], body: JSON.stringify(errorBodyOf(req.url ?? '', scope.requestId, new GraphQLError(internalMessage(scope.requestId), { extensions: { code: 'INTERNAL' } }))) });
    };
    let work: Promise<HttpAnswer | undefined>;
    try {
      work = answer(scope);
    } catch (err) {
      work = Promise.reject(err);
    }
    return work.then(finish, failed);
  };

  /**
   * Opens the request as express's first middlewares would: its id, then its rate-limit token (false:
   * refused); at once when the limiter answers at once (its buckets are in memory). Their headers are
   * written with the door's answer (respond), or by express's middlewares when express answers.
   */
  const open = (req: DoorRequest): boolean | Promise<boolean> => {
    req.requestId = deps.requestIdOf(req);
    return !deps.rateLimit || deps.rateLimit.take(req);
  };

  return (request: IncomingMessage, res: ServerResponse): void => {
    const req = request as DoorRequest;
    const h = req.headers;
    // An Origin that is not trusted gets the headers a request without one gets (CORS: any origin reads);
    // a trusted one (CORS_ORIGINS) gets its own, from express.
    if (h.origin !== undefined && deps.trustedOrigins.has(h.origin)) return pass(req, res);
    if (h['idempotency-key'] !== undefined || h['x-min-lsn'] !== undefined || h['content-encoding'] !== undefined || h['transfer-encoding'] !== undefined) return pass(req, res);
    const started = performance.now();
    const url = req.url ?? '';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    if (req.method === 'GET' && url.startsWith('/v1/')) {
      if (h['access-token'] !== undefined || h.authorization !== undefined) return pass(req, res);
      if (h['content-length'] !== undefined || h['if-none-match'] !== undefined || h['if-modified-since'] !== undefined) return pass(req, res);
      const match = deps.rest.matchGet(path);
      if (!match) return pass(req, res);
      const query = q === -1 ? {} : parseQueryString(url.slice(q + 1));
      void (async () => {
        const opened = open(req);
        if (!(opened instanceof Promise ? await opened : opened)) return pass(req, res);
        await serve(req, res, started, (scope) => deps.rest.answerGet(match.route, match.params, query, scope));
      })().catch(() => {
        if (!res.headersSent) res.destroy();
      });
      return;
    }
    if (path !== '/graphql') return pass(req, res);
    const type = responseTypeFor(h.accept);
    if (!type) return pass(req, res);
    const apiKey = keyFromHeaders(h);
    if (req.method === 'GET') {
      // A query by GET (Apollo Client's useGETForQueries, persisted queries by hash): as Apollo takes it.
      const contentType = h['content-type'];
      if (q === -1 || h['content-length'] !== undefined || getPrefersHtml(h.accept) || !passesCsrf(h)) return pass(req, res);
      if (contentType !== undefined && !contentType.startsWith('application/json')) return pass(req, res);
      const read = readGetParams(url.slice(q + 1));
      // An id alone may name a registered document this process has not loaded yet: runKnown looks.
      if (!read || !deps.graphql.mayRun(read)) return pass(req, res);
      req.responseType = type;
      void (async () => {
        const opened = open(req);
        if (!(opened instanceof Promise ? await opened : opened)) return pass(req, res);
        await serve(req, res, started, (scope) => deps.graphql.answer(read, apiKey, scope, req));
      })().catch(() => {
        if (!res.headersSent) res.destroy();
      });
      return;
    }
    if (req.method !== 'POST') return pass(req, res);
    const length = Number(h['content-length']);
    if (!JSON_TYPE.test(h['content-type'] ?? '') || !Number.isInteger(length) || length < 1 || length > MAX_DOOR_BODY) return pass(req, res);
    req.responseType = type;
    void (async () => {
      const opened = open(req);
      if (!(opened instanceof Promise ? await opened : opened)) return pass(req, res);
      const raw = await readBody(req, length);
      if (raw === undefined) return pass(req, res);
      try {
        const body: unknown = JSON.parse(raw);
        // express.json is strict: an object or an array.
        if (typeof body !== 'object' || body === null) throw new SyntaxError('not an object');
        req.body = body;
      } catch {
        req[BAD_JSON] = true;
        return pass(req, res);
      }
      await serve(req, res, started, (scope) => deps.graphql.answer(readPostBody(req.body), apiKey, scope, req));
    })().catch(() => {
      if (!res.headersSent) res.destroy();
    });
  };
}

/** Whether the request carries an API key (valid or not). */
export const hasApiKey = (req: IncomingMessage) => req.headers['access-token'] !== undefined || req.headers.authorization !== undefined;

/** The body of a request that announced `length` bytes, or undefined when it ended otherwise. */
function readBody(req: IncomingMessage, length: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= length) chunks.push(chunk);
    });
    req.on('end', () => resolve(size === length ? Buffer.concat(chunks, size).toString('utf8') : undefined));
    req.on('error', () => resolve(undefined));
  });
}

/**
 * In express's /graphql chain after express.json: a body the lean door read and found not to be JSON is
 * refused as express.json refuses it (the error handler's 400 "the request body is not valid JSON").
 */
export function bodyReadByDoor(req: Request, _res: Response, next: NextFunction): void {
  if ((req as unknown as DoorRequest)[BAD_JSON]) next(Object.assign(new SyntaxError('the request body is not valid JSON'), { type: 'entity.parse.failed', status: 400 }));
  else next();
}
