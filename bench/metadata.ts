import { once } from 'node:events';
import { Worker } from 'node:worker_threads';

/**
 * The metadata row: a collection's tokenURI documents fetched by the gateway's worker from a local server
 * that answers each after `latencyMs` (documents/s), while reads of the collection's assets are sent at a
 * fixed rate (open loop: a slow answer does not delay the next request); their p99 with the worker idle
 * (before and after) and with it fetching, measured in the same run.
 */
export interface MetadataFigures {
  documents: number;
  seconds: number;
  documentsPerSec: number;
  /** Assets whose documents were fetched (the rest failed or were not recorded when the run ended). */
  fetched: number;
  idleP50Ms: number;
  idleP99Ms: number;
  busyP50Ms: number;
  busyP99Ms: number;
  readErrors: number;
  reads: number;
  /**
   * CPU ms per document of the worker's process and of the database's backends (PostgreSQL: every backend of
   * the bench's database, read from /proc), less what the reads alone cost over the same time (their rate with
   * the worker idle): the figure a loaded machine changes least. Null where not sampled.
   */
  workerCpuMsPerDocument: number | null;
  databaseCpuMsPerDocument: number | null;
}

/** CPU ms used so far by the worker's process and by the database (null where it cannot be read). */
export type CpuSample = () => Promise<{ worker: number; database: number | null }>;

/**
 * The document server's code, run in a worker thread: its answers (200 a second and more) then do not wait
 * for, nor delay, the reads' timing on the bench's own event loop. Each request is counted in `counter`.
 */
const DOCUMENT_SERVER = `
const http = require('node:http');
const { parentPort, workerData } = require('node:worker_threads');
const counter = new Int32Array(workerData.counter);
const server = http.createServer((req, res) => {
  Atomics.add(counter, 0, 1);
  const id = (/\\/token\\/(\\d+)/.exec(req.url || '') || [])[1] || '0';
  const body = JSON.stringify({
    name: 'Bench token #' + id,
    description: 'Token ' + id + ' of the metadata bench',
    image: 'https://img.example/bench/' + id + '.png',
    attributes: [
      { trait_type: 'Background', value: ['Blue', 'Red', 'Green', 'Gold'][Number(id) % 4] },
      { trait_type: 'Eyes', value: ['Round', 'Sleepy', 'Laser'][Number(id) % 3] },
      { trait_type: 'Level', value: Number(id) % 10, display_type: 'number' },
    ],
  });
  setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(body), workerData.latencyMs);
});
server.keepAliveTimeout = 30000;
server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
`;

/** A document server in a thread of its own: /token/<id> answers a standard metadata document after `latencyMs`. */
export async function startDocumentServer(latencyMs: number): Promise<{ url: string; requests: () => number; close: () => Promise<void> }> {
  const counter = new SharedArrayBuffer(4);
  const thread = new Worker(DOCUMENT_SERVER, { eval: true, workerData: { latencyMs, counter } });
  const [port] = (await once(thread, 'message')) as [number];
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => Atomics.load(new Int32Array(counter), 0),
    close: async () => {
      await thread.terminate();
    },
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] : 0;
}

/** Reads at `rate` per second until `until` resolves (or for `seconds`); the latencies of the answers, and how many failed. */
async function readLoad(base: string, paths: string[], rate: number, until: Promise<unknown>): Promise<{ latencies: number[]; errors: number }> {
  const latencies: number[] = [];
  let errors = 0;
  let done = false;
  void until.then(() => (done = true));
  const inFlight = new Set<Promise<void>>();
  const start = performance.now();
  for (let i = 0; !done; i += 1) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const sent = performance.now();
    const request = fetch(base + paths[i % paths.length])
      .then(async (res) => {
        await res.arrayBuffer();
        if (res.ok) latencies.push(performance.now() - sent);
        else errors += 1;
      })
      .catch(() => {
        errors += 1;
      })
      .finally(() => inFlight.delete(request));
    inFlight.add(request);
  }
  await Promise.all(inFlight);
  return { latencies: latencies.sort((a, b) => a - b), errors };
}

const seconds = (s: number) => new Promise((r) => setTimeout(r, s * 1000));

