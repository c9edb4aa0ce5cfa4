import path from 'node:path';
import { availableParallelism } from 'node:os';
import { SIGNATURE_MODES, SignatureMode } from './common/eip712';
import { intFromEnv, onOff, oneOf, percentFromEnv } from './config/env-readers';
import { ChainSettings, chainSettingsFromEnv } from './config/chains';
import { CurrencySetting, currencySettingsFromEnv } from './config/currencies';
import { MetadataSettings, metadataSettingsFromEnv } from './config/metadata';
import { SettlementSettings, settlementSettingsFromEnv } from './config/settlement';

// The settings of the chains, currencies, metadata and settlement, each with its reader, are in config/; the
// rest of the code imports them from here.
export { CHAIN_STEP_TRANSFERS_DEFAULT, chainSettingsFromEnv } from './config/chains';
export type { ChainFollowSettings, ChainSettings } from './config/chains';
export type { CurrencySetting } from './config/currencies';
export type { MetadataSettings } from './config/metadata';
export { DEFAULT_SETTLEMENT_DEADLINE_S } from './config/settlement';
export type { SettlementSettings } from './config/settlement';

/** How long an unused pooled connection stays open unless DB_POOL_IDLE_MS says (db/data-source.ts poolIdleMs). */
export const DEFAULT_POOL_IDLE_MS = 300_000;

/** The default of AUCTION_MIN_INCREMENT_PERCENT: a bid on an english auction outbids the best by at least 5%. */
export const AUCTION_MIN_INCREMENT_PERCENT = 5;

/**
 * TRUSTED_DOCUMENTS: the registered operations of persisted-query manifests (docs/trusted-documents.md).
 * off: never read; allow: a registered id is served, and every other request as before; require: /graphql
 * runs registered operations only.
 */
export const TRUST_MODES = ['off', 'allow', 'require'] as const;
export type TrustMode = (typeof TRUST_MODES)[number];

/** Every setting of the service, read once from the environment. Documented in the README. */
export interface Config {
  port: number;
  host: string;
  /** Server processes sharing the port (WORKERS=N, or auto: one per core); more than 1 needs DATABASE_URL. */
  workers: number;
  /** A real PostgreSQL server; when absent, the embedded PGlite under dataDir is used. */
  databaseUrl: string | undefined;
  dataDir: string;
  /** Read replicas of DATABASE_URL (DATABASE_REPLICA_URLS, comma-separated): read-only requests read from them. */
  replicaUrls: string[];
  /** A replica further behind than this is skipped (REPLICA_MAX_LAG_MS). */
  replicaMaxLagMs: number;
  /** Connections in the pool to the database. */
  dbPoolSize: number;
  /** Milliseconds before the client abandons a single SQL statement with an error (its own bound; the server's is dbStatementTimeoutMs). */
  dbQueryTimeoutMs: number;
  /** PostgreSQL's statement_timeout on every connection: a statement running longer is cancelled on the server (503 TIMEOUT). */
  dbStatementTimeoutMs: number;
  /** The statement_timeout inside an import's transaction (which waits behind another import of its collection). */
  dbImportStatementTimeoutMs: number;
  /** Milliseconds a request waits for a database connection before it is answered 503 UNAVAILABLE. */
  dbPoolWaitMs: number;
  /** Milliseconds an unused pooled connection stays open (DB_POOL_IDLE_MS; 0: until the server stops). */
  dbPoolIdleMs: number;
  /** Milliseconds from SIGTERM/SIGINT to exit, whatever the clients and statements still do. */
  shutdownGraceMs: number;
  /** Load the demo data set into an empty embedded database on start. */
  seedDemo: boolean;
  jsonBodyLimit: string;
  /** Large queries (over largeQueryItems estimated items) running at once; the rest wait. 0: no limit. */
  largeQuerySlots: number;
  largeQueryItems: number;
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  /** NODE_ENV=production: introspection, the Sandbox page, the local GraphiQL and field suggestions are off (docs/graphql-protections.md). */
  production: boolean;
  /** Browser origins allowed to send an API key (to write); every origin may read. */
  corsOrigins: string[];
  /** GET /metrics and the recording of metrics. */
  metrics: boolean;
  /** METRICS_TOKEN: when set, GET /metrics needs `Authorization: Bearer <token>` (401 otherwise). */
  metricsToken: string | undefined;
  /** REQUEST_BODY_TIMEOUT_MS: a request body that sends nothing for this long is ended with 408. */
  requestBodyTimeoutMs: number;
  /**
   * HTTP_KEEP_ALIVE_TIMEOUT_MS: how long an idle keep-alive connection is kept open. Longer than the idle
   * timeout of the balancers in front (Node's own agents 5 s, AWS ALB 60 s), so that the balancer, not the
   * service, closes an idle connection: otherwise a request it sends as the service closes is lost (a 502).
   */
  httpKeepAliveTimeoutMs: number;
  /** Aliases a /graphql document may use (the REST routes' own documents are not held to it). */
  maxAliases: number;
  /** gzip/br of responses over 1 KB for clients that accept it (off behind a proxy that compresses). */
  compression: boolean;
  /** Known queries that PostgreSQL can answer whole run as one JSON-building statement (app/graphql/sql-plan/). */
  sqlPlans: boolean;
  /** A request (or a single SQL statement) slower than this is logged at warn, with its time. */
  slowRequestMs: number;
  slowStatementMs: number;
  /** Token buckets per API key and per client IP (anonymous); null when RATE_LIMIT=off. */
  rateLimit: RateLimitSettings | null;
  /** Seconds an Idempotency-Key and its response are kept. */
  idempotencyTtlS: number;
  /** REDIS_URL: shared state of all processes (rate limits, persisted queries); in-process when unset. */
  redisUrl: string | undefined;
  /** SIGNATURES=off|optional|required: EIP-712 signatures of listings and offers (docs/signatures.md). */
  signatures: SignatureMode;
  /** TRUSTED_DOCUMENTS=off|allow|require: registered persisted-query manifests (docs/trusted-documents.md). */
  trustedDocuments: TrustMode;
  /** STATISTICS_MAX_AGE_MS: a statistics page is computed at most this often per database state (0: every time). */
  statisticsMaxAgeMs: number;
  /**
   * AUCTION_MIN_INCREMENT_PERCENT: a bid on an english auction must exceed its best bid by this percentage
   * (rounded up to the 18th decimal; 0: any amount above it). Default 5.
   */
  auctionMinIncrementPercent: number;
  /** EXPIRY_SWEEPER=off: this process writes no listing.expired / offer.expired events and settles no auction (other processes may). */
  expirySweeper: boolean;
  /** EVENTS_POLL_MS: live subscriptions check the event log's head this often, besides LISTEN/NOTIFY. */
  eventsPollMs: number;
  /** SUBSCRIPTIONS_PER_CONNECTION: operations one WebSocket connection may have open at once. */
  subscriptionsPerConnection: number;
  /** Webhook registration and delivery (docs/webhooks.md). */
  webhooks: WebhookSettings;
  /** The chains followed (CHAIN_RPC_<chain_id>, docs/chain.md); none by default. */
  chains: ChainSettings;
  /** Fetching the documents behind tokenURIs, and refreshes (docs/metadata.md). */
  metadata: MetadataSettings;
  /** CURRENCIES: ERC-20 tokens added to the seeded ones at start (docs/market.md "Currencies"). */
  currencies: CurrencySetting[];
  /** SETTLEMENT=offchain|chain and SETTLEMENT_DEADLINE (seconds): how sales settle (docs/chain.md "Settlement on chain"). */
  settlement: SettlementSettings;
}

