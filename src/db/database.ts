import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { Config } from '../config';
import { logger } from '../common/logger';
import { createDataSource } from './data-source';
import { currentOwner, EmbeddedDatabase, startEmbedded } from './embedded';
import { ReplicaRouter } from './replicas';

export interface OpenDatabase {
  ds: DataSource;
  embedded: boolean;
  /**
   * Closes the pool and the embedded database. Statements still running after `withinMs` are cancelled
   * on the server (pg_cancel_backend) and logged, so a hung statement cannot hold the exit.
   */
  close(withinMs?: number): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/** Cancels the statements that this data source's connections are still running; returns how many. */
async function cancelRunning(ds: DataSource, url: string): Promise<number> {
  const runners = (ds.driver as unknown as { connectedQueryRunners: { databaseConnection?: { processID?: number } }[] }).connectedQueryRunners;
  const pids = runners.map((r) => r.databaseConnection?.processID).filter((pid): pid is number => typeof pid === 'number');
  if (!pids.length) return 0;
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 1000 });
  try {
    await client.connect();
    await client.query('SELECT pg_cancel_backend(pid) FROM unnest($1::int[]) AS pid', [pids]);
  } finally {
    await client.end().catch(() => undefined);
  }
  return pids.length;
}

/**
 * Runs the pending migrations on a connection of their own, without the statement timeout of the
 * service's connections (DB_STATEMENT_TIMEOUT_MS) nor the client's bound on a statement (DB_QUERY_TIMEOUT_MS):
 * building an index on a large table may rightly take longer than any request's statement. Opening the
 * connection is still bounded by `connectWithinMs`.
 */
async function migrate(url: string, connectWithinMs: number): Promise<void> {
  const migrator = createDataSource({ url, poolSize: 1, queryTimeoutMs: 0, poolWaitMs: connectWithinMs, logMigrations: false });
  try {
    await migrator.initialize();
    const applied = await migrator.runMigrations({ transaction: 'each' });
    // One line, only when something changed: which migrations this start applied.
    if (applied.length) logger.info('migrations applied', { count: applied.length, names: applied.map((m) => m.name) });
  } finally {
    if (migrator.isInitialized) await migrator.destroy();
  }
}

/**
 * The database a process works on: `DATABASE_URL` when set; else the embedded one under DATA_DIR, which
 * this process opens itself (`reuseRunningServer: false`, the server) or, for commands, reaches through
 * the server that already has it open. Migrations run before it is handed out.
 */
export async function openDatabase(
  config: Config,
  purpose: string,
  options: { reuseRunningServer: boolean } = { reuseRunningServer: false },
): Promise<OpenDatabase> {
  if (config.replicaUrls.length && !config.databaseUrl) {
    throw new Error('DATABASE_REPLICA_URLS needs DATABASE_URL: the embedded database has no replicas');
  }
  let embedded: EmbeddedDatabase | undefined;
  let url = config.databaseUrl;
  if (!url) {
    const owner = options.reuseRunningServer ? currentOwner(config.dataDir) : undefined;
    if (owner?.purpose === 'server') {
      url = owner.url;
      logger.info('using the embedded database of the running server', { pid: owner.pid });
    } else {
      embedded = await startEmbedded(config.dataDir, { purpose, maxConnections: config.dbPoolSize + 2 });
      url = embedded.url;
    }
  }
  const pool = {
    poolSize: config.dbPoolSize,
    queryTimeoutMs: config.dbQueryTimeoutMs,
    statementTimeoutMs: config.dbStatementTimeoutMs,
    // The embedded database is one session: a connection waits its turn behind any open transaction (a
    // large import holds it for seconds), so there the wait is a statement's, not a pool's.
    poolWaitMs: config.databaseUrl ? config.dbPoolWaitMs : Math.max(config.dbPoolWaitMs, config.dbQueryTimeoutMs),
    slowStatementMs: config.slowStatementMs,
    poolIdleMs: config.dbPoolIdleMs,
  };
  const ds = createDataSource({ url, ...pool });
  let replicas: ReplicaRouter | undefined;
  try {
    await migrate(url, pool.queryTimeoutMs);
    await ds.initialize();
    // Commands (imports, keys) write: only the server reads from replicas.
    if (config.replicaUrls.length && purpose === 'server') {
      replicas = new ReplicaRouter(ds, { urls: config.replicaUrls, maxLagMs: config.replicaMaxLagMs, pool });
      await replicas.start();
      logger.info('read replicas', { replicas: replicas.status() });
    }
  } catch (err) {
    await replicas?.stop();
    if (ds.isInitialized) await ds.destroy();
    await embedded?.stop();
    throw err;
  }
  return {
    ds,
    embedded: Boolean(embedded),
    async close(withinMs = Infinity) {
      await replicas?.stop();
      if (ds.isInitialized) {
        const destroyed = ds.destroy();
        const inTime = await Promise.race([destroyed.then(() => true), sleep(Math.min(withinMs, 2 ** 31 - 1)).then(() => false)]);
        if (!inTime) {
          const cancelled = await cancelRunning(ds, url).catch((err: Error) => {
            logger.warn('could not cancel running statements', { error: err.message });
            return 0;
          });
          logger.warn('statements still running at shutdown were cancelled', { cancelled });
          await Promise.race([destroyed, sleep(1000)]);
        }
      }
      await embedded?.stop();
    },
  };
}
