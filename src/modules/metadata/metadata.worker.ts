import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { DataSource } from 'typeorm';
import type { MetadataSettings } from '../../config';
import { logger } from '../../common/logger';
import { traceTask } from '../../common/tracing';
import { metadataFetches } from '../../common/metrics';
import { updateReturning } from '../../common/sql';
import { backoffMs } from '../webhook/webhook.worker';
import { fetchDocument } from './metadata.fetch';
import { Claimed, onQueued, Outcome, recordOutcomes } from './metadata.queue';

/** Rows claimed in one statement at most. */
const CLAIM_BATCH = 50;
/** Outcomes recorded in one transaction at most. */
const RECORD_BATCH = 200;

/**
 * The fetch worker of one process. It claims due rows of asset_metadata_queue with FOR UPDATE SKIP LOCKED
 * and a lease (several processes share the queue, none fetches a row another holds: one fetch per token),
 * fetches up to `concurrency` documents at once, of them at most `hostConcurrency` from one host (rows of a
 * host at its limit are not claimed, so one slow host does not hold the rest), and records the outcomes in
 * batches: the outcomes that end while a batch is being written are the next batch (one transaction for many
 * documents; alone, each outcome's own transaction was the bound). No transaction is open while a document
 * is fetched (the embedded database runs one at a time).
 */
export class MetadataWorker {
  private running = true;
  private readonly stopping = new AbortController();
  private wake: (() => void) | undefined;
  private readonly loop: Promise<void>;
  private readonly unsubscribe: () => void;
  /** Claimed rows in this process per host: fetching or waiting for the host's turn. */
  private readonly held = new Map<string, number>();
  private readonly waiting = new Map<string, Claimed[]>();
  private readonly fetching = new Map<string, number>();
  private inProcess = 0;
  private readonly tasks = new Set<Promise<void>>();
  /** Outcomes fetched and not yet recorded, and the batch being recorded. */
  private outcomes: Outcome[] = [];
  private recording: Promise<void> | undefined;
  /** Longer than the fetches queued before a claimed row can take: a lease outlives its holder only when the holder died. */
  private readonly leaseMs: number;

  constructor(
    private readonly ds: DataSource,
    private readonly options: MetadataSettings,
  ) {
    this.leaseMs = options.timeoutMs * (Math.ceil(options.concurrency / options.hostConcurrency) + 2) + 30_000;
    // Each fetch in flight listens for the stop (up to `concurrency` at once): not a leak, so no warning past 10.
    setMaxListeners(options.concurrency + 1, this.stopping.signal);
    this.unsubscribe = onQueued(() => this.wake?.());
    this.loop = this.run();
  }

