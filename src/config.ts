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
  /** Load the demo data set into an empty embedded database on start. */
  seedDemo: boolean;
  jsonBodyLimit: string;
  /** Large queries (over largeQueryItems estimated items) running at once; the rest wait. 0: no limit. */
  largeQuerySlots: number;
  largeQueryItems: number;
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  /** NODE_ENV=production: introspection, the Sandbox page and field suggestions are off (docs/graphql-protections.md). */
  production: boolean;
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
    seedDemo: (env.SEED_DEMO ?? 'true') !== 'false',
    jsonBodyLimit: '1mb',
    largeQuerySlots: intFromEnv('LARGE_QUERY_SLOTS', 4),
    largeQueryItems: intFromEnv('LARGE_QUERY_ITEMS', 5000),
    logLevel: (env.LOG_LEVEL as Config['logLevel']) || 'info',
    production: env.NODE_ENV === 'production',
  };
}
