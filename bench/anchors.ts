import { ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import { freePort } from './free-port';

/**
 * `npm run bench -- --anchors`: the gateway side by side with two reference servers on the same
 * database, in one interleaved run (round-robin across servers within each round, so that the drift of
 * a shared machine hits all alike):
 * - PostGraphile 5 (Amber preset, production mode, pool 5), the off-the-shelf alternative;
 * - a floor of node:http + pg, one statement per request whose JSON PostgreSQL builds.
 * Both live in bench/anchors/ with a package.json of their own, installed on first use.
 */

const ANCHORS_DIR = path.resolve('bench/anchors');

export interface AnchorOptions {
  url: string;
  warmup: number;
  duration: number;
  rounds: number;
  connections: number;
  pool: number;
  only?: RegExp;
  /** W2's contract and W3's collection. */
  contract: string;
  collectionId: string;
  log: (line: string) => void;
}

type Server = 'gateway' | 'gateway REST' | 'baseline' | 'baseline REST' | 'PostGraphile' | 'floor';

interface Door {
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  /** The response as comparable data (null: not compared, another shape). */
  normalize?: (body: any) => unknown;
}

interface AnchorWorkload {
  name: string;
  doors: Partial<Record<Server, Door>>;
}

export interface AnchorRow {
  workload: string;
  server: Server;
  reqPerSec: number;
  p99Ms: number;
  cpuMsPerRequest: number;
  peakRssMb: number;
  errors: number;
  vsPostGraphile: number | null;
  vsFloor: number | null;
  /** With --baseline: this build against the baseline build, on the same door. */
  vsBaseline: number | null;
}

const post = (query: string, variables: Record<string, unknown>, normalize: (body: any) => unknown): Door => ({
  method: 'POST',
  path: '/graphql',
  body: JSON.stringify({ query, variables }),
  normalize,
});

type AssetRow = { tokenId: string; name: string; owner: string };
const assetTuple = (a: AssetRow) => [a.tokenId, a.name, a.owner];

/** W1–W3 with lean selections serving the same fields on the three servers. */
export function anchorWorkloads(contract: string, collectionId: string): AnchorWorkload[] {
  const w1 = (d: any) => d.data.collections.result.map((c: any) => [c.name, c.assets.result.map(assetTuple)]);
  const w2 = (d: any) => {
    const a = d.data.asset;
    return [a.id, a.name, a.tokenId, a.owner, a.collection.name, a.collection.contractAddress];
  };
  const w3 = (d: any) => d.data.assets.result.map(assetTuple);
  return [
    {
      name: 'W1 collections x assets',
      doors: {
        gateway: post('{ collections(limit: 20) { result { name assets(limit: 20) { result { tokenId name owner } } } } }', {}, w1),
        'gateway REST': { method: 'GET', path: '/v1/collections?limit=20&include_assets=true' },
        PostGraphile: post(
          '{ allCollections(first: 20, orderBy: [CREATED_AT_DESC, PRIMARY_KEY_DESC]) { nodes { name assetsByCollectionId(first: 20, orderBy: [CREATED_AT_DESC, PRIMARY_KEY_DESC]) { nodes { tokenId name owner } } } } }',
          {},
          (d) => d.data.allCollections.nodes.map((c: any) => [c.name, c.assetsByCollectionId.nodes.map(assetTuple)]),
        ),
        floor: { method: 'GET', path: '/w1', normalize: w1 },
      },
    },
    {
      name: 'W2 one asset',
      doors: {
        gateway: post(
          'query ($a: Address!, $t: TokenId!) { asset(tokenAddress: $a, tokenId: $t) { id name tokenId owner collection { name contractAddress } } }',
          { a: contract, t: '1' },
          w2,
        ),
        'gateway REST': { method: 'GET', path: `/v1/assets/${contract}/1` },
        PostGraphile: post(
          'query ($a: String!, $t: BigFloat!) { allAssets(condition: { tokenAddress: $a, tokenId: $t }, first: 1) { nodes { rowId name tokenId owner collectionByCollectionId { name contractAddress } } } }',
          { a: contract, t: '1' },
          (d) => {
            const a = d.data.allAssets.nodes[0];
            return [a.rowId, a.name, a.tokenId, a.owner, a.collectionByCollectionId.name, a.collectionByCollectionId.contractAddress];
          },
        ),
        floor: { method: 'GET', path: `/w2?a=${contract}&t=1`, normalize: w2 },
      },
    },
    {
      name: 'W3 assets by token id',
      doors: {
        gateway: post(
          'query ($c: String!) { assets(collectionId: $c, orderBy: TOKEN_ID, direction: ASC, limit: 50) { result { tokenId name owner } } }',
          { c: collectionId },
          w3,
        ),
        'gateway REST': { method: 'GET', path: `/v1/assets?collection_id=${collectionId}&order_by=token_id&direction=asc&limit=50` },
        PostGraphile: post(
          'query ($c: UUID!) { allAssets(condition: { collectionId: $c }, orderBy: [TOKEN_ID_ASC], first: 50) { nodes { tokenId name owner } } }',
          { c: collectionId },
          (d) => d.data.allAssets.nodes.map(assetTuple),
        ),
        floor: { method: 'GET', path: `/w3?c=${collectionId}`, normalize: w3 },
      },
    },
  ];
}

/** Installs the anchors' own packages (bench/anchors/package-lock.json) unless they are there. */
function ensureInstalled(log: (line: string) => void): void {
  if (fs.existsSync(path.join(ANCHORS_DIR, 'node_modules/postgraphile/package.json'))) return;
  log('installing the anchors (PostGraphile 5, pg) into bench/anchors/node_modules (first use)');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, ['ci', '--no-audit', '--no-fund', '--loglevel=error', '--engine-strict=false'], { cwd: ANCHORS_DIR, stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`npm ci in ${ANCHORS_DIR} failed (status ${result.status})`);
}

async function startAnchor(script: string, env: Record<string, string>, log: (line: string) => void): Promise<{ child: ChildProcess; base: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(ANCHORS_DIR, script)], {
    cwd: ANCHORS_DIR,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', NODE_ENV: 'production' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    if (stderr.length > 20_000) stderr = stderr.slice(-10_000);
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i += 1) {
    if (child.exitCode !== null) break;
    try {
      await fetch(base);
      return { child, base };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  child.kill();
  log(stderr);
  throw new Error(`${script} did not start`);
}

let ticksPerSecond = 100;
try {
  ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
} catch {
  // 100 on every Linux this runs on
}

/** CPU time the process has used so far, in ms (utime + stime of /proc/PID/stat). */
function cpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
}

/** The peak RSS of the process (VmHWM) since start or the last reset, in MB. */
export function peakRssMb(pid: number): number {
  const kb = Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  return Math.round(kb / 1024);
}

/** Resets the kernel's peak-RSS mark of the process so each workload reports its own peak. */
export function resetPeakRss(pid: number): void {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    // not permitted: the figure is the peak since start
  }
}

