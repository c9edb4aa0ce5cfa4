import type { IncomingMessage } from 'node:http';
import type { Span } from '@opentelemetry/api';
import Redis from 'ioredis';
import { LRUCache } from 'lru-cache';
import { RateLimitSettings } from '../../config';
import { RateLimitedError } from '../../common/errors';
import { rateLimitRejections } from '../../common/metrics';
import { requestSpanOf, traceRedis } from '../../common/tracing';
import { digestOf, keyFromHeaders } from '../../modules/apikey/api-key.service';
import { closeRedis, throttledWarning } from './redis';
import { BucketStore, memoryBuckets, redisBuckets, TakeResult } from './token-bucket';

export interface RateLimit {
  /**
   * Takes the request's token (the entry's rate-limit step, http/exchange.ts admit): its headers and, when
   * refused, its 429. At once (no promise) from a store in memory, unless a key must be looked up.
   */
  take(req: IncomingMessage): RateTicket | Promise<RateTicket>;
  /**
   * Takes the token of a WebSocket upgrade (which counts as a request of its client): null when it may go
   * on, else the refusal's message and the headers of its 429 (Retry-After, RateLimit-*).
   */
  takeUpgrade(req: IncomingMessage): Promise<{ message: string; headers: Record<string, string> } | null>;
  /**
   * What a request's own lookup of its API key found (the request context's): a valid key gets its own
   * bucket from then on; an unknown or revoked one spends its address's bucket again.
   */
  keyChecked(apiKey: string, valid: boolean): void;
  close(): Promise<void>;
}

/** What taking a request's token said: the headers its answer carries, and the 429 it is refused with, if it is. */
export interface RateTicket {
  /** RateLimit-Limit, -Remaining, -Reset (and Retry-After when refused), as name, value pairs; none when the store cannot be reached. */
  headers: string[];
  refused?: RateLimitedError;
}
/** `who`: whose requests the bucket counts, for the 429's message. */
type Taken = { limit: number; who: string; result: TakeResult | null };

/** Keys found valid are remembered this long after their last lookup (each keyed request's own refreshes it). */
const KNOWN_KEY_MS = 10 * 60 * 1000;
/** At most this many keys are remembered; the least recently confirmed go first. */
const MAX_KNOWN_KEYS = 100_000;

/** `then` on a value that may or may not be a promise: no promise when there was none. */
const andThen = <T, U>(value: T | Promise<T>, next: (v: T) => U | Promise<U>): U | Promise<U> =>
  value instanceof Promise ? value.then(next) : next(value);

/**
 * A token bucket per API key (by the key's digest: the key itself is never a Redis key or a log field)
 * and per client IP for requests without a key: `keyedPoints` / `anonymousPoints` tokens, refilled evenly
 * over `durationS`, one token per request (token-bucket.ts). In memory, or in Redis when `redisUrl` is
 * set, so that every process of a deployment draws from one bucket. When Redis cannot be reached,
 * requests are served without a limit (fail open) and a warning is logged.
 *
 * A key this process has not found valid lately (KnownKeys) spends its address's token as well as its
 * own: made-up keys cannot buy a fresh bucket each. When the address has none left, the key is looked up
 * (`isValidKey`) before the request is refused, so that a valid key is never shut out by its neighbours.
 */
