import { createHash, randomUUID } from 'node:crypto';
import { startServer, TestServer } from './setup/server';

/**
 * Issue #15, stateless processes: automatic persisted queries (APQ) registered through one gateway are found
 * by another when REDIS_URL is set (127.0.0.1:6379 here and on CI); without it each process has its own.
 */
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A query text of its own, so that no other test's registration can answer for it. */
function freshQuery() {
  const query = `query Apq_${randomUUID().replace(/-/g, '')} { categories(limit: 1) { result { id } } }`;
  return { query, hash: createHash('sha256').update(query).digest('hex') };
}

async function post(server: TestServer, body: Record<string, unknown>) {
  const res = await fetch(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as { data?: unknown; errors?: { extensions?: { code?: string } }[] } };
}

const byHash = (hash: string) => ({ extensions: { persistedQuery: { version: 1, sha256Hash: hash } } });
const codeOf = (res: { body: { errors?: { extensions?: { code?: string } }[] } }) => res.body.errors?.[0]?.extensions?.code;

describe('with REDIS_URL', () => {
  let a: TestServer;
  let b: TestServer;
  const prefix = `test:apq:${randomUUID()}:`;
  beforeAll(async () => {
    [a, b] = await Promise.all([startServer({ redisUrl: REDIS_URL, apqRedisPrefix: prefix }), startServer({ redisUrl: REDIS_URL, apqRedisPrefix: prefix })]);
  });
  afterAll(() => Promise.all([a.close(), b.close()]));

  test('when a query is registered through one process, then another answers its hash alone', async () => {
    const { query, hash } = freshQuery();
    expect(codeOf(await post(b, byHash(hash)))).toBe('PERSISTED_QUERY_NOT_FOUND');

    const registered = await post(a, { query, ...byHash(hash) });
    // Apollo stores a registration without waiting for it: give the write to Redis a moment.
    let fromOther = await post(b, byHash(hash));
    for (let i = 0; i < 20 && codeOf(fromOther) === 'PERSISTED_QUERY_NOT_FOUND'; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      fromOther = await post(b, byHash(hash));
    }

    expect(registered.body.errors).toBeUndefined();
    expect(fromOther.status).toBe(200);
    expect(fromOther.body).toEqual(registered.body);
  });
});

describe('without REDIS_URL (in-process)', () => {
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    [a, b] = await Promise.all([startServer(), startServer()]);
  });
  afterAll(() => Promise.all([a.close(), b.close()]));

  test('when a query is registered, then the same process answers its hash alone; another process asks for the whole query', async () => {
    const { query, hash } = freshQuery();
    const registered = await post(a, { query, ...byHash(hash) });

    expect((await post(a, byHash(hash))).body).toEqual(registered.body);
    expect(codeOf(await post(b, byHash(hash)))).toBe('PERSISTED_QUERY_NOT_FOUND');
  });
});

describe('with REDIS_URL unreachable', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ redisUrl: 'redis://127.0.0.1:1' });
  });
  afterAll(() => server.close());

  test('when Redis cannot be reached, then a hash alone is not found (the client resends the query) and whole queries are served, never a 5xx', async () => {
    const { query, hash } = freshQuery();
    const registered = await post(server, { query, ...byHash(hash) });
    const hashOnly = await post(server, byHash(hash));

    expect(registered.status).toBe(200);
    expect(registered.body.errors).toBeUndefined();
    expect(hashOnly.status).toBeLessThan(500);
    expect(codeOf(hashOnly)).toBe('PERSISTED_QUERY_NOT_FOUND');
  });
});
