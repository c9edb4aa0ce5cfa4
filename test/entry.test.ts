import { randomUUID } from 'node:crypto';
import type { RateLimitSettings } from '../src/config';
import { startServer, TestServer } from './setup/server';

/**
 * The steps the entry takes before any road (entry/door.ts, entry/paths.ts): CORS and its preflights, the
 * rate limit and which paths are outside it, and the scope's x-min-lsn; answered alike whichever road
 * (the lean door or express) would have answered the request.
 */

const TRUSTED = 'https://shop.example';
const PING = JSON.stringify({ query: '{ chains { id } }' });
const EXPOSED = 'x-request-id,x-sql-statements,location,retry-after,ratelimit-limit,ratelimit-remaining,ratelimit-reset';
/** Headers that differ between any two answers, or are Node's own. */
const VOLATILE = new Set(['date', 'connection', 'keep-alive', 'x-request-id', 'ratelimit-reset', 'retry-after', 'etag']);
const headersOf = (res: Response) => Object.fromEntries([...res.headers].filter(([name]) => !VOLATILE.has(name)));

function limit(anonymousPoints: number): RateLimitSettings {
  return { keyedPoints: 100, anonymousPoints, durationS: 600, redisUrl: undefined, redisPrefix: `test:${randomUUID()}` };
}

/** Requests of a door the lean door has answered (gateway_request_roads_total, entry="lean"). */
async function leanRoads(server: TestServer, door: 'graphql' | 'rest' = 'graphql'): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  let sum = 0;
  for (const [, value] of text.matchAll(new RegExp(`^gateway_request_roads_total\\{door="${door}",entry="lean",executor="[\\w-]+"\\} (\\d+)`, 'gm'))) sum += Number(value);
  return sum;
}

