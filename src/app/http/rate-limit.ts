import type { IncomingMessage, ServerResponse } from 'node:http';
import { NextFunction, Request, RequestHandler, Response } from 'express';
import Redis from 'ioredis';
import { RateLimitSettings } from '../../config';
import { RateLimitedError } from '../../common/errors';
import { rateLimitRejections } from '../../common/metrics';
import { digestOf, keyFromHeaders } from '../../modules/apikey/api-key.service';
import { sendMiddlewareError } from './respond';
import { closeRedis, throttledWarning } from './redis';
import { BucketStore, memoryBuckets, redisBuckets, TakeResult } from './token-bucket';

export interface RateLimit {
  middleware: RequestHandler;
  /**
   * Takes the request's token (the lean door, lean.ts): true when the request may go on. The answer is
   * kept on the request: the middleware, should express answer it after all, sends its headers (or the
   * 429) without taking a second token; `headers` gives them to the door's own answer.
   */
  take(req: IncomingMessage): boolean | Promise<boolean>;
  /** The RateLimit headers of a request whose token `take` took, added to `head` as name, value pairs. */
  headers(req: IncomingMessage, head: string[]): void;
  /**
   * Takes the token of a WebSocket upgrade (which counts as a request of its client): null when it may go
   * on, else the refusal's message and the headers of its 429 (Retry-After, RateLimit-*).
   */
  takeUpgrade(req: IncomingMessage): Promise<{ message: string; headers: Record<string, string> } | null>;
  close(): Promise<void>;
}

/** A request whose token the lean door already took, and what taking it said. */
const TAKEN = Symbol('rateLimitTaken');
type Taken = { limit: number; apiKey: string | undefined; result: TakeResult | null };

/**
 * A token bucket per API key (by the key's digest: the key itself is never a Redis key or a log field)
 * and per client IP for requests without a key: `keyedPoints` / `anonymousPoints` tokens, refilled evenly
 * over `durationS`, one token per request (token-bucket.ts). In memory, or in Redis when `redisUrl` is
 * set, so that every process of a deployment draws from one bucket. When Redis cannot be reached,
 * requests are served without a limit (fail open) and a warning is logged.
 */
