import http from 'node:http';
import type { GraphQLSchema } from 'graphql';
import type { Pool } from 'pg';
import { QueryFailedError } from 'typeorm';
import { readStatement, StatementContext } from '../src/db/read-statement';
import { clock } from '../src/common/clock';
import { buildAppSchema } from '../src/app/graphql/schema';
import { startServer, TestServer } from './setup/server';
import { freshDatabase } from './setup/global-setup';
import { BIG_COLLECTION, RichMarket, saveRichMarket } from './factories/rich-market';
import { DocumentGenerator, GeneratedDocument, Pools, Random, restPath } from './setup/request-generator';

/**
 * Issue #26: SQL plans (src/app/graphql/sql-plan/) and REST text plans must answer exactly as the
 * resolvers do. Two servers on one database, one with plans (the default) and one without
 * (`sqlPlans: false`), are sent the same generated requests at the same frozen moment: each GraphQL
 * document three times to the first (its third use runs compiled, with its plan when there is one) and
 * once to the second; each /v1 GET twice and once. Status and body must be the same bytes (request ids
 * aside; REST's stored JSON by value, as docs/api.md allows). On PostgreSQL the database is this file's
 * own. PGlite cannot be started inside a test file (it needs --experimental-vm-modules), so there the run's
 * shared database serves, and other files' writes may change an unfiltered list between the two answers:
 * a difference is asked again (plans server, then the other) and counts only when it stays.
 *
 * DIFF_SEED replays a run (its seed is printed), DIFF_COUNT sets the number of documents (REST paths:
 * a quarter of it).
 */
const SEED = Number(process.env.DIFF_SEED ?? Math.floor(Math.random() * 2 ** 31));
const COUNT = Number(process.env.DIFF_COUNT ?? 2000);
const REST_COUNT = Math.ceil(COUNT / 4);
/** Requests in flight at once (each document's own are sent in order). */
const PARALLEL = Number(process.env.DIFF_PARALLEL ?? 6);
/** The plans server remembers 1,000 documents (lean.ts's MAX_KNOWN): a fresh one takes over before. */
const DOCUMENTS_PER_SERVER = 900;

const MADE = new Date(Math.floor(Date.now() / 1000) * 1000);
/** The moment every comparison reads the market: a dutch auction's price moves with it. */
const AT = new Date(MADE.getTime() + 441_123);

let db: { url: string; drop: () => Promise<void>; shared: boolean };
let planned: TestServer;
let resolved: TestServer;
let market: RichMarket;
let schema: GraphQLSchema;

beforeAll(async () => {
  db = process.env.DATABASE_URL
    ? { ...(await freshDatabase('gw_diff')), shared: false }
    : { url: process.env.TEST_DATABASE_URL!, drop: async () => {}, shared: true };
  [planned, resolved] = await Promise.all([startServer({}, { url: db.url }), startServer({ sqlPlans: false }, { url: db.url })]);
  schema = await buildAppSchema();
  market = await saveRichMarket(planned, MADE);
  clock.set(AT);
}, 120_000);
beforeEach(() => clock.set(AT));
afterAll(async () => {
  clock.reset();
  agent.destroy();
  await Promise.all([planned?.close(), resolved?.close()]);
  await db?.drop();
});

const agent = new http.Agent({ keepAlive: true, maxSockets: PARALLEL * 2 });

interface Answer {
  status: number;
  text: string;
  sql: number;
}

/** One request as a plain client sends it: no Accept header, a JSON body for POST. */
function send(server: TestServer, method: 'GET' | 'POST', path: string, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: http.OutgoingHttpHeaders = body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
    const req = http.request(`${server.url}${path}`, { method, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString('utf8'), sql: Number(res.headers['x-sql-statements']) }));
      res.on('error', reject);
    });
    req.on('error', (err) => {
      // A kept-alive connection the server closed as the request went out (Node's documented race): again.
      if (req.reusedSocket && (err as NodeJS.ErrnoException).code === 'ECONNRESET') return resolve(send(server, method, path, body));
      // A connection the server dropped is an answer too (status 0), so the report names the request.
      resolve({ status: 0, text: `connection error: ${err.message}`, sql: NaN });
    });
    req.end(body);
  });
}

const post = (server: TestServer, query: string, variables: Record<string, unknown> = {}) => send(server, 'POST', '/graphql', JSON.stringify({ query, variables }));

/** GraphQL's `requestId` and REST's `request_id` differ on every request. */
const withoutRequestIds = (text: string) => text.replace(/"(requestId|request_id)":"[^"]*"/g, '"$1":"-"');
/**
 * Two GraphQL answers are the same bytes, or both are a failed operation (`data: null`, no INTERNAL error):
 * a plan answers whole data or nothing, so such an answer came from the resolvers on both servers, and
 * which of several failing roots' errors is reported is the first to fail, a race that graphql-js (and the
 * spec) leave open: with two roots that each fail on their own statement, either error may come first.
 */
