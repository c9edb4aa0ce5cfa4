// First: when traces are configured, their instrumentations must be in place before http, pg and ioredis load.
import './tracing';
import 'reflect-metadata';
import { once } from 'node:events';
import http from 'node:http';
import cluster from 'node:cluster';
import { AddressInfo } from 'node:net';
import { createApp } from './app';
import { loadConfig } from './config';
import { databaseOf, registerServer } from './common/running-servers';
import { logger } from './common/logger';
import { stopTracing } from './common/tracing';
import { openDatabase } from './db/database';
import { seedDemoIfEmpty } from './tools/demo-seed';
import { addConfiguredCurrencies } from './modules/currency/currency.service';
import { DataDirInUseError } from './db/embedded';
import { printsBanner, supervise } from './cluster';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

async function serve(): Promise<void> {
  const config = loadConfig();
  const started = Date.now();
  const db = await openDatabase(config, 'server');
  await addConfiguredCurrencies(db.ds, config.currencies);
  const seeded = db.embedded && config.seedDemo ? await seedDemoIfEmpty(db.ds) : null;
  const { listener, stop, inFlight, attachSubscriptions, closeSubscriptions } = await createApp(db.ds, {
    jsonBodyLimit: config.jsonBodyLimit,
    largeQuerySlots: config.largeQuerySlots,
    largeQueryItems: config.largeQueryItems,
    production: config.production,
    corsOrigins: config.corsOrigins,
    metrics: config.metrics,
    metricsToken: config.metricsToken,
    requestBodyTimeoutMs: config.requestBodyTimeoutMs,
    compression: config.compression,
    sqlPlans: config.sqlPlans,
    maxAliases: config.maxAliases,
    slowRequestMs: config.slowRequestMs,
    rateLimit: config.rateLimit,
    idempotencyTtlS: config.idempotencyTtlS,
    signatures: config.signatures,
    trustedDocuments: config.trustedDocuments,
    redisUrl: config.redisUrl,
    expirySweeper: config.expirySweeper,
    statisticsMaxAgeMs: config.statisticsMaxAgeMs,
    auctionMinIncrementPercent: config.auctionMinIncrementPercent,
    importStatementTimeoutMs: config.dbImportStatementTimeoutMs,
    eventsPollMs: config.eventsPollMs,
    subscriptionsPerConnection: config.subscriptionsPerConnection,
    webhooks: config.webhooks,
    metadata: config.metadata,
    chains: config.chains,
    settlement: config.settlement,
  });
  let stopping = false;
  // Once stopping, every response closes its connection: a keep-alive client cannot hold a socket open.
  const responding = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    if (stopping) res.setHeader('connection', 'close');
    responding.add(res);
    res.once('close', () => responding.delete(res));
    listener(req, res);
  });
  // An idle connection outlives the balancer's own idle timeout (see Config.httpKeepAliveTimeoutMs); the
  // headers of a request on it may take a little longer still (Node's advice for keep-alive behind a proxy).
  server.keepAliveTimeout = config.httpKeepAliveTimeoutMs;
  server.headersTimeout = Math.min(server.requestTimeout || Infinity, config.httpKeepAliveTimeoutMs + 1000);
  attachSubscriptions(server);
  server.listen(config.port, config.host);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  // Commands (npm run apikey) read this to tell when they would write where no server reads.
  const unregister = registerServer({ port, ...databaseOf(config) });
  process.once('exit', unregister);
  const base = `http://localhost:${port}`;

  // The signals are ours before the ready line goes out: a process manager may signal as soon as it reads it.
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    const grace = config.shutdownGraceMs;
    const began = Date.now();
    const deadline = began + grace;
    const left = (reserveMs: number) => Math.max(0, deadline - reserveMs - Date.now());
    logger.info('shutting down', { signal, graceMs: grace });
    // Whatever happens below, the process is gone by the deadline: its last timer fires a little before it,
    // so that exiting, and a machine too busy to run the timer on time, still fall within the grace (at the
    // deadline itself, a CI machine running the test suite saw the exit 0.5 s late).
    setTimeout(
      () => {
        logger.error('shutdown grace exceeded; exiting', { inFlight: inFlight.size, afterMs: Date.now() - began });
        process.exit(0);
      },
      grace - Math.min(300, grace / 10),
    ).unref();
    // No new connections; idle keep-alive sockets go now, busy ones after their response (Connection: close).
    server.close();
    server.closeIdleConnections();
    // Subscribers are told at once (1001), so they resume with `after` on another process; one that does not answer is cut within 1 s.
    const subscriptionsClosed = closeSubscriptions(Math.min(1000, grace / 8));
    for (const res of responding) if (!res.headersSent) res.setHeader('connection', 'close');
    // Sockets that never sent a request count as busy to Node: once no response is under way, they go too.
    // A quarter of the grace stays for the work of hung-up clients and for closing the database.
    while (responding.size > 0 && left(grace / 4) > 0) await sleep(Math.min(50, left(grace / 4)));
    if (responding.size) logger.warn('closing connections with responses still under way', { responding: responding.size });
    server.closeAllConnections();
    await subscriptionsClosed;
    // Clients may have hung up while their requests still run: let that work end before the database goes.
    await stop(left(grace / 8));
    if (inFlight.size) logger.warn('requests still running at shutdown', { inFlight: inFlight.size });
    await db.close(left(grace / 16));
    await stopTracing(left(0));
    logger.info('stopped', { afterMs: Date.now() - began });
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));

  const lines = [
    `NFT marketplace gateway ready in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    `  database: ${db.embedded ? `embedded PostgreSQL (PGlite) in ${config.dataDir}` : 'DATABASE_URL'}`,
    `  GraphQL:  ${base}/graphql   (open it in a browser for Apollo Sandbox)`,
    `  REST:     curl '${base}/v1/collections?limit=2&include_assets=true'`,
  ];
  if (seeded) {
    lines.push(
      `  Demo data loaded. Development admin API key (shown once, only its digest is stored):`,
      `    ${seeded.key}`,
      `    curl -X POST ${base}/v1/collections -H 'access-token: ${seeded.key}' -H 'content-type: application/json' \\`,
      `      -d '{"contract_address":"0x${'ab'.repeat(20)}","chain_id":"1","name":"My collection"}'`,
    );
  } else {
    lines.push(`  API keys: npm run apikey -- create --address 0x... [--admin]`);
  }
  if (config.workers > 1) lines.splice(1, 0, `  workers:  ${config.workers} processes on port ${port} (WORKERS)`);
  if (config.replicaUrls.length) lines.splice(2, 0, `  replicas: ${config.replicaUrls.length} (DATABASE_REPLICA_URLS): read-only requests read from them`);
  if (printsBanner()) process.stdout.write(lines.join('\n') + '\n');
}

async function main(): Promise<void> {
  const config = loadConfig();
  if (config.workers > 1 && cluster.isPrimary) await supervise(config);
  else await serve();
}

main().catch((err) => {
  if (err instanceof DataDirInUseError) {
    process.stderr.write(`${err.message}\n`);
  } else {
    logger.error('start-up failed', { error: err instanceof Error ? err.message : String(err), stack: (err as Error)?.stack });
  }
  process.exit(1);
});
