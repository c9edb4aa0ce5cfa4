import { randomUUID } from 'node:crypto';
import { RateLimitSettings } from '../src/config';
import { setLogLevel } from '../src/common/logger';
import { startServer, TestServer } from './setup/server';

const COLLECTIONS = '/v1/collections?limit=1';
const PING = /* GraphQL */ `{ chains { id } }`;

function settings(overrides: Partial<RateLimitSettings> = {}): RateLimitSettings {
  return { keyedPoints: 5, anonymousPoints: 3, durationS: 60, redisUrl: undefined, redisPrefix: `test:${randomUUID()}`, ...overrides };
}

describe('rate limits in memory', () => {
  let server: TestServer;
  beforeEach(async () => {
    server = await startServer({ rateLimit: settings() });
  });
  afterEach(() => server.close());

  test('when an anonymous client reads, then each response carries the limit, what remains and when it resets', async () => {
    const first = await server.rest('GET', COLLECTIONS);
    const second = await server.rest('GET', COLLECTIONS);

    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-limit')).toBe('3');
    expect([first.headers.get('ratelimit-remaining'), second.headers.get('ratelimit-remaining')]).toEqual(['2', '1']);
    expect(Number(first.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
    expect(Number(first.headers.get('ratelimit-reset'))).toBeLessThanOrEqual(60);
  });

  test('when an anonymous client goes over the limit on /v1, then it gets 429 RATE_LIMITED with Retry-After', async () => {
    for (let i = 0; i < 3; i += 1) expect((await server.rest('GET', COLLECTIONS)).status).toBe(200);

    const over = await server.rest('GET', COLLECTIONS);

    expect(over.status).toBe(429);
    expect(over.body.error).toMatchObject({ code: 'RATE_LIMITED', request_id: expect.any(String) });
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(over.headers.get('ratelimit-remaining')).toBe('0');
  });

  test('when a client goes over the limit on /graphql, then it gets HTTP 429 with RATE_LIMITED in extensions.code', async () => {
    for (let i = 0; i < 3; i += 1) expect((await server.gql(PING)).status).toBe(200);

    const over = await server.gql(PING);

    expect(over.status).toBe(429);
    expect(over.body.errors?.[0].extensions.code).toBe('RATE_LIMITED');
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  test('when anonymous reads are used up, then a request with an API key counts against the larger limit of its key', async () => {
    const { key } = await server.key();
    for (let i = 0; i < 4; i += 1) await server.rest('GET', COLLECTIONS);

    const keyed = await Promise.all(Array.from({ length: 6 }, () => server.rest('GET', COLLECTIONS, undefined, key)));

    expect(keyed.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 429]);
    expect(keyed[0].headers.get('ratelimit-limit')).toBe('5');
  });

  test('when two API keys call, then each has its own limit', async () => {
    const [a, b] = [await server.key(), await server.key()];
    for (let i = 0; i < 5; i += 1) await server.rest('GET', COLLECTIONS, undefined, a.key);

    const other = await server.rest('GET', COLLECTIONS, undefined, b.key);

    expect((await server.rest('GET', COLLECTIONS, undefined, a.key)).status).toBe(429);
    expect(other.status).toBe(200);
    expect(other.headers.get('ratelimit-remaining')).toBe('4');
  });
});

describe('rate limits shared through Redis', () => {
  test('when two servers share one Redis, then together they accept the limit once, not twice', async () => {
    const shared = settings({ keyedPoints: 40, redisUrl: 'redis://127.0.0.1:6379' });
    const servers = [await startServer({ rateLimit: shared }), await startServer({ rateLimit: shared })];
    try {
      const { key } = await servers[0].key();
      // Let both connections to Redis come up: a request while one is still connecting is served without a limit (fail open).
      await new Promise((resolve) => setTimeout(resolve, 200));

      const responses = await Promise.all(Array.from({ length: 100 }, (_, i) => servers[i % 2].rest('GET', COLLECTIONS, undefined, key)));

      const accepted = responses.filter((r) => r.status === 200).length;
      expect(Math.abs(accepted - 40)).toBeLessThanOrEqual(2);
      expect(responses.filter((r) => r.status !== 200 && r.status !== 429)).toEqual([]);
    } finally {
      await Promise.all(servers.map((s) => s.close()));
    }
  });

  test('when Redis cannot be reached, then requests are served (fail open) and none is a 5xx', async () => {
    const server = await startServer({ rateLimit: settings({ anonymousPoints: 2, redisUrl: 'redis://127.0.0.1:1' }) });
    try {
      const responses = await Promise.all(Array.from({ length: 5 }, () => server.rest('GET', COLLECTIONS)));
      const graphql = await server.gql(PING);

      expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
      expect(graphql.status).toBe(200);
    } finally {
      await server.close();
    }
  });

  test('when Redis cannot be reached, then one warning is logged, not one per request', async () => {
    const server = await startServer({ rateLimit: settings({ redisUrl: 'redis://127.0.0.1:1' }) });
    const lines: string[] = [];
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => lines.push(String(chunk)) > 0);
    setLogLevel('warn');
    try {
      for (let i = 0; i < 10; i += 1) await server.rest('GET', COLLECTIONS);
    } finally {
      setLogLevel('silent');
      stderr.mockRestore();
      await server.close();
    }

    expect(lines.filter((line) => line.includes('rate limits not enforced'))).toHaveLength(1);
  });
});
