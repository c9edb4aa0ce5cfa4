import { ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import { freePort } from './free-port';
import { frontendWorkloads, GraphqlCall } from './frontend';
import { Shape, shapedRequest } from './shapes';

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
  shapes: Shape[];
  /** W2's contract and W3's collection. */
  contract: string;
  collectionId: string;
  log: (line: string) => void;
}

type Server = 'gateway' | 'baseline' | 'PostGraphile' | 'floor';

/** One server asked one way: a GraphQL shape (shapes.ts), the gateway's REST route, or the floor's GET. */
interface Door {
  server: Server;
  shape: Shape | 'REST' | 'floor';
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** The response as comparable data (absent: not compared, another shape of answer). */
  normalize?: (body: any) => unknown;
}

interface AnchorWorkload {
  name: string;
  gateway: GraphqlCall;
  postGraphile: GraphqlCall;
  /** The gateway's documented /v1 route for the workload (another shape of answer: not compared). */
  rest?: string;
  /** The floor's GET path, answering the gateway's GraphQL data. */
  floor?: string;
}

/** What one door measured over the rounds. */
export interface Measure {
  reqPerSec: number;
  p99Ms: number;
  cpuMsPerRequest: number;
  peakRssMb: number;
  errors: number;
  bytesPerResponse: number;
}

/** One workload in one request shape (or REST): the gateway beside PostGraphile in that shape and the floor. */
export interface AnchorRow {
  workload: string;
  shape: Shape | 'REST';
  gateway: Measure;
  /** In the same shape; for the REST row, PostGraphile's bare-fetch run. */
  postGraphile: Measure | null;
  floor: Measure | null;
  /** With --baseline: the baseline build in the same shape. */
  baseline: Measure | null;
  vsPostGraphile: number | null;
  vsFloor: number | null;
  vsBaseline: number | null;
  /** Between the GraphQL shapes of this workload: max/min - 1 of req/s, in % (null with one shape). */
  gatewaySpreadPct: number | null;
  postGraphileSpreadPct: number | null;
}

type AssetRow = { tokenId: string; name: string; owner: string };
const assetTuple = (a: AssetRow) => [a.tokenId, a.name, a.owner];

/** W1–W3 with lean selections serving the same fields on the three servers, then F1–F3 (frontend.ts). */
function anchorWorkloads(contract: string, collectionId: string): AnchorWorkload[] {
  const w1 = (d: any) => d.data.collections.result.map((c: any) => [c.name, c.assets.result.map(assetTuple)]);
  const w2 = (d: any) => {
    const a = d.data.asset;
    return [a.id, a.name, a.tokenId, a.owner, a.collection.name, a.collection.contractAddress];
  };
  const w3 = (d: any) => d.data.assets.result.map(assetTuple);
  return [
    {
      name: 'W1 collections x assets',
      gateway: { query: '{ collections(limit: 20) { result { name assets(limit: 20) { result { tokenId name owner } } } } }', variables: {}, normalize: w1 },
      postGraphile: {
        query:
          '{ allCollections(first: 20, orderBy: [CREATED_AT_DESC, PRIMARY_KEY_DESC]) { nodes { name assetsByCollectionId(first: 20, orderBy: [CREATED_AT_DESC, PRIMARY_KEY_DESC]) { nodes { tokenId name owner } } } } }',
        variables: {},
        normalize: (d) => d.data.allCollections.nodes.map((c: any) => [c.name, c.assetsByCollectionId.nodes.map(assetTuple)]),
      },
      rest: '/v1/collections?limit=20&include_assets=true',
      floor: '/w1',
    },
    {
      name: 'W2 one asset',
      gateway: {
        query: 'query ($a: Address!, $t: TokenId!) { asset(tokenAddress: $a, tokenId: $t) { id name tokenId owner collection { name contractAddress } } }',
        variables: { a: contract, t: '1' },
        normalize: w2,
      },
      postGraphile: {
        query:
          'query ($a: String!, $t: BigFloat!) { allAssets(condition: { tokenAddress: $a, tokenId: $t }, first: 1) { nodes { rowId name tokenId owner collectionByCollectionId { name contractAddress } } } }',
        variables: { a: contract, t: '1' },
        normalize: (d) => {
          const a = d.data.allAssets.nodes[0];
          return [a.rowId, a.name, a.tokenId, a.owner, a.collectionByCollectionId.name, a.collectionByCollectionId.contractAddress];
        },
      },
      rest: `/v1/assets/${contract}/1`,
      floor: `/w2?a=${contract}&t=1`,
    },
    {
      name: 'W3 assets by token id',
      gateway: {
        query: 'query ($c: String!) { assets(collectionId: $c, orderBy: TOKEN_ID, direction: ASC, limit: 50) { result { tokenId name owner } } }',
        variables: { c: collectionId },
        normalize: w3,
      },
      postGraphile: {
        query: 'query ($c: UUID!) { allAssets(condition: { collectionId: $c }, orderBy: [TOKEN_ID_ASC], first: 50) { nodes { tokenId name owner } } }',
        variables: { c: collectionId },
        normalize: (d) => d.data.allAssets.nodes.map(assetTuple),
      },
      rest: `/v1/assets?collection_id=${collectionId}&order_by=token_id&direction=asc&limit=50`,
      floor: `/w3?c=${collectionId}`,
    },
    ...frontendWorkloads(contract),
  ];
}

