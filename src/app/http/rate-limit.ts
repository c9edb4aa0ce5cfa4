import { NextFunction, Request, RequestHandler, Response } from 'express';
import Redis from 'ioredis';
import { IRateLimiterStoreOptions, RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { RateLimitSettings } from '../../config';
import { RateLimitedError } from '../../common/errors';
import { rateLimitRejections } from '../../common/metrics';
import { logger } from '../../common/logger';
import { digestOf, keyFromHeaders } from '../../modules/apikey/api-key.service';
import { sendMiddlewareError } from './respond';

/** A warning about the store at most this often: an outage must not flood the log. */
const WARN_EVERY_MS = 30_000;

export interface RateLimit {
  middleware: RequestHandler;
  close(): Promise<void>;
}

/**
 * Requests per window, counted per API key (by the key's digest: the key itself is never a Redis key
 * or a log field) and per client IP for requests without a key. In memory, or in Redis when
 * `redisUrl` is set, so that every process of a deployment counts against one limit. When Redis
 * cannot be reached, requests are served without a limit (fail open) and a warning is logged.
 */
export function createRateLimit(settings: RateLimitSettings): RateLimit {
  let redis: Redis | undefined;
  let lastWarning = 0;
  const warn = (reason: string) => {
    const now = Date.now();
    if (now - lastWarning < WARN_EVERY_MS) return;
    lastWarning = now;
    logger.warn('rate limits not enforced: the rate-limit store cannot be reached', { reason });
  };

  const limiter = (points: number, kind: string): RateLimiterAbstract => {
    const options = { points, duration: settings.durationS, keyPrefix: `${settings.redisPrefix}:${kind}` };
    if (!redis) return new RateLimiterMemory(options);
    // rejectIfRedisNotReady (documented, missing from the typings): fail at once while Redis is away instead of waiting.
    return new RateLimiterRedis({ ...options, storeClient: redis, rejectIfRedisNotReady: true } as IRateLimiterStoreOptions);
  };
  if (settings.redisUrl) {
    // No offline queue and one try per command: while Redis is away a request must not wait for it. A short
    // disconnectTimeout: ioredis keeps a timer that long after close() when the socket was already gone.
    redis = new Redis(settings.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2000, disconnectTimeout: 200 });
    redis.on('error', (err: Error) => warn(err.message));
  }
  const keyed = limiter(settings.keyedPoints, 'key');
  const anonymous = limiter(settings.anonymousPoints, 'ip');

  const setHeaders = (res: Response, limit: number, result: RateLimiterRes) => {
    res.setHeader('RateLimit-Limit', String(limit));
    res.setHeader('RateLimit-Remaining', String(Math.max(0, result.remainingPoints)));
    res.setHeader('RateLimit-Reset', String(Math.ceil(result.msBeforeNext / 1000)));
  };

  const middleware = (req: Request, res: Response, next: NextFunction) => {
    const apiKey = keyFromHeaders(req.headers);
    const [bucket, limit, subject] = apiKey
      ? [keyed, settings.keyedPoints, digestOf(apiKey)]
      : [anonymous, settings.anonymousPoints, req.ip ?? req.socket.remoteAddress ?? 'unknown'];
    bucket.consume(subject).then(
      (result) => {
        setHeaders(res, limit, result);
        next();
      },
      (rejection: unknown) => {
        if (!(rejection instanceof RateLimiterRes)) {
          warn(rejection instanceof Error ? rejection.message : String(rejection));
          next();
          return;
        }
        setHeaders(res, limit, rejection);
        const wait = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
        res.setHeader('Retry-After', String(wait));
        const who = apiKey ? 'this API key' : 'requests without an API key from this address';
        rateLimitRejections.inc();
        sendMiddlewareError(req, res, new RateLimitedError(`${who} made more than ${limit} requests in ${settings.durationS} s; retry in ${wait} s`));
      },
    );
  };

  return {
    middleware,
    async close() {
      const client = redis;
      if (!client || client.status === 'end') return;
      // Resolved once the socket is gone, so that nothing of Redis outlives the app (between retries there is no socket).
      const ended = client.status === 'reconnecting' ? Promise.resolve() : new Promise((resolve) => client.once('end', resolve));
      client.disconnect();
      await ended;
    },
  };
}
