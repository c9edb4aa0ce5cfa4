import { Client } from 'pg';
import { randomAddress, startServer, TestServer } from './setup/server';
import { freshDatabase } from './setup/global-setup';
import { Logged, logStatements } from './setup/captured-statements';
import { saveCollection } from './factories/marketplace';
import { buildCsv, csvRecords, importFormUrlencoded } from './factories/csv';

/**
 * The database on a bad day: statements that run too long are cancelled by the server itself and answered
 * 503 TIMEOUT; pages stay fast with the statistics a bulk import leaves behind; imports refresh them.
 */
const onPostgres = Boolean(process.env.DATABASE_URL);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('statement timeout', () => {
  // PGlite accepts statement_timeout and never enforces it: its single session has no timer that could
  // interrupt a statement (a SET of 50 ms leaves pg_sleep(0.5) running to its end). The cancellation is
  // PostgreSQL's; on PGlite the client's own bound (DB_QUERY_TIMEOUT_MS) is all there is.
  const testPg = onPostgres ? test : test.skip;
  if (!onPostgres) console.log('bad-day.test.ts: statement-timeout cancellations skipped: PGlite cannot cancel a running statement (set DATABASE_URL)');

  const TIMEOUT_MS = 600;
  let db: { url: string; drop: () => Promise<void> } | undefined;
  let planned: TestServer;
  let resolved: TestServer;
  let locker: Client;
  let admin: Client;
  let key: string;

  beforeAll(async () => {
    if (!onPostgres) return;
    // A database of its own: the test locks whole tables, which would stall every other test file.
    db = await freshDatabase('gw_badday');
    [planned, resolved] = await Promise.all([
      startServer({}, { url: db.url, statementTimeoutMs: TIMEOUT_MS }),
      startServer({ sqlPlans: false }, { url: db.url, statementTimeoutMs: TIMEOUT_MS }),
    ]);
    locker = new Client({ connectionString: db.url });
    admin = new Client({ connectionString: db.url });
    await Promise.all([locker.connect(), admin.connect()]);
    ({ key } = await planned.key());
    await saveCollection(planned, key);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([locker?.end(), admin?.end(), planned?.close(), resolved?.close()]);
    await db?.drop();
  });

  /** Backends waiting on the locker's lock now. */
  const blocked = async () => Number((await admin.query('SELECT count(*) AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [(locker as unknown as { processID: number }).processID])).rows[0].n);

  /**
   * Sends `request` while the locker holds `tables` exclusively: the request's statement waits on the lock
   * until the server cancels it. Returns the answer, and whether a backend was seen waiting meanwhile.
   */
  async function underLock<T>(tables: string, request: () => Promise<T>): Promise<{ answer: T; sawWaiting: boolean }> {
    await locker.query('BEGIN');
    await locker.query(`LOCK TABLE ${tables} IN ACCESS EXCLUSIVE MODE`);
    try {
      let done = false;
      const pending = request().finally(() => (done = true));
      let sawWaiting = false;
      while (!done) {
        if ((await blocked()) > 0) sawWaiting = true;
        await sleep(25);
      }
      return { answer: await pending, sawWaiting };
    } finally {
      await locker.query('ROLLBACK');
    }
  }

  test('when the server runs with a statement timeout, then statements that finish in time are answered as always, on either database', async () => {
    const server = await startServer({}, { statementTimeoutMs: 5000 });
    try {
      const [setting] = await server.ds.query('SHOW statement_timeout');
      // PostgreSQL takes it from each connection's start-up message; PGlite ignores it there, unharmed.
      expect(setting.statement_timeout).toBe(onPostgres ? '5s' : '0');
      // So are no JIT and no parallel workers (a page's statement costed high was compiled, or put under a Gather, for longer than it ran).
      const [{ jit }] = await server.ds.query('SHOW jit');
      const [{ max_parallel_workers_per_gather: workers }] = await server.ds.query('SHOW max_parallel_workers_per_gather');
      if (onPostgres) expect({ jit, workers }).toEqual({ jit: 'off', workers: '0' });
      const { key } = await server.key();
      const address = randomAddress();
      const created = await server.rest('POST', '/v1/collections', { contract_address: address, chain_id: '1', name: `In time ${Date.now()}` }, key);
      expect(created.status).toBe(200);
      expect((await server.rest('GET', `/v1/collections/${address}`)).status).toBe(200);
      expect((await server.gql('{ assets(limit: 2) { result { id } } }')).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  testPg('when a REST read waits past the statement timeout, then it is answered 503 TIMEOUT with Retry-After and its backend no longer runs', async () => {
    const started = Date.now();
    const { answer, sawWaiting } = await underLock('assets', () => planned.rest('GET', '/v1/assets?limit=5'));
    expect(sawWaiting).toBe(true);
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('1');
    expect(answer.body.error.code).toBe('TIMEOUT');
    expect(answer.body.error.message).not.toMatch(/statement|57014|cancel(l)?ing/i);
    // Cancelled by the server, not abandoned by the client: nothing waits on the lock any more, while it is still held.
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  testPg('when the backend is cancelled, then nothing of the request still runs or waits in pg_stat_activity, and the connection serves the next request', async () => {
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE assets IN ACCESS EXCLUSIVE MODE');
    try {
      const answer = await planned.gql('{ assets(limit: 3) { result { id } } }');
      expect(answer.status).toBe(503);
      expect(answer.headers.get('retry-after')).toBe('1');
      expect(answer.body.errors![0].extensions.code).toBe('TIMEOUT');
      // The lock is still held: a statement of the request that still ran would still be waiting on it.
      expect(await blocked()).toBe(0);
      const running = await admin.query(
        `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND state <> 'idle' AND pid <> pg_backend_pid() AND pid <> $1`,
        [(locker as unknown as { processID: number }).processID],
      );
      expect(Number(running.rows[0].n)).toBe(0);
    } finally {
      await locker.query('ROLLBACK');
    }
    const after = await planned.gql('{ assets(limit: 3) { result { id } } }');
    expect(after.status).toBe(200);
  });

  testPg('when a GraphQL query through the resolvers waits past the statement timeout, then it is 503 TIMEOUT with Retry-After', async () => {
    const { answer, sawWaiting } = await underLock('collections', () => resolved.gql('{ collections(limit: 3) { result { id name } } }'));
    expect(sawWaiting).toBe(true);
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('1');
    expect(answer.body.errors!.map((e: { extensions: { code: string } }) => e.extensions.code)).toEqual(['TIMEOUT']);
    expect(await blocked()).toBe(0);
  });

  testPg('when a read on the lean door waits past the statement timeout, then the database cancels one statement, not two, and the answer is 503 TIMEOUT', async () => {
    const cancelled = async () => {
      const text = await (await fetch(`${planned.url}/metrics`)).text();
      const line = text.split('\n').find((l) => l.startsWith('gateway_db_statements_cancelled_total '));
      return Number(line?.split(' ')[1] ?? 0);
    };
    const doc = '{ assets(limit: 4) { result { id name } } }';
    // Answered once in time first, so that the door knows the document (CompiledOperations).
    expect((await planned.gql(doc)).status).toBe(200);
    const requests: [string, () => Promise<{ status: number; headers: Headers; body: any }>][] = [
      ['GraphQL', () => planned.gql(doc)],
      ['REST', () => planned.rest('GET', '/v1/assets?limit=4')],
    ];
    for (const [door, send] of requests) {
      const before = await cancelled();
      const { answer, sawWaiting } = await underLock('assets', send);
      expect(sawWaiting).toBe(true);
      expect({ door, status: answer.status, retryAfter: answer.headers.get('retry-after') }).toEqual({ door, status: 503, retryAfter: '1' });
      expect(door === 'REST' ? answer.body.error.code : answer.body.errors[0].extensions.code).toBe('TIMEOUT');
      // Before, the door handed the request to express, which ran it again: the database waited out the timeout twice.
      expect({ door, cancelled: (await cancelled()) - before }).toEqual({ door, cancelled: 1 });
    }
  });

  testPg('when a write waits past the statement timeout, then it is 503 TIMEOUT on both doors and nothing is written', async () => {
    const name = `Timed out ${Date.now()}`;
    const input = { contract_address: randomAddress(), chain_id: '1', name };
    const rest = await underLock('collections', () => resolved.rest('POST', '/v1/collections', input, key));
    expect(rest.sawWaiting).toBe(true);
    expect(rest.answer.status).toBe(503);
    expect(rest.answer.headers.get('retry-after')).toBe('1');
    expect(rest.answer.body.error.code).toBe('TIMEOUT');
    const gql = await underLock('collections', () =>
      resolved.gql('mutation ($input: CreateCollectionInput!) { createCollection(input: $input) { id } }', { input: { contractAddress: input.contract_address, chainId: '1', name } }, key),
    );
    expect(gql.answer.status).toBe(503);
    expect(gql.answer.headers.get('retry-after')).toBe('1');
    expect(gql.answer.body.errors![0].extensions.code).toBe('TIMEOUT');
    expect(await blocked()).toBe(0);
    const written = await admin.query('SELECT count(*) AS n FROM collections WHERE name = $1', [name]);
    expect(Number(written.rows[0].n)).toBe(0);
  });
});

describe('contention: deadlocks and a database that does not answer in time', () => {
  // PGlite has one session: no two transactions wait on each other there.
  const testPg = onPostgres ? test : test.skip;
  let db: { url: string; drop: () => Promise<void> } | undefined;
  let server: TestServer;
  let locker: Client;

  beforeAll(async () => {
    if (!onPostgres) return;
    // A database of its own: a test locks a whole table, which would stall every other test file.
    db = await freshDatabase('gw_contention');
    server = await startServer(
      { webhooks: { deliver: false, allowPrivate: true, timeoutMs: 2000, backoffBaseMs: 100, backoffMaxMs: 400, retryWindowMs: 2500, pollMs: 50 } },
      { url: db.url },
    );
    locker = new Client({ connectionString: db.url });
    await locker.connect();
    // The locker's own deadlock check comes late, so that in a cycle the server's statement is the one aborted.
    await locker.query("SET deadlock_timeout = '10s'");
  }, 60_000);
  afterAll(async () => {
    await Promise.all([locker?.end(), server?.close()]);
    await db?.drop();
  });

  testPg('when deleting a webhook loses a deadlock with a worker-like transaction, then the delete runs again and answers 200, and the webhook is gone', async () => {
    const { key } = await server.key();
    const created = await server.rest('POST', '/v1/webhooks', { url: 'http://127.0.0.1:9/hook' }, key);
    expect(created.status).toBe(200);
    const id: string = created.body.id;
    await locker.query(`INSERT INTO webhook_deliveries (webhook_id, event_position, event_type) VALUES ($1, 0, 'asset.created')`, [id]);
    // As a delivery worker does: hold the delivery, then touch the webhook. The DELETE holds the webhook and
    // waits for the delivery (its cascade): a cycle. PostgreSQL's deadlock check (deadlock_timeout after a
    // wait began: 1 s for the server, 10 s for the locker) fires on the server's side first and aborts the DELETE.
    await locker.query('BEGIN');
    await locker.query('SELECT 1 FROM webhook_deliveries WHERE webhook_id = $1 FOR UPDATE', [id]);
    const pid = (locker as unknown as { processID: number }).processID;
    const deleting = server.rest('DELETE', `/v1/webhooks/${id}`, undefined, key);
    for (let i = 0; i < 200; i += 1) {
      const [waiting]: { n: number }[] = await server.ds.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [pid]);
      if (waiting.n > 0) break;
      await sleep(10);
    }
    try {
      await locker.query('UPDATE webhooks SET updated_at = now() WHERE id = $1', [id]);
    } finally {
      await locker.query('COMMIT');
    }
    const deleted = await deleting;
    expect(deleted.status).toBe(200);
    expect(deleted.body.id).toBe(id);
    const left = await locker.query('SELECT count(*)::int AS n FROM webhooks WHERE id = $1', [id]);
    expect(left.rows[0].n).toBe(0);
  }, 30_000);

  testPg('when the database does not answer within the client query timeout, then a read and a write are 503 UNAVAILABLE with Retry-After, not INTERNAL', async () => {
    const impatient = await startServer({}, { url: db!.url, queryTimeoutMs: 300 });
    try {
      const { key } = await impatient.key();
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE collections IN ACCESS EXCLUSIVE MODE');
      let read;
      let write;
      try {
        read = await impatient.rest('GET', '/v1/collections?limit=1');
        write = await impatient.gql('mutation ($input: CreateCollectionInput!) { createCollection(input: $input) { id } }', { input: { contractAddress: randomAddress(), chainId: '1' } }, key);
      } finally {
        await locker.query('ROLLBACK');
      }
      expect(read.status).toBe(503);
      expect(read.headers.get('retry-after')).toBe('1');
      expect(read.body.error.code).toBe('UNAVAILABLE');
      expect(JSON.stringify(read.body)).not.toMatch(/Query read timeout/);
      expect(write.body.errors?.[0]?.extensions?.code).toBe('UNAVAILABLE');
    } finally {
      await impatient.close();
    }
  }, 30_000);
});

describe('statistics as a bulk import leaves them', () => {
  const PAGE_MS = 2000;
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  /** The plan nodes of an EXPLAIN (FORMAT JSON) plan, depth first. */
  function nodesOf(plan: Record<string, unknown>): Record<string, unknown>[] {
    const children = (plan.Plans as Record<string, unknown>[] | undefined) ?? [];
    return [plan, ...children.flatMap(nodesOf)];
  }

  test('when 10,000 assets came into one collection after the last ANALYZE, then its pages answer fast and count it once', async () => {
    const { key, address } = await server.key();
    const [known, collection, empty] = [await saveCollection(server, key), await saveCollection(server, key), await saveCollection(server, key)];
    const insertAssets = (c: typeof known, count: number) =>
      server.ds.query(
        `INSERT INTO assets (collection_id, chain_id, token_address, token_id, name, description, image_url, metadata, owner)
         SELECT $1, $2, $3, g, 'Bulk ' || g, 'imported', 'https://example.com/a.png', '{}'::jsonb, $4 FROM generate_series(1, $5::int) g`,
        [c.id, c.chainId, c.contractAddress, address, count],
      );
    // The statistics know the table (a collection of 50) but not this collection: the planner expects a
    // handful of its rows, as after a bulk import that autovacuum has not analysed yet.
    await insertAssets(known, 50);
    await server.ds.query('ANALYZE assets, listings');
    await insertAssets(collection, 10_000);
    const statements: Logged[] = [];
    const restoreLog = logStatements(server.ds, (sql) => /count\(\*\)/.test(sql) && sql.includes('FROM assets t'), statements);
    try {
      const pages = (id: string) => [
        `/v1/assets?collection_id=${id}&limit=20&owner_id=${address}`,
        `/v1/assets?collection_id=${id}&limit=20&order_by=current_price`,
        `/v1/assets?collection_id=${id}&limit=20&page=3`,
      ];
      // The same requests once on an empty collection: what a server does on a route's first use is not timed.
      for (const path of pages(empty.id)) expect((await server.rest('GET', path)).status).toBe(200);
      for (const path of pages(collection.id)) {
        const started = Date.now();
        const res = await server.rest('GET', path);
        expect({ path, status: res.status, remaining: res.body.remaining }).toEqual({ path, status: 200, remaining: 10000 - (path.endsWith('page=3') ? 60 : 20) });
        // Joined to the page, the count made these pages run past the client's 30 s timeout. Counted once, they
        // take 0.1-0.5 s (by current price: every asset's price is computed to sort) on a loaded 2-core machine.
        expect({ path, slow: Date.now() - started > PAGE_MS }).toEqual({ path, slow: false });
      }
      const started = Date.now();
      const nested = await server.gql(
        'query ($owner: Address) { collections(ownerAddress: $owner, limit: 5) { result { id assets(limit: 20, orderBy: CURRENT_PRICE) { remaining result { id } } } } }',
        { owner: address },
      );
      const pagesOf = Object.fromEntries(nested.body.data!.collections.result.map((c: { id: string; assets: { remaining: number } }) => [c.id, c.assets.remaining]));
      expect(pagesOf).toEqual({ [known.id]: 30, [collection.id]: 9980, [empty.id]: 0 });
      expect(Date.now() - started).toBeLessThan(PAGE_MS);
    } finally {
      restoreLog();
    }
    // The plans of those pages: whatever PostgreSQL chose, each count ran at most once per statement (per
    // parent for a nested page; not at all for an empty page). Joined to the page, it ran once per row. A
    // collection's whole list reads its kept count (collection_asset_counts) and counts nothing; one owner's
    // assets in it are counted from their rows.
    const ofBulk = statements.filter(({ parameters }) => parameters.some((p) => p === collection.id || (Array.isArray(p) && p.includes(collection.id))));
    expect(ofBulk.length).toBeGreaterThanOrEqual(2);
    let counted = 0;
    for (const { sql, parameters } of ofBulk) {
      const [{ 'QUERY PLAN': [explained] }] = await server.ds.query(`EXPLAIN (ANALYZE, VERBOSE, FORMAT JSON) ${sql}`, parameters);
      const parents = (parameters.find(Array.isArray) as unknown[] | undefined)?.length ?? 1;
      const counts = nodesOf(explained.Plan).filter((node) => node['Node Type'] === 'Aggregate' && (node.Output as string[]).includes('count(*)'));
      counted += counts.length;
      for (const node of counts) expect({ sql: sql.slice(0, 60), loops: node['Actual Loops'] }).toEqual({ sql: sql.slice(0, 60), loops: parents });
    }
    expect(counted).toBeGreaterThan(0);
  });

  test('when an import finishes, then the tables it filled have just been analysed', async () => {
    const { key, address } = await server.key();
    const collection = await saveCollection(server, key);
    const analyzed = async () =>
      Number((await server.ds.query(`SELECT analyze_count AS n FROM pg_stat_user_tables WHERE relname = 'assets'`))[0].n);
    const before = await analyzed();
    const res = await importFormUrlencoded(server, collection.id, buildCsv(csvRecords(address, 50)), key);
    expect(res.status).toBe(200);
    expect(await analyzed()).toBeGreaterThan(before);
  });
});