async function fetchDoor(base: string, door: Door): Promise<{ status: number; text: string }> {
  const res = await fetch(base + door.path, { method: door.method, headers: { 'content-type': 'application/json' }, body: door.body });
  return { status: res.status, text: await res.text() };
}

/** The three servers must answer each workload with the same data before anything is measured. */
async function checkEquivalent(w: AnchorWorkload, bases: Record<Server, string>): Promise<void> {
  let reference: { server: Server; value: string } | undefined;
  for (const [server, door] of Object.entries(w.doors) as [Server, Door][]) {
    const { status, text } = await fetchDoor(bases[server], door);
    if (status !== 200) throw new Error(`${w.name}: ${server} answered HTTP ${status}: ${text.slice(0, 300)}`);
    if (!door.normalize) continue;
    let value: string;
    try {
      value = JSON.stringify(door.normalize(JSON.parse(text)));
    } catch (err) {
      throw new Error(`${w.name}: ${server} answered an unexpected body (${(err as Error).message}): ${text.slice(0, 300)}`);
    }
    if (value.length < 50) throw new Error(`${w.name}: ${server} answered almost nothing: ${value}`);
    if (!reference) reference = { server, value };
    else if (value !== reference.value) {
      throw new Error(`${w.name}: ${server} and ${reference.server} answer different data:\n${value.slice(0, 400)}\n${reference.value.slice(0, 400)}`);
    }
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** Starts PostGraphile and the floor next to the running gateway and measures W1–W3 interleaved. */
export async function runAnchors(
  gateway: { pid: number; base: string },
  baseline: { pid: number; base: string } | undefined,
  o: AnchorOptions,
): Promise<AnchorRow[]> {
  ensureInstalled(o.log);
  const pgl = await startAnchor('postgraphile.mjs', { DATABASE_URL: o.url, POOL: '5' }, o.log);
  const floor = await startAnchor('floor.mjs', { DATABASE_URL: o.url, POOL: String(o.pool) }, o.log);
  const other = baseline ?? gateway;
  const bases: Record<Server, string> = {
    gateway: gateway.base,
    'gateway REST': gateway.base,
    baseline: other.base,
    'baseline REST': other.base,
    PostGraphile: pgl.base,
    floor: floor.base,
  };
  const pids: Record<Server, number> = {
    gateway: gateway.pid,
    'gateway REST': gateway.pid,
    baseline: other.pid,
    'baseline REST': other.pid,
    PostGraphile: pgl.child.pid!,
    floor: floor.child.pid!,
  };
  const rows: AnchorRow[] = [];
  try {
    for (const w of anchorWorkloads(o.contract, o.collectionId).filter((x) => !o.only || o.only.test(x.name))) {
      // The baseline build answers the gateway's requests.
      if (baseline) Object.assign(w.doors, { baseline: w.doors.gateway, 'baseline REST': w.doors['gateway REST'] });
      await checkEquivalent(w, bases);
      const servers = Object.keys(w.doors) as Server[];
      const options = (s: Server, duration: number) => {
        const door = w.doors[s]!;
        return { url: bases[s] + door.path, method: door.method, body: door.body, headers: { 'content-type': 'application/json' }, connections: o.connections, duration };
      };
      o.log(`${w.name}: warming up ${servers.join(', ')}`);
      for (const s of servers) await autocannon(options(s, o.warmup));
      const runs: Record<string, { result: autocannon.Result; cpu: number }[]> = {};
      const peak: Record<string, number> = {};
      for (const s of servers) {
        runs[s] = [];
        peak[s] = 0;
      }
      for (let round = 0; round < o.rounds; round += 1) {
        // Round-robin, and each round starts with the next server, so no one always follows the same neighbour.
        const order = servers.map((_, i) => servers[(i + round) % servers.length]);
        for (const s of order) {
          o.log(`  round ${round + 1}: ${s}`);
          resetPeakRss(pids[s]);
          const before = cpuMs(pids[s]);
          const result = await autocannon(options(s, o.duration));
          runs[s].push({ result, cpu: cpuMs(pids[s]) - before });
          peak[s] = Math.max(peak[s], peakRssMb(pids[s]));
        }
      }
      const rate: Record<string, number> = {};
      for (const s of servers) rate[s] = median(runs[s].map((r) => r.result.requests.average));
      for (const s of servers) {
        const sorted = [...runs[s]].sort((a, b) => a.result.requests.average - b.result.requests.average);
        const mid = sorted[Math.floor(sorted.length / 2)].result;
        const requests = runs[s].reduce((n, r) => n + r.result.requests.total, 0);
        const cpu = runs[s].reduce((n, r) => n + r.cpu, 0);
        const own = s !== 'PostGraphile' && s !== 'floor';
        rows.push({
          workload: w.name,
          server: s,
          reqPerSec: Math.round(rate[s]),
          p99Ms: mid.latency.p99,
          cpuMsPerRequest: requests ? cpu / requests : 0,
          peakRssMb: peak[s],
          errors: runs[s].reduce((n, r) => n + r.result.errors + r.result.non2xx + r.result.timeouts, 0),
          vsPostGraphile: own ? rate[s] / rate.PostGraphile : null,
          vsFloor: own ? rate[s] / rate.floor : null,
          vsBaseline: (s === 'gateway' || s === 'gateway REST') && rate[`baseline${s.slice('gateway'.length)}`] ? rate[s] / rate[`baseline${s.slice('gateway'.length)}`] : null,
        });
      }
    }
  } finally {
    pgl.child.kill('SIGTERM');
    floor.child.kill('SIGTERM');
  }
  return rows;
}

export function anchorTable(rows: AnchorRow[]): string {
  const header = ['workload', 'server', 'req/s', 'p99 ms', 'CPU ms/req', 'peak RSS MB', 'errors', 'gateway/PostGraphile', 'gateway/floor', 'gateway/baseline'];
  const ratio = (x: number | null) => (x === null ? '' : x.toFixed(2));
  const cells = rows.map((r) => [
    r.workload,
    r.server,
    r.reqPerSec.toLocaleString('en'),
    String(r.p99Ms),
    r.cpuMsPerRequest.toFixed(2),
    String(r.peakRssMb),
    String(r.errors),
    ratio(r.vsPostGraphile),
    ratio(r.vsFloor),
    ratio(r.vsBaseline),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c: string[]) => `| ${c.map((v, i) => v.padEnd(widths[i])).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...cells.map(line)].join('\n');
}
