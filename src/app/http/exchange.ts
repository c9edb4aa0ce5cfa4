import type { IncomingMessage, ServerResponse } from 'node:http';
import { BadRequestError } from '../../common/errors';
import { parseLsn } from '../../common/lsn';
import { processCounters, type RequestScope } from '../../common/request/scope';
import { requestSpanOf } from '../../common/tracing';
import { observeRequest, type ObserveOptions } from './observe';
import type { RateLimit, RateTicket } from './rate-limit';
import { requestIdOf } from './request-id';
import { refusalAnswer, type HttpAnswer } from './respond';

/**
 * One request as the entry (entry/door.ts) holds it, from its opening to its answer: its id, when it
 * started, and the scope its work opens (the statement count, route and road its log line and metrics
 * read). Every request has one, whichever side writes its answer.
 */
export interface Exchange {
  requestId: string;
  /** performance.now() when the entry opened it. */
  started: number;
  scope?: RequestScope;
}

/** The steps every request goes through at the entry, stated once (entry/door.ts runs them; express reads what they found). */
export interface EntrySteps {
  observe: ObserveOptions;
  rateLimit?: RateLimit;
}

/**
 * The exchanges of the requests the entry hands to express's routes, so that those routes read the id
 * and scope the entry opened (express never opens a request of its own). Not a property of the request:
 * the entry's state is its own, and a request answered at the door never has one here.
 */
const handedOn = new WeakMap<IncomingMessage, Exchange>();

/**
 * Opens a request, the first step of every request: its id (the client's when it is a plain token, else
 * a new one) and its log line and metrics, written once its answer has been sent (http/observe.ts).
 */
export function openExchange(req: IncomingMessage, res: ServerResponse, observe: ObserveOptions): Exchange {
  const exchange: Exchange = { requestId: requestIdOf(req), started: performance.now() };
  observeRequest(req, res, observe, exchange.started, () => exchange);
  return exchange;
}

/**
 * Opens the request's scope, at the entry, for every request of the two doors (entry/paths.ts): the
 * statement counter every statement the request causes adds to, under the request's trace span; the log
 * line and metrics read it (`exchange.scope`). A write's consistency token (`x-min-lsn`), sent back, is read
 * here: with read replicas, the request reads only where that write is. Returns the 400 that refuses a
 * malformed token, the answer its door has always given (REST's counts the request's statements, 0;
 * GraphQL's, a refusal, does not); undefined when the request may go on.
 */
export function openScope(exchange: Exchange, req: IncomingMessage): HttpAnswer | undefined {
  processCounters.requests += 1;
  const scope: RequestScope = { requestId: exchange.requestId, sqlStatements: 0, span: requestSpanOf(req) };
  exchange.scope = scope;
  const token = req.headers['x-min-lsn'];
  if (typeof token !== 'string' || token === '') return undefined;
  const lsn = parseLsn(token);
  if (lsn !== undefined) {
    scope.minLsn = lsn;
    return undefined;
  }
  const path = req.url ?? '';
  const refused = new BadRequestError(`x-min-lsn must be a WAL position such as 0/16B3748 (from a write's x-min-lsn header), got "${token.slice(0, 40)}"`);
  const answer = refusalAnswer(path, exchange.requestId, refused);
  if (!path.startsWith('/graphql')) answer.uncounted = false;
  return answer;
}

/** The exchange the entry opened for a request it handed to express (see handedOn). */
export function exchangeOf(req: IncomingMessage): Exchange {
  const exchange = handedOn.get(req);
  if (!exchange) throw new Error('a request reached express without going through the entry (entry/door.ts)');
  return exchange;
}

/**
 * Hands an opened request to express's routes: the headers every answer carries, then the entry's steps'
 * (CORS, the rate limit's), as name, value pairs, are set on its response.
 */
export function handOn(req: IncomingMessage, res: ServerResponse, exchange: Exchange, ...steps: (readonly string[])[]): void {
  handedOn.set(req, exchange);
  const head = baseHeaders(req, exchange.requestId);
  for (const headers of steps) for (const part of headers) head.push(part);
  for (let i = 0; i < head.length; i += 2) res.setHeader(head[i], head[i + 1]);
}

/** Whether the request carries an API key (valid or not). */
export const hasApiKey = (req: IncomingMessage) => req.headers['access-token'] !== undefined || req.headers.authorization !== undefined;

/**
 * The headers every answer carries first, as name, value pairs: the request id, nosniff, and for a request
 * with an API key `Cache-Control: no-store` (an answer for a key is the key's own: no cache keeps it).
 */
export function baseHeaders(req: IncomingMessage, requestId: string): string[] {
  const head = ['x-request-id', requestId, 'X-Content-Type-Options', 'nosniff'];
  if (hasApiKey(req)) head.push('Cache-Control', 'no-store');
  return head;
}

/**
 * The rate limit's step (http/rate-limit.ts): the request's token, its RateLimit headers and, when refused,
 * its 429 answer (refusalAnswer). `go` runs with the ticket when the request may go on, `refuse` with the
 * answer when not; at once when the limiter answers at once (its buckets are in memory). Without a limit,
 * `go` runs at once with no ticket.
 */
export function admit<T>(
  steps: EntrySteps,
  req: IncomingMessage,
  path: string,
  requestId: string,
  go: (ticket: RateTicket | undefined) => T,
  refuse: (answer: HttpAnswer) => T,
): T | Promise<T> {
  const decide = (ticket: RateTicket | undefined): T =>
    ticket?.refused ? refuse(refusalAnswer(path, requestId, ticket.refused, ticket.headers)) : go(ticket);
  const ticket = steps.rateLimit?.take(req);
  return ticket instanceof Promise ? ticket.then(decide) : decide(ticket);
}
