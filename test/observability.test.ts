import { setLogLevel } from '../src/common/logger';
import { buildCsv, csvRecords, importFormUrlencoded } from './factories/csv';
import { saveAsset, saveCollection } from './factories/marketplace';
import { startServer, TestServer } from './setup/server';

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ slowRequestMs: 60_000 });
});
afterAll(() => server.close());

async function scrape(url = server.url): Promise<string> {
  const res = await fetch(`${url}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/plain');
  return res.text();
}

/** The value of one sample line of the exposition, 0 when absent. */
function sample(text: string, line: string): number {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found ? Number(found.slice(line.length + 1)) : 0;
}

/** The JSON lines the logger writes while `work` runs, at level info. */
async function logLines(work: () => Promise<unknown>): Promise<Record<string, unknown>[]> {
  const lines: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  }) as typeof process.stderr.write;
  setLogLevel('info');
  try {
    await work();
    // The request line is written when the response has finished: give the event loop a turn.
    await new Promise((resolve) => setTimeout(resolve, 50));
  } finally {
    setLogLevel('silent');
    process.stderr.write = write;
  }
  return lines.flatMap((chunk) => chunk.split('\n')).filter(Boolean).map((line) => JSON.parse(line));
}

describe('GET /metrics', () => {
  test('when traffic has passed through both doors, then the request, latency, SQL and loader figures have moved', async () => {
    const rest = 'gateway_http_requests_total{door="rest",route="/v1/collections",status="200"}';
    const graphql = 'gateway_http_requests_total{door="graphql",route="ObservedCollections",status="200"}';
    const owner = await server.key();
    const collection = await saveCollection(server, owner.key);
    await saveAsset(server, owner.key, collection, owner.address);
    const before = await scrape();

    for (let i = 0; i < 3; i += 1) await server.rest('GET', '/v1/collections?limit=5&include_assets=true');
    const query = 'query ObservedCollections { collections(limit: 3) { result { name assets(limit: 2) { result { name } } } } }';
    await fetch(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
    const after = await scrape();

    expect(sample(after, rest) - sample(before, rest)).toBe(3);
    expect(sample(after, graphql) - sample(before, graphql)).toBe(1);
    const latency = 'gateway_http_request_duration_seconds_count{door="rest",route="/v1/collections"}';
    expect(sample(after, latency) - sample(before, latency)).toBe(3);
    const statements = 'gateway_sql_statements_per_request_count{door="graphql"}';
    expect(sample(after, statements) - sample(before, statements)).toBeGreaterThanOrEqual(1);
    // The REST reads are SQL plans (one statement, no loaders); the GraphQL query's first use runs the resolvers.
    const batches = 'gateway_dataloader_batch_size_count{loader="assetPagesByCollection"}';
    expect(sample(after, batches) - sample(before, batches)).toBeGreaterThanOrEqual(1);
    expect(after).toMatch(/^gateway_db_pool_connections\{state="total"\} [1-9]/m);
    expect(after).toMatch(/^gateway_db_pool_connections\{state="waiting"\} \d+/m);
    expect(after).toContain('process_cpu_user_seconds_total');
    expect(after).toContain('gateway_rate_limit_rejections_total');
  });

  test('when assets are imported, then the import rows counter grows by the rows written', async () => {
    const owner = await server.key();
    const collection = await saveCollection(server, owner.key);
    const before = sample(await scrape(), 'gateway_import_rows_total');

    const res = await importFormUrlencoded(server, collection.id, buildCsv(csvRecords(owner.address, 4)), owner.key);

    expect(res.status).toBe(200);
    expect(sample(await scrape(), 'gateway_import_rows_total') - before).toBe(4);
  });

  test('when METRICS is off, then /metrics is not served', async () => {
    const quiet = await startServer({ metrics: false });
    try {
      expect((await fetch(`${quiet.url}/metrics`)).status).toBe(404);
    } finally {
      await quiet.close();
    }
  });
});

describe('request logs', () => {
  test('when a request carries a well-formed x-request-id, then one log line names it with door, route, status, duration and statements', async () => {
    const id = `client-${Date.now()}`;
    const lines = await logLines(() => fetch(`${server.url}/v1/categories?limit=2`, { headers: { 'x-request-id': id } }));

    const mine = lines.filter((l) => l.requestId === id);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ level: 'info', message: 'request', door: 'rest', route: '/v1/categories', status: 200, method: 'GET' });
    expect(mine[0].durationMs).toEqual(expect.any(Number));
    expect(mine[0].sqlStatements).toBeGreaterThanOrEqual(1);
  });

  test('when a write is a routine duplicate (409) on either door, then it is logged once, at info, with its request id and no SQL text', async () => {
    const owner = await server.key();
    const collection = await saveCollection(server, owner.key);
    const again = { contract_address: collection.contractAddress, chain_id: '1', name: 'Again' };
    const rest = `dup-rest-${Date.now()}`;
    const graphql = `dup-graphql-${Date.now()}`;
    const lines = await logLines(async () => {
      const res = await server.rest('POST', '/v1/collections', again, owner.key, { 'x-request-id': rest });
      expect(res.status).toBe(409);
      await fetch(`${server.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'access-token': owner.key, 'x-request-id': graphql },
        body: JSON.stringify({ query: `mutation { createCollection(input: { contractAddress: "${collection.contractAddress}", chainId: "1" }) { id } }` }),
      });
    });

    for (const id of [rest, graphql]) {
      const mine = lines.filter((l) => l.requestId === id);
      expect(mine).toHaveLength(1);
      expect(mine[0]).toMatchObject({ level: 'info', message: 'request' });
    }
    expect(lines.find((l) => l.requestId === rest)).toMatchObject({ status: 409 });
    expect(lines.filter((l) => l.level !== 'info')).toEqual([]);
    expect(JSON.stringify(lines)).not.toMatch(/INSERT|SELECT|duplicate key/);
  });

  test('when x-request-id is not a plain token, then the server uses an id of its own', async () => {
    const res = await fetch(`${server.url}/healthz`, { headers: { 'x-request-id': 'bad id\twith spaces' } });

    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  test('when requests carry API keys, good or bad, in either header, then no log line holds a key', async () => {
    const { key } = await server.key();
    const wrong = 'nftgw_thisIsNotAKeyButLooksLikeOne0001';
    const lines = await logLines(async () => {
      await server.rest('POST', '/v1/collections', { chain_id: '1' }, key);
      await fetch(`${server.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${wrong}` },
        body: JSON.stringify({ query: 'mutation { createCollection(input: { chainId: "1" }) { id } }' }),
      });
    });

    expect(lines.length).toBeGreaterThanOrEqual(2);
    const text = JSON.stringify(lines);
    expect(text).not.toContain(key);
    expect(text).not.toContain(wrong);
    expect(text).not.toContain(key.slice(6, 20));
  });

  test('when a request takes longer than SLOW_REQUEST_MS, then its line is a warning, and slow statements are logged with their time', async () => {
    const slow = await startServer({ slowRequestMs: 0 }, { slowStatementMs: 1 });
    try {
      const lines = await logLines(() => slow.rest('GET', '/v1/collections?limit=20&include_assets=true&assets_limit=50'));

      expect(lines).toEqual(expect.arrayContaining([expect.objectContaining({ level: 'warn', message: 'slow request', route: '/v1/collections' })]));
      const statement = lines.find((l) => l.message === 'slow statement');
      expect(statement).toMatchObject({ level: 'warn', ms: expect.any(Number), statement: expect.stringContaining('SELECT') });
      // The route is answered by one planned statement (db/read-statement.ts): logged with its request's id.
      expect(statement?.requestId).toEqual(expect.any(String));
      expect(statement?.requestId).toBe(lines.find((l) => l.message === 'slow request')?.requestId);
    } finally {
      await slow.close();
    }
  });
});
