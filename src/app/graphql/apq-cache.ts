import Redis from 'ioredis';
import { closeRedis, throttledWarning } from '../http/redis';

/** Apollo's KeyValueCache, as its `persistedQueries.cache` takes it. */
export interface QueryCache {
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string, options?: { ttl?: number | null }): Promise<void>;
  delete(key: string): Promise<boolean | void>;
  close(): Promise<void>;
}

/**
 * The automatic persisted queries (APQ) of /graphql in Redis, so that a query registered through one
 * gateway process is found by every other (WORKERS=N, or N machines behind a balancer). While Redis is
 * away the cache misses (a client then sends the whole query again, as the APQ protocol has it) and a
 * warning is logged at most every 30 s; a request never fails or waits because of it.
 */
export function redisQueryCache(url: string, prefix: string): QueryCache {
  // Commands wait for the connection (at start, or a reconnect) at most commandTimeout: a miss costs a client one resend.
  const redis = new Redis(url, { commandTimeout: 500, maxRetriesPerRequest: 1, connectTimeout: 2000, disconnectTimeout: 200 });
  const warning = throttledWarning('persisted query cache unavailable; clients resend whole queries');
  const warn = (err: Error) => warning(err.message);
  redis.on('error', warn);
  return {
    async get(key) {
      try {
        return (await redis.get(`${prefix}${key}`)) ?? undefined;
      } catch (err) {
        warn(err as Error);
        return undefined;
      }
    },
    async set(key, value, options) {
      try {
        const ttl = options?.ttl;
        if (ttl) await redis.set(`${prefix}${key}`, value, 'EX', Math.ceil(ttl));
        else await redis.set(`${prefix}${key}`, value);
      } catch (err) {
        warn(err as Error);
      }
    },
    async delete(key) {
      try {
        return (await redis.del(`${prefix}${key}`)) > 0;
      } catch (err) {
        warn(err as Error);
        return false;
      }
    },
    close: () => closeRedis(redis),
  };
}
