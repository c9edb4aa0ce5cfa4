import 'reflect-metadata';
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { buildSchema, isEnumType } from 'graphql';
import { Client } from 'pg';
import { freePort } from './free-port';
import { setLogLevel } from '../src/common/logger';
import { DataSource } from 'typeorm';
import { createDataSource } from '../src/db/data-source';
import { startEmbedded } from '../src/db/embedded';
import { ApiKeyRole } from '../src/modules/apikey/api-key.entity';
import { createApiKey } from '../src/modules/apikey/api-key.service';
import { routes } from '../src/app/rest/v1/routes';
import { DEFAULT_SCALE, HOLDERS, holdsDataset as holdsWholeDataset, loadDataset, Scale } from './dataset';
import { GrowthRow, growthTable, readGrowth, runGrowth } from './growth';
import { Party, runWrites } from './writes';
import { benchEvents } from './events';
import { anchorTable, cpuMs, runAnchors } from './anchors';
import { frontendWorkloads } from './frontend';
import { benchChain, startBenchChain } from './chain';
import { parseShapes, shapedRequest } from './shapes';
import { sequentialLatency } from './sequential';
import { benchSweeps } from './sweep';
import { tracingCost } from './tracing-cost';
import { benchMetadata, startDocumentServer } from './metadata';

/**
 * npm run bench: loads a deterministic data set into a database of its own, starts the built gateway
 * as its own process (production mode) on a free loopback port, drives each workload through GraphQL
 * and its REST twin with autocannon, and prints one table (and JSON with --json). Figures, not verdicts.
 */
const { values: opts } = parseArgs({
  options: {
    scale: { type: 'string', default: '1' },
    'orders-scale': { type: 'string', default: '1' },
    // Another build of the gateway (a checkout whose dist/ is built, e.g. main): its workloads run back to
    // back with this build's, `--passes` times; with --anchors it joins the same interleaved rounds instead.
    baseline: { type: 'string' },
    passes: { type: 'string', default: '2' },
    // The database of the run on the DATABASE_URL server (dropped and recreated unless --reuse-db).
    database: { type: 'string', default: 'gw_bench' },
    // W1–W3 side by side with PostGraphile 5 and a node:http + pg floor (bench/anchors.ts); PostgreSQL only.
    anchors: { type: 'boolean', default: false },
    // Keeps the database when it already holds the data set of this scale (repeated runs on PostgreSQL).
    'reuse-db': { type: 'boolean', default: false },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
    pool: { type: 'string', default: '8' },
    json: { type: 'string' },
    // A regular expression over the workloads' names: `--only 'W1|F2'`.
    only: { type: 'string' },
    // The request shapes of the GraphQL workloads (bench/shapes.ts): `--shapes apollo,urql,fetch` (all by default).
    shapes: { type: 'string' },
    'import-rows': { type: 'string', default: '100000' },
    'skip-import': { type: 'boolean', default: false },
    /** Server processes (WORKERS); more than 1 needs DATABASE_URL. */
    workers: { type: 'string', default: '1' },
    /** A streaming replica of the bench's PostgreSQL (scripts/replica.sh), read by read-only requests. */
    replica: { type: 'boolean', default: false },
    'skip-events': { type: 'boolean', default: false },
    /** Requests sent one at a time (after a tenth as many unmeasured) for the workloads with a latency target (W6-W8). */
    sequential: { type: 'string', default: '200' },
    /** How many sweeps the sweep row (W9) makes through each door. */
    sweeps: { type: 'string', default: '40' },
    subscribers: { type: 'string', default: '100' },
    // The chain row (PostgreSQL only; `--only CHAIN --skip-import` runs it alone): a backfill of this many transfers.
    'chain-transfers': { type: 'string', default: '100000' },
    'lag-samples': { type: 'string', default: '100' },
    // The metadata row (`--only METADATA --skip-import` runs it alone): a collection of this many tokens whose
    // documents a local server answers after --metadata-latency ms; reads at --metadata-read-rate per second.
    'metadata-documents': { type: 'string', default: '10000' },
    'metadata-latency': { type: 'string', default: '50' },
    'metadata-read-rate': { type: 'string', default: '50' },
    /** PostgreSQL: the fetch worker in a process of its own (METADATA_FETCH=on), the reads' process with METADATA_FETCH=off. */
    'metadata-split': { type: 'boolean', default: false },
    /** METADATA_CONCURRENCY and METADATA_HOST_CONCURRENCY of the worker (one host serves every document). */
    'metadata-concurrency': { type: 'string', default: '64' },
    // The cost of traces: the workloads (--only) against this build with traces off and on (exporting
    // OTLP to a receiver in the bench) and the --baseline build off and on, side by side in interleaved rounds.
    tracing: { type: 'boolean', default: false },
    /** The growth section instead of the workloads: every documented list, sort and filter, pages 1 and 10, one at a time (bench/growth.ts). */
    growth: { type: 'boolean', default: false },
    'growth-requests': { type: 'string', default: '30' },
    /** A growth JSON of another scale (--json of an earlier --growth run), shown side by side with the ratio. */
    'growth-compare': { type: 'string' },
    /** Loads the data set (or finds it with --reuse-db) and stops: the loader's steps, timed, and nothing else. */
    'load-only': { type: 'boolean', default: false },
    /** Loads with every trigger on (the derived tables kept row by row, as writes keep them): the slow reference of the loader. */
    'load-with-triggers': { type: 'boolean', default: false },
  },
});

const log = (line: string) => process.stderr.write(`${line}\n`);
const shapes = (() => {
  try {
    return parseShapes(opts.shapes);
  } catch (err) {
    log((err as Error).message);
    return process.exit(2);
  }
})();
const md5 = (s: string) => createHash('md5').update(s).digest('hex');
const uuidOf = (s: string) => md5(s).replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');
const addressOf = (label: string) => `0x${(md5(label) + md5(`x${label}`)).slice(0, 40)}`;

interface Row {
  workload: string;
  door: string;
  reqPerSec: number | null;
  p50Ms: number | null;
  p99Ms: number | null;
  errors: number;
  peakRssMb: number;
  sqlPerRequest: number | null;
  bytesPerResponse: number | null;
  note?: string;
}

/**
 * `--orders-scale k` multiplies the completed orders only: each order needs an accepted offer of its own,
 * so the offers grow by the added orders and the active offers (offers - orders) stay as at scale 1.
 */
function scaled(factor: number, ordersFactor: number): Scale {
  const orders = Math.max(5, Math.round(DEFAULT_SCALE.orders * factor));
  const scaledOrders = Math.round(orders * ordersFactor);
  return {
    collections: Math.max(2, Math.round(DEFAULT_SCALE.collections * factor)),
    assetsPerCollection: DEFAULT_SCALE.assetsPerCollection,
    offers: Math.max(10, Math.round(DEFAULT_SCALE.offers * factor)) + scaledOrders - orders,
    orders: scaledOrders,
  };
}