export function createRateLimit(settings: RateLimitSettings): RateLimit {
  for (const points of [settings.keyedPoints, settings.anonymousPoints]) {
    // The bucket's level is capacity × duration in ms, kept exact in a double (token-bucket.ts).
    if (points * settings.durationS * 1000 > Number.MAX_SAFE_INTEGER) {
      throw new Error(`RATE_LIMIT_POINTS/RATE_LIMIT_ANON_POINTS × RATE_LIMIT_DURATION_S × 1000 must stay below 2^53 (${points} × ${settings.durationS} s is too large)`);
    }
  }
  let redis: Redis | undefined;
  const warn = throttledWarning('rate limits not enforced: the rate-limit store cannot be reached');

  if (settings.redisUrl) {
    // No offline queue and one try per command: while Redis is away a request must not wait for it. A short
    // disconnectTimeout: ioredis keeps a timer that long after close() when the socket was already gone.
    redis = new Redis(settings.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2000, disconnectTimeout: 200 });
    redis.on('error', (err: Error) => warn(err.message));
  }
  const store: BucketStore = redis ? redisBuckets(redis) : memoryBuckets();
  /** On a socket: this limiter's bucket key for its requests without an API key (its client's address). */
  const IP_BUCKET = Symbol('rateLimitIpBucket');
  const durationMs = settings.durationS * 1000;

  /** The RateLimit headers of a token taken, added to `head` as name, value pairs (the door's and the middleware's). */
  const pushHeaders = (head: string[], limit: number, result: TakeResult) => {
    head.push('RateLimit-Limit', String(limit), 'RateLimit-Remaining', String(result.remaining), 'RateLimit-Reset', String(Math.ceil(result.msUntilFull / 1000)));
  };
  const setHeaders = (res: ServerResponse, limit: number, result: TakeResult) => {
    const head: string[] = [];
    pushHeaders(head, limit, result);
    for (let i = 0; i < head.length; i += 2) res.setHeader(head[i], head[i + 1]);
  };
  const takenBy = (req: IncomingMessage) => (req as IncomingMessage & { [TAKEN]?: Taken })[TAKEN];

  /** The bucket of a request without a key: its client's address, the same for every request of a connection. */
  const ipBucket = (req: IncomingMessage & { ip?: string }): string => {
    if (req.ip !== undefined) return `${settings.redisPrefix}:ip:${req.ip}`;
    const socket = req.socket as IncomingMessage['socket'] & { [IP_BUCKET]?: string };
    return (socket[IP_BUCKET] ??= `${settings.redisPrefix}:ip:${socket.remoteAddress ?? 'unknown'}`);
  };

  /**
   * Takes a token; `result` is null when the store cannot be reached (served without a limit). At once
   * (no promise) from a store in memory.
   */
  const takeToken = (req: IncomingMessage & { ip?: string }): Taken | Promise<Taken> => {
    const apiKey = keyFromHeaders(req.headers);
    const limit = apiKey ? settings.keyedPoints : settings.anonymousPoints;
    const key = apiKey ? `${settings.redisPrefix}:key:${digestOf(apiKey)}` : ipBucket(req);
    if (store.takeNow) return { limit, apiKey, result: store.takeNow(key, limit, durationMs) };
    return store.take(key, limit, durationMs).then(
      (result) => ({ limit, apiKey, result }),
      (err: unknown) => {
        warn(err instanceof Error ? err.message : String(err));
        return { limit, apiKey, result: null };
      },
    );
  };

  /** A refused token's wait (Retry-After, in seconds) and error; counted as a rejection. */
  const refusal = ({ limit, apiKey, result }: Taken & { result: TakeResult }) => {
    const wait = Math.max(1, Math.ceil(result.msUntilNext / 1000));
    const who = apiKey ? 'this API key' : 'requests without an API key from this address';
    rateLimitRejections.inc();
    return { wait, error: new RateLimitedError(`${who} has used its ${limit} requests (refilled evenly over ${settings.durationS} s); retry in ${wait} s`) };
  };

  const answer = (req: Request, res: Response, next: NextFunction, taken: Taken) => {
    const { limit, result } = taken;
    if (!result) return next();
    setHeaders(res, limit, result);
    if (result.allowed) return next();
    const { wait, error } = refusal({ ...taken, result });
    res.setHeader('Retry-After', String(wait));
    sendMiddlewareError(req, res, error);
  };

  const middleware = (req: Request, res: Response, next: NextFunction) => {
    const taken = takenBy(req);
    if (taken) return answer(req, res, next, taken);
    const took = takeToken(req);
    if (took instanceof Promise) void took.then((t) => answer(req, res, next, t));
    else answer(req, res, next, took);
  };

  /** What take() does with the token: remembered on the request; whether the request may go on. */
  const keep = (req: IncomingMessage, taken: Taken): boolean => {
    // Should express answer the request after all, the middleware uses this token instead of another.
    (req as IncomingMessage & { [TAKEN]?: Taken })[TAKEN] = taken;
    return !taken.result || taken.result.allowed;
  };

  return {
    middleware,
    take(req) {
      const took = takeToken(req);
      return took instanceof Promise ? took.then((taken) => keep(req, taken)) : keep(req, took);
    },
    headers(req, head) {
      const taken = takenBy(req);
      if (!taken?.result?.allowed) return;
      pushHeaders(head, taken.limit, taken.result);
    },
    async takeUpgrade(req) {
      const taken = await takeToken(req);
      if (!taken.result || taken.result.allowed) return null;
      const { wait, error } = refusal({ ...taken, result: taken.result });
      const head: string[] = [];
      pushHeaders(head, taken.limit, taken.result);
      const headers: Record<string, string> = { 'Retry-After': String(wait) };
      for (let i = 0; i < head.length; i += 2) headers[head[i]] = head[i + 1];
      return { message: error.message, headers };
    },
    async close() {
      store.close();
      if (redis) await closeRedis(redis);
    },
  };
}