/** The doors of a workload: each server in each shape, the gateway's REST route, the floor. */
function doorsOf(w: AnchorWorkload, shapes: Shape[], withBaseline: boolean): Door[] {
  const graphql = (server: Server, shape: Shape, call: GraphqlCall): Door => ({
    server,
    shape,
    method: 'POST',
    path: '/graphql',
    ...shapedRequest(shape, call.query, call.variables, w.name),
    normalize: call.normalize,
  });
  const own: Server[] = withBaseline ? ['gateway', 'baseline'] : ['gateway'];
  const doors: Door[] = [];
  for (const shape of shapes) {
    for (const server of own) doors.push(graphql(server, shape, w.gateway));
    doors.push(graphql('PostGraphile', shape, w.postGraphile));
  }
  // The GETs carry the content-type the bench has always sent, so that their rows stay comparable with earlier runs.
  const headers = { 'content-type': 'application/json' };
  if (w.rest) for (const server of own) doors.push({ server, shape: 'REST', method: 'GET', path: w.rest, headers });
  if (w.floor) doors.push({ server: 'floor', shape: 'floor', method: 'GET', path: w.floor, headers, normalize: w.gateway.normalize });
  return doors;
}

const doorName = (d: Door) => (d.shape === 'floor' ? 'floor' : `${d.server} ${d.shape}`);

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
export function cpuMs(pid: number): number {
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

/**
 * Every door must answer its workload with the same data before anything is measured (REST: HTTP 200),
 * and no error. A baseline build that cannot (an older schema) is left out of the workload; any other
 * door that cannot stops the run. Gives the doors kept and each one's response size in bytes.
 */
async function checkEquivalent(w: AnchorWorkload, doors: Door[], bases: Record<Server, string>, log: (line: string) => void): Promise<{ kept: Door[]; bytes: number[] }> {
  let reference: { door: string; value: string } | undefined;
  const kept: Door[] = [];
  const bytes: number[] = [];
  for (const door of doors) {
    const res = await fetch(bases[door.server] + door.path, { method: door.method, headers: door.headers, body: door.body });
    const text = await res.text();
    const { problem, value } = judge(res.status, text, door, reference);
    if (problem && door.server === 'baseline') {
      log(`${w.name}: the baseline is left out of ${doorName(door)}: ${problem}`);
      continue;
    }
    if (problem) throw new Error(`${w.name}: ${doorName(door)} ${problem}`);
    if (value !== undefined && !reference) reference = { door: doorName(door), value };
    kept.push(door);
    bytes.push(Buffer.byteLength(text));
  }
  return { kept, bytes };
}

/** A door's answer as comparable data, or what is wrong with it (against the first answer's data). */
function judge(status: number, text: string, door: Door, reference: { door: string; value: string } | undefined): { problem?: string; value?: string } {
  if (status !== 200) return { problem: `answered HTTP ${status}: ${text.slice(0, 300)}` };
  if (!door.normalize) return {};
  let value: string;
  try {
    const body = JSON.parse(text);
    if (body.errors) return { problem: `answered errors: ${JSON.stringify(body.errors).slice(0, 300)}` };
    value = JSON.stringify(door.normalize(body));
  } catch (err) {
    return { problem: `answered an unexpected body (${(err as Error).message}): ${text.slice(0, 300)}` };
  }
  if (value.length < 50) return { problem: `answered almost nothing: ${value}` };
  if (reference && value !== reference.value) return { problem: `and ${reference.door} answer different data:\n${value.slice(0, 400)}\n${reference.value.slice(0, 400)}` };
  return { value };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** max/min - 1 of the rates, in %; null for fewer than two. */
function spreadPct(rates: number[]): number | null {
  if (rates.length < 2) return null;
  return (Math.max(...rates) / Math.min(...rates) - 1) * 100;
}

/** Starts PostGraphile and the floor next to the running gateway and measures each workload's doors interleaved. */
export async function runAnchors(
  gateway: { pid: number; base: string },
  baseline: { pid: number; base: string } | undefined,
  o: AnchorOptions,
): Promise<AnchorRow[]> {
  ensureInstalled(o.log);
  const pgl = await startAnchor('postgraphile.mjs', { DATABASE_URL: o.url, POOL: '5' }, o.log);
  const floor = await startAnchor('floor.mjs', { DATABASE_URL: o.url, POOL: String(o.pool) }, o.log);
  const bases: Record<Server, string> = { gateway: gateway.base, baseline: baseline?.base ?? '', PostGraphile: pgl.base, floor: floor.base };
  const pids: Record<Server, number> = { gateway: gateway.pid, baseline: baseline?.pid ?? 0, PostGraphile: pgl.child.pid!, floor: floor.child.pid! };
  const rows: AnchorRow[] = [];
  try {
    for (const w of anchorWorkloads(o.contract, o.collectionId).filter((x) => !o.only || o.only.test(x.name))) {
      const { kept: doors, bytes } = await checkEquivalent(w, doorsOf(w, o.shapes, Boolean(baseline)), bases, o.log);
      const options = (d: Door, duration: number) => ({
        url: bases[d.server] + d.path,
        method: d.method,
        body: d.body,
        headers: d.headers,
        connections: o.connections,
        duration,
      });
      o.log(`${w.name}: warming up ${doors.map(doorName).join(', ')}`);
      for (const d of doors) await autocannon(options(d, o.warmup));
      const runs: { result: autocannon.Result; cpu: number }[][] = doors.map(() => []);
      const peak = doors.map(() => 0);
      for (let round = 0; round < o.rounds; round += 1) {
        // Round-robin, and each round starts with the next door, so no one always follows the same neighbour.
        for (let k = 0; k < doors.length; k += 1) {
          const i = (k + round) % doors.length;
          const pid = pids[doors[i].server];
          o.log(`  round ${round + 1}: ${doorName(doors[i])}`);
          resetPeakRss(pid);
          const before = cpuMs(pid);
          const result = await autocannon(options(doors[i], o.duration));
          runs[i].push({ result, cpu: cpuMs(pid) - before });
          peak[i] = Math.max(peak[i], peakRssMb(pid));
        }
      }
      const measures = doors.map((_, i): Measure => {
        const sorted = [...runs[i]].sort((a, b) => a.result.requests.average - b.result.requests.average);
        const requests = runs[i].reduce((n, r) => n + r.result.requests.total, 0);
        const cpu = runs[i].reduce((n, r) => n + r.cpu, 0);
        return {
          reqPerSec: Math.round(median(runs[i].map((r) => r.result.requests.average))),
          p99Ms: sorted[Math.floor(sorted.length / 2)].result.latency.p99,
          cpuMsPerRequest: requests ? cpu / requests : 0,
          peakRssMb: peak[i],
          errors: runs[i].reduce((n, r) => n + r.result.errors + r.result.non2xx + r.result.timeouts, 0),
          bytesPerResponse: bytes[i],
        };
      });
      rows.push(...workloadRows(w.name, doors, measures, o.shapes));
    }
  } finally {
    pgl.child.kill('SIGTERM');
    floor.child.kill('SIGTERM');
  }
  return rows;
}

/** The rows of one workload: one per shape, then REST, each with its ratios. */
function workloadRows(workload: string, doors: Door[], measures: Measure[], shapes: Shape[]): AnchorRow[] {
  const find = (server: Server, shape: Door['shape']) => {
    const i = doors.findIndex((d) => d.server === server && d.shape === shape);
    return i < 0 ? null : measures[i];
  };
  const rate = (m: Measure | null) => m?.reqPerSec ?? null;
  const ratio = (a: Measure | null, b: Measure | null) => (a && b && b.reqPerSec ? a.reqPerSec / b.reqPerSec : null);
  const floor = find('floor', 'floor');
  const spread = (server: Server) => spreadPct(shapes.map((s) => rate(find(server, s))).filter((r): r is number => r !== null));
  const rows: AnchorRow[] = [];
  for (const shape of [...shapes, 'REST' as const]) {
    const gateway = find('gateway', shape);
    if (!gateway) continue;
    const postGraphile = find('PostGraphile', shape === 'REST' ? 'fetch' : shape);
    const baseline = find('baseline', shape);
    rows.push({
      workload,
      shape,
      gateway,
      postGraphile,
      floor,
      baseline,
      vsPostGraphile: ratio(gateway, postGraphile),
      vsFloor: ratio(gateway, floor),
      vsBaseline: ratio(gateway, baseline),
      gatewaySpreadPct: shape === 'REST' ? null : spread('gateway'),
      postGraphileSpreadPct: shape === 'REST' ? null : spread('PostGraphile'),
    });
  }
  return rows;
}

export function anchorTable(rows: AnchorRow[]): string {
  const withBaseline = rows.some((r) => r.baseline);
  const header = [
    'workload',
    'shape',
    'req/s',
    'CPU ms/req',
    'p99 ms',
    'bytes/resp',
    'PostGraphile req/s',
    'PG CPU ms/req',
    'PG bytes/resp',
    'gateway/PostGraphile',
    'floor req/s',
    'gateway/floor',
    'shape spread % (gw / PG)',
    'peak RSS MB (gw / PG)',
    'errors',
    ...(withBaseline ? ['baseline req/s', 'baseline CPU ms/req', 'gateway/baseline'] : []),
  ];
  const ratio = (x: number | null) => (x === null ? '' : x.toFixed(2));
  const pct = (x: number | null) => (x === null ? '-' : x.toFixed(0));
  const cells = rows.map((r, i) => {
    // The spread is the workload's: printed on its first row.
    const first = i === 0 || rows[i - 1].workload !== r.workload;
    const spread = first && r.gatewaySpreadPct !== null ? `${pct(r.gatewaySpreadPct)} / ${pct(r.postGraphileSpreadPct)}` : '';
    const pg = r.shape === 'REST' ? null : r.postGraphile;
    return [
      r.workload,
      r.shape,
      r.gateway.reqPerSec.toLocaleString('en'),
      r.gateway.cpuMsPerRequest.toFixed(2),
      String(r.gateway.p99Ms),
      r.gateway.bytesPerResponse.toLocaleString('en'),
      pg?.reqPerSec.toLocaleString('en') ?? '',
      pg?.cpuMsPerRequest.toFixed(2) ?? '',
      pg?.bytesPerResponse.toLocaleString('en') ?? '',
      ratio(r.vsPostGraphile),
      r.floor?.reqPerSec.toLocaleString('en') ?? '',
      ratio(r.vsFloor),
      spread,
      `${r.gateway.peakRssMb} / ${pg?.peakRssMb ?? '-'}`,
      String(r.gateway.errors + (pg?.errors ?? 0) + (first ? (r.floor?.errors ?? 0) : 0) + (r.baseline?.errors ?? 0)),
      ...(withBaseline ? [r.baseline?.reqPerSec.toLocaleString('en') ?? '', r.baseline?.cpuMsPerRequest.toFixed(2) ?? '', ratio(r.vsBaseline)] : []),
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c: string[]) => `| ${c.map((v, i) => v.padEnd(widths[i])).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...cells.map(line)].join('\n');
}
