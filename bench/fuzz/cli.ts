import 'reflect-metadata';
import http from 'node:http';
import path from 'node:path';
import { AddressInfo } from 'node:net';
import { Client } from 'pg';
import { createApp } from '../../src/app';
import { buildAppSchema } from '../../src/app/graphql/schema';
import { loadConfig } from '../../src/config';
import { setLogLevel } from '../../src/common/logger';
import { openDatabase } from '../../src/db/database';
import { ApiKeyRole } from '../../src/modules/apikey/api-key.entity';
import { createApiKey } from '../../src/modules/apikey/api-key.service';
import { fuzz } from './runner';

/**
 * `npm run fuzz`: FUZZ_RUNS (default 1,000) hostile cases per /v1 route and per GraphQL mutation against
 * a server in this process, on a fresh embedded database in .fuzz/data or, with DATABASE_URL, on a fresh
 * database gw_fuzz of that server. FUZZ_SEED repeats a run. Exit 1 when a case failed.
 */
async function main(): Promise<void> {
  const runs = Number(process.env.FUZZ_RUNS ?? 1000);
  const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Date.now() % 2 ** 31;
  setLogLevel((process.env.LOG_LEVEL as 'error') ?? 'silent');
  if (process.env.DATABASE_URL) {
    const admin = new Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    await admin.query('DROP DATABASE IF EXISTS gw_fuzz WITH (FORCE)');
    await admin.query('CREATE DATABASE gw_fuzz');
    await admin.end();
    const url = new URL(process.env.DATABASE_URL);
    url.pathname = '/gw_fuzz';
    process.env.DATABASE_URL = url.toString();
  } else {
    process.env.DATA_DIR = path.resolve('.fuzz/data');
  }
  const db = await openDatabase(loadConfig(), 'npm run fuzz');
  const { app, stop } = await createApp(db.ds);
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const keys = await Promise.all(
    [ApiKeyRole.USER, ApiKeyRole.ADMIN].map(async (role, i) => {
      const address = `0x${String(i + 1).padStart(40, 'f')}`;
      return (await createApiKey(db.ds.manager, { address, role, label: 'fuzz' })).key;
    }),
  );
  console.log(`fuzzing ${url} with ${runs} cases per route, seed ${seed} (FUZZ_SEED=${seed} repeats it)`);
  const report = await fuzz(await buildAppSchema(), { url, keys }, { runs, seed, onRoute: (label, failed) => console.log(`  ${failed ? 'FAIL' : 'ok  '} ${label}`) });
  for (const failure of report.failures) console.log(`\n${failure}`);
  console.log(`\n${report.passed} passed, ${report.failed} failed; server ${report.healthy ? 'healthy' : 'NOT healthy'} afterwards`);
  server.closeAllConnections();
  server.close();
  await stop(1000);
  await db.close();
  process.exit(report.failed === 0 && report.healthy ? 0 : 1);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
