import Redis from 'ioredis';

/**
 * A token bucket of `capacity` tokens refilled evenly over `durationMs` (capacity / durationMs tokens per ms).
 *
 * Its level is kept in integer units: one token is `durationMs` units, so `elapsed ms × capacity` units flow
 * in per elapsed millisecond, and every figure is an integer that a double (JavaScript's and Redis Lua's
 * number) holds exactly up to 2^53 (capacity 10^9 over one hour is 3.6 × 10^15). That is what lets the
 * Lua script below and takeToken() compute the same answers bit for bit.
 */
export interface Bucket {
  /** Tokens × durationMs. */
  level: number;
  /** Milliseconds (epoch) of the last refill. */
  at: number;
}

export interface TakeResult {
  allowed: boolean;
  /** Whole tokens left after this request. */
  remaining: number;
  /** Milliseconds until the next whole token (0 when full). When refused: how long to wait. */
  msUntilNext: number;
  /** Milliseconds until the bucket is full again. */
  msUntilFull: number;
}

/** The arithmetic of one request, shared by the in-memory store; TAKE_LUA is its line-by-line twin. */
export function takeToken(bucket: Bucket | undefined, now: number, capacity: number, durationMs: number): TakeResult & { bucket: Bucket } {
  const full = capacity * durationMs;
  let level = bucket ? bucket.level : full;
  let at = bucket ? bucket.at : now;
  // A clock that went back (another process's, a step) refills nothing and does not move the refill time back.
  const elapsed = Math.min(Math.max(now - at, 0), durationMs);
  if (now > at) at = now;
  level = Math.min(full, level + elapsed * capacity);
  const allowed = level >= durationMs;
  if (allowed) level -= durationMs;
  const remaining = Math.floor(level / durationMs);
  const msUntilNext = level >= full ? 0 : Math.ceil((durationMs * (remaining + 1) - level) / capacity);
  const msUntilFull = Math.ceil((full - level) / capacity);
  return { allowed, remaining, msUntilNext, msUntilFull, bucket: { level, at } };
}

/**
 * takeToken() in Redis, atomically: KEYS[1] the bucket (a hash of l = level, t = refill time),
 * ARGV capacity, durationMs and now (ms; empty: Redis's own TIME, the one clock all processes share).
 * The key expires when the bucket would be full again: a missing bucket is a full one.
 */
export const TAKE_LUA = `
local capacity = tonumber(ARGV[1])
local duration = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local full = capacity * duration
local stored = redis.call('HMGET', KEYS[1], 'l', 't')
local level = tonumber(stored[1])
local at = tonumber(stored[2])
if level == nil or at == nil then
  level = full
  at = now
end
local elapsed = math.min(math.max(now - at, 0), duration)
if now > at then at = now end
level = math.min(full, level + elapsed * capacity)
local allowed = 0
if level >= duration then
  level = level - duration
  allowed = 1
end
local remaining = math.floor(level / duration)
local untilNext = 0
if level < full then untilNext = math.ceil((duration * (remaining + 1) - level) / capacity) end
local untilFull = math.ceil((full - level) / capacity)
redis.call('HSET', KEYS[1], 'l', string.format('%.0f', level), 't', string.format('%.0f', at))
redis.call('PEXPIRE', KEYS[1], untilFull + 1000)
return { allowed, remaining, untilNext, untilFull }
`;

export interface BucketStore {
  /** Takes one token from the bucket `key`; rejects when the store cannot be reached. `now` only for tests. */
  take(key: string, capacity: number, durationMs: number, now?: number): Promise<TakeResult>;
  /** take() at once, for a store in this process's memory (it cannot fail): no promise per request. */
  takeNow?(key: string, capacity: number, durationMs: number, now?: number): TakeResult;
  close(): void;
}

/** Buckets in this process's memory; a bucket is dropped once it would be full again (a missing bucket is full). */
export function memoryBuckets(): BucketStore {
  const buckets = new Map<string, Bucket & { fullAt: number }>();
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const [key, bucket] of buckets) if (bucket.fullAt <= now) buckets.delete(key);
  }, 30_000);
  sweep.unref();
  const takeNow = (key: string, capacity: number, durationMs: number, now = Date.now()): TakeResult => {
    const stored = buckets.get(key);
    const { bucket, ...result } = takeToken(stored, now, capacity, durationMs);
    // The stored bucket changes in place: no new bucket object per request.
    if (stored) {
      stored.level = bucket.level;
      stored.at = bucket.at;
      stored.fullAt = now + result.msUntilFull;
    } else buckets.set(key, { level: bucket.level, at: bucket.at, fullAt: now + result.msUntilFull });
    return result;
  };
  return {
    take: async (key, capacity, durationMs, now) => takeNow(key, capacity, durationMs, now),
    takeNow,
    close: () => clearInterval(sweep),
  };
}

type TakeCommand = (key: string, capacity: number, durationMs: number, now: string) => Promise<[number, number, number, number]>;

/** Buckets in Redis, shared by every process that uses it: one script call (EVALSHA) per request. */
export function redisBuckets(redis: Redis): BucketStore {
  redis.defineCommand('nftgwTakeToken', { numberOfKeys: 1, lua: TAKE_LUA });
  const command = (redis as unknown as { nftgwTakeToken: TakeCommand }).nftgwTakeToken.bind(redis);
  return {
    async take(key, capacity, durationMs, now) {
      const [allowed, remaining, msUntilNext, msUntilFull] = await command(key, capacity, durationMs, now === undefined ? '' : String(now));
      return { allowed: allowed === 1, remaining, msUntilNext, msUntilFull };
    },
    close: () => undefined,
  };
}
