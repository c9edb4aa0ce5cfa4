import type { SignatureMode } from '../../common/eip712';
import type { ChainSettings, MetadataSettings, RateLimitSettings, SettlementSettings, TrustMode, WebhookSettings } from '../../config';

/** The settings of one app (createApp); main.ts passes the configured ones, tests what they test. */
export interface AppOptions {
  jsonBodyLimit?: string;
  /** See QueryGate; defaults 4 slots for queries over 5,000 estimated items. */
  largeQuerySlots?: number;
  largeQueryItems?: number;
  /** Browser origins that may send an API key (CORS_ORIGINS); any origin may read. */
  corsOrigins?: string[];
  /** Serve GET /metrics and record metrics (METRICS=off: false). Default true. */
  metrics?: boolean;
  /** Requests slower than this are logged as slow (SLOW_REQUEST_MS). Default 1000. */
  slowRequestMs?: number;
  /** Aliases a /graphql document may use (GRAPHQL_MAX_ALIASES); default 15. */
  maxAliases?: number;
  /** gzip/br for responses over 1 KB when the client accepts it (COMPRESSION=off: false). Default true. */
  compression?: boolean;
  /**
   * Known queries whose whole selection PostgreSQL can answer run as one statement that builds their JSON
   * (SQL_PLANS=off: false; app/graphql/sql-plan/). Default true.
   */
  sqlPlans?: boolean;
  /** Rate limits of /graphql and /v1; none when absent (main.ts passes the configured ones). */
  rateLimit?: RateLimitSettings | null;
  /** Seconds an Idempotency-Key's record is kept; default 24 h. */
  idempotencyTtlS?: number;
  /** NODE_ENV=production: no introspection, no Sandbox, no field suggestions in error messages. */
  production?: boolean;
  /** SIGNATURES: how listing and offer signatures are checked; default optional (verified when given). */
  signatures?: SignatureMode;
  /**
   * A statistics page is computed at most this often per database state (STATISTICS_MAX_AGE_MS; main.ts
   * passes it, 1,000 by default). 0 unless asked: tests that pin statistics to exact moments compute every time.
   */
  statisticsMaxAgeMs?: number;
  /** AUCTION_MIN_INCREMENT_PERCENT: a bid on an english auction exceeds its best bid by this much (default 5). */
  auctionMinIncrementPercent?: number;
  /** DB_IMPORT_STATEMENT_TIMEOUT_MS: the statement_timeout inside an import's transaction. Default 120,000. */
  importStatementTimeoutMs?: number;
  /** REDIS_URL: automatic persisted queries are kept there, shared by every process; in this process's memory otherwise. */
  redisUrl?: string;
  /** Prefix of the persisted queries' Redis keys (tests give each server its own). Default nftgw:apq: */
  apqRedisPrefix?: string;
  /**
   * TRUSTED_DOCUMENTS: the registered operations of persisted-query manifests (`npm run documents`,
   * docs/trusted-documents.md). `allow` (default) serves a registered id besides everything else, `require`
   * runs nothing else on /graphql, `off` never reads them.
   */
  trustedDocuments?: TrustMode;
  /**
   * Run the expiry sweeper in this process (EXPIRY_SWEEPER; main.ts passes it, on by default). Off unless
   * asked: tests that start many servers run it only where they test it.
   */
  expirySweeper?: boolean;
  /** Live subscriptions read the log's head this often whatever LISTEN/NOTIFY says (EVENTS_POLL_MS). Default 1000. */
  eventsPollMs?: number;
  /** LISTEN on the database for commits of other processes (on PGlite it is skipped by itself). Default true. */
  listenForEvents?: boolean;
  /** Operations one WebSocket connection may have open (SUBSCRIPTIONS_PER_CONNECTION). Default 20. */
  subscriptionsPerConnection?: number;
  /** METRICS_TOKEN: GET /metrics needs `Authorization: Bearer <token>` (401 otherwise); open when absent. */
  metricsToken?: string;
  /** REQUEST_BODY_TIMEOUT_MS: a request body that sends nothing for this long is ended with 408. Default 30,000. */
  requestBodyTimeoutMs?: number;
  /** Webhooks: whether private targets are allowed, and the delivery worker (started when `deliver`). Default: neither. */
  webhooks?: WebhookSettings;
  /** The chains to follow (CHAIN_RPC_<chain_id>, docs/chain.md): a follower per chain, one process at a time per chain. None by default. */
  chains?: ChainSettings;
  /** Fetching tokenURI documents (METADATA_*, docs/metadata.md): the worker starts when `fetch`. Default: no worker, the default limits. */
  metadata?: MetadataSettings;
  /**
   * SETTLEMENT and SETTLEMENT_DEADLINE (docs/chain.md "Settlement on chain"): set for the whole process when
   * given (main.ts passes them); the process's setting stays as it is otherwise (offchain from the start).
   */
  settlement?: SettlementSettings;
}