/** A fresh database for the run, with the project's migrations and the data set; returns how the server reaches it. */
async function prepareDatabase(scale: Scale): Promise<{
  env: Record<string, string>;
  adminKey: string;
  sweepKeys: [string, string];
  label: string;
  url: string;
  writers?: { sellers: Party[]; buyer: Party };
}> {
  const serverUrl = process.env.DATABASE_URL;
  let url: string;
  let stop = async () => {};
  let env: Record<string, string>;
  let label: string;
  let reuse = false;
  if (serverUrl) {
    const parsed = new URL(serverUrl);
    const database = opts.database!;
    if (!/^[a-z_][a-z0-9_]*$/.test(database)) throw new Error(`--database must be a plain lower-case name, got ${database}`);
    parsed.pathname = `/${database}`;
    url = parsed.toString();
    env = { DATABASE_URL: url };
    // A host parameter that is a directory means a Unix socket (libpq's convention, which pg follows).
    const socketDir = parsed.searchParams.get('host');
    label = `PostgreSQL (${socketDir?.startsWith('/') ? `Unix socket in ${socketDir}` : `TCP ${parsed.host}`}, database ${database})`;
    reuse = Boolean(opts['reuse-db']) && (await holdsDataset(url, scale));
    if (!reuse) {
      const admin = new Client({ connectionString: serverUrl });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await admin.query(`CREATE DATABASE ${database}`);
      await admin.end();
    }
  } else {
    const dataDir = path.resolve('.bench/data');
    fs.rmSync(dataDir, { recursive: true, force: true });
    const embedded = await startEmbedded(dataDir, { purpose: 'npm run bench (loading)', maxConnections: 4 });
    url = embedded.url;
    stop = embedded.stop;
    env = { DATA_DIR: dataDir };
    label = `embedded PGlite (${dataDir})`;
  }
  const ds = createDataSource({ url, poolSize: 2, queryTimeoutMs: 600_000 });
  await ds.initialize();
  if (reuse) {
    log(`reusing ${label}, which holds the data set of this scale (--reuse-db)`);
    // Migrations added since the load apply here, timed, rather than in the gateway's start (which the bench
    // waits 60 s for): on ten million assets an index or a backfill takes minutes.
    const t = Date.now();
    const applied = await ds.runMigrations({ transaction: 'each' });
    if (applied.length) log(`  ${applied.length} migrations applied (${((Date.now() - t) / 1000).toFixed(1)} s): ${applied.map((m) => m.name).join(', ')}`);
  } else {
    await ds.runMigrations({ transaction: 'each' });
    log(`loading the data set into ${label}`);
    await loadDataset(ds, scale, log, { triggers: opts['load-with-triggers'] });
  }
  const admin = reuse ? `bench-admin-${Date.now()}` : 'bench-admin';
  const { key } = await createApiKey(ds.manager, { address: addressOf(admin), role: ApiKeyRole.ADMIN, label: 'bench' });
  // The two accounts of the sweep row (bench/sweep.ts), which buy from each other.
  const sweeper = async (name: string) => (await createApiKey(ds.manager, { address: addressOf(`${admin}-${name}`), role: ApiKeyRole.USER, label: 'bench sweeps' })).key;
  const sweepKeys: [string, string] = [await sweeper('sweeper-a'), await sweeper('sweeper-b')];
  const writers = opts.growth ? await writeParties(ds, admin) : undefined;
  await ds.destroy();
  await stop();
  if (Number(opts.workers) > 1) {
    env.WORKERS = opts.workers!;
    label += `; ${opts.workers} workers`;
  }
  if (opts.replica) {
    if (!serverUrl) throw new Error('--replica needs DATABASE_URL: the embedded database has no replicas');
    // After loading: the base backup copies the data set, so the replica starts level with the primary.
    const port = await freePort();
    const replica = new URL(url);
    replica.port = String(await startReplica(port));
    env.DATABASE_REPLICA_URLS = replica.toString();
    label += `; a streaming replica on port ${port} (scripts/replica.sh)`;
  }
  return { env, adminKey: key, sweepKeys, label, url, writers };
}

/**
 * The parties of the growth section's writes (bench/writes.ts): a buyer of the run's own and one seller per
 * round, holders of the data set (each owns a share of every scale's assets) starting at one that
 * depends on the time, so that runs on a reused database take other holders' unlisted assets.
 */
async function writeParties(ds: DataSource, admin: string): Promise<{ sellers: Party[]; buyer: Party }> {
  const party = async (address: string, label: string): Promise<Party> => ({
    address,
    key: (await createApiKey(ds.manager, { address, role: ApiKeyRole.USER, label })).key,
  });
  const first = Math.floor(Date.now() / 1000) % HOLDERS;
  const sellers: Party[] = [];
  for (let i = 0; i < Number(opts['growth-requests']) + 2; i += 1) sellers.push(await party(addressOf(`holder${(first + i) % HOLDERS}`), 'bench writes'));
  return { sellers, buyer: await party(addressOf(`${admin}-buyer`), 'bench writes') };
}

