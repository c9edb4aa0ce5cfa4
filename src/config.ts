import path from 'node:path';

function intFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) {
    throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  }
  return value;
}

function onOff(name: string, raw: string | undefined, fallback: boolean): boolean {
  if (raw === undefined || raw === '') return fallback;
  if (['on', 'true', '1'].includes(raw.toLowerCase())) return true;
  if (['off', 'false', '0'].includes(raw.toLowerCase())) return false;
  throw new Error(`${name} must be on or off, got "${raw}"`);
}

/** Every setting of the service, read once from the environment. Documented in the README. */
export interface Config {
  port: number;
  host: string;
  /** A real PostgreSQL server; when absent, the embedded PGlite under dataDir is used. */
  databaseUrl: string | undefined;
  dataDir: string;
  /** Connections in the pool to the database. */
  dbPoolSize: number;
  /** Milliseconds before a single SQL statement is abandoned with an error. */
  dbQueryTimeoutMs: number;
  /** Milliseconds a request waits for a database connection before it is answered 503 UNAVAILABLE. */
  dbPoolWaitMs: number;
  /** Milliseconds from SIGTERM/SIGINT to exit, whatever the clients and statements still do. */
  shutdownGraceMs: number;
  /** Load the demo data set into an empty embedded database on start. */
  seedDemo: boolean;
  jsonBodyLimit: string;
  /** Large queries (over largeQueryItems estimated items) running at once; the rest wait. 0: no limit. */
  largeQuerySlots: number;
  largeQueryItems: number;
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  /** NODE_ENV=production: introspection, the Sandbox page and field suggestions are off (docs/graphql-protections.md). */
  production: boolean;
  /** Browser origins allowed to send an API key (to write); every origin may read. */
  corsOrigins: string[];
  /** GET /metrics and the recording of metrics. */
  metrics: boolean;
  /** Aliases a /graphql document may use (the REST routes' own documents are not held to it). */
  maxAliases: number;
  /** gzip/br of responses over 1 KB for clients that accept it (off behind a proxy that compresses). */
  compression: boolean;
  /** A request (or a single SQL statement) slower than this is logged at warn, with its time. */
  slowRequestMs: number;
  slowStatementMs: number;
  /** Requests per window per API key and per client IP (anonymous); null when RATE_LIMIT=off. */
  rateLimit: RateLimitSettings | null;
  /** Seconds an Idempotency-Key and its response are kept. */
  idempotencyTtlS: number;
}

export interface RateLimitSettings {
  keyedPoints: number;
  anonymousPoints: number;
  durationS: number;
  /** Counts shared through this Redis when set; in the process's memory otherwise. */
  redisUrl: string | undefined;
  /** Prefix of the Redis keys, so that several deployments (or tests) can share one Redis. */
  redisPrefix: string;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const databaseUrl = env.DATABASE_URL || undefined;
  return {
    port: intFromEnv('PORT', 4000),
    host: env.HOST || '0.0.0.0',
    databaseUrl,
    dataDir: path.resolve(env.DATA_DIR || 'data'),
    dbPoolSize: intFromEnv('DB_POOL_SIZE', 10),
    dbQueryTimeoutMs: intFromEnv('DB_QUERY_TIMEOUT_MS', 30000),
    dbPoolWaitMs: intFromEnv('DB_POOL_WAIT_MS', 5000),
    shutdownGraceMs: intFromEnv('SHUTDOWN_GRACE_MS', 8000),
    seedDemo: (env.SEED_DEMO ?? 'true') !== 'false',
    jsonBodyLimit: '1mb',
    largeQuerySlots: intFromEnv('LARGE_QUERY_SLOTS', 4),
    largeQueryItems: intFromEnv('LARGE_QUERY_ITEMS', 5000),
    logLevel: (env.LOG_LEVEL as Config['logLevel']) || 'info',
    production: env.NODE_ENV === 'production',
    corsOrigins: (env.CORS_ORIGINS ?? '').split(',').map((o) => o.trim()).filter(Boolean),
    metrics: onOff('METRICS', env.METRICS, true),
    compression: onOff('COMPRESSION', env.COMPRESSION, true),
    maxAliases: intFromEnv('GRAPHQL_MAX_ALIASES', 15),
    slowRequestMs: intFromEnv('SLOW_REQUEST_MS', 1000),
    slowStatementMs: intFromEnv('SLOW_STATEMENT_MS', 500),
    rateLimit:
      env.RATE_LIMIT === 'off'
        ? null
        : {
            keyedPoints: intFromEnv('RATE_LIMIT_POINTS', 1200),
            anonymousPoints: intFromEnv('RATE_LIMIT_ANON_POINTS', 600),
            durationS: Math.max(1, intFromEnv('RATE_LIMIT_DURATION_S', 60)),
            redisUrl: env.REDIS_URL || undefined,
            redisPrefix: env.RATE_LIMIT_REDIS_PREFIX || 'nftgw:rl',
          },
    idempotencyTtlS: Math.max(1, intFromEnv('IDEMPOTENCY_TTL_S', 86400)),
  };
}
