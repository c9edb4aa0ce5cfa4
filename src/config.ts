import path from 'node:path';
import { availableParallelism } from 'node:os';
import { SIGNATURE_MODES, SignatureMode } from './common/eip712';

function intFromEnv(name: string, fallback: number, env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) {
    throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  }
  return value;
}

/** A percentage from 0 to 100 with at most two decimals ("5", "2.5"). */
function percentFromEnv(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d{1,3}(\.\d{1,2})?$/.test(raw) || Number(raw) > 100) {
    throw new Error(`${name} must be a percentage from 0 to 100 with at most two decimals, got "${raw}"`);
  }
  return Number(raw);
}

/** The default of AUCTION_MIN_INCREMENT_PERCENT: a bid on an english auction outbids the best by at least 5%. */
export const AUCTION_MIN_INCREMENT_PERCENT = 5;

function onOff(name: string, raw: string | undefined, fallback: boolean): boolean {
  if (raw === undefined || raw === '') return fallback;
  if (['on', 'true', '1'].includes(raw.toLowerCase())) return true;
  if (['off', 'false', '0'].includes(raw.toLowerCase())) return false;
  throw new Error(`${name} must be on or off, got "${raw}"`);
}

function oneOf<T extends string>(name: string, raw: string | undefined, allowed: readonly T[], fallback: T): T {
  if (raw === undefined || raw === '') return fallback;
  if ((allowed as readonly string[]).includes(raw)) return raw as T;
  throw new Error(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
}

/**
 * TRUSTED_DOCUMENTS: the registered operations of persisted-query manifests (docs/trusted-documents.md).
 * off: never read; allow: a registered id is served, and every other request as before; require: /graphql
 * runs registered operations only.
 */
export const TRUST_MODES = ['off', 'allow', 'require'] as const;
export type TrustMode = (typeof TRUST_MODES)[number];

/**
 * Confirmations a block needs before the chain follower applies it, by chain id, when CHAIN_CONFIRMATIONS
 * does not say (docs/chain.md): about the depth of the reorgs each chain has seen; 0 for local nodes.
 */
export const DEFAULT_CHAIN_CONFIRMATIONS: Record<string, number> = {
  '1': 12,
  '11155111': 6,
  '137': 64,
  '56': 15,
  '43114': 1,
  '31337': 0,
  '1337': 0,
};
const FALLBACK_CHAIN_CONFIRMATIONS = 12;

/** One chain the gateway follows (CHAIN_RPC_<chain_id>). */
export interface ChainFollowSettings {
  chainId: string;
  rpcUrl: string;
  /** Blocks on top of a block before it is applied (CHAIN_CONFIRMATIONS_<chain_id>, else CHAIN_CONFIRMATIONS, else the chain's default). */
  confirmations: number;
  /**
   * CHAIN_OPERATOR_<chain_id>: the marketplace's operator on this chain (lower case), the address sellers approve
   * (setApprovalForAll, approve) so that their listings can be filled; unset: approvals are not followed.
   */
  operator?: string;
}

export interface ChainSettings {
  /** Every CHAIN_RPC_<chain_id> set; none: no follower runs. */
  follow: ChainFollowSettings[];
  /** CHAIN_POLL_MS: the follower asks its node for the head this often when it has caught up. */
  pollMs: number;
  /** CHAIN_BLOCK_RANGE: blocks asked for in one eth_getLogs call while catching up. */
  blockRange: number;
  /** CHAIN_STEP_TRANSFERS: transfers applied in one transaction at most (whole blocks); CHAIN_STEP_TRANSFERS_DEFAULT when not given. */
  stepTransfers?: number;
}

export const CHAIN_STEP_TRANSFERS_DEFAULT = 5000;

/** An ERC-20 token prices may be given in, besides those the currencies migration seeds (CURRENCIES). */
export interface CurrencySetting {
  chainId: string;
  symbol: string;
  /** Lower-case. */
  address: string;
  decimals: number;
}

/**
 * CURRENCIES=<chain_id>:<SYMBOL>:<address>:<decimals>,... (e.g. `1:USDT:0xdac17f958d2ee523a2206206994597c13d831ec7:6`):
 * tokens added to the currencies table at start (docs/market.md "Currencies"). A malformed entry stops the start.
 */
export function currencySettingsFromEnv(raw: string | undefined): CurrencySetting[] {
  const entries = (raw ?? '').split(',').map((e) => e.trim()).filter(Boolean);
  return entries.map((entry) => {
    const match = /^([1-9]\d{0,19}):([A-Za-z0-9.]{1,20}):(0x[0-9a-fA-F]{40}):(\d{1,2})$/.exec(entry);
    if (!match || Number(match[4]) > 18) {
      throw new Error(`CURRENCIES: each entry is <chain_id>:<SYMBOL>:<address>:<decimals 0..18>, e.g. 1:USDT:0xdac17f958d2ee523a2206206994597c13d831ec7:6; got "${entry}"`);
    }
    return { chainId: match[1], symbol: match[2], address: match[3].toLowerCase(), decimals: Number(match[4]) };
  });
}

/** The chains to follow, from CHAIN_RPC_<chain_id>=http(s)://... and the confirmation settings. */
/** An http(s) gateway URL, ending with a slash so that the CID or id is appended to it. */
function gatewayFromEnv(name: string, raw: string | undefined, fallback: string): string {
  const value = raw || fallback;
  if (!/^https?:\/\/[^/]/.test(value)) throw new Error(`${name} must be an http(s):// URL, got "${value}"`);
  return value.endsWith('/') ? value : `${value}/`;
}

/** CHAIN_OPERATOR_<chain_id>: an address ("0x" + 40 hex digits), in lower case; undefined when unset. */
function operatorFromEnv(chainId: string, env: NodeJS.ProcessEnv): string | undefined {
  const name = `CHAIN_OPERATOR_${chainId}`;
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (!/^0x[0-9a-fA-F]{40}$/.test(raw)) throw new Error(`${name} must be an address ("0x" + 40 hex digits), got "${raw}"`);
  return raw.toLowerCase();
}

export function chainSettingsFromEnv(env: NodeJS.ProcessEnv): ChainSettings {
  const follow: ChainFollowSettings[] = [];
  for (const [name, raw] of Object.entries(env)) {
    const match = /^CHAIN_RPC_(.*)$/.exec(name);
    if (!match || raw === undefined || raw === '') continue;
    const chainId = match[1];
    if (!/^[1-9]\d{0,19}$/.test(chainId)) throw new Error(`${name}: the suffix must be an EIP-155 chain id (a positive integer), got "${chainId}"`);
    if (!/^https?:\/\/\S+$/.test(raw)) throw new Error(`${name} must be an http(s):// URL of a JSON-RPC node, got "${raw}"`);
    const fallback = intFromEnv('CHAIN_CONFIRMATIONS', DEFAULT_CHAIN_CONFIRMATIONS[chainId] ?? FALLBACK_CHAIN_CONFIRMATIONS, env);
    const operator = operatorFromEnv(chainId, env);
    follow.push({ chainId, rpcUrl: raw, confirmations: intFromEnv(`CHAIN_CONFIRMATIONS_${chainId}`, fallback, env), ...(operator ? { operator } : {}) });
  }
  for (const name of Object.keys(env)) {
    const match = /^CHAIN_OPERATOR_(.*)$/.exec(name);
    if (match && env[name] && !follow.some((c) => c.chainId === match[1])) throw new Error(`${name} is set but CHAIN_RPC_${match[1]} is not: an operator is only followed on a followed chain`);
  }
  follow.sort((a, b) => Number(a.chainId) - Number(b.chainId));
  return {
    follow,
    pollMs: Math.max(10, intFromEnv('CHAIN_POLL_MS', 2000, env)),
    blockRange: Math.max(1, intFromEnv('CHAIN_BLOCK_RANGE', 2000, env)),
    stepTransfers: Math.max(1, intFromEnv('CHAIN_STEP_TRANSFERS', CHAIN_STEP_TRANSFERS_DEFAULT, env)),
  };
}

/** SETTLEMENT: how a sale settles (docs/chain.md "Settlement on chain"). */
export const SETTLEMENT_MODES = ['offchain', 'chain'] as const;
export type SettlementMode = (typeof SETTLEMENT_MODES)[number];

export interface SettlementSettings {
  /** offchain (default): a sale completes at once; chain: its order is pending until the follower sees the transfer. */
  mode: SettlementMode;
  /** SETTLEMENT_DEADLINE: seconds a pending order waits for its transfer before it fails. Default 3600. */
  deadlineSeconds: number;
}

export const DEFAULT_SETTLEMENT_DEADLINE_S = 3600;

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

export interface MetadataSettings {
  /** METADATA_FETCH: this process runs a fetch worker (several processes share the queue safely). */
  fetch: boolean;
  /** METADATA_ALLOW_PRIVATE: documents on private, loopback and link-local addresses are fetched. */
  allowPrivate: boolean;
  /** IPFS_GATEWAY: the HTTP gateway ipfs:// URIs are read through (the CID and path are appended). */
  ipfsGateway: string;
  /** ARWEAVE_GATEWAY: the same for ar:// URIs. */
  arweaveGateway: string;
  /** METADATA_TIMEOUT_MS: the whole fetch of one document (every redirect hop included). */
  timeoutMs: number;
  /** METADATA_MAX_BYTES: a larger document fails. */
  maxBytes: number;
  /** METADATA_MAX_REDIRECTS: redirects followed, each hop's target checked. */
  maxRedirects: number;
  /** METADATA_CONCURRENCY: documents one process fetches at once. */
  concurrency: number;
  /** METADATA_HOST_CONCURRENCY: of them, at most this many from one host (a slow host does not hold the rest). */
  hostConcurrency: number;
  /** METADATA_MAX_ATTEMPTS: attempts before the state is `failed` (a refused target, too large or not JSON fail at once). */
  maxAttempts: number;
  /** METADATA_BACKOFF_BASE_MS / METADATA_BACKOFF_MAX_MS: the first retry's delay, doubled each time up to the max. */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** METADATA_POLL_MS: milliseconds between looks for work when there was none. */
  pollMs: number;
  /** METADATA_REFRESH_INTERVAL_S: a key may ask to refresh the same asset or collection once per this many seconds. */
  refreshIntervalS: number;
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
    port: intFromEnv('PORT', 4000),
    host: env.HOST || '0.0.0.0',
    workers: env.WORKERS === 'auto' ? availableParallelism() : Math.max(1, intFromEnv('WORKERS', 1)),
    databaseUrl,
    dataDir: path.resolve(env.DATA_DIR || 'data'),
    replicaUrls: (env.DATABASE_REPLICA_URLS ?? '').split(',').map((u) => u.trim()).filter(Boolean),
    replicaMaxLagMs: intFromEnv('REPLICA_MAX_LAG_MS', 2000),
    dbPoolSize: intFromEnv('DB_POOL_SIZE', 10),
    dbQueryTimeoutMs: intFromEnv('DB_QUERY_TIMEOUT_MS', 30000),
    dbStatementTimeoutMs: intFromEnv('DB_STATEMENT_TIMEOUT_MS', 10000),
    dbImportStatementTimeoutMs: intFromEnv('DB_IMPORT_STATEMENT_TIMEOUT_MS', 120000),
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
    metricsToken: env.METRICS_TOKEN || undefined,
    requestBodyTimeoutMs: Math.max(1, intFromEnv('REQUEST_BODY_TIMEOUT_MS', 30000)),
    httpKeepAliveTimeoutMs: Math.max(1, intFromEnv('HTTP_KEEP_ALIVE_TIMEOUT_MS', 65000)),
    compression: onOff('COMPRESSION', env.COMPRESSION, true),
    sqlPlans: onOff('SQL_PLANS', env.SQL_PLANS, true),
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
    redisUrl: env.REDIS_URL || undefined,
    signatures: oneOf('SIGNATURES', env.SIGNATURES, SIGNATURE_MODES, 'optional'),
    trustedDocuments: oneOf('TRUSTED_DOCUMENTS', env.TRUSTED_DOCUMENTS, TRUST_MODES, 'allow'),
    statisticsMaxAgeMs: Math.max(0, intFromEnv('STATISTICS_MAX_AGE_MS', 1000)),
    auctionMinIncrementPercent: percentFromEnv('AUCTION_MIN_INCREMENT_PERCENT', env.AUCTION_MIN_INCREMENT_PERCENT, AUCTION_MIN_INCREMENT_PERCENT),
    expirySweeper: onOff('EXPIRY_SWEEPER', env.EXPIRY_SWEEPER, true),
    eventsPollMs: Math.max(10, intFromEnv('EVENTS_POLL_MS', 1000)),
    subscriptionsPerConnection: Math.max(1, intFromEnv('SUBSCRIPTIONS_PER_CONNECTION', 20)),
    webhooks: {
      deliver: onOff('WEBHOOK_DELIVERY', env.WEBHOOK_DELIVERY, true),
      allowPrivate: onOff('WEBHOOK_ALLOW_PRIVATE', env.WEBHOOK_ALLOW_PRIVATE, false),
      timeoutMs: Math.max(1, intFromEnv('WEBHOOK_TIMEOUT_MS', 10_000)),
      backoffBaseMs: Math.max(1, intFromEnv('WEBHOOK_BACKOFF_BASE_MS', 10_000)),
      backoffMaxMs: Math.max(1, intFromEnv('WEBHOOK_BACKOFF_MAX_MS', 3_600_000)),
      retryWindowMs: intFromEnv('WEBHOOK_RETRY_WINDOW_MS', 86_400_000),
      pollMs: Math.max(10, intFromEnv('WEBHOOK_POLL_MS', 1000)),
    },
    chains: chainSettingsFromEnv(env),
    metadata: {
      fetch: onOff('METADATA_FETCH', env.METADATA_FETCH, true),
      allowPrivate: onOff('METADATA_ALLOW_PRIVATE', env.METADATA_ALLOW_PRIVATE, false),
      ipfsGateway: gatewayFromEnv('IPFS_GATEWAY', env.IPFS_GATEWAY, 'https://ipfs.io/ipfs/'),
      arweaveGateway: gatewayFromEnv('ARWEAVE_GATEWAY', env.ARWEAVE_GATEWAY, 'https://arweave.net/'),
      timeoutMs: Math.max(1, intFromEnv('METADATA_TIMEOUT_MS', 10_000, env)),
      maxBytes: Math.max(1, intFromEnv('METADATA_MAX_BYTES', 1_048_576, env)),
      maxRedirects: Math.max(0, intFromEnv('METADATA_MAX_REDIRECTS', 5, env)),
      concurrency: Math.max(1, intFromEnv('METADATA_CONCURRENCY', 64, env)),
      hostConcurrency: Math.max(1, intFromEnv('METADATA_HOST_CONCURRENCY', 16, env)),
      maxAttempts: Math.max(1, intFromEnv('METADATA_MAX_ATTEMPTS', 5, env)),
      backoffBaseMs: Math.max(1, intFromEnv('METADATA_BACKOFF_BASE_MS', 30_000, env)),
      backoffMaxMs: Math.max(1, intFromEnv('METADATA_BACKOFF_MAX_MS', 3_600_000, env)),
      pollMs: Math.max(10, intFromEnv('METADATA_POLL_MS', 1000, env)),
      refreshIntervalS: Math.max(0, intFromEnv('METADATA_REFRESH_INTERVAL_S', 60, env)),
    },
    currencies: currencySettingsFromEnv(env.CURRENCIES),
    settlement: {
      mode: oneOf('SETTLEMENT', env.SETTLEMENT, SETTLEMENT_MODES, 'offchain'),
      deadlineSeconds: Math.max(1, intFromEnv('SETTLEMENT_DEADLINE', DEFAULT_SETTLEMENT_DEADLINE_S, env)),
    },
  };
}
