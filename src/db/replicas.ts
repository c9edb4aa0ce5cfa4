import { DataSource, QueryRunner } from 'typeorm';
import { logger } from '../common/logger';
import { parseLsn } from '../common/lsn';
import { dbReads, replicaLag } from '../common/metrics';
import { attachReadRouter, ReadRouter, RequestScope } from '../common/request/scope';
import { createDataSource, DataSourceOptions } from './data-source';
import { isConnectionFailure } from './faults';


interface Replica {
  name: string;
  url: string;
  ds: DataSource;
  /** Usable: its connection works and its last check answered. */
  up: boolean;
  /** The WAL position it has replayed, at the last check. */
  replayed: bigint;
  /** How far behind the primary it was at the last check, in milliseconds (0 when level). */
  lagMs: number;
}

/** The primary's WAL position at past checks: a replica's lag is the age of the oldest position it has not replayed. */
const HISTORY = 240;

export interface ReplicaOptions {
  urls: string[];
  /** Replicas further behind than this are skipped (REPLICA_MAX_LAG_MS). */
  maxLagMs: number;
  /** How often each replica's position and lag are read. */
  checkEveryMs?: number;
  /** Pool, timeouts: as the primary's. */
  pool: Omit<DataSourceOptions, 'url'>;
}

const hostOf = (url: string) => {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || 5432}`;
  } catch {
    return 'replica';
  }
};

/**
 * Read replicas (DATABASE_REPLICA_URLS). Read-only requests (GraphQL queries, REST GETs) read from a
 * replica that is up, at most `maxLagMs` behind, and, when the client sent a consistency token
 * (x-min-lsn, which write responses carry), has replayed at least that far; else from the primary. A
 * request keeps the replica it started on. Writes, and every decision inside them (an offer's state, an
 * owner, a listing), are taken on the primary: a mutation never reads a replica. A replica that fails a
 * statement is marked down (the statement runs again on the primary) until its next good check.
 */
export class ReplicaRouter implements ReadRouter {
  private readonly replicas: Replica[];
  private next = 0;
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;
  private readonly heads: { at: number; lsn: bigint }[] = [];

  constructor(
    private readonly primary: DataSource,
    private readonly options: ReplicaOptions,
  ) {
    this.replicas = options.urls.map((url, i) => ({
      name: `replica-${i + 1} (${hostOf(url)})`,
      url,
      ds: createDataSource({ ...options.pool, url }),
      up: false,
      replayed: 0n,
      lagMs: Infinity,
    }));
  }

  /** Opens the replicas' pools (one that cannot be reached stays down and is tried again), checks them, and keeps checking. */
  async start(): Promise<void> {
    attachReadRouter(this.primary, this);
    await this.check();
    this.timer = setInterval(() => void this.check(), this.options.checkEveryMs ?? 250);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.checking;
    await Promise.all(this.replicas.map((r) => (r.ds.isInitialized ? r.ds.destroy().catch(() => undefined) : undefined)));
  }

  /** The primary's WAL position now: the consistency token of a write that has committed. */
  async consistencyToken(): Promise<string> {
    const [row] = await this.primary.query('SELECT pg_current_wal_lsn()::text AS lsn');
    return row.lsn as string;
  }

  /** What each replica looked like at the last check (for /readyz and tests). */
  status(): { name: string; up: boolean; lagMs: number }[] {
    return this.replicas.map((r) => ({ name: r.name, up: r.up, lagMs: r.lagMs }));
  }

  check(): Promise<void> {
    return (this.checking ??= this.checkAll().finally(() => (this.checking = undefined)));
  }

  private async checkAll(): Promise<void> {
    try {
      const lsn = parseLsn(await this.consistencyToken());
      if (lsn !== undefined) this.heads.push({ at: Date.now(), lsn });
      if (this.heads.length > HISTORY) this.heads.shift();
    } catch {
      // The primary's own outage is its requests' business (503); the replicas are judged against what was seen.
    }
    await Promise.all(this.replicas.map((r) => this.checkOne(r)));
  }

  private async checkOne(r: Replica): Promise<void> {
    const wasUp = r.up;
    try {
      if (!r.ds.isInitialized) await r.ds.initialize();
      const [row] = await r.ds.query(`SELECT pg_is_in_recovery() AS standby, pg_last_wal_replay_lsn()::text AS replayed`);
      if (!row.standby) throw new Error('it is not a standby (pg_is_in_recovery() is false)');
      r.replayed = parseLsn(row.replayed ?? '') ?? 0n;
      // Lag: how long ago the primary was at the oldest position the replica has not replayed yet, on this
      // process's clock (neither server's clock, nor an idle primary's last commit, enters it).
      const missing = this.heads.find((h) => h.lsn > r.replayed);
      r.lagMs = missing ? Date.now() - missing.at : 0;
      r.up = true;
      if (!wasUp) logger.info('read replica usable', { replica: r.name, lagMs: Math.round(r.lagMs) });
    } catch (err) {
      r.up = false;
      r.lagMs = Infinity;
      if (wasUp) logger.warn('read replica not usable; reads go to the others or the primary', { replica: r.name, error: (err as Error).message });
    }
    replicaLag.set({ replica: r.name }, Number.isFinite(r.lagMs) ? r.lagMs / 1000 : -1);
  }

  private pick(minLsn: bigint | undefined): Replica | null {
    const n = this.replicas.length;
    for (let i = 0; i < n; i += 1) {
      const r = this.replicas[(this.next + i) % n];
      if (r.up && r.lagMs <= this.options.maxLagMs && (minLsn === undefined || r.replayed >= minLsn)) {
        this.next = (this.next + i + 1) % n;
        return r;
      }
    }
    return null;
  }

  createQueryRunner(scope: RequestScope, primary: () => QueryRunner): QueryRunner {
    if (scope.readFrom === undefined) scope.readFrom = this.pick(scope.minLsn);
    const replica = scope.readFrom as Replica | null;
    if (!replica || !replica.up) {
      dbReads.inc({ target: 'primary' });
      return primary();
    }
    dbReads.inc({ target: 'replica' });
    const runner = replica.ds.createQueryRunner('master');
    runner.data = { ...runner.data, scope };
    const query = runner.query;
    // A replica that fails (stopped, restarting, cut off) costs the request nothing: the statement runs on the primary.
    runner.query = (async (...args: Parameters<QueryRunner['query']>) => {
      try {
        return await (query as (...a: unknown[]) => Promise<unknown>).apply(runner, args);
      } catch (err) {
        if (!isConnectionFailure(err)) throw err;
        if (replica.up) logger.warn('read replica failed a statement; reading from the primary', { replica: replica.name, requestId: scope.requestId });
        replica.up = false;
        scope.readFrom = null;
        dbReads.inc({ target: 'primary' });
        const fallback = primary();
        try {
          return await fallback.query(...args);
        } finally {
          await fallback.release();
        }
      }
    }) as QueryRunner['query'];
    return runner;
  }
}
