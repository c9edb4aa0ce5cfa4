import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The process's Prometheus metrics (served on GET /metrics). One registry for the process: the
 * figures are the process's, whatever number of apps a test starts in it.
 */
export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry });

/** Which door a request came through: `graphql`, `rest`, or `other` (health, docs, metrics). */
export type Door = 'graphql' | 'rest' | 'other';

export const httpRequests = new Counter({
  name: 'gateway_http_requests_total',
  help: 'HTTP requests answered, by door, route (REST path or GraphQL operation name) and status',
  labelNames: ['door', 'route', 'status'] as const,
  registers: [metricsRegistry],
});

export const httpDuration = new Histogram({
  name: 'gateway_http_request_duration_seconds',
  help: 'Time from the request to the end of its response, by door and route',
  labelNames: ['door', 'route'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [metricsRegistry],
});

export const requestRoads = new Counter({
  name: 'gateway_request_roads_total',
  help: 'GraphQL and REST requests by the road they took: entry (lean: the door in front of express; express: a known query inside express; apollo: Apollo\'s pipeline or the REST router) and executor (plan: one SQL statement; compiled: graphql-jit; graphql-js)',
  labelNames: ['door', 'entry', 'executor'] as const,
  registers: [metricsRegistry],
});

export const sqlStatementsPerRequest = new Histogram({
  name: 'gateway_sql_statements_per_request',
  help: 'SQL statements one request issued, by door',
  labelNames: ['door'] as const,
  buckets: [0, 1, 2, 3, 4, 5, 8, 13, 21, 34, 55],
  registers: [metricsRegistry],
});

export const loaderBatchSize = new Histogram({
  name: 'gateway_dataloader_batch_size',
  help: 'Keys per batch of each DataLoader (one SQL statement per batch)',
  labelNames: ['loader'] as const,
  buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000],
  registers: [metricsRegistry],
});

export const rateLimitRejections = new Counter({
  name: 'gateway_rate_limit_rejections_total',
  help: 'Requests refused with 429 by the rate limit',
  registers: [metricsRegistry],
});

export const importedRows = new Counter({
  name: 'gateway_import_rows_total',
  help: 'Assets written by CSV imports',
  registers: [metricsRegistry],
});

export const dbReads = new Counter({
  name: 'gateway_db_reads_total',
  help: 'Statements of read-only requests, by where they ran (primary or replica); only with DATABASE_REPLICA_URLS',
  labelNames: ['target'] as const,
  registers: [metricsRegistry],
});

export const statementsCancelled = new Counter({
  name: 'gateway_db_statements_cancelled_total',
  help: 'Statements the database cancelled (DB_STATEMENT_TIMEOUT_MS ran out, or an operator cancelled them), each answered 503 TIMEOUT',
  registers: [metricsRegistry],
});

export const replicaLag = new Gauge({
  name: 'gateway_db_replica_lag_seconds',
  help: 'How far each read replica was behind the primary at its last check (-1: not usable)',
  labelNames: ['replica'] as const,
  registers: [metricsRegistry],
});

/** The connection pools to watch (one per data source the process runs). */
export interface PoolFigures {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}
const pools = new Set<() => PoolFigures | undefined>();

/** Watches a pool's connections until the returned function is called. */
export function watchPool(figures: () => PoolFigures | undefined): () => void {
  pools.add(figures);
  return () => pools.delete(figures);
}

new Gauge({
  name: 'gateway_db_pool_connections',
  help: 'Connections of the database pool: total, idle, and requests waiting for one',
  labelNames: ['state'] as const,
  registers: [metricsRegistry],
  collect() {
    let total = 0;
    let idle = 0;
    let waiting = 0;
    for (const read of pools) {
      const pool = read();
      if (!pool) continue;
      total += pool.totalCount;
      idle += pool.idleCount;
      waiting += pool.waitingCount;
    }
    this.set({ state: 'total' }, total);
    this.set({ state: 'idle' }, idle);
    this.set({ state: 'waiting' }, waiting);
  },
});

/** The chain followers of this process (docs/chain.md), by chain id. */
export const chainFollowing = new Gauge({
  name: 'gateway_chain_following',
  help: '1 while this process holds the chain\'s lock and follows it, else 0',
  labelNames: ['chain_id'] as const,
  registers: [metricsRegistry],
});

export const chainHeadBlock = new Gauge({
  name: 'gateway_chain_head_block',
  help: 'The chain\'s head as this process\'s follower last read it',
  labelNames: ['chain_id'] as const,
  registers: [metricsRegistry],
});

export const chainLagBlocks = new Gauge({
  name: 'gateway_chain_lag_blocks',
  help: 'Confirmed blocks of the chain not applied yet, after this process\'s follower\'s last step',
  labelNames: ['chain_id'] as const,
  registers: [metricsRegistry],
});

export const chainTransfersApplied = new Counter({
  name: 'gateway_chain_transfers_applied_total',
  help: 'ERC721 transfers applied by this process\'s follower (a transfer read again is not counted)',
  labelNames: ['chain_id'] as const,
  registers: [metricsRegistry],
});

export const chainReorgs = new Counter({
  name: 'gateway_chain_reorgs_total',
  help: 'Reorgs met by this process\'s follower (applied blocks rolled back)',
  labelNames: ['chain_id'] as const,
  registers: [metricsRegistry],
});

export const chainStepErrors = new Counter({
  name: 'gateway_chain_step_errors_total',
  help: 'Failed steps of this process\'s follower (retried a second later)',
  labelNames: ['chain_id'] as const,
  registers: [metricsRegistry],
});