  /** Ends the fetches under way and waits up to `waitMs` for the last records (an unrecorded fetch is claimed again after its lease). */
  async stop(waitMs = 5000): Promise<void> {
    this.running = false;
    this.unsubscribe();
    this.stopping.abort(new Error('the gateway process stopped'));
    this.wake?.();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all([this.loop, ...this.tasks]).then(() => this.recorded()),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs))),
    ]);
    clearTimeout(timer);
  }

  private async run(): Promise<void> {
    while (this.running) {
      let claimed = 0;
      // Outcomes waiting to be recorded hold their slots: fetching does not run ahead of recording.
      const free = this.options.concurrency - this.inProcess - this.outcomes.length;
      if (free > 0 && (free >= this.claimStep() || this.inProcess === 0)) {
        try {
          claimed = await this.claim(Math.min(free, CLAIM_BATCH));
        } catch (err) {
          logger.warn('metadata fetch: a claim failed', { error: err instanceof Error ? err.message : String(err) });
        }
      }
      // Full, or nothing due: wait for a fetch to end, something queued in this process, or the poll.
      if ((!claimed || free - claimed <= 0) && this.running) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.options.pollMs);
          this.wake = () => {
            clearTimeout(timer);
            this.wake = undefined;
            resolve();
          };
        });
      }
    }
  }

  /**
   * The fewest free slots worth a claim while fetches are under way: a quarter of the concurrency (at most a
   * claim's batch), so a fetch that ends does not cost a claim statement of its own.
   */
  private claimStep(): number {
    return Math.max(1, Math.min(CLAIM_BATCH, Math.floor(this.options.concurrency / 4)));
  }

  private async claim(limit: number): Promise<number> {
    const full = [...this.held].filter(([host, n]) => host !== '' && n >= this.options.hostConcurrency).map(([host]) => host);
    const token = randomUUID();
    const rows = await updateReturning<Claimed>(
      this.ds,
      `WITH due AS (
         SELECT asset_id FROM asset_metadata_queue
         WHERE state = 'pending' AND next_attempt_at <= now() AND (lease_until IS NULL OR lease_until < now()) AND host_key <> ALL($3::text[])
         ORDER BY next_attempt_at LIMIT $4
         FOR UPDATE SKIP LOCKED)
       UPDATE asset_metadata_queue q SET lease_token = $1, lease_until = now() + $2 * interval '1 millisecond', attempts = q.attempts + 1
       FROM due WHERE q.asset_id = due.asset_id
       RETURNING q.asset_id AS "assetId", q.source_url AS "sourceUrl", q.host_key AS "hostKey", q.attempts, q.document_hash AS "documentHash", q.lease_token AS token, q.traceparent`,
      [token, this.leaseMs, full, limit],
    );
    for (const row of rows) {
      this.inProcess += 1;
      this.held.set(row.hostKey, (this.held.get(row.hostKey) ?? 0) + 1);
      const queue = this.waiting.get(row.hostKey) ?? [];
      queue.push(row);
      this.waiting.set(row.hostKey, queue);
      this.startNext(row.hostKey);
    }
    return rows.length;
  }

  /** Starts the host's next waiting row if the host is below its limit. */
  private startNext(host: string): void {
    const busy = this.fetching.get(host) ?? 0;
    if (host !== '' && busy >= this.options.hostConcurrency) return;
    const next = this.waiting.get(host)?.shift();
    if (!next) return;
    this.fetching.set(host, busy + 1);
    const task = this.fetchOne(next).catch((err: unknown) => {
      // The row's lease runs out and it is claimed again.
      logger.warn('metadata fetch: a fetch failed', { asset: next.assetId, error: err instanceof Error ? err.message : String(err) });
    }).finally(() => {
      this.tasks.delete(task);
      this.fetching.set(host, (this.fetching.get(host) ?? 1) - 1);
      this.held.set(host, (this.held.get(host) ?? 1) - 1);
      this.inProcess -= 1;
      if (this.running) this.startNext(host);
      this.wake?.();
    });
    this.tasks.add(task);
  }

  private async fetchOne(claim: Claimed): Promise<void> {
    // A trace of its own (while traces are on), linked to the request that queued the fetch.
    const attributes = { 'gateway.asset_id': claim.assetId, 'gateway.metadata.attempt': claim.attempts };
    const result = await traceTask('metadata fetch', attributes, claim.traceparent, (span) => fetchDocument(claim.sourceUrl, this.options, this.stopping.signal, span));
    // Stopped: the row's lease runs out and it is claimed again.
    if (this.stopping.signal.aborted) return;
    if (result.ok) {
      this.record({ claim, document: result.document, from: result.from });
      return;
    }
    const last = !result.retry || claim.attempts >= this.options.maxAttempts;
    const error = last && result.retry ? `${result.error} (after ${claim.attempts} attempts)` : result.error;
    const retryAt = last ? null : new Date(Date.now() + backoffMs(claim.attempts, this.options.backoffBaseMs, this.options.backoffMaxMs));
    this.record({ claim, error, retryAt });
  }

  /** Queues an outcome for the next batch, and starts recording when no batch is being written. */
  private record(outcome: Outcome): void {
    this.outcomes.push(outcome);
    if (!this.recording) this.recording = this.recordBatches();
  }

  /** Records the waiting outcomes, a batch at a time, until none waits. */
  private async recordBatches(): Promise<void> {
    while (this.outcomes.length) {
      const batch = this.outcomes.splice(0, RECORD_BATCH);
      await this.recordBatch(batch);
      this.wake?.();
    }
    this.recording = undefined;
  }

  private async recordBatch(batch: Outcome[]): Promise<void> {
    try {
      const recorded = await recordOutcomes(this.ds, batch);
      recorded.forEach((r, i) => {
        const o = batch[i];
        if (r.applied) metadataFetches.inc({ outcome: 'document' in o ? (r.changed ? 'fetched' : 'unchanged') : o.retryAt ? 'retry' : 'failed' });
      });
    } catch (err) {
      // One outcome that cannot be written (or a deadlock) does not lose the others: each alone, once.
      if (batch.length > 1) {
        for (const outcome of batch) await this.recordBatch([outcome]);
        return;
      }
      // The row's lease runs out and it is claimed again.
      logger.warn('metadata fetch: recording an outcome failed', { asset: batch[0].claim.assetId, error: err instanceof Error ? err.message : String(err) });
    }
  }

  /** Resolves once every outcome fetched so far is recorded. */
  private async recorded(): Promise<void> {
    while (this.recording) await this.recording;
  }
}