const sameGraphql = (ours: Answer, theirs: Answer) =>
  ours.status === theirs.status &&
  (withoutRequestIds(ours.text) === withoutRequestIds(theirs.text) || (failedWhole(ours) && failedWhole(theirs)) || sameDataSameErrors(ours, theirs));

/**
 * The same `data`, and errors of the same kinds (message and code, none INTERNAL), however many: when
 * the items of a list fail alike, graphql-js stops at the first error that nulls the list while
 * graphql-jit reports each item's (the same document on its first use and on later ones); which items'
 * errors are listed is the executor's, not a plan's, and the data the client gets is the same.
 */
function sameDataSameErrors(ours: Answer, theirs: Answer): boolean {
  try {
    type Body = { data?: unknown; errors?: { message?: string; extensions?: { code?: string } }[] };
    const [a, b] = [JSON.parse(ours.text) as Body, JSON.parse(theirs.text) as Body];
    if (!a.errors?.length || !b.errors?.length || JSON.stringify(a.data) !== JSON.stringify(b.data)) return false;
    const kinds = (body: Body) => [...new Set(body.errors!.map((e) => `${e.extensions?.code} ${e.message}`))].sort().join('\n');
    return [...a.errors, ...b.errors].every((e) => e.extensions?.code !== 'INTERNAL') && kinds(a) === kinds(b);
  } catch {
    return false;
  }
}

function failedWhole(answer: Answer): boolean {
  try {
    const body = JSON.parse(answer.text) as { data?: unknown; errors?: { extensions?: { code?: string } }[] };
    return body.data === null && !!body.errors?.length && body.errors.every((e) => e.extensions?.code !== 'INTERNAL');
  } catch {
    return false;
  }
}

/**
 * A REST body with its stored JSON (`metadata`, `description`) respelled as JSON.stringify writes it:
 * a REST text plan writes them in PostgreSQL's spelling of jsonb (docs/api.md: compare values there).
 * Every other byte stays as sent.
 */
function storedJsonRespelled(text: string): string {
  let out = '';
  let at = 0;
  const key = /"(metadata|description)":/g;
  for (let found = key.exec(text); found; found = key.exec(text)) {
    const start = key.lastIndex;
    const end = endOfJsonValue(text, start);
    out += text.slice(at, start) + JSON.stringify(JSON.parse(text.slice(start, end)));
    at = end;
    key.lastIndex = end;
  }
  return out + text.slice(at);
}

/** Where the JSON value that starts at `start` ends. */
function endOfJsonValue(text: string, start: number): number {
  let depth = 0;
  let i = start;
  do {
    const c = text[i];
    if (c === '"') {
      for (i += 1; text[i] !== '"'; i += text[i] === '\\' ? 2 : 1);
    } else if (c === '{' || c === '[') depth += 1;
    else if (c === '}' || c === ']') depth -= 1;
    else if (depth === 0) {
      // A scalar at the top: up to the next delimiter.
      while (i < text.length && !/[,}\]]/.test(text[i])) i += 1;
      return i;
    }
    i += 1;
  } while (depth > 0);
  return i;
}

const sameRest = (ours: Answer, theirs: Answer) =>
  ours.status === theirs.status && storedJsonRespelled(withoutRequestIds(ours.text)) === storedJsonRespelled(withoutRequestIds(theirs.text));

/** Where two texts first differ, with some bytes around it. */
function firstDifference(a: string, b: string): string {
  let i = 0;
  while (i < a.length && a[i] === b[i]) i += 1;
  return `at byte ${i}: planned …${a.slice(Math.max(0, i - 60), i + 60)}… resolvers …${b.slice(Math.max(0, i - 60), i + 60)}…`;
}

/** A difference as a reader needs it to replay and see it. */
function report(what: string, use: number, ours: Answer, theirs: Answer): string {
  return [
    `DIFF_SEED=${SEED} DIFF_COUNT=${COUNT}: ${what}`,
    `use ${use} of the plans server: status ${ours.status} vs ${theirs.status}, ${firstDifference(ours.text, theirs.text)}`,
    `planned:   ${ours.text}`,
    `resolvers: ${theirs.text}`,
  ].join('\n');
}

/**
 * Whether a difference stays when the request is asked again (plans server, then the other): on the shared
 * database another file may have written between two answers, and a file that writes in bursts (a bulk
 * listing, a chain backfill) may go on writing for a while, so it is asked again a few times, apart. A
 * plan's own difference is there every time.
 */