export interface WebhookSettings {
  /** WEBHOOK_DELIVERY: this process runs a delivery worker (several processes share the work safely). */
  deliver: boolean;
  /** WEBHOOK_ALLOW_PRIVATE: targets on private, loopback and link-local addresses are accepted. */
  allowPrivate: boolean;
  /** Milliseconds a receiver has to answer (WEBHOOK_TIMEOUT_MS). */
  timeoutMs: number;
  /** The first retry's delay; each next one doubles, with jitter, up to backoffMaxMs. */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** How long one event is retried before its endpoint is disabled (WEBHOOK_RETRY_WINDOW_MS, 24 h). */
  retryWindowMs: number;
  /** Milliseconds between looks for work when there was none. */
  pollMs: number;
}

export interface RateLimitSettings {
  /** Capacity (largest burst) of an API key's bucket and of a client IP's. */
  keyedPoints: number;
  anonymousPoints: number;
  /** Seconds over which an empty bucket is refilled to its capacity, evenly. */
  durationS: number;
  /** Buckets shared through this Redis when set; in the process's memory otherwise. */
  redisUrl: string | undefined;
  /** Prefix of the Redis keys, so that several deployments (or tests) can share one Redis. */
  redisPrefix: string;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const databaseUrl = env.DATABASE_URL || undefined;
  return {
    port: intFromEnv('PORT', 4000, env),
    host: env.HOST || '0.0.0.0',
    workers: env.WORKERS === 'auto' ? availableParallelism() : Math.max(1, intFromEnv('WORKERS', 1, env)),
    databaseUrl,
    dataDir: path.resolve(env.DATA_DIR || 'data'),
    replicaUrls: (env.DATABASE_REPLICA_URLS ?? '').split(',').map((u) => u.trim()).filter(Boolean),
    replicaMaxLagMs: intFromEnv('REPLICA_MAX_LAG_MS', 2000, env),
    dbPoolSize: intFromEnv('DB_POOL_SIZE', 10, env),
    dbQueryTimeoutMs: intFromEnv('DB_QUERY_TIMEOUT_MS', 30000, env),
    dbStatementTimeoutMs: intFromEnv('DB_STATEMENT_TIMEOUT_MS', 10000, env),
    dbImportStatementTimeoutMs: intFromEnv('DB_IMPORT_STATEMENT_TIMEOUT_MS', 120000, env),
    dbPoolWaitMs: intFromEnv('DB_POOL_WAIT_MS', 5000, env),
    dbPoolIdleMs: intFromEnv('DB_POOL_IDLE_MS', DEFAULT_POOL_IDLE_MS, env),
    shutdownGraceMs: intFromEnv('SHUTDOWN_GRACE_MS', 8000, env),
    seedDemo: (env.SEED_DEMO ?? 'true') !== 'false',
    jsonBodyLimit: '1mb',
    largeQuerySlots: intFromEnv('LARGE_QUERY_SLOTS', 4, env),
    largeQueryItems: intFromEnv('LARGE_QUERY_ITEMS', 5000, env),
    logLevel: (env.LOG_LEVEL as Config['logLevel']) || 'info',
    production: env.NODE_ENV === 'production',
    corsOrigins: (env.CORS_ORIGINS ?? '').split(',').map((o) => o.trim()).filter(Boolean),
    metrics: onOff('METRICS', env.METRICS, true),
    metricsToken: env.METRICS_TOKEN || undefined,
    requestBodyTimeoutMs: Math.max(1, intFromEnv('REQUEST_BODY_TIMEOUT_MS', 30000, env)),
    httpKeepAliveTimeoutMs: Math.max(1, intFromEnv('HTTP_KEEP_ALIVE_TIMEOUT_MS', 65000, env)),
    compression: onOff('COMPRESSION', env.COMPRESSION, true),
    sqlPlans: onOff('SQL_PLANS', env.SQL_PLANS, true),
    maxAliases: intFromEnv('GRAPHQL_MAX_ALIASES', 15, env),
    slowRequestMs: intFromEnv('SLOW_REQUEST_MS', 1000, env),
    slowStatementMs: intFromEnv('SLOW_STATEMENT_MS', 500, env),
    rateLimit:
      env.RATE_LIMIT === 'off'
        ? null
        : {
            keyedPoints: intFromEnv('RATE_LIMIT_POINTS', 1200, env),
            anonymousPoints: intFromEnv('RATE_LIMIT_ANON_POINTS', 600, env),
            durationS: Math.max(1, intFromEnv('RATE_LIMIT_DURATION_S', 60, env)),
            redisUrl: env.REDIS_URL || undefined,
            redisPrefix: env.RATE_LIMIT_REDIS_PREFIX || 'nftgw:rl',
          },
    idempotencyTtlS: Math.max(1, intFromEnv('IDEMPOTENCY_TTL_S', 86400, env)),
    redisUrl: env.REDIS_URL || undefined,
    signatures: oneOf('SIGNATURES', env.SIGNATURES, SIGNATURE_MODES, 'optional'),
    trustedDocuments: oneOf('TRUSTED_DOCUMENTS', env.TRUSTED_DOCUMENTS, TRUST_MODES, 'allow'),
    statisticsMaxAgeMs: Math.max(0, intFromEnv('STATISTICS_MAX_AGE_MS', 1000, env)),
    auctionMinIncrementPercent: percentFromEnv('AUCTION_MIN_INCREMENT_PERCENT', env.AUCTION_MIN_INCREMENT_PERCENT, AUCTION_MIN_INCREMENT_PERCENT),
    expirySweeper: onOff('EXPIRY_SWEEPER', env.EXPIRY_SWEEPER, true),
    eventsPollMs: Math.max(10, intFromEnv('EVENTS_POLL_MS', 1000, env)),
    subscriptionsPerConnection: Math.max(1, intFromEnv('SUBSCRIPTIONS_PER_CONNECTION', 20, env)),
    webhooks: {
      deliver: onOff('WEBHOOK_DELIVERY', env.WEBHOOK_DELIVERY, true),
      allowPrivate: onOff('WEBHOOK_ALLOW_PRIVATE', env.WEBHOOK_ALLOW_PRIVATE, false),
      timeoutMs: Math.max(1, intFromEnv('WEBHOOK_TIMEOUT_MS', 10_000, env)),
      backoffBaseMs: Math.max(1, intFromEnv('WEBHOOK_BACKOFF_BASE_MS', 10_000, env)),
      backoffMaxMs: Math.max(1, intFromEnv('WEBHOOK_BACKOFF_MAX_MS', 3_600_000, env)),
      retryWindowMs: intFromEnv('WEBHOOK_RETRY_WINDOW_MS', 86_400_000, env),
      pollMs: Math.max(10, intFromEnv('WEBHOOK_POLL_MS', 1000, env)),
    },
    chains: chainSettingsFromEnv(env),
    metadata: metadataSettingsFromEnv(env),
    currencies: currencySettingsFromEnv(env.CURRENCIES),
    settlement: settlementSettingsFromEnv(env),
  };
}
