import 'reflect-metadata';
import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import path from 'node:path';
import { Client } from 'pg';
import { freePort } from './free-port';
import { setLogLevel } from '../src/common/logger';
import { createDataSource } from '../src/db/data-source';
import { ApiKeyRole } from '../src/modules/apikey/api-key.entity';
import { createApiKey } from '../src/modules/apikey/api-key.service';

/**
 * npm run soak: the built gateway as its own process over a fresh database on the PostgreSQL server of
 * DATABASE_URL, SOAK_SECONDS (60) of mixed reads and writes at SOAK_CONNECTIONS (50), every connection of
 * the service killed every 5 s, one SIGTERM and restart half-way. It logs every write the service
 * acknowledged and reconciles that log with the database afterwards. Figures, not verdicts; the exit
 * status is 1 when a write was lost or duplicated or a 500 was answered.
 */
const SECONDS = Number(process.env.SOAK_SECONDS ?? 60);
const CONNECTIONS = Number(process.env.SOAK_CONNECTIONS ?? 50);
const KILL_EVERY_MS = 5000;
const APP_NAME = 'gw_soak';
const COLLECTIONS = 10;

const log = (line: string) => process.stderr.write(`${line}\n`);
const address = () => `0x${randomBytes(20).toString('hex')}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function adminQuery(url: string, sql: string, params: unknown[] = []): Promise<{ rows: Record<string, unknown>[] }> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(sql, params);
  } finally {
    await client.end();
  }
}

/** The gateway process, started from dist on `port` and waited for until /readyz answers. */
async function startGateway(url: string, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [path.resolve(__dirname, '../src/main.js')], {
    env: { ...process.env, DATABASE_URL: url, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'error', NODE_ENV: 'production', RATE_LIMIT: 'off' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (let i = 0; i < 300; i += 1) {
    if (child.exitCode !== null) throw new Error(`the gateway exited with ${child.exitCode}`);
    const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false);
    if (ok) return child;
    await sleep(100);
  }
  throw new Error('the gateway did not become ready in 30 s');
}

interface Tally {
  statuses: Map<string, number>;
  latencies: number[];
  /** Names of the assets and addresses of the collections whose creation the service acknowledged. */
  assets: string[];
  collections: string[];
  /** Names of every asset creation sent, acknowledged or not (a duplicate could come from any). */
  assetsSent: string[];
}

async function main(): Promise<void> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    process.stderr.write('npm run soak needs DATABASE_URL: a PostgreSQL server on which it may create a database (it kills its own connections with pg_terminate_backend).\n');
    process.exit(2);
  }
  setLogLevel('error');
  const dbName = `gw_soak_${Date.now().toString(36)}`;
  await adminQuery(serverUrl, `CREATE DATABASE "${dbName}"`);
  const dbUrl = new URL(serverUrl);
  dbUrl.pathname = `/${dbName}`;
  const gatewayUrl = new URL(dbUrl);
  gatewayUrl.searchParams.set('application_name', APP_NAME);
  let gateway: ChildProcess | undefined;
  try {
    const ds = createDataSource({ url: dbUrl.toString(), poolSize: 2, queryTimeoutMs: 30000 });
    await ds.initialize();
    await ds.runMigrations({ transaction: 'each' });
    const owner = address();
    const { key } = await createApiKey(ds.manager, { address: owner, role: ApiKeyRole.USER });
    await ds.destroy();

    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    gateway = await startGateway(gatewayUrl.toString(), port);
    const headers = { 'content-type': 'application/json', 'access-token': key };
    const collections: string[] = [];
    for (let i = 0; i < COLLECTIONS; i += 1) {
      const contract = address();
      const res = await fetch(`${base}/v1/collections`, { method: 'POST', headers, body: JSON.stringify({ contract_address: contract, chain_id: '1', name: `Soak ${i}` }) });
      if (res.status !== 200) throw new Error(`could not create the soak's collections: ${res.status} ${await res.text()}`);
      collections.push(contract);
    }

    const tally: Tally = { statuses: new Map(), latencies: [], assets: [], collections: [], assetsSent: [] };
    const count = (status: string) => tally.statuses.set(status, (tally.statuses.get(status) ?? 0) + 1);
    const started = Date.now();
    const until = started + SECONDS * 1000;
    let restart: { exitCode: number | null; stopMs: number; downMs: number } | undefined;

    const request = async (n: number, i: number) => {
      const kind = (n + i) % 10;
      const t0 = performance.now();
      try {
        if (kind < 6) {
          const res =
            kind % 2
              ? await fetch(`${base}/v1/collections?limit=5&include_assets=true`)
              : await fetch(`${base}/graphql`, { method: 'POST', headers, body: JSON.stringify({ query: READ }) });
          await res.arrayBuffer();
          count(String(res.status));
        } else if (kind < 8) {
          const contract = address();
          const res = await fetch(`${base}/v1/collections`, { method: 'POST', headers, body: JSON.stringify({ contract_address: contract, chain_id: '1' }) });
          await res.arrayBuffer();
          count(String(res.status));
          if (res.status === 200) tally.collections.push(contract);
        } else {
          const name = `soak-${randomUUID()}`;
          const contract = collections[(n + i) % COLLECTIONS];
          tally.assetsSent.push(name);
          const input = { collection_id: contract, token_address: contract, chain_id: '1', name, description: 'soak', image_url: 'https://example.com/a.png', metadata: {}, owner };
          const res = await fetch(`${base}/v1/assets`, { method: 'POST', headers, body: JSON.stringify(input) });
          await res.arrayBuffer();
          count(String(res.status));
          if (res.status === 200) tally.assets.push(name);
        }
      } catch {
        // No answer (the server was restarting): not acknowledged, counted apart.
        count('no answer');
        await sleep(200);
      }
      tally.latencies.push(performance.now() - t0);
    };
    const worker = async (n: number) => {
      for (let i = 0; Date.now() < until; i += 1) await request(n, i);
    };
    const killer = setInterval(() => {
      void adminQuery(dbUrl.toString(), 'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [APP_NAME]).catch(() => undefined);
    }, KILL_EVERY_MS);
    const restarter = (async () => {
      await sleep((SECONDS * 1000) / 2);
      const child = gateway!;
      const signalled = Date.now();
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const [exitCode] = (await exited) as [number | null];
      const stopMs = Date.now() - signalled;
      gateway = await startGateway(gatewayUrl.toString(), port);
      restart = { exitCode, stopMs, downMs: Date.now() - signalled };
    })();
    await Promise.all([...Array.from({ length: CONNECTIONS }, (_, n) => worker(n)), restarter]);
    clearInterval(killer);
    const elapsed = (Date.now() - started) / 1000;

    const found = await adminQuery(dbUrl.toString(), 'SELECT name, count(*)::int AS n FROM assets WHERE name = ANY($1) GROUP BY name', [tally.assetsSent]);
    const perName = new Map(found.rows.map((r) => [r.name as string, r.n as number]));
    const foundCollections = await adminQuery(dbUrl.toString(), 'SELECT count(*)::int AS n FROM collections WHERE contract_address = ANY($1)', [tally.collections]);
    const lostAssets = tally.assets.filter((name) => !perName.has(name)).length;
    const lostCollections = tally.collections.length - (foundCollections.rows[0].n as number);
    const duplicated = [...perName.values()].filter((n) => n > 1).length;

    const sorted = [...tally.latencies].sort((a, b) => a - b);
    const p99 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0;
    const statuses = Object.fromEntries([...tally.statuses].sort());
    const lines = [
      `soak: ${SECONDS} s at ${CONNECTIONS} connections, kills every ${KILL_EVERY_MS / 1000} s, one SIGTERM + restart`,
      `requests:          ${tally.latencies.length} (${Math.round(tally.latencies.length / elapsed)}/s)`,
      `statuses:          ${Object.entries(statuses).map(([s, n]) => `${s}: ${n}`).join(', ')}`,
      `p99:               ${p99.toFixed(0)} ms`,
      `acknowledged:      ${tally.collections.length} collections, ${tally.assets.length} assets`,
      `lost writes:       ${lostCollections + lostAssets}`,
      `duplicated writes: ${duplicated}`,
      `restart:           SIGTERM exit ${restart?.exitCode} after ${restart?.stopMs} ms, serving again after ${restart?.downMs} ms`,
    ];
    process.stdout.write(lines.join('\n') + '\n');
    if (lostCollections + lostAssets + duplicated > 0 || tally.statuses.has('500')) process.exitCode = 1;
  } finally {
    if (gateway && gateway.exitCode === null) {
      gateway.kill('SIGTERM');
      await once(gateway, 'exit');
    }
    await adminQuery(serverUrl, `DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`).catch((err: Error) => log(`could not drop ${dbName}: ${err.message}`));
  }
}

const READ = /* GraphQL */ `{ collections(limit: 5) { result { name owner assets(limit: 3) { result { name tokenId } } } } }`;

main().catch((err) => {
  log(`soak failed: ${err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
});