async function stays(ask: () => Promise<Answer[]>, same: (ours: Answer, theirs: Answer) => boolean): Promise<boolean> {
  if (!db.shared) return true;
  for (let i = 0; i < 6; i += 1) {
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, 150 * i));
    const [ours, theirs] = await ask();
    if (same(ours, theirs)) return false;
  }
  return true;
}

/** Cursors of an answer, for later requests' `page`. */
function collectCursors(text: string, pools: Pools): void {
  for (const [, cursor] of text.matchAll(/"cursor":"([^"]+)"/g)) {
    if (!pools.cursors.includes(cursor)) pools.cursors.push(cursor);
  }
  if (pools.cursors.length > 300) pools.cursors.splice(0, pools.cursors.length - 300);
}

/** `work` for each item, `PARALLEL` at a time, in batches (a batch's answers feed the next one's cursors). */
async function inBatches<T>(items: T[], work: (item: T, index: number) => Promise<void>): Promise<void> {
  for (let start = 0; start < items.length; start += PARALLEL) await Promise.all(items.slice(start, start + PARALLEL).map((item, k) => work(item, start + k)));
}

describe('generated requests: plans on and off answer the same bytes', () => {
  test('GraphQL documents over the whole query type, each three times with plans and once without', async () => {
    console.log(`differential: DIFF_SEED=${SEED} DIFF_COUNT=${COUNT}`);
    const started = Date.now();
    const pools: Pools = { ...market, cursors: [] };
    const r = new Random(SEED);
    const generator = new DocumentGenerator(schema, r, pools);
    const failures: string[] = [];
    let sent = 0;
    let servers = [planned];
    for (let batch = 0; batch < COUNT; batch += PARALLEL) {
      if (batch > 0 && batch % DOCUMENTS_PER_SERVER < PARALLEL) servers = [await startServer({}, { url: db.url }), ...servers];
      const on = servers[0];
      const documents: GeneratedDocument[] = [];
      for (let k = 0; k < PARALLEL && batch + k < COUNT; k += 1) documents.push(generator.document());
      const answers = await Promise.all(
        documents.map(async (doc) => {
          const body = JSON.stringify({ query: doc.query, variables: doc.variables });
          const ours: Answer[] = [];
          for (let use = 0; use < 3; use += 1) ours.push(await send(on, 'POST', '/graphql', body));
          return { ours, theirs: await send(resolved, 'POST', '/graphql', body) };
        }),
      );
      for (const [k, { ours, theirs }] of answers.entries()) {
        const doc = documents[k];
        sent += 1;
        collectCursors(theirs.text, pools);
        const use = ours.findIndex((a) => !sameGraphql(a, theirs));
        if (use < 0 || failures.length >= 5) continue;
        const body = JSON.stringify({ query: doc.query, variables: doc.variables });
        if (await stays(() => Promise.all([send(on, 'POST', '/graphql', body), send(resolved, 'POST', '/graphql', body)]), sameGraphql)) {
          failures.push(report(`document #${batch + k}\n${doc.query}\nvariables: ${JSON.stringify(doc.variables)}`, use + 1, ours[use], theirs));
        }
      }
    }
    await Promise.all(servers.slice(0, -1).map((s) => s.close()));
    console.log(`differential: ${sent} documents in ${Date.now() - started} ms`);
    expect(failures).toEqual([]);
  }, 600_000);

  test('GET routes of /v1 with generated parameters, each twice with plans and once without', async () => {
    const pools: Pools = { ...market, cursors: [] };
    const r = new Random(SEED + 1);
    const paths = Array.from({ length: REST_COUNT }, () => restPath(schema, r, pools));
    const failures: string[] = [];
    await inBatches(paths, async (path) => {
      const ours = [await send(planned, 'GET', path), await send(planned, 'GET', path)];
      const theirs = await send(resolved, 'GET', path);
      collectCursors(theirs.text, pools);
      const use = ours.findIndex((a) => !sameRest(a, theirs));
      if (use < 0 || failures.length >= 5) return;
      if (await stays(() => Promise.all([send(planned, 'GET', path), send(resolved, 'GET', path)]), sameRest)) failures.push(report(`GET ${path}`, use + 1, ours[use], theirs));
    });
    expect(failures).toEqual([]);
  }, 600_000);
});

