import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { clock } from './clock';

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
  help: 'GraphQL and REST requests by the road they took: entry (lean: a known query or a REST GET answered at the door in front of express; express: a known query inside express; apollo: Apollo\'s pipeline, called by the door or by express, or the REST router in express) and executor (plan: one SQL statement; compiled: graphql-jit; graphql-js)',
  labelNames: ['door', 'entry', 'executor'] as const,
  registers: [metricsRegistry],
});

export const operationsRun = new Counter({
  name: 'gateway_operations_run_total',
  help: 'Operations run by the executor (GraphQL and REST alike), each once per request whatever its outcome, by what answered it (plan, compiled, graphql-js; refused: its variables were refused before anything ran)',
  labelNames: ['executor'] as const,
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

export const chainRoyaltiesChanged = new Counter({
  name: 'gateway_chain_royalties_changed_total',
  help: 'ERC-2981 royalties read on chain by this process\'s follower that differ from the last read, by subject: collection (its contract\'s royalty) or asset (a token\'s own); counted at commit, one per collection.royalties_updated or asset.royalties_updated',
  labelNames: ['chain_id', 'subject'] as const,
  registers: [metricsRegistry],
});

export const chainStepErrors = new Counter({
  name: 'gateway_chain_step_errors_total',
  help: 'Failed steps of this process\'s follower (retried a second later)',
  labelNames: ['chain_id'] as const,
  registers: [metricsRegistry],
});

/** Settlement on chain (SETTLEMENT=chain, docs/chain.md): what this process's follower and sweeper did, counted at commit. */
export const settlementsCompleted = new Counter({
  name: 'gateway_settlement_completed_total',
  help: 'Pending orders completed by their transfer from seller to buyer, applied by this process\'s follower',
  registers: [metricsRegistry],
});

export const settlementsFailed = new Counter({
  name: 'gateway_settlement_failed_total',
  help: 'Pending orders failed, by reason: deadline_passed (this process\'s sweeper found the deadline passed) or transferred_elsewhere (its follower applied a transfer to another account)',
  labelNames: ['reason'] as const,
  registers: [metricsRegistry],
});

export const settlementsReopened = new Counter({
  name: 'gateway_settlement_reopened_total',
  help: 'Completed orders pending again because a reorg undid their transfer (this process\'s follower)',
  registers: [metricsRegistry],
});

/** The database's pending orders, as one read at scrape time gives them. */
export interface PendingSettlements {
  pending: number;
  /** When the oldest pending order was written; null when none is pending. */
  oldestCreatedAt: Date | null;
}
const settlementReaders = new Set<() => Promise<PendingSettlements>>();

/**
 * Reads the pending orders at each scrape until the returned function is called. The figures are the
 * database's, the same on every process of it; with several apps in a process (tests), the first watched.
 */
export function watchSettlements(read: () => Promise<PendingSettlements>): () => void {
  settlementReaders.add(read);
  return () => settlementReaders.delete(read);
}

let settlementRead: Promise<PendingSettlements | null> | undefined;
/**
 * One read of the pending orders for both gauges of a scrape (the registry collects its metrics at once, so
 * the second gauge shares the first one's statement); null when no app watches or the database does not answer.
 */
function readSettlements(): Promise<PendingSettlements | null> {
  const [read] = settlementReaders;
  if (!read) return Promise.resolve(null);
  settlementRead ??= read()
    .catch(() => null)
    .finally(() => {
      settlementRead = undefined;
    });
  return settlementRead;
}

// NaN when the database does not answer: the scrape says the figure is unknown rather than failing.
new Gauge({
  name: 'gateway_settlement_pending_orders',
  help: 'Orders awaiting their transfer on chain (status pending), in the database, read at scrape time',
  registers: [metricsRegistry],
  async collect() {
    const figures = await readSettlements();
    this.set(figures ? figures.pending : NaN);
  },
});

new Gauge({
  name: 'gateway_settlement_oldest_pending_seconds',
  help: 'Age of the oldest order awaiting its transfer on chain (since the sale was written pending), 0 when none; read at scrape time',
  registers: [metricsRegistry],
  async collect() {
    const figures = await readSettlements();
    const oldest = figures?.oldestCreatedAt;
    this.set(!figures ? NaN : oldest ? Math.max(0, (clock.now().getTime() - oldest.getTime()) / 1000) : 0);
  },
});

export const metadataFetches = new Counter({
  name: 'gateway_metadata_fetches_total',
  help: 'Outcomes of tokenURI document fetches: fetched (content changed), unchanged, retry (failed, due again), failed (for good)',
  labelNames: ['outcome'] as const,
  registers: [metricsRegistry],
});

/** The metadata queue's figures, as one read at scrape time gives them. */
export interface MetadataQueueFigures {
  pending: number;
  /** When the oldest pending row was queued; null when none is pending. */
  oldestRequestedAt: Date | null;
}
const metadataQueueReaders = new Set<() => Promise<MetadataQueueFigures>>();

/** Reads the metadata queue at each scrape until the returned function is called (the first watcher's database). */
export function watchMetadataQueue(read: () => Promise<MetadataQueueFigures>): () => void {
  metadataQueueReaders.add(read);
  return () => metadataQueueReaders.delete(read);
}

let metadataQueueRead: Promise<MetadataQueueFigures | null> | undefined;
/** One read for both gauges of a scrape; null when no app watches or the database does not answer. */
function readMetadataQueue(): Promise<MetadataQueueFigures | null> {
  const [read] = metadataQueueReaders;
  if (!read) return Promise.resolve(null);
  metadataQueueRead ??= read()
    .catch(() => null)
    .finally(() => {
      metadataQueueRead = undefined;
    });
  return metadataQueueRead;
}

new Gauge({
  name: 'gateway_metadata_queue_pending',
  help: 'tokenURI documents waiting to be fetched (queued, being fetched or due for a retry), read at scrape time',
  registers: [metricsRegistry],
  async collect() {
    const figures = await readMetadataQueue();
    this.set(figures ? figures.pending : NaN);
  },
});

new Gauge({
  name: 'gateway_metadata_queue_oldest_pending_seconds',
  help: 'Age of the oldest tokenURI document waiting to be fetched (since it was queued), 0 when none; read at scrape time',
  registers: [metricsRegistry],
  async collect() {
    const figures = await readMetadataQueue();
    const oldest = figures?.oldestRequestedAt;
    this.set(!figures ? NaN : oldest ? Math.max(0, (Date.now() - oldest.getTime()) / 1000) : 0);
  },
});