describe('CORS at the entry', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ corsOrigins: [TRUSTED], rateLimit: limit(1000) });
  });
  afterAll(() => server.close());

  const preflight = (path: string, origin: string) =>
    fetch(`${server.url}${path}`, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,access-token' },
    });

  test('when a trusted origin sends a preflight to /graphql or /v1, then both get the same 204 with its own headers and no rate limit', async () => {
    for (const path of ['/graphql', '/v1/collections']) {
      const res = await preflight(path, TRUSTED);

      expect({ path, status: res.status, body: await res.text() }).toEqual({ path, status: 204, body: '' });
      expect(headersOf(res)).toEqual({
        'access-control-allow-origin': TRUSTED,
        vary: 'Origin',
        'access-control-allow-methods': 'GET,HEAD,POST,PUT,DELETE',
        'access-control-allow-headers': 'content-type,apollo-require-preflight,x-apollo-operation-name,x-request-id,access-token,authorization,idempotency-key',
        'access-control-max-age': '600',
        'access-control-expose-headers': EXPOSED,
        'content-length': '0',
        'x-content-type-options': 'nosniff',
      });
      expect(res.headers.get('x-request-id')).toBeTruthy();
    }
  });

  test('when any other origin sends a preflight, then it may read only: GET, HEAD and POST with the read headers', async () => {
    for (const path of ['/graphql', '/v1/offers/some-id', '/healthz']) {
      const res = await preflight(path, 'https://anywhere.example');

      expect(res.status).toBe(204);
      expect(headersOf(res)).toEqual({
        'access-control-allow-origin': '*',
        'access-control-allow-methods': 'GET,HEAD,POST',
        'access-control-allow-headers': 'content-type,apollo-require-preflight,x-apollo-operation-name,x-request-id',
        'access-control-max-age': '600',
        'access-control-expose-headers': EXPOSED,
        'content-length': '0',
        'x-content-type-options': 'nosniff',
      });
    }
  });

  test('when a trusted origin reads through GraphQL and REST, then the answers name it and vary by Origin and Accept-Encoding', async () => {
    const answers = [
      await fetch(`${server.url}/graphql`, { method: 'POST', headers: { origin: TRUSTED, 'content-type': 'application/json' }, body: PING }),
      await fetch(`${server.url}/v1/chains`, { headers: { origin: TRUSTED } }),
      await fetch(`${server.url}/healthz`, { headers: { origin: TRUSTED } }),
    ];

    for (const res of answers) {
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe(TRUSTED);
      expect(res.headers.get('vary')).toBe('Origin, Accept-Encoding');
      expect(res.headers.get('access-control-expose-headers')).toBe(EXPOSED);
    }
  });

  test('when a request has no Origin or an untrusted one, then its answer allows any origin and varies by Accept-Encoding only', async () => {
    const answers = [
      await fetch(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: PING }),
      await fetch(`${server.url}/v1/chains`, { headers: { origin: 'https://anywhere.example' } }),
      await fetch(`${server.url}/healthz`),
    ];

    for (const res of answers) {
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('vary')).toBe('Accept-Encoding');
      expect(res.headers.get('access-control-expose-headers')).toBe(EXPOSED);
    }
  });

  test('when a trusted origin posts a query the server knows, then the lean door answers it, as it answers one without an Origin', async () => {
    const post = (headers: Record<string, string>) => fetch(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: PING });
    for (let i = 0; i < 3; i += 1) await post({});
    const before = await leanRoads(server);

    const trusted = await post({ origin: TRUSTED });
    const plain = await post({});

    expect((await leanRoads(server)) - before).toBe(2);
    expect(await trusted.text()).toBe(await plain.text());
  });

  test('when Prometheus reads /metrics, then the answer has no CORS headers', async () => {
    const res = await fetch(`${server.url}/metrics`, { headers: { origin: TRUSTED } });

    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('the rate limit, decided at the entry', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ rateLimit: limit(1) });
  });
  afterAll(() => server.close());

  test('when an address has spent its one request, then /graphql and /v1 answer 429 and the server\'s own pages still answer, without RateLimit headers', async () => {
    expect((await fetch(`${server.url}/v1/chains`)).status).toBe(200);

    const limited = [
      await fetch(`${server.url}/v1/chains`),
      await fetch(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: PING }),
      await fetch(`${server.url}/v1/docs/nothing-here`),
      await fetch(`${server.url}/graphql/explorer`, { method: 'POST' }),
    ];
    const own = ['/', '/healthz', '/readyz', '/metrics', '/v1/openapi.json', '/v1/docs', '/v1/docs/init.js', '/v1/docs/assets/swagger-ui.css', '/graphql/explorer', '/graphql/explorer/start.js'];
    const pages = await Promise.all(own.map(async (path) => ({ path, res: await fetch(`${server.url}${path}`) })));
    const preflights = await Promise.all(['/graphql', '/v1/chains'].map((path) => fetch(`${server.url}${path}`, { method: 'OPTIONS', headers: { origin: 'https://anywhere.example' } })));

    expect(limited.map((res) => res.status)).toEqual([429, 429, 429, 429]);
    for (const res of limited) expect(res.headers.get('ratelimit-remaining')).toBe('0');
    expect(pages.map(({ path, res }) => ({ path, status: res.status, limit: res.headers.get('ratelimit-limit') }))).toEqual(own.map((path) => ({ path, status: 200, limit: null })));
    expect(preflights.map((res) => [res.status, res.headers.get('ratelimit-limit')])).toEqual([
      [204, null],
      [204, null],
    ]);
  });
});

