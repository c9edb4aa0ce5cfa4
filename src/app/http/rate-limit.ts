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
  close(): Promise<void>;
}

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
  const durationMs = settings.durationS * 1000;

  const setHeaders = (res: Response, limit: number, result: TakeResult) => {
    res.setHeader('RateLimit-Limit', String(limit));
    res.setHeader('RateLimit-Remaining', String(result.remaining));
    res.setHeader('RateLimit-Reset', String(Math.ceil(result.msUntilFull / 1000)));
  };

  const middleware = (req: Request, res: Response, next: NextFunction) => {
    const apiKey = keyFromHeaders(req.headers);
    const [limit, key] = apiKey
      ? [settings.keyedPoints, `${settings.redisPrefix}:key:${digestOf(apiKey)}`]
      : [settings.anonymousPoints, `${settings.redisPrefix}:ip:${req.ip ?? req.socket.remoteAddress ?? 'unknown'}`];
    store.take(key, limit, durationMs).then(
      (result) => {
        setHeaders(res, limit, result);
        if (result.allowed) {
          next();
          return;
        }
        const wait = Math.max(1, Math.ceil(result.msUntilNext / 1000));
        res.setHeader('Retry-After', String(wait));
        const who = apiKey ? 'this API key' : 'requests without an API key from this address';
        rateLimitRejections.inc();
        sendMiddlewareError(req, res, new RateLimitedError(`${who} has used its ${limit} requests (refilled evenly over ${settings.durationS} s); retry in ${wait} s`));
      },
      (err: unknown) => {
        warn(err instanceof Error ? err.message : String(err));
        next();
      },
    );
  };

  return {
    middleware,
    async close() {
      store.close();
      if (redis) await closeRedis(redis);
    },
  };
}
