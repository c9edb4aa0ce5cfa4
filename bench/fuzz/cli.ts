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
import { fuzz, RouteCount } from './runner';
import { fuzzedLabels } from './properties';

/**
 * `npm run fuzz`: FUZZ_RUNS (default 1,000) hostile cases per /v1 route of the OpenAPI document and per GraphQL mutation
 * (multipart bodies for the upload route and importAssets) against
 * a server in this process, on a fresh embedded database in .fuzz/data or, with DATABASE_URL, on a fresh
 * database gw_fuzz of that server. FUZZ_SEED repeats a run; FUZZ_ONLY=<regexp> fuzzes only the routes whose label matches. Exit 1 when a case failed.
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
  const schema = await buildAppSchema();
  const only = process.env.FUZZ_ONLY ? new RegExp(process.env.FUZZ_ONLY) : undefined;
  let since = Date.now();
  const onRoute = (r: RouteCount) => {
    console.log(`  ${r.failed ? 'FAIL' : 'ok  '} ${String(r.cases).padStart(6)} cases ${String(Date.now() - since).padStart(7)} ms  ${r.label}`);
    since = Date.now();
  };
  const report = await fuzz(schema, { url, keys }, { runs, seed, only, onRoute });
  // Every route of the OpenAPI document and every mutation got its cases: a route that silently got none is a failure.
  const expected = only ? [] : fuzzedLabels(schema);
  const short = [...expected.filter((l) => !report.routes.some((r) => r.label === l)), ...report.routes.filter((r) => !r.failed && r.cases < runs).map((r) => r.label)];
  for (const label of short) console.log(`  FAIL fewer than ${runs} cases: ${label}`);
  report.failed += short.length;
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