describe('x-min-lsn, read at the entry', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ rateLimit: limit(1000) });
  });
  afterAll(() => server.close());

  const MESSAGE = 'x-min-lsn must be a WAL position such as 0/16B3748 (from a write\'s x-min-lsn header), got "not-a-position"';
  const malformed = { 'x-min-lsn': 'not-a-position' };

  test('when x-min-lsn is malformed on /graphql, then 400 BAD_REQUEST in GraphQL\'s shape, uncounted, and nothing runs', async () => {
    const res = await fetch(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...malformed }, body: PING });
    const requestId = res.headers.get('x-request-id');

    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ errors: [{ message: MESSAGE, extensions: { code: 'BAD_REQUEST', details: [], requestId } }] });
    expect(headersOf(res)).toEqual({
      'access-control-allow-origin': '*',
      'access-control-expose-headers': EXPOSED,
      'content-length': expect.any(String),
      'content-type': 'application/json; charset=utf-8',
      'ratelimit-limit': '1000',
      'ratelimit-remaining': expect.any(String),
      vary: 'Accept-Encoding',
      'x-content-type-options': 'nosniff',
    });
  });

  test('when x-min-lsn is malformed on /v1, a read or a write, then 400 BAD_REQUEST in REST\'s shape with its statement count, 0', async () => {
    const { key } = await server.key();
    const answers = [
      await fetch(`${server.url}/v1/chains`, { headers: malformed }),
      await fetch(`${server.url}/v1/collections`, { method: 'POST', headers: { 'content-type': 'application/json', 'access-token': key, ...malformed }, body: '{}' }),
    ];

    for (const res of answers) {
      const requestId = res.headers.get('x-request-id');
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: { code: 'BAD_REQUEST', message: MESSAGE, details: [], request_id: requestId } });
      expect(res.headers.get('x-sql-statements')).toBe('0');
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(res.headers.get('ratelimit-limit')).toBe(res === answers[1] ? '100' : '1000');
    }
    expect(answers[1].headers.get('cache-control')).toBe('no-store');
  });

  test('when x-min-lsn is a WAL position, then the request is answered as without it, by the lean door on both doors', async () => {
    const post = (headers: Record<string, string>) => fetch(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: PING });
    for (let i = 0; i < 3; i += 1) await post({});
    const before = await leanRoads(server, 'graphql');
    const restBefore = await leanRoads(server, 'rest');

    const res = await post({ 'x-min-lsn': '0/0' });
    const rest = await fetch(`${server.url}/v1/chains`, { headers: { 'x-min-lsn': '0/0' } });

    expect(res.status).toBe(200);
    expect(await res.text()).toBe(await (await post({})).text());
    expect(rest.status).toBe(200);
    expect(await rest.text()).toBe(await (await fetch(`${server.url}/v1/chains`)).text());
    // The known query twice (with and without the header), the /v1 GET twice: all at the door.
    expect((await leanRoads(server, 'graphql')) - before).toBe(2);
    expect((await leanRoads(server, 'rest')) - restBefore).toBe(2);
  });
});

describe('bodies that cannot be read, answered alike on both doors whichever road reads them', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ rateLimit: limit(1000) });
  });
  afterAll(() => server.close());

  const JSON_TYPE = { 'content-type': 'application/json' };
  /** Its error as one shape, whichever door's shape it came in. */
  const errorOf = (body: { errors?: { message: string; extensions: Record<string, unknown> }[]; error?: Record<string, unknown> }) =>
    body.errors
      ? { message: body.errors[0].message, ...body.errors[0].extensions }
      : { message: body.error!.message, code: body.error!.code, details: body.error!.details, requestId: body.error!.request_id };

  test.each([
    // Up to 64 KB the lean door reads a /graphql body itself; over that, express does (as it reads every /v1 write).
    ['not JSON (on /graphql the lean door reads it)', '{"query": "{ chains { id } }"', JSON_TYPE, 400, 'BAD_REQUEST', 'the request body is not valid JSON'],
    ['not JSON and over 64 KB (express reads it on both)', `{"query": "${' '.repeat(70_000)}`, JSON_TYPE, 400, 'BAD_REQUEST', 'the request body is not valid JSON'],
    ['over the 1 MB limit', JSON.stringify({ query: '{ chains { id } }', padding: 'x'.repeat(1_100_000) }), JSON_TYPE, 413, 'PAYLOAD_TOO_LARGE', 'the request body is larger than 1024 KB'],
    ['JSON in a charset the parser does not read', '{}', { 'content-type': 'application/json; charset=latin1' }, 415, 'UNSUPPORTED_MEDIA_TYPE', 'the request body cannot be read: unsupported charset "LATIN1"'],
    ['of a type the door does not read', '{}', { 'content-type': 'text/plain' }, 415, 'UNSUPPORTED_MEDIA_TYPE', expect.stringMatching(/^POST \/(graphql|v1\/collections) reads .*application\/json.*; got "text\/plain"$/)],
  ])('when a body is %s, then /graphql and /v1 answer its status, code, message and request id alike, each in its own shape, uncounted', async (_case, body, headers, status, code, message) => {
    for (const path of ['/graphql', '/v1/collections']) {
      const requestId = `unread-body-${status}-${path.length}`;
      const res = await fetch(`${server.url}${path}`, { method: 'POST', headers: { ...headers, 'x-request-id': requestId }, body });

      expect({ path, status: res.status, type: res.headers.get('content-type'), statements: res.headers.get('x-sql-statements') }).toEqual({
        path,
        status,
        type: 'application/json; charset=utf-8',
        statements: null,
      });
      expect(errorOf((await res.json()) as Parameters<typeof errorOf>[0])).toEqual({ message, code, details: [], requestId });
      expect(res.headers.get('x-request-id')).toBe(requestId);
    }
  });
});
