import 'reflect-metadata';
import { once } from 'node:events';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import { createApp } from './app';
import { loadConfig } from './config';
import { logger } from './common/logger';
import { openDatabase } from './db/database';
import { seedDemoIfEmpty } from './tools/demo-seed';
import { DataDirInUseError } from './db/embedded';

async function main(): Promise<void> {
  const config = loadConfig();
  const started = Date.now();
  const db = await openDatabase(config, 'server');
  const seeded = db.embedded && config.seedDemo ? await seedDemoIfEmpty(db.ds) : null;
  const { app, stop } = await createApp(db.ds, {
    jsonBodyLimit: config.jsonBodyLimit,
    largeQuerySlots: config.largeQuerySlots,
    largeQueryItems: config.largeQueryItems,
    production: config.production,
  });
  const server = http.createServer(app);
  server.listen(config.port, config.host);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const base = `http://localhost:${port}`;

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
  process.stdout.write(lines.join('\n') + '\n');

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info('shutting down', { signal });
    server.close();
    server.closeIdleConnections();
    const force = setTimeout(() => server.closeAllConnections(), 5000);
    await once(server, 'close');
    clearTimeout(force);
    // Clients may have hung up while their requests still run: let that work end before the database goes.
    await stop(config.dbQueryTimeoutMs);
    await db.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

main().catch((err) => {
  if (err instanceof DataDirInUseError) {
    process.stderr.write(`${err.message}\n`);
  } else {
    logger.error('start-up failed', { error: err instanceof Error ? err.message : String(err), stack: (err as Error)?.stack });
  }
  process.exit(1);
});
