import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQueryString } from 'node:querystring';
import { GraphQLError } from 'graphql';
import { BadRequestError } from '../../common/errors';
import type { InFlight } from '../../common/in-flight';
import { logger } from '../../common/logger';
import type { RequestScope } from '../../common/request/scope';
import { keyFromHeaders } from '../../modules/apikey/api-key.service';
import { internalMessage } from '../graphql/format-error';
import { GraphQLHttpRequest, getPrefersHtml, passesCsrf, readGetParams, readPostBody, responseTypeFor, APPLICATION_JSON } from '../graphql/http-request';
import { byteLengthOf, bytesOf, weakEtagOf } from '../http/chunked-text';
import type { CorsHeaders } from '../http/cors';
import { admit, baseHeaders, handOn, openExchange, openScope, type EntrySteps, type Exchange } from '../http/exchange';
import { refusalAnswer, sendErrorAndClose, type HttpAnswer } from '../http/respond';
import type { EntryRule } from './paths';

/** A GraphQL request over HTTP as Apollo reads it: method, headers, the URL's search and the parsed body. */
export interface GraphqlHttp {
  method: 'GET' | 'POST';
  headers: IncomingHttpHeaders;
  search: string;
  body?: unknown;
}

/** The GraphQL road as the door sees it (graphql/known.ts, graphql/by-apollo.ts). */
export interface GraphqlRoad {
  /**
   * A known operation, run, with its answer (errors included); undefined, before anything ran, when the
   * request is not one. `noted.unregistered`: set to an id no registered document has, when it looked one up.
   */
  answerKnown(request: GraphQLHttpRequest, apiKey: string | undefined, scope: RequestScope, noted: { unregistered?: string }): Promise<HttpAnswer | undefined>;
  /** Any other GraphQL request, through Apollo's pipeline (after the trusted-documents check). */
  answerByApollo(request: GraphqlHttp, scope: RequestScope, unregistered?: string): Promise<HttpAnswer>;
}

/** The REST road as the door sees it (rest/v1/router.ts): the GET routes of /v1 and their answers, errors included. */
export interface RestRoad {
  /** The GET route a path is for, with its parameters; undefined when none is (or express's matching may differ). */
  matchGet(path: string): { route: string; params: Record<string, string> } | undefined;
  answerGet(route: string, params: Record<string, string>, query: Record<string, unknown>, scope: RequestScope): Promise<HttpAnswer>;
}

/** The entry's steps (http/exchange.ts: observe, rate limit), the two roads it answers itself, and how it writes. */
export interface LeanDoorDeps extends EntrySteps {
  graphql: GraphqlRoad;
  /** The GET routes of /v1. */
  rest: RestRoad;
  inFlight: InFlight;
  /**
   * The compression middleware express runs, and its threshold: the door calls it on a response of that
   * size or more, and answers a smaller one as it would (a `Vary: Accept-Encoding` header, nothing compressed).
   */
  compression?: { middleware: (req: IncomingMessage, res: ServerResponse, next: () => void) => void; threshold: number };
  /** The CORS headers of a request's Origin (http/cors.ts corsOf). */
  cors: (origin: string | undefined) => CorsHeaders;
  /** What the entry does with a request by its method and path (entry/paths.ts entryRules). */
  rules: (method: string | undefined, url: string) => EntryRule;
}

/** A response body this large is written after its head, not joined to it (see respond). */
const SEPARATE_HEAD = 64 * 1024;
/** Bodies the door reads itself; larger ones (and any without a length) go through express. */
const MAX_DOOR_BODY = 64 * 1024;
const JSON_TYPE = /^application\/json\s*(;\s*charset=utf-8\s*)?$/i;

/** One request the door took (its exchange: id, start, scope), with the content type of a GraphQL answer (REST's is JSON). */
interface Taken extends Exchange {
  responseType: string;
  /** RateLimit headers of its token. */
  rateHeaders: string[];
}

/**
 * In front of express, on node:http, the requests that make most of the traffic are answered without
 * express's per-request work (its router, request and response objects, and a dozen middlewares that each
 * look at such a request and pass it on), which cost more CPU than a small query itself:
 * - POST /graphql with a JSON body of up to 64 KB, and GET /graphql of a query: a known query runs at
 *   once (graphql/known.ts), anything else through Apollo's pipeline (graphql/by-apollo.ts);
 * - GET of a /v1 route (rest/v1/router.ts), without a body or conditional headers;
 * none with an Idempotency-Key or an encoded body, and a /v1 GET without an API key. What
 * those middlewares do for such a request, the door does too, with the same code: the request id, the
 * rate limit's token and headers (and its 429), the log line and metrics, CORS headers, compression,
 * in-flight tracking, the statement count, the same status, body, ETag and headers. The door decides
 * whether a request is its own before it does anything with it; once it has, it answers it whatever
 * happens, errors included (each road answers its own), so that express gets only requests it has not read
 * (opened only: their id, headers, log line and metrics are the entry's, http/exchange.ts).
 */
