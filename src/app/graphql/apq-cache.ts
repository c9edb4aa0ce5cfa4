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
 * Where Apollo keeps a persisted query's text in the cache it is given: its key is this prefix and the
 * hash (APQ_CACHE_PREFIX of @apollo/server's request pipeline, which wraps the cache to add it).
 */
const APOLLO_APQ_PREFIX = 'apq:';

/**
 * The text of a persisted query by its hash, as Apollo will resolve it: what a request that sends only
 * the hash runs (the Idempotency-Key middleware must know whether it is a mutation before Apollo runs it).
 */
export function persistedQueryText(cache: QueryCache, hash: string): Promise<string | undefined> {
  return cache.get(APOLLO_APQ_PREFIX + hash);
}

/**
 * The persisted queries in this process's memory, least recently used dropped first once their texts
 * pass `maxChars` (Apollo's own default cache is bounded likewise, by about 30 MB). Made here rather than
 * left to Apollo so that the Idempotency-Key middleware reads the same texts (persistedQueryText).
 */
export function memoryQueryCache(maxChars = 15_000_000): QueryCache {
  const entries = new Map<string, { value: string; expiresAt: number }>();
  let chars = 0;
  const drop = (key: string) => {
    const entry = entries.get(key);
    if (!entry) return false;
    entries.delete(key);
    chars -= entry.value.length;
    return true;
  };
  return {
    async get(key) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (entry.expiresAt <= Date.now()) {
        drop(key);
        return undefined;
      }
      // Map keeps insertion order: moved to the end, it is the most recently used.
      entries.delete(key);
      entries.set(key, entry);
      return entry.value;
    },
    async set(key, value, options) {
      drop(key);
      if (value.length > maxChars) return;
      entries.set(key, { value, expiresAt: options?.ttl ? Date.now() + options.ttl * 1000 : Infinity });
      chars += value.length;
      for (const oldest of entries.keys()) {
        if (chars <= maxChars) break;
        drop(oldest);
      }
    },
    async delete(key) {
      return drop(key);
    },
    async close() {},
  };
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