export function createRateLimit(settings: RateLimitSettings, isValidKey: (apiKey: string) => Promise<boolean>): RateLimit {
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

  /** The RateLimit headers of a token taken, added to `head` as name, value pairs. */
  const pushHeaders = (head: string[], limit: number, result: TakeResult) => {
    head.push('RateLimit-Limit', String(limit), 'RateLimit-Remaining', String(result.remaining), 'RateLimit-Reset', String(Math.ceil(result.msUntilFull / 1000)));
  };

  /** The bucket of a request without a key: its client's address, the same for every request of a connection. */
  const ipBucket = (req: IncomingMessage & { ip?: string }): string => {
    if (req.ip !== undefined) return `${settings.redisPrefix}:ip:${req.ip}`;
    const socket = req.socket as IncomingMessage['socket'] & { [IP_BUCKET]?: string };
    return (socket[IP_BUCKET] ??= `${settings.redisPrefix}:ip:${socket.remoteAddress ?? 'unknown'}`);
  };

  // The digests of the API keys found valid lately, in this process's memory: has() does not refresh a key,
  // so the least recently confirmed go first.
  const known = new LRUCache<string, true>({ max: MAX_KNOWN_KEYS, ttl: KNOWN_KEY_MS });
  /** What a lookup of the key found: a valid key is remembered (again), a key not valid is forgotten. */
  const remember = (digest: string, valid: boolean): void => {
    if (valid) known.set(digest, true);
    else known.delete(digest);
  };

  /**
   * Takes a token from one bucket; `result` is null when the store cannot be reached. At once from a store
   * in memory; Redis's call is a span of the request's trace (`span`, when traced).
   */
  const takeFrom = (bucket: string, limit: number, who: string, span: Span | undefined): Taken | Promise<Taken> => {
    if (store.takeNow) return { limit, who, result: store.takeNow(bucket, limit, durationMs) };
    return traceRedis(span, 'evalsha', () => store.take(bucket, limit, durationMs)).then(
      (result) => ({ limit, who, result }),
      (err: unknown) => {
        warn(err instanceof Error ? err.message : String(err));
        return { limit, who, result: null };
      },
    );
  };

  /** A refused token's wait (Retry-After, in seconds) and error; counted as a rejection. */
  const refusal = ({ limit, who, result }: Taken & { result: TakeResult }) => {
    const wait = Math.max(1, Math.ceil(result.msUntilNext / 1000));
    rateLimitRejections.inc();
    return { wait, error: new RateLimitedError(`${who} has used its ${limit} requests (refilled evenly over ${settings.durationS} s); retry in ${wait} s`) };
  };

  /**
   * Takes the request's token(s); `result` is null when the store cannot be reached (served without a
   * limit). At once (no promise) from a store in memory, unless a key must be looked up.
   */
  const takeToken = (req: IncomingMessage & { ip?: string }): Taken | Promise<Taken> => {
    const apiKey = keyFromHeaders(req.headers);
    const span = requestSpanOf(req);
    if (!apiKey) return takeFrom(ipBucket(req), settings.anonymousPoints, 'requests without an API key from this address', span);
    const digest = digestOf(apiKey);
    const own = () => takeFrom(`${settings.redisPrefix}:key:${digest}`, settings.keyedPoints, 'this API key', span);
    if (known.has(digest)) return own();
    return andThen(takeFrom(ipBucket(req), settings.anonymousPoints, 'requests from this address without a known API key', span), (byAddress) => {
      if (!byAddress.result || byAddress.result.allowed) return own();
      return isValidKey(apiKey).then(
        (valid) => {
          remember(digest, valid);
          return valid ? own() : byAddress;
        },
        () => byAddress,
      );
    });
  };

  /** A request's ticket from its token: its headers, and its refusal when the bucket is empty (fail open without a store). */
  const ticketOf = (taken: Taken): RateTicket => {
    const { limit, result } = taken;
    if (!result) return { headers: [] };
    const headers: string[] = [];
    pushHeaders(headers, limit, result);
    if (result.allowed) return { headers };
    const { wait, error } = refusal({ ...taken, result });
    headers.push('Retry-After', String(wait));
    return { headers, refused: error };
  };
  const take = (req: IncomingMessage): RateTicket | Promise<RateTicket> => andThen(takeToken(req), ticketOf);

  return {
    take,
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
    keyChecked(apiKey, valid) {
      remember(digestOf(apiKey), valid);
    },
    async close() {
      store.close();
      if (redis) await closeRedis(redis);
    },
  };
}
