import { startTcpProxy, TcpProxy } from './setup/tcp-proxy';
import { startServer, TestServer } from './setup/server';

/**
 * The database behind a TCP relay that the test cuts and restores: an outage as the service sees it
 * (connections dropped, new ones refused), on either database.
 */
let proxy: TcpProxy;
let server: TestServer;

beforeAll(async () => {
  const target = new URL(process.env.TEST_DATABASE_URL!);
  proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  server = await startServer({}, { url: proxy.url(process.env.TEST_DATABASE_URL!), poolSize: 4, poolWaitMs: 1000 });
});
afterAll(async () => {
  await server.close();
  await proxy.close();
});

describe('while the database is unreachable', () => {
  beforeAll(async () => {
    expect((await server.rest('GET', '/v1/categories?limit=1')).status).toBe(200);
    await proxy.cut();
  });
  afterAll(() => proxy.restore());

  test('when a REST read is sent, then it is 503 UNAVAILABLE with Retry-After and no driver text', async () => {
    const res = await server.rest('GET', '/v1/collections?limit=2');
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(res.body.error).toMatchObject({ code: 'UNAVAILABLE', request_id: expect.any(String) });
    expect(JSON.stringify(res.body)).not.toMatch(/ECONN|terminated|timeout|pg/i);
  });

  test('when a GraphQL query is sent, then it is HTTP 503 with extensions.code UNAVAILABLE and Retry-After', async () => {
    const res = await server.gql('{ collections(limit: 2) { result { name } } }');
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(res.body.errors![0].extensions.code).toBe('UNAVAILABLE');
  });

  test('when a write is sent, then it is 503 UNAVAILABLE', async () => {
    // Any key: looking it up needs the database.
    const res = await server.rest('POST', '/v1/collections', { contract_address: `0x${'cd'.repeat(20)}`, chain_id: '1' }, 'an-api-key');
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('UNAVAILABLE');
  });

  test('when /readyz is asked, then it is 503 with Retry-After', async () => {
    const res = await server.rest('GET', '/readyz');
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
  });
});

test('when the database comes back, then the service answers again within 2 s', async () => {
  await proxy.cut();
  expect((await server.rest('GET', '/readyz')).status).toBe(503);
  await proxy.restore();
  const back = Date.now();
  let status = 0;
  while (Date.now() - back < 2000 && status !== 200) {
    status = (await server.rest('GET', '/v1/categories?limit=1')).status;
  }
  expect(status).toBe(200);
  expect(Date.now() - back).toBeLessThan(2000);
  expect((await server.rest('GET', '/readyz')).status).toBe(200);
});