export function leanDoor(deps: LeanDoorDeps, routes: (req: IncomingMessage, res: ServerResponse) => void) {

  /** Sends an answer as express's res.send would, after the middlewares' part. */
  const respond = (req: IncomingMessage, res: ServerResponse, taken: Taken, scope: RequestScope | undefined, answer: HttpAnswer) => {
    const text = answer.body;
    const length = byteLengthOf(text);
    // The middleware compresses a body of its threshold or more for a client that accepts an encoding.
    // Otherwise all it does is `Vary: Accept-Encoding` (a request without Accept-Encoding gets its
    // default, identity), which the door sets itself below: the middleware wraps the response's methods
    // and looks at the headers on their way out, 7% of W2's CPU, to add just this.
    const mayCompress = deps.compression !== undefined && length >= deps.compression.threshold && req.headers['accept-encoding'] !== undefined;
    // Vary: a trusted origin's answers vary by Origin, and compression's by Accept-Encoding (one header).
    const cors = deps.cors(req.headers.origin);
    const joinVary = deps.compression !== undefined && !mayCompress;
    // The headers express's middlewares and res.send write, with their names' case: the request id, nosniff, the
    // rate limit, CORS, then res.send's type, statement count, weak ETag of the body and its length. A string body is written as it is: a
    // Buffer copy of a large one, made per request, is external memory whose growth makes V8 collect the
    // whole heap far more often (the pieces of a streamed plan come as Buffers already, see chunked-text.ts).
    const head = baseHeaders(req, taken.requestId);
    for (const part of taken.rateHeaders) head.push(part);
    for (const part of joinVary ? cors.answerVaryingByEncoding : cors.answer) head.push(part);
    for (const part of answer.headers) head.push(part);
    head.push('Content-Type', answer.type ?? taken.responseType);
    if (scope && !answer.uncounted) head.push('x-sql-statements', String(scope.sqlStatements));
    head.push('ETag', weakEtagOf(text, length), 'Content-Length', String(length));
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
    if (joinVary && !cors.varies) head.push('Vary', 'Accept-Encoding');
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
   * operation that ran is never handed on to be run again. The request leaves the in-flight count once
   * its answer is written.
   */
  const serve = (req: IncomingMessage, res: ServerResponse, taken: Taken, answer: (scope: RequestScope) => Promise<HttpAnswer>): Promise<void> | void => {
    const scope = taken.scope!;
    scope.entry = 'lean';
    deps.inFlight.enter();
    const finish = (answered: HttpAnswer) => {
      try {
        respond(req, res, taken, scope, answered);
      } finally {
        deps.inFlight.leave();
      }
    };
    // Every road answers its own failures; one that escapes them is a fault of the door's own.
    const failed = (err: unknown) => {
      logger.error('unexpected error', { requestId: scope.requestId, error: (err as Error)?.message, stack: (err as Error)?.stack });
      finish(refusalAnswer(req.url ?? '', scope.requestId, new GraphQLError(internalMessage(scope.requestId), { extensions: { code: 'INTERNAL' } })));
    };
    let work: Promise<HttpAnswer>;
    try {
      work = answer(scope);
    } catch (err) {
      work = Promise.reject(err);
    }
    return work.then(finish, failed);
  };

  /**
   * Opens a request the door answers (its exchange: id, log line and metrics), then takes its rate-limit
   * token and opens its scope (take); a refused one is answered here (429, a malformed x-min-lsn). `go` runs
   * when the request may go on; at once when the limiter answers at once (its buckets are in memory).
   */
  const open = (req: IncomingMessage, res: ServerResponse, responseType: string, go: (taken: Taken) => Promise<void> | void): void => {
    const taken = openExchange(req, res, deps.observe) as Taken;
    taken.responseType = responseType;
    taken.rateHeaders = [];
    take(req, res, taken, go);
  };

  /**
   * The steps of an opened request of a door before its body is read, whichever road answers it: the rate
   * limit, then the scope (http/exchange.ts openScope, where x-min-lsn is read, once); `go` when it may go
   * on, else the refusal (429, or 400 for a malformed x-min-lsn).
   */
  const take = (req: IncomingMessage, res: ServerResponse, taken: Taken, go: (taken: Taken) => Promise<void> | void): void => {
    const admitted = admit(
      deps,
      req,
      req.url ?? '',
      taken.requestId,
      (ticket) => {
        if (ticket) taken.rateHeaders = ticket.headers;
        const refused = openScope(taken, req);
        return refused ? respond(req, res, taken, taken.scope, refused) : go(taken);
      },
      (refusal) => respond(req, res, taken, undefined, refusal),
    );
    void Promise.resolve(admitted).catch(() => {
      if (!res.headersSent) res.destroy();
    });
  };

  /**
   * Any other request: opened here, with the steps its path calls for (entry/paths.ts): a preflight is
   * answered here; a request of a door takes its rate-limit token and opens its scope (their refusals are
   * answered here too). What goes on is handed to express's routes (entry/express.ts), which answer it,
   * with the headers of those steps set on its response.
   */
  const pass = (req: IncomingMessage, res: ServerResponse): void => {
    const exchange = openExchange(req, res, deps.observe);
    const rule = deps.rules(req.method, req.url ?? '');
    const cors = deps.cors(req.headers.origin);
    if (rule.preflight) return preflight(req, res, exchange.requestId, cors);
    if (!rule.door) {
      handOn(req, res, exchange, rule.cors ? cors.answer : []);
      return routes(req, res);
    }
    const taken = exchange as Taken;
    taken.responseType = APPLICATION_JSON;
    taken.rateHeaders = [];
    take(req, res, taken, () => {
      handOn(req, res, taken, cors.answer, taken.rateHeaders);
      routes(req, res);
    });
  };

  /** CORS's preflight (any OPTIONS request): 204 with what the origin may send, and nothing else runs. */
  const preflight = (req: IncomingMessage, res: ServerResponse, requestId: string, cors: CorsHeaders): void => {
    const head = baseHeaders(req, requestId);
    for (const part of cors.preflight) head.push(part);
    head.push('Content-Length', '0');
    res.writeHead(204, head);
    res.end();
  };

  return (req: IncomingMessage, res: ServerResponse): void => {
    const h = req.headers;
    if (h['idempotency-key'] !== undefined || h['content-encoding'] !== undefined || h['transfer-encoding'] !== undefined) return pass(req, res);
    const url = req.url ?? '';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    if (req.method === 'GET' && url.startsWith('/v1/')) {
      if (h['access-token'] !== undefined || h.authorization !== undefined) return pass(req, res);
      if (h['content-length'] !== undefined || h['if-none-match'] !== undefined || h['if-modified-since'] !== undefined) return pass(req, res);
      const match = deps.rest.matchGet(path);
      if (!match) return pass(req, res);
      const query = q === -1 ? {} : parseQueryString(url.slice(q + 1));
      return open(req, res, APPLICATION_JSON, (taken) => serve(req, res, taken, (scope) => deps.rest.answerGet(match.route, match.params, query, scope)));
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
      if (!read) return pass(req, res);
      const http: GraphqlHttp = { method: 'GET', headers: h, search: url.slice(q) };
      return open(req, res, type, (taken) => serve(req, res, taken, (scope) => graphqlAnswer(read, http, scope)));
    }
    if (req.method !== 'POST') return pass(req, res);
    const length = Number(h['content-length']);
    if (!JSON_TYPE.test(h['content-type'] ?? '') || !Number.isInteger(length) || length < 1 || length > MAX_DOOR_BODY) return pass(req, res);
    open(req, res, type, async (taken) => {
      const raw = await readBody(req, length);
      // A body cut short: its client is gone, or never sent what it announced.
      if (raw === undefined) return void sendErrorAndClose(req, res, new BadRequestError('the request body ended before its Content-Length'), { 'x-request-id': taken.requestId });
      let body: unknown;
      try {
        body = JSON.parse(raw);
        // express.json is strict: an object or an array.
        if (typeof body !== 'object' || body === null) throw new SyntaxError('not an object');
      } catch {
        // As express's error handler answers express.json's refusal.
        return respond(req, res, taken, undefined, refusalAnswer(path, taken.requestId, new BadRequestError('the request body is not valid JSON')));
      }
      const http: GraphqlHttp = { method: 'POST', headers: h, search: q === -1 ? '' : url.slice(q), body };
      const read = readPostBody(body);
      await serve(req, res, taken, (scope) => graphqlAnswer(read, http, scope));
    });

    /** A known query's answer, or Apollo's for anything else: the request runs on one of the two, once. */
    async function graphqlAnswer(read: GraphQLHttpRequest | undefined, http: GraphqlHttp, scope: RequestScope): Promise<HttpAnswer> {
      const noted: { unregistered?: string } = {};
      const known = read && (await deps.graphql.answerKnown(read, apiKey, scope, noted));
      if (known) return known;
      scope.entry = undefined;
      return deps.graphql.answerByApollo(http, scope, noted.unregistered);
    }
  };
}

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