/** Whether the run's database exists with this scale's whole data set (for --reuse-db). */
async function holdsDataset(url: string, scale: Scale): Promise<boolean> {
  const client = new Client({ connectionString: url });
  try {
    await client.connect();
    return await holdsWholeDataset((sql) => client.query(sql), scale);
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

let replicaPort: number | undefined;
/** scripts/replica.sh start: a standby of the local PostgreSQL; stopped when the bench ends. */
async function startReplica(port: number): Promise<number> {
  log(`starting a streaming replica on port ${port}`);
  const result = spawnSync('bash', ['scripts/replica.sh', 'start', String(port)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (result.status !== 0) throw new Error(`scripts/replica.sh start failed (exit ${result.status})`);
  replicaPort = port;
  return port;
}

function stopReplica(): void {
  if (replicaPort !== undefined) spawnSync('bash', ['scripts/replica.sh', 'stop', String(replicaPort)], { stdio: 'inherit' });
}

/** The server's process and, with WORKERS, its workers. */
function processTree(pid: number): number[] {
  try {
    const children = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    return [pid, ...(children ? children.split(/\s+/).map(Number) : [])];
  } catch {
    return [pid];
  }
}

/** The peak RSS of the server: with WORKERS, the sum of its processes' peaks. */
function peakRssMb(pid: number): number {
  let kb = 0;
  for (const p of processTree(pid)) {
    try {
      kb += Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      // gone meanwhile
    }
  }
  return Math.round(kb / 1024);
}

/** Resets the kernel's peak-RSS mark of the server so each workload reports its own peak. */
function resetPeakRss(pid: number): void {
  for (const p of processTree(pid)) {
    try {
      fs.writeFileSync(`/proc/${p}/clear_refs`, '5');
    } catch {
      // not permitted here: the figure is then the peak since start
    }
  }
}

/** The Node flags of `npm start` (package.json), so the bench runs the server as users do. */
function startFlags(): string[] {
  const { scripts } = JSON.parse(fs.readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
  const match = /\bnode ((?:--\S+ )*)dist\/src\/main\.js/.exec(scripts.start);
  if (!match) throw new Error(`package.json's start script does not run dist/src/main.js with node: ${scripts.start}`);
  return match[1].split(' ').filter(Boolean);
}

async function startServer(env: Record<string, string>, pool: number, dir = '.'): Promise<{ child: ChildProcess; base: string }> {
  const port = await freePort();
  // The rate limiter runs (its cost is part of the figures) with limits a run never reaches.
  // The GraphQL (REST) twin sends a route's own document, whose snake_case names are 39 aliases.
  const unlimited = { RATE_LIMIT_POINTS: '1000000000', RATE_LIMIT_ANON_POINTS: '1000000000', GRAPHQL_MAX_ALIASES: '1000' };
  const child = spawn(process.execPath, [...startFlags(), path.resolve(dir, 'dist/src/main.js')], {
    cwd: path.resolve(dir),
    env: {
      ...process.env,
      ...env,
      ...unlimited,
      PORT: String(port),
      HOST: '127.0.0.1',
      NODE_ENV: 'production',
      SEED_DEMO: 'false',
      LOG_LEVEL: 'warn',
      DB_POOL_SIZE: String(pool),
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i += 1) {
    try {
      if ((await fetch(`${base}/readyz`)).ok) return { child, base };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  child.kill();
  throw new Error('the gateway did not become ready within 60 s');
}

interface Workload {
  name: string;
  /**
   * `GraphQL <shape>`: the workload's document as a client sends it (bench/shapes.ts); `GraphQL (REST)`:
   * the REST route's own GraphQL document sent to /graphql by a bare fetch, the like-for-like twin.
   */
  door: string;
  method: 'GET' | 'POST';
  path: string;
  /** The request's headers; Accept-Encoding comes from `encoding`. */
  headers?: Record<string, string>;
  body?: string;
  /** Accept-Encoding of the compressed variants: their bytes/resp are the bytes on the wire. */
  encoding?: 'gzip' | 'br';
  /** The issue sets a latency target for one request: also measured one request at a time (a row of its own). */
  sequential?: true;
}

/** What the bench has always sent with a REST GET (kept so that its rows stay comparable with earlier runs). */
const LEGACY_HEADERS = { 'content-type': 'application/json' };

/** Workloads with a latency target: each is also measured one request at a time (sequentialRow). */
const timedAlone = (...list: Workload[]): Workload[] => list.map((w) => ({ ...w, sequential: true }));

/** A GraphQL workload in each request shape of --shapes: one row each. */
function gql(name: string, query: string, variables: Record<string, unknown> = {}): Workload[] {
  return shapes.map((shape) => ({ name, door: `GraphQL ${shape}`, method: 'POST', path: '/graphql', ...shapedRequest(shape, query, variables, name) }));
}

/**
 * The document a GET /v1 route runs, posted to /graphql with the variables the REST router would pass.
 * `literals` are written into the document instead: /graphql prices a list whose `limit` is a variable
 * at the maximum (the route table's documents are trusted and not priced), so W1 would be refused.
 */
function restShaped(name: string, path: string, variables: Record<string, unknown>, literals: Record<string, number> = {}): Workload {
  const route = routes.find((r) => r.method === 'get' && r.path === path);
  if (!route) throw new Error(`no GET route ${path}`);
  let document = route.operation;
  for (const [variable, value] of Object.entries(literals)) {
    document = document
      .replace(new RegExp(`\\$${variable}: \\w+!?(, )?`), '')
      .replace(new RegExp(`\\$${variable}\\b`, 'g'), String(value));
  }
  const body = JSON.stringify({ query: document, variables });
  return { name, door: 'GraphQL (REST)', method: 'POST', path: '/graphql', headers: { 'content-type': 'application/json' }, body };
}

function workloads(): Workload[] {
  const collectionId = uuidOf('c1');
  const contract = addressOf('contract2');
  const seriesFrom = new Date(Date.now() - 30 * 24 * 3600 * 1000).toISOString();
  return [
    ...gql('W1 collections x assets', '{ collections(limit: 20) { result { name assets(limit: 20) { result { tokenId name owner } } } } }'),
    { name: 'W1 collections x assets', door: 'REST', method: 'GET', path: '/v1/collections?limit=20&include_assets=true' },
    // The same 411 KB response compressed: what the CPU of compressing costs in req/s, and saves in bytes.
    { name: 'W1 collections x assets', door: 'REST gzip', method: 'GET', path: '/v1/collections?limit=20&include_assets=true', encoding: 'gzip' },
    { name: 'W1 collections x assets', door: 'REST br', method: 'GET', path: '/v1/collections?limit=20&include_assets=true', encoding: 'br' },
    restShaped('W1 collections x assets', '/v1/collections', { include_assets: true }, { limit: 20, assets_limit: 20 }),
    ...gql('W2 one asset', 'query ($a: Address!, $t: TokenId!) { asset(tokenAddress: $a, tokenId: $t) { id name tokenId owner collection { name contractAddress } } }', {
      a: contract,
      t: '1',
    }),
    { name: 'W2 one asset', door: 'REST', method: 'GET', path: `/v1/assets/${contract}/1` },
    restShaped('W2 one asset', '/v1/assets/:token_address/:token_id', { token_address: contract, token_id: '1' }),
    ...gql('W3 assets by token id', 'query ($c: String!) { assets(collectionId: $c, orderBy: TOKEN_ID, direction: ASC, limit: 50) { result { tokenId name owner } } }', {
      c: collectionId,
    }),
    { name: 'W3 assets by token id', door: 'REST', method: 'GET', path: `/v1/assets?collection_id=${collectionId}&order_by=token_id&direction=asc&limit=50` },
    restShaped('W3 assets by token id', '/v1/assets', { collection_id: collectionId, order_by: 'TOKEN_ID', direction: 'ASC', limit: 50 }),
    ...gql('W4 offers of an asset', 'query ($a: Address!, $t: TokenId!) { offers(tokenAddress: $a, tokenId: $t, limit: 20) { result { id price taker assets { result { name tokenId } } } } }', {
      a: contract,
      t: '1',
    }),
    { name: 'W4 offers of an asset', door: 'REST', method: 'GET', path: `/v1/offers?token_address=${contract}&token_id=1&limit=20` },
    restShaped('W4 offers of an asset', '/v1/offers', { token_address: contract, token_id: '1', limit: 20 }),
    ...gql('W5 statistics 24h', '{ statistics(period: H24, limit: 20) { result { volume floorPrice totalHolders totalTransactions isTrending collection { name } } } }'),
    { name: 'W5 statistics 24h', door: 'REST', method: 'GET', path: '/v1/statistics?period=24h&limit=20' },
    restShaped('W5 statistics 24h', '/v1/statistics', { period: 'H24', limit: 20 }),
    // A chart: 30 days of hours (721 buckets) of one collection, from the rollups (issue #31: <= 50 ms).
    ...timedAlone(
      ...gql(
        'W6 series 30 days of hours',
        'query ($a: Address!, $from: DateTimeISO!) { collection(address: $a) { series(interval: HOUR, from: $from) { buckets { startTime volume sales averagePrice floorPrice } } } }',
        { a: contract, from: seriesFrom },
      ),
      { name: 'W6 series 30 days of hours', door: 'REST', method: 'GET', path: `/v1/collections/${contract}/history?interval=1h&from=${seriesFrom}` },
      restShaped('W6 series 30 days of hours', '/v1/collections/:address/history', { address: contract, interval: 'HOUR', from: seriesFrom }),
      // Search by name (issue #31: <= 20 ms): a query that starts every asset's name (all are `Asset <c>/<t>`),
      // ranked within its first 1,000 candidates, and one that names a single asset.
      ...gql('W7 search broad (asset)', 'query ($q: String!) { searchAssets(query: $q, limit: 20) { remaining result { id name tokenId } } }', { q: 'asset' }),
      { name: 'W7 search broad (asset)', door: 'REST', method: 'GET', path: '/v1/search/assets?query=asset&limit=20' },
      restShaped('W7 search broad (asset)', '/v1/search/assets', { query: 'asset', limit: 20 }),
      ...gql('W8 search narrow (asset 5/17)', 'query ($q: String!) { searchAssets(query: $q, limit: 20) { remaining result { id name tokenId } } }', { q: 'asset 5/17' }),
      { name: 'W8 search narrow (asset 5/17)', door: 'REST', method: 'GET', path: '/v1/search/assets?query=asset%205%2F17&limit=20' },
      restShaped('W8 search narrow (asset 5/17)', '/v1/search/assets', { query: 'asset 5/17', limit: 20 }),
    ),
    // The pages of a frontend (GraphQL only; beside PostGraphile with --anchors).
    ...frontendWorkloads(contract).flatMap((f) => gql(f.name, f.gateway.query, f.gateway.variables)),
  ];
}

async function probe(base: string, w: Workload): Promise<{ sql: number | null; bytes: number; ok: boolean }> {
  const res = await fetch(base + w.path, { method: w.method, headers: w.headers ?? LEGACY_HEADERS, body: w.body });
  const text = await res.text();
  const ok = res.ok && !text.includes('"errors"');
  if (!ok) log(`  ${w.door} ${w.name}: HTTP ${res.status} ${text.slice(0, 200)}`);
  const sql = res.headers.get('x-sql-statements');
  return { sql: sql === null ? null : Number(sql), bytes: Buffer.byteLength(text), ok };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function drive(base: string, pid: number, w: Workload): Promise<Row> {
  const { sql, bytes } = await probe(base, w);
  const options = {
    url: base + w.path,
    method: w.method,
    headers: { ...(w.headers ?? LEGACY_HEADERS), ...(w.encoding ? { 'accept-encoding': w.encoding } : {}) },
    body: w.body,
    connections: Number(opts.connections),
  };
  await autocannon({ ...options, duration: Number(opts.warmup) });
  resetPeakRss(pid);
  const rounds: autocannon.Result[] = [];
  for (let i = 0; i < Number(opts.rounds); i += 1) rounds.push(await autocannon({ ...options, duration: Number(opts.duration) }));
  const best = rounds.sort((a, b) => a.requests.average - b.requests.average)[Math.floor(rounds.length / 2)];
  return {
    workload: w.name,
    door: w.door,
    reqPerSec: Math.round(median(rounds.map((r) => r.requests.average))),
    p50Ms: best.latency.p50,
    p99Ms: best.latency.p99,
    errors: rounds.reduce((n, r) => n + r.errors + r.non2xx + r.timeouts, 0),
    peakRssMb: peakRssMb(pid),
    sqlPerRequest: sql,
    // autocannon reads the bytes as sent: for a compressed variant that is the figure that matters.
    bytesPerResponse: w.encoding ? Math.round(best.throughput.average / best.requests.average) : bytes,
  };
}

/** The workload one request at a time (bench/sequential.ts): its p50 and p99 answer a per-request latency target. */
async function sequentialRow(base: string, pid: number, w: Workload): Promise<Row> {
  const requests = Number(opts.sequential);
  resetPeakRss(pid);
  const f = await sequentialLatency(
    { url: base + w.path, method: w.method, headers: w.headers ?? LEGACY_HEADERS, body: w.body },
    requests,
    Math.max(1, Math.round(requests / 10)),
  );
  return {
    workload: w.name,
    door: `${w.door}, one at a time`,
    reqPerSec: Math.round(1000 / f.meanMs),
    p50Ms: f.p50Ms,
    p99Ms: f.p99Ms,
    errors: f.errors,
    peakRssMb: peakRssMb(pid),
    sqlPerRequest: null,
    bytesPerResponse: null,
    note: `${f.requests} requests one after another on one connection (req/s = 1 / mean)`,
  };
}

async function benchImport(base: string, pid: number, adminKey: string, rows: number): Promise<Row> {
  const lines = ['name,description,image_url,metadata,owner'];
  const owner = addressOf('bench-admin');
  for (let i = 0; i < rows; i += 1) lines.push(`Imported ${i},"Row ${i}, imported",https://img.example/i/${i}.png,"{""n"":${i}}",${owner}`);
  const csv = lines.join('\n');
  const form = new FormData();
  form.append('collection_id', uuidOf('c3'));
  form.append('file', new Blob([csv], { type: 'text/csv' }), 'bench.csv');
  resetPeakRss(pid);
  const started = process.hrtime.bigint();
  const res = await fetch(`${base}/v1/assets/import`, { method: 'POST', headers: { 'access-token': adminKey }, body: form });
  const text = await res.text();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (!res.ok) log(`  import: HTTP ${res.status} ${text.slice(0, 300)}`);
  return {
    workload: `Import ${rows.toLocaleString('en')} rows`,
    door: 'REST',
    reqPerSec: null,
    p50Ms: null,
    p99Ms: null,
    errors: res.ok ? 0 : 1,
    peakRssMb: peakRssMb(pid),
    sqlPerRequest: Number(res.headers.get('x-sql-statements')),
    bytesPerResponse: Buffer.byteLength(text),
    note: `${seconds.toFixed(1)} s, ${Math.round(rows / seconds).toLocaleString('en')} rows/s, ${(csv.length / 1024 / 1024).toFixed(1)} MB`,
  };
}

/** Events delivered per second to the subscribers while 8 writers create collections for --duration seconds; latency from occurred_at (docs/benchmark.md). */
async function eventsRow(base: string, pid: number, adminKey: string): Promise<Row> {
  resetPeakRss(pid);
  const subscribers = Number(opts.subscribers);
  const f = await benchEvents(base, adminKey, { subscribers, writers: 8, seconds: Number(opts.duration) });
  return {
    workload: `Events live, ${subscribers} subscribers`,
    door: 'WebSocket',
    reqPerSec: f.deliveriesPerSec,
    p50Ms: f.p50Ms,
    p99Ms: f.p99Ms,
    errors: f.wrongSubscribers,
    peakRssMb: peakRssMb(pid),
    sqlPerRequest: null,
    bytesPerResponse: null,
    note: `events delivered/s (all subscribers); ${f.events.toLocaleString('en')} events written at ${f.writesPerSec}/s; ms from occurred_at to receipt`,
  };
}

/** One statement on the DATABASE_URL server's own database (creating or dropping a row's database). */
async function adminQuery(sql: string): Promise<void> {
  const admin = new Client({ connectionString: process.env.DATABASE_URL! });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

/** A row's database of its own on the DATABASE_URL server, dropped and created again; its URL. */
async function recreateDatabase(database: string): Promise<string> {
  await adminQuery(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await adminQuery(`CREATE DATABASE ${database}`);
  const parsed = new URL(process.env.DATABASE_URL!);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/**
 * A backfill of --chain-transfers ERC721 transfers from a local node by a gateway that follows it, then the
 * lag from a mined block to the owner shown by the API (bench/chain.ts); a gateway process of its own (the
 * build in `dir`), its follower polling every 100 ms with no confirmations (a local node), on a database of
 * its own (`<--database>_chain`, made again for each run and migrated by that build): the chain's collection
 * and transfers must be new to it.
 */
async function chainRow(dir: string, tag: string): Promise<Row> {
  const url = await recreateDatabase(`${opts.database}_chain`);
  // The build's own migrations (a baseline's schema is its own), from its dist/.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const build = require(path.resolve(dir, 'dist/src/db/data-source.js')) as { createDataSource: typeof createDataSource };
  const ds = build.createDataSource({ url, poolSize: 1, queryTimeoutMs: 600_000 });
  await ds.initialize();
  await ds.runMigrations({ transaction: 'each' });
  await ds.destroy();
  const chain = await startBenchChain(Number(opts['chain-transfers']), log);
  const db = new Client({ connectionString: url });
  await db.connect();
  await db.query(`INSERT INTO chains (id, name, symbol) VALUES ($1, 'Local bench chain', 'ETH') ON CONFLICT (id) DO NOTHING`, [chain.chainId]);
  await db.end();
  const keys = createDataSource({ url, poolSize: 1, queryTimeoutMs: 60_000 });
  await keys.initialize();
  const { key: adminKey } = await createApiKey(keys.manager, { address: addressOf('bench-admin'), role: ApiKeyRole.ADMIN, label: 'bench chain' });
  await keys.destroy();
  const { child, base } = await startServer(
    { DATABASE_URL: url, [`CHAIN_RPC_${chain.chainId}`]: chain.url, CHAIN_CONFIRMATIONS: '0', CHAIN_POLL_MS: '100' },
    Number(opts.pool),
    dir,
  );
  try {
    log(`running the chain backfill${tag}`);
    resetPeakRss(child.pid!);
    const f = await benchChain(chain, base, adminKey, url, { samples: Number(opts['lag-samples']), log });
    const uris =
      f.lagSamples === 0 ? 'no lag samples, tokenURIs not waited for' : f.tokenUriSeconds === null ? 'tokenURIs not all read within 15 min' : `tokenURIs of the minted tokens read in ${f.tokenUriSeconds.toFixed(0)} s`;
    return {
      workload: `CHAIN backfill ${f.transfers.toLocaleString('en')} transfers; lag`,
      door: `chain follower${tag}`,
      reqPerSec: f.transfersPerSec,
      p50Ms: f.lagP50Ms,
      p99Ms: f.lagP99Ms,
      errors: 0,
      peakRssMb: peakRssMb(child.pid!),
      sqlPerRequest: null,
      bytesPerResponse: null,
      note: `transfers/s applied (${f.backfillSeconds.toFixed(1)} s); ms from a mined block to the owner shown, ${f.lagSamples} samples; chain made in ${f.generationSeconds.toFixed(0)} s${chain.cached ? ' (kept from an earlier run)' : ''}; ${uris}`,
    };
  } finally {
    child.kill('SIGTERM');
    if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
    await chain.close();
  }
}

/**
 * The metadata row (bench/metadata.ts): the tokenURI documents of a collection of --metadata-documents
 * tokens fetched by the gateway's worker (METADATA_CONCURRENCY and METADATA_HOST_CONCURRENCY
 * --metadata-concurrency, one host) from a local server answering after --metadata-latency ms, and the p99 of
 * reads at a fixed rate with the worker idle and fetching; the CPU per document of the worker's process and of
 * the database's backends. With --metadata-split (PostgreSQL) the worker runs in a process of its own and the
 * reads go to one with METADATA_FETCH=off. On a database of its own (`<--database>_metadata`, or
 * .bench/metadata-data).
 */
async function metadataRow(dir: string, tag: string): Promise<Row> {
  const documents = Number(opts['metadata-documents']);
  const contract = addressOf('metadata-bench');
  const serverUrl = process.env.DATABASE_URL;
  let url: string;
  let env: Record<string, string>;
  let stop = async () => {};
  if (serverUrl) {
    url = await recreateDatabase(`${opts.database}_metadata`);
    env = { DATABASE_URL: url };
  } else {
    const dataDir = path.resolve('.bench/metadata-data');
    fs.rmSync(dataDir, { recursive: true, force: true });
    const embedded = await startEmbedded(dataDir, { purpose: 'npm run bench (metadata row)', maxConnections: 4 });
    url = embedded.url;
    stop = embedded.stop;
    env = { DATA_DIR: dataDir };
  }
  const host = await startDocumentServer(Number(opts['metadata-latency']));
  const ds = createDataSource({ url, poolSize: 1, queryTimeoutMs: 600_000 });
  await ds.initialize();
  await ds.runMigrations({ transaction: 'each' });
  const collectionId = uuidOf('metadata-bench');
  await ds.query(
    `INSERT INTO collections (id, chain_id, contract_address, owner, category_id, name, slug) VALUES ($1, '1', $2, $3, 'art', 'Metadata bench', 'metadata-bench')`,
    [collectionId, contract, addressOf('metadata-bench-owner')],
  );
  await ds.query(
    `INSERT INTO assets (collection_id, chain_id, token_address, token_id, name, description, image_url, metadata, owner)
     SELECT $1, '1', $2, t, '#' || t, '', '', jsonb_build_object('token_uri', $3 || '/token/' || t), $4 FROM generate_series(1, $5::int) t`,
    [collectionId, contract, host.url, addressOf('metadata-bench-holder'), documents],
  );
  await ds.query('ANALYZE');
  const { key: adminKey } = await createApiKey(ds.manager, { address: addressOf('bench-admin'), role: ApiKeyRole.ADMIN, label: 'bench metadata' });
  await ds.destroy();
  await stop();
  const concurrency = opts['metadata-concurrency'];
  const worker = { ...env, METADATA_ALLOW_PRIVATE: 'on', METADATA_CONCURRENCY: concurrency, METADATA_HOST_CONCURRENCY: concurrency, METADATA_POLL_MS: '200' };
  const split = Boolean(opts['metadata-split'] && serverUrl);
  if (opts['metadata-split'] && !serverUrl) log('--metadata-split needs DATABASE_URL (two processes on one database): one process');
  const { child, base } = await startServer(split ? { ...env, METADATA_FETCH: 'off' } : worker, Number(opts.pool), dir);
  const fetcher = split ? await startServer(worker, Number(opts.pool), dir) : undefined;
  const workerPid = (fetcher ?? { child }).child.pid!;
  const database = serverUrl ? new Client({ connectionString: url }) : undefined;
  await database?.connect();
  // The database's CPU: every backend of the bench's database (the gateway's pools) that runs on this machine.
  const databaseCpu = async () => {
    if (!database) return null;
    const { rows } = await database.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
    let total = 0;
    for (const { pid } of rows) {
      try {
        total += cpuMs(pid);
      } catch {
        return null;
      }
    }
    return total;
  };
  try {
    log(`running the metadata row (${documents} documents${split ? ', the worker in a process of its own' : ''})${tag}`);
    resetPeakRss(workerPid);
    const f = await benchMetadata(base, adminKey, {
      contract,
      documents,
      readRate: Number(opts['metadata-read-rate']),
      idleSeconds: Number(opts.duration),
      log,
      workerBase: fetcher?.base,
      cpu: async () => ({ worker: cpuMs(workerPid), database: await databaseCpu() }),
    });
    const ratio = f.idleP99Ms ? (f.busyP99Ms / f.idleP99Ms).toFixed(2) : '-';
    const cpu = `CPU ms per document: worker ${f.workerCpuMsPerDocument ?? '-'}, database ${f.databaseCpuMsPerDocument ?? (serverUrl ? '-' : 'in the worker')}`;
    return {
      workload: `METADATA ${f.documents.toLocaleString('en')} documents, ${opts['metadata-latency']} ms each`,
      door: `metadata worker${split ? ' (own process)' : ''}${tag}`,
      reqPerSec: f.documentsPerSec,
      p50Ms: f.busyP50Ms,
      p99Ms: f.busyP99Ms,
      errors: f.readErrors,
      peakRssMb: peakRssMb(workerPid),
      sqlPerRequest: null,
      bytesPerResponse: null,
      note:
        `documents/s (${f.seconds.toFixed(1)} s, ${f.fetched} recorded fetched, ${host.requests()} requests to the host, concurrency ${concurrency}); ${cpu}; ` +
        `p50/p99 of GET /v1/assets/{address}/{id} at ${opts['metadata-read-rate']}/s while fetching; idle p50 ${f.idleP50Ms}, p99 ${f.idleP99Ms} ms; p99 ratio ${ratio}; ${f.reads} reads`,
    };
  } finally {
    await database?.end();
    for (const c of [child, fetcher?.child]) {
      if (!c) continue;
      c.kill('SIGTERM');
      if (c.exitCode === null) await new Promise((resolve) => c.once('exit', resolve));
    }
    await host.close();
    if (serverUrl) await adminQuery(`DROP DATABASE IF EXISTS ${opts.database}_metadata WITH (FORCE)`);
  }
}

function table(rows: Row[]): string {
  const header = ['workload', 'door', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'peak RSS MB', 'SQL/req', 'bytes/resp', 'note'];
  const cells = rows.map((r) => [
    r.workload,
    r.door,
    r.reqPerSec?.toLocaleString('en') ?? '-',
    r.p50Ms?.toString() ?? '-',
    r.p99Ms?.toString() ?? '-',
    String(r.errors),
    String(r.peakRssMb),
    r.sqlPerRequest?.toString() ?? '-',
    r.bytesPerResponse?.toLocaleString('en') ?? '-',
    r.note ?? '',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c: string[]) => `| ${c.map((v, i) => v.padEnd(widths[i])).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...cells.map(line)].join('\n');
}

/** One pass of the workloads (and the import) against the build in `dir`; `tag` marks its rows. */
/** W9: sweeps of 10 of one collection's cheapest listings, one after another (bench/sweep.ts). */
async function sweepRow(base: string, pid: number, keys: [string, string], door: 'REST' | 'GraphQL'): Promise<Row> {
  resetPeakRss(pid);
  const f = await benchSweeps(base, keys, { door, contract: addressOf('contract5'), count: 10, sweeps: Number(opts.sweeps) });
  return {
    workload: SWEEP_WORKLOAD,
    door,
    reqPerSec: f.perSec,
    p50Ms: f.p50Ms,
    p99Ms: f.p99Ms,
    errors: f.errors,
    peakRssMb: peakRssMb(pid),
    sqlPerRequest: f.sqlPerSweep,
    bytesPerResponse: f.bytes,
    note: `${f.sweeps} sweeps one after another (sweeps/s); the 10 bought are listed again between sweeps, untimed`,
  };
}

const SWEEP_WORKLOAD = 'W9 sweep 10 listings';

async function pass(env: Record<string, string>, adminKey: string, sweepKeys: [string, string], dir: string, tag: string, withImport: boolean): Promise<Row[]> {
  const { child, base } = await startServer(env, Number(opts.pool), dir);
  const rows: Row[] = [];
  try {
    const only = opts.only ? new RegExp(opts.only, 'i') : undefined;
    // Against a baseline the twin is left out: it posts this build's route document, which may name new fields.
    for (const w of workloads().filter((x) => (!only || only.test(x.name)) && !(opts.baseline && x.door === 'GraphQL (REST)'))) {
      log(`running ${w.name} (${w.door})${tag}`);
      rows.push({ ...(await drive(base, child.pid!, w)), door: `${w.door}${tag}` });
      if (w.sequential && Number(opts.sequential) > 0) {
        log(`running ${w.name} (${w.door}) one request at a time${tag}`);
        const row = await sequentialRow(base, child.pid!, w);
        rows.push({ ...row, door: `${row.door}${tag}` });
      }
    }
    // Sweeps write: not against a baseline, whose database the passes share.
    if (!opts.baseline && (!only || only.test(SWEEP_WORKLOAD))) {
      for (const door of ['REST', 'GraphQL'] as const) {
        log(`running ${SWEEP_WORKLOAD} (${door})`);
        rows.push(await sweepRow(base, child.pid!, sweepKeys, door));
      }
    }
    if (withImport) {
      log('running the import');
      rows.push(await benchImport(base, child.pid!, adminKey, Number(opts['import-rows'])));
    }
    // The live events row needs subscriptions, which a baseline build may not have; --only picks workloads.
    if (!opts['skip-events'] && !opts.only && !opts.baseline) {
      log('running the live events');
      rows.push(await eventsRow(base, child.pid!, adminKey));
    }
  } finally {
    child.kill('SIGTERM');
    if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
  }
  return rows;
}

async function main(): Promise<void> {
  setLogLevel('warn');
  const scale = scaled(Number(opts.scale), Number(opts['orders-scale']));
  const only = opts.only ? new RegExp(opts.only, 'i') : undefined;
  // `--only CHAIN --skip-import` (or METADATA): that row alone, on its own database; the data set is not loaded.
  const chainOnly = Boolean(only && opts['skip-import'] && !opts.anchors && !workloads().some((w) => only.test(w.name)) && !only.test(SWEEP_WORKLOAD));
  const rows: Row[] = [];
  let settings = `chain or metadata row alone; pool ${opts.pool}; node ${process.version}`;
  try {
    if (!chainOnly) {
      const { env, adminKey, sweepKeys, label, url, writers } = await prepareDatabase(scale);
      if (opts['load-only']) return;
      settings = `${label}; ${scale.collections} collections x ${scale.assetsPerCollection} assets, ${scale.offers} offers, ${scale.orders} orders; ${opts.connections} connections, ${opts.rounds} rounds of ${opts.duration} s after ${opts.warmup} s warm-up; pool ${opts.pool}; node ${process.version}`;
      if (opts.growth) {
        await growth(env, scale, writers!);
        return;
      }
      if (opts.anchors && !process.env.DATABASE_URL) {
        log('the anchors (PostGraphile, floor) need DATABASE_URL (a PostgreSQL server): skipped on the embedded database');
      } else if (opts.anchors) {
        await anchors(env, url, settings);
        return;
      }
      if (opts.tracing) {
        rows.push(...(await tracingPasses(env)));
      } else if (opts.baseline) {
        // The same database, the baseline build (e.g. a worktree of main with its dist built) and this one
        // back to back, `--passes` times; the import is skipped (it would change the data between passes).
        for (let i = 1; i <= Number(opts.passes); i += 1) {
          rows.push(...(await pass(env, adminKey, sweepKeys, opts.baseline, ` [baseline, pass ${i}]`, false)));
          rows.push(...(await pass(env, adminKey, sweepKeys, '.', ` [this build, pass ${i}]`, false)));
        }
      } else {
        rows.push(...(await pass(env, adminKey, sweepKeys, '.', '', !opts['skip-import'])));
      }
    }
    // Against a baseline the chain row runs only when --only names it (each run is a backfill of its own); never with --tracing.
    if (!opts.tracing && (opts.baseline ? only?.test('CHAIN') : !only || only.test('CHAIN'))) {
      if (!process.env.DATABASE_URL) log('the chain row (a backfill into PostgreSQL) needs DATABASE_URL: skipped on the embedded database');
      else if (!opts.baseline) rows.push(await chainRow('.', ''));
      else {
        // The baseline build and this one back to back on the same kept chain, `--passes` times.
        for (let i = 1; i <= Number(opts.passes); i += 1) {
          rows.push(await chainRow(opts.baseline, ` [baseline, pass ${i}]`));
          rows.push(await chainRow('.', ` [this build, pass ${i}]`));
        }
      }
    }
    // Against a baseline, when --only names it: the baseline build's worker and this one's back to back, `--passes` times.
    if (!opts.tracing && (opts.baseline ? only?.test('METADATA') : !only || only.test('METADATA'))) {
      if (!opts.baseline) rows.push(await metadataRow('.', ''));
      else {
        for (let i = 1; i <= Number(opts.passes); i += 1) {
          rows.push(await metadataRow(opts.baseline, ` [baseline, pass ${i}]`));
          rows.push(await metadataRow('.', ` [this build, pass ${i}]`));
        }
      }
    }
  } finally {
    stopReplica();
  }
  process.stdout.write(`\n${settings}\n\n${table(rows)}\n`);
  if (opts.json) fs.writeFileSync(opts.json, JSON.stringify({ settings, date: new Date().toISOString(), rows }, null, 2));
}

/**
 * An OTLP/HTTP receiver on loopback, as a collector beside the gateway would be: it takes each export and
 * counts it. A process of its own: in the bench's process its parsing of the exports took CPU from the load
 * generator while a traced server was driven, and so counted against traces in req/s.
 */
async function startTraceReceiver(): Promise<{ url: string; counts: () => Promise<{ exports: number; bytes: number }>; close: () => void }> {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `let exports = 0, bytes = 0;
       const s = require('node:http').createServer((req, res) => {
         if (req.method === 'GET') return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ exports, bytes }));
         req.on('data', (chunk) => (bytes += chunk.length));
         // An empty ExportTraceServiceResponse: everything accepted.
         req.on('end', () => { exports += 1; res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(); });
       });
       s.listen(0, '127.0.0.1', () => console.log(s.address().port));`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout!.once('data', (d: Buffer) => resolve(String(d).trim()));
    child.once('exit', (code) => reject(new Error(`the trace receiver exited (${code})`)));
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    counts: async () => (await (await fetch(url)).json()) as { exports: number; bytes: number },
    close: () => child.kill('SIGTERM'),
  };
}

/**
 * --tracing (PostgreSQL): the workloads (--only) against this build with traces off (no OTEL_* variable)
 * and on (OTLP over HTTP, protobuf, to a receiver in a process of its own; every request sampled, and one in ten), and with
 * --baseline against that build too, off and on (every request sampled), all running at once and driven
 * in interleaved rounds (the order turning each round), so that a machine whose load changes weighs on
 * each alike. A row: req/s (median of the rounds) and the server's CPU ms per request (its utime + stime
 * over the requests of all rounds, less its idle CPU over the same time, measured while the others are
 * driven), the figure least moved by other load; the note compares both with its own build's traces off.
 */
async function tracingPasses(env: Record<string, string>): Promise<Row[]> {
  if (!process.env.DATABASE_URL) throw new Error('--tracing runs its servers side by side: it needs DATABASE_URL (the embedded database is one process\'s)');
  log('measuring the CPU of tracing alone (bench/tracing-cost.ts)');
  const cost = await tracingCost();
  const isolated = `tracing alone, per W2-shaped request (3 spans, 1 statement; bench/tracing-cost.ts): off ${cost.off.toFixed(1)} µs, on ${cost.on.toFixed(1)} µs (OTLP JSON ${cost.json.toFixed(1)} µs), one in ten sampled ${cost.sampled.toFixed(1)} µs of CPU; per GraphQL (REST)-shaped request (6 spans, 4 statements) on ${cost.resolvers.toFixed(1)} µs`;
  const receiver = await startTraceReceiver();
  const clean = Object.fromEntries(Object.keys(process.env).filter((name) => name.startsWith('OTEL_')).map((name) => [name, '']));
  // The bench's own OTEL_* settings (a sampler, batch sizes) go to the server with traces on, and only to it.
  const own = Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('OTEL_')) as [string, string][]);
  const pool = Number(opts.pool);
  const traced = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'nft-marketplace-gateway-bench' };
  const servers = [
    { name: 'traces off', ...(await startServer({ ...env, ...clean }, pool)) },
    { name: 'traces on', ...(await startServer({ ...env, ...own, ...traced }, pool)) },
    // Head sampling as an operator at volume would set it: one trace in ten.
    { name: 'traces on, 1 in 10', ...(await startServer({ ...env, ...own, ...traced, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' }, pool)) },
    // The baseline build off and on, so that each build's traced/untraced ratio comes from the same rounds.
    ...(opts.baseline
      ? [
          { name: 'baseline', ...(await startServer({ ...env, ...clean }, pool, opts.baseline)) },
          { name: 'baseline, traces on', ...(await startServer({ ...env, ...own, ...traced }, pool, opts.baseline)) },
        ]
      : []),
  ];
  // What each server is compared with: its own build with traces off.
  const untraced = servers.map((server) => (server.name.startsWith('baseline') ? servers.findIndex((s) => s.name === 'baseline') : 0));
  const only = opts.only ? new RegExp(opts.only, 'i') : undefined;
  const rows: Row[] = [];
  try {
    for (const w of workloads().filter((x) => !only || only.test(x.name))) {
      const { sql, bytes } = await probe(servers[0].base, w);
      const options = {
        method: w.method,
        headers: { ...(w.headers ?? LEGACY_HEADERS), ...(w.encoding ? { 'accept-encoding': w.encoding } : {}) },
        body: w.body,
        connections: Number(opts.connections),
      };
      for (const server of servers) await autocannon({ ...options, url: server.base + w.path, duration: Number(opts.warmup) });
      const runs = servers.map(() => ({ perSec: [] as number[], requests: 0, cpu: 0, ms: 0, idleCpu: 0, idleMs: 0, errors: 0, latency: [] as autocannon.Result['latency'][] }));
      const rounds = Number(opts.rounds) * Number(opts.passes);
      for (let round = 0; round < rounds; round += 1) {
        log(`running ${w.name} (${w.door}), ${servers.map((server) => server.name).join(' / ')}, round ${round + 1} of ${rounds}`);
        for (let k = 0; k < servers.length; k += 1) {
          const i = (k + round) % servers.length;
          // Every server's CPU around each window: the driven one's is its work, the others' their idle cost
          // (timers, pollers, the exporter's flushes), which is taken off the work at the same rate.
          const before = servers.map((server) => cpuMs(server.child.pid!));
          const started = performance.now();
          const result = await autocannon({ ...options, url: servers[i].base + w.path, duration: Number(opts.duration) });
          const ms = performance.now() - started;
          servers.forEach((server, j) => {
            const used = cpuMs(server.child.pid!) - before[j];
            if (j === i) {
              runs[j].cpu += used;
              runs[j].ms += ms;
            } else {
              runs[j].idleCpu += used;
              runs[j].idleMs += ms;
            }
          });
          runs[i].requests += result.requests.total;
          runs[i].perSec.push(result.requests.average);
          runs[i].errors += result.errors + result.non2xx + result.timeouts;
          runs[i].latency.push(result.latency);
        }
      }
      const cpuPerRequest = runs.map((r) => (r.requests ? Math.max(0, r.cpu - (r.idleMs ? (r.idleCpu / r.idleMs) * r.ms : 0)) / r.requests : 0));
      const perSec = runs.map((r) => median(r.perSec));
      servers.forEach((server, i) => {
        const latency = runs[i].latency.sort((a, b) => a.p50 - b.p50)[Math.floor(runs[i].latency.length / 2)];
        const o = untraced[i];
        const against = i === o ? '' : `; against ${o === 0 ? 'traces off' : 'the baseline off'}: ${((perSec[i] / perSec[o] - 1) * 100).toFixed(1)}% req/s, ${((cpuPerRequest[i] / cpuPerRequest[o] - 1) * 100).toFixed(1)}% CPU/req`;
        rows.push({
          workload: w.name,
          door: `${w.door} [${server.name}]`,
          reqPerSec: Math.round(perSec[i]),
          p50Ms: latency.p50,
          p99Ms: latency.p99,
          errors: runs[i].errors,
          peakRssMb: peakRssMb(server.child.pid!),
          sqlPerRequest: sql,
          bytesPerResponse: bytes,
          note: `${cpuPerRequest[i].toFixed(3)} CPU ms/req (idle ${((runs[i].idleCpu / Math.max(1, runs[i].idleMs)) * 1000).toFixed(0)} ms/s taken off)${against}`,
        });
      });
    }
    const received = await receiver.counts();
    log(`the receiver took ${received.exports} exports, ${Math.round(received.bytes / 1024)} KB`);
    log(isolated);
    rows.push({ workload: 'tracing alone', door: '(isolated)', reqPerSec: null, p50Ms: null, p99Ms: null, errors: 0, peakRssMb: 0, sqlPerRequest: null, bytesPerResponse: null, note: isolated });
  } finally {
    for (const { child } of servers) {
      child.kill('SIGTERM');
      if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
    }
    receiver.close();
  }
  return rows;
}

/**
 * --anchors: W1–W3 through this build, PostGraphile 5 and the floor (and, with --baseline, another build)
 * in the same interleaved rounds, with CPU per request and the ratios (bench/anchors.ts).
 */
async function anchors(env: Record<string, string>, url: string, settings: string): Promise<void> {
  const { child, base } = await startServer(env, Number(opts.pool));
  const baseline = opts.baseline ? await startServer(env, Number(opts.pool), opts.baseline) : undefined;
  try {
    const anchorRows = await runAnchors(
      { pid: child.pid!, base },
      baseline && { pid: baseline.child.pid!, base: baseline.base },
      {
        url,
        warmup: Number(opts.warmup),
        duration: Number(opts.duration),
        rounds: Number(opts.rounds),
        connections: Number(opts.connections),
        pool: Number(opts.pool),
        only: opts.only ? new RegExp(opts.only, 'i') : undefined,
        shapes,
        contract: addressOf('contract2'),
        collectionId: uuidOf('c1'),
        log,
      },
    );
    process.stdout.write(`\n${settings}; PostGraphile pool 5, floor pool ${opts.pool}${opts.baseline ? `; baseline ${opts.baseline}` : ''}; interleaved\n\n${anchorTable(anchorRows)}\n`);
    if (opts.json) fs.writeFileSync(opts.json, JSON.stringify({ settings, date: new Date().toISOString(), anchors: anchorRows }, null, 2));
  } finally {
    for (const c of [child, baseline?.child]) {
      if (!c) continue;
      c.kill('SIGTERM');
      if (c.exitCode === null) await new Promise((resolve) => c.once('exit', resolve));
    }
  }
}

/** --growth: the documented lists at this scale, one request at a time (bench/growth.ts), beside another scale's run. */
async function growth(env: Record<string, string>, scale: Scale, writers: { sellers: Party[]; buyer: Party }): Promise<void> {
  // Statistics pages are kept per database state for STATISTICS_MAX_AGE_MS (1 s by default): requests sent
  // back to back would read that cache, which a market's own writes defeat (every commit changes the state).
  // Each page here is computed, as on a market being written to.
  const { child, base } = await startServer({ ...env, STATISTICS_MAX_AGE_MS: '0' }, Number(opts.pool));
  const schema = buildSchema(fs.readFileSync(path.resolve('schema.graphql'), 'utf8'));
  const enumValues = (type: string) => {
    const t = schema.getType(type);
    return isEnumType(t) ? t.getValues().map((v) => v.name) : [];
  };
  const label = `${(scale.collections * scale.assetsPerCollection).toLocaleString('en-US')} assets`;
  try {
    const only = opts.only ? new RegExp(opts.only, 'i') : undefined;
    // --json is written as the run goes (`partial: true` until it ends), so a stopped run keeps its rows.
    const save = (so: GrowthRow[], partial: boolean) => {
      if (opts.json) fs.writeFileSync(opts.json, JSON.stringify({ label, date: new Date().toISOString(), partial, rows: so }, null, 2));
    };
    const rows = await runGrowth(
      { base, requests: Number(opts['growth-requests']), only, log, addressOf, uuidOf, progress: (so) => save(so, true) },
      enumValues,
    );
    // The writes after the reads (they change a few rows of the data set); `--only writes` runs them alone.
    if (!only || only.test('writes')) {
      log('growth: writes');
      rows.push(...(await runWrites({ base, ...writers, log })));
    }
    const other = opts['growth-compare'] ? readGrowth(opts['growth-compare']) : undefined;
    process.stdout.write(`\ngrowth at ${label}, one request at a time, ${opts['growth-requests']} per page after 2 unmeasured; node ${process.version}\n\n${growthTable(rows, label, other)}\n`);
    save(rows, false);
  } finally {
    child.kill('SIGTERM');
    if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
  }
}

main().catch((err) => {
  log(`bench failed: ${(err as Error).stack ?? err}`);
  process.exit(1);
});
