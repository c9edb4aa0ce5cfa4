import cluster, { Worker } from 'node:cluster';
import { Config } from './config';
import { logger } from './common/logger';
import { openDatabase } from './db/database';

/** A worker that dies sooner than this after its start counts towards a crash loop. */
const EARLY_EXIT_MS = 10_000;
const MAX_EARLY_EXITS = 5;

/**
 * WORKERS=N: this process becomes the supervisor of N server processes (Node's cluster module), which
 * share the port. The supervisor applies the migrations once before any worker starts, replaces a worker
 * that dies, and on SIGTERM/SIGINT passes the signal on and exits when all have stopped (each within its
 * own SHUTDOWN_GRACE_MS). Nothing a request needs is kept in one process only: rate limits and the APQ
 * cache go through Redis (REDIS_URL), idempotency records and events through PostgreSQL.
 */
export async function supervise(config: Config): Promise<void> {
  if (!config.databaseUrl) {
    process.stderr.write(
      `WORKERS=${config.workers} needs DATABASE_URL: the embedded database (PGlite) is one process's and cannot be shared by ${config.workers} processes.\n` +
        `Start with WORKERS=1 (the default), or set DATABASE_URL to a PostgreSQL server.\n`,
    );
    process.exit(1);
  }
  // One process applies the migrations: N workers racing through them would each try.
  const db = await openDatabase({ ...config, replicaUrls: [] }, 'migrate');
  await db.close();

  let stopping = false;
  let earlyExits = 0;
  const startedAt = new Map<Worker, number>();
  const fork = () => startedAt.set(cluster.fork(), Date.now());
  cluster.on('exit', (worker, code, signal) => {
    const lived = Date.now() - (startedAt.get(worker) ?? 0);
    startedAt.delete(worker);
    if (stopping) {
      if (startedAt.size === 0) process.exit(0);
      return;
    }
    logger.error('worker exited; starting another', { pid: worker.process.pid, code, signal, livedMs: lived });
    earlyExits = lived < EARLY_EXIT_MS ? earlyExits + 1 : 0;
    if (earlyExits >= MAX_EARLY_EXITS) {
      logger.error('workers keep exiting at start; giving up', { earlyExits });
      process.exit(1);
    }
    fork();
  });
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info('stopping workers', { signal, workers: startedAt.size });
    for (const worker of startedAt.keys()) worker.process.kill(signal);
    // Each worker exits within its grace; the supervisor waits a little longer, then goes anyway.
    setTimeout(() => process.exit(0), config.shutdownGraceMs + 2000).unref();
    if (startedAt.size === 0) process.exit(0);
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  logger.info('starting workers', { workers: config.workers, port: config.port });
  for (let i = 0; i < config.workers; i += 1) fork();
}

/** Whether this process prints the ready banner: a single server, or the first worker of a cluster. */
export function printsBanner(): boolean {
  return cluster.isPrimary || cluster.worker?.id === 1;
}