describe('regressions the generated requests found', () => {
  /** New connections the pool of `server` opens while `work` runs. */
  async function connectionsOpenedBy(server: TestServer, work: () => Promise<unknown>): Promise<number> {
    const pool = (server.ds.driver as unknown as { master: Pool }).master;
    let opened = 0;
    const count = () => (opened += 1);
    pool.on('connect', count);
    try {
      await work();
    } finally {
      pool.removeListener('connect', count);
    }
    return opened;
  }

  test('when a page of collections is read for its __typename alone, then every use answers it, and no connection is dropped', async () => {
    const query = `{ collections(ownerAddress: "${market.owners[0]}") { __typename } }`;
    const answers: Answer[] = [];
    const opened = await connectionsOpenedBy(planned, async () => {
      for (let i = 0; i < 5; i += 1) answers.push(await post(planned, query));
    });
    expect(answers.map((a) => a.text)).toEqual(Array(5).fill(`{"data":{"collections":{"__typename":"CollectionPage"}}}\n`));
    expect(opened).toBe(0);
  });

  test('when a statement fails on its own (a bind of more values than it names, 08P01), then it is its error, and no connection is dropped', async () => {
    const context = { scope: { requestId: 'statement-error', sqlStatements: 0 }, ds: planned.ds, rootDs: planned.ds } as unknown as StatementContext;
    const codes: unknown[] = [];
    const opened = await connectionsOpenedBy(planned, async () => {
      for (let i = 0; i < 3; i += 1) {
        const failure = await readStatement(context, 'SELECT 1 AS one', ['unused']).catch((err: unknown) => err);
        expect(failure).toBeInstanceOf(QueryFailedError);
        codes.push((failure as { driverError: { code: string } }).driverError.code);
      }
    });
    expect(codes).toEqual(['08P01', '08P01', '08P01']);
    expect(opened).toBe(0);
  });

  test('when one root reads collections without their assets, then another root\'s collection (the same rows, through a loader) keeps its assets', async () => {
    const owner = market.collectionOwner;
    const art = { tokenAddress: market.contracts[0], tokenId: market.tokenIds.includes('1') ? '1' : market.tokenIds[0] };
    const other = `asset(tokenAddress: $a, tokenId: $t) { collection { name assets(limit: 1) { remaining } } }`;
    const documents = [
      `query ($o: Address!, $a: Address!, $t: TokenId!) { without: collections(ownerAddress: $o, includeAssets: false) { result { name } } ${other} }`,
      `query ($a: Address!, $t: TokenId!) { without: collection(address: $a, includeAssets: false) { name } ${other} }`,
      `query ($o: Address!, $a: Address!, $t: TokenId!) {
        without: collections(ownerAddress: $o, includeAssets: false, orderBy: NAME) { result { name assets(limit: 1) { remaining } } }
        with: collections(ownerAddress: $o, orderBy: NAME) { result { name assets(limit: 1) { remaining } } }
        ${other}
      }`,
    ];
    for (const query of documents) {
      for (const server of [resolved, resolved, resolved, planned, planned, planned]) {
        const variables = query.includes('$o') ? { o: owner, a: art.tokenAddress, t: art.tokenId } : { a: art.tokenAddress, t: art.tokenId };
        const answer = JSON.parse((await post(server, query, variables)).text);
        expect(answer.errors).toBeUndefined();
        const { without, with: withAssets, asset } = answer.data;
        for (const c of without.result ?? [without]) expect(c.assets ?? null).toBeNull();
        for (const c of withAssets?.result ?? []) expect(c.assets).not.toBeNull();
        expect(asset.collection.assets).not.toBeNull();
      }
    }
  });

  test('when an asset\'s trait is rarer than 1 in 10,000, then REST writes its rarity as JavaScript does, with or without plans', async () => {
    const path = `/v1/assets/${market.bigAsset.tokenAddress}/${market.bigAsset.tokenId}`;
    const rarity = JSON.stringify(1 / BIG_COLLECTION);
    expect(rarity).toBe('0.00009998000399920016');
    for (const server of [planned, planned, resolved]) {
      const answer = await send(server, 'GET', path);
      expect(answer.status).toBe(200);
      expect(answer.text).toContain(`"rarity":${rarity}`);
    }
  });

  // From its second use the compiled document answered INTERNAL_SERVER_ERROR (graphql-jit was given the
  // raw variables, not the coerced ones).
  test('when a variable with a default is left out of a known document, then every use answers with the default', async () => {
    // The assets of this file's big collection: on the run's shared database other files add and delete assets meanwhile.
    const query = `query ($a: Address!, $l: Int! = 3) { assets(assetContract: $a, limit: $l) { remaining } }`;
    const variables = { a: market.bigAsset.tokenAddress };
    const answers = [];
    for (let i = 0; i < 4; i += 1) answers.push(await post(planned, query, variables));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    const expected = await post(resolved, query, variables);
    expect(answers.map((a) => a.text)).toEqual(Array(4).fill(expected.text));
    expect(JSON.parse(expected.text).data.assets.remaining).toBe(BIG_COLLECTION - 3);
  });
});