/** The gateway's /metrics figure `name` (labels `labels` when given), 0 without it, null when the scrape failed. */
async function metric(base: string, name: string, labels = ''): Promise<number | null> {
  let text: string;
  try {
    text = await (await fetch(`${base}/metrics`)).text();
  } catch {
    // A loaded machine: the scrape is tried again.
    return null;
  }
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `) || (!labels && l.startsWith(`${name} `)));
  return line ? Number(line.split(' ').pop()) : 0;
}

/**
 * Runs the row against a gateway at `base` (its worker on, nothing queued) whose database holds the
 * collection `contract` with `documents` assets whose tokenURIs point at the document server: reads for
 * `idleSeconds`, the collection's refresh (POST /v1/collections/{address}/refresh with an admin key) with
 * reads until every document is recorded, reads for `idleSeconds` again.
 */
export async function benchMetadata(
  base: string,
  adminKey: string,
  options: {
    contract: string;
    documents: number;
    readRate: number;
    idleSeconds: number;
    log: (line: string) => void;
    /** The process whose worker fetches (its outcomes metric), when it is not the one at `base`. */
    workerBase?: string;
    cpu: CpuSample;
  },
): Promise<MetadataFigures> {
  const workerBase = options.workerBase ?? base;
  const paths = Array.from({ length: 200 }, (_, i) => `/v1/assets/${options.contract}/${1 + ((i * 48271) % options.documents)}?chain_id=1`);
  // Warm-up: connections, plans, caches.
  await readLoad(base, paths, options.readRate, seconds(3));
  options.log('  reads with the worker idle');
  const idleCpu = await options.cpu();
  const idleStarted = performance.now();
  const before = await readLoad(base, paths, options.readRate, seconds(options.idleSeconds));
  const idleMs = performance.now() - idleStarted;
  const busyCpu = await options.cpu();
  const fetchedBefore = (await metric(workerBase, 'gateway_metadata_fetches_total', '{outcome="fetched"}')) ?? 0;
  const started = performance.now();
  const res = await fetch(`${base}/v1/collections/${options.contract}/refresh`, { method: 'POST', headers: { 'access-token': adminKey } });
  if (!res.ok) throw new Error(`the collection's refresh answered ${res.status}: ${await res.text()}`);
  const { queued } = (await res.json()) as { queued: number };
  options.log(`  ${queued} documents queued; reads while they are fetched`);
  let finished = 0;
  const drained = (async () => {
    for (;;) {
      // Not more often: each scrape counts the pending rows, work the reads would share.
      await seconds(0.5);
      if ((await metric(base, 'gateway_metadata_queue_pending')) === 0) {
        finished = performance.now();
        return;
      }
    }
  })();
  const during = await readLoad(base, paths, options.readRate, drained);
  const doneCpu = await options.cpu();
  const fetched = ((await metric(workerBase, 'gateway_metadata_fetches_total', '{outcome="fetched"}')) ?? 0) - fetchedBefore;
  options.log('  reads with the worker idle again');
  const after = await readLoad(base, paths, options.readRate, seconds(options.idleSeconds));
  const idle = [...before.latencies, ...after.latencies].sort((a, b) => a - b);
  const elapsed = (finished - started) / 1000;
  const ms = (v: number) => Math.round(v * 10) / 10;
  // The reads' own CPU over the fetching time, at their idle rate, taken off.
  const perDocument = (idle0: number | null, idle1: number | null, busy1: number | null) =>
    idle0 === null || idle1 === null || busy1 === null || !queued ? null : ms(Math.max(0, busy1 - idle1 - ((idle1 - idle0) / idleMs) * (finished - started)) / queued);
  return {
    documents: queued,
    seconds: elapsed,
    documentsPerSec: Math.round(queued / elapsed),
    fetched,
    idleP50Ms: ms(percentile(idle, 0.5)),
    idleP99Ms: ms(percentile(idle, 0.99)),
    busyP50Ms: ms(percentile(during.latencies, 0.5)),
    busyP99Ms: ms(percentile(during.latencies, 0.99)),
    readErrors: before.errors + during.errors + after.errors,
    reads: idle.length + during.latencies.length,
    workerCpuMsPerDocument: perDocument(idleCpu.worker, busyCpu.worker, doneCpu.worker),
    databaseCpuMsPerDocument: perDocument(idleCpu.database, busyCpu.database, doneCpu.database),
  };
}
