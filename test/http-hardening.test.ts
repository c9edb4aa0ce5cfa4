import http from 'node:http';
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { startServer, TestServer } from './setup/server';
import { saveCollection } from './factories/marketplace';
import { buildCsv, csvRecords, IMPORT_ASSETS } from './factories/csv';

const COLLECTIONS = '/v1/collections?limit=1';
const CHAINS = '{ chains { id } }';
const APOLLO_ACCEPT = 'application/graphql-response+json, application/json';

interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: any;
}

/**
 * A request whose body is sent only in part: the headers announce `length` bytes, `sent` goes out, and
 * nothing more. Resolves with the server's answer (the request is never finished by the client).
 */
function partialRequest(url: string, path: string, headers: http.OutgoingHttpHeaders, length: number, sent: string | Buffer): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}${path}`, { method: 'POST', agent: false, headers: { ...headers, 'content-length': String(length) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON: kept as text
        }
        resolve({ status: res.statusCode!, headers: res.headers, body });
        req.destroy();
      });
    });
    // The server closes the connection after answering: the unsent rest of the body is the client's to drop.
    req.on('error', (err) => (req.writableEnded ? undefined : reject(err)));
    req.write(sent);
  });
}

const MULTIPART = 'multipart/form-data; boundary=----hardening';
/** The start of a multipart import body: the collection field, then the head of the file part. */
function multipartHead(collectionId: string): string {
  return (
    `------hardening\r\nContent-Disposition: form-data; name="collection_id"\r\n\r\n${collectionId}\r\n` +
    `------hardening\r\nContent-Disposition: form-data; name="file"; filename="assets.csv"\r\nContent-Type: text/csv\r\n\r\n` +
    'name,description,image_url,animation_url,external_link,metadata,owner\n'
  );
}

describe('GET /metrics', () => {
  test('when METRICS_TOKEN is set, then /metrics answers only a request that carries it as a bearer token', async () => {
    const token = randomUUID();
    const server = await startServer({ metricsToken: token });
    try {
      const none = await fetch(`${server.url}/metrics`);
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(((await none.json()) as { error: { code: string } }).error.code).toBe('UNAUTHENTICATED');
      const wrong = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${token}x` } });
      expect(wrong.status).toBe(401);
      const asKey = await fetch(`${server.url}/metrics`, { headers: { 'access-token': token } });
      expect(asKey.status).toBe(401);
      const right = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
      expect(right.status).toBe(200);
      expect(await right.text()).toContain('gateway_http_requests_total');
    } finally {
      await server.close();
    }
  });

  test('when METRICS_TOKEN is not set, then /metrics is open as before', async () => {
    const server = await startServer();
    try {
      const res = await fetch(`${server.url}/metrics`);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('gateway_http_requests_total');
    } finally {
      await server.close();
    }
  });
});

describe('response headers', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', accept: APOLLO_ACCEPT, ...headers }, body: JSON.stringify(body) });

  test('when any response is sent, through either door or neither, then it carries X-Content-Type-Options: nosniff', async () => {
    const { key } = await server.key();
    const answers = {
      restLean: await fetch(`${server.url}${COLLECTIONS}`),
      restKeyed: await fetch(`${server.url}${COLLECTIONS}`, { headers: { 'access-token': key } }),
      graphqlFirst: await post({ query: CHAINS }),
      // The second time, the lean door answers the known query itself.
      graphqlLean: await post({ query: CHAINS }),
      graphqlError: await post({ query: '{ nope }' }),
      restError: await fetch(`${server.url}/v1/collections?limit=0`),
      unknownPath: await fetch(`${server.url}/nowhere`),
      health: await fetch(`${server.url}/healthz`),
      badKey: await fetch(`${server.url}${COLLECTIONS}`, { headers: { 'access-token': 'nftgw_not-a-key' } }),
    };
    const statuses = Object.fromEntries(Object.entries(answers).map(([name, res]) => [name, [res.status, res.headers.get('x-content-type-options')]]));
    expect(statuses).toEqual({
      restLean: [200, 'nosniff'],
      restKeyed: [200, 'nosniff'],
      graphqlFirst: [200, 'nosniff'],
      graphqlLean: [200, 'nosniff'],
      graphqlError: [400, 'nosniff'],
      restError: [400, 'nosniff'],
      unknownPath: [404, 'nosniff'],
      health: [200, 'nosniff'],
      badKey: [401, 'nosniff'],
    });
  });

  test('when a request carries an API key, then its answer is Cache-Control: no-store on both doors; an anonymous read is not', async () => {
    const { key } = await server.key();
    const keyed = {
      rest: await fetch(`${server.url}${COLLECTIONS}`, { headers: { 'access-token': key } }),
      restBearer: await fetch(`${server.url}${COLLECTIONS}`, { headers: { authorization: `Bearer ${key}` } }),
      graphql: await post({ query: '{ categories(limit: 1) { remaining } }' }, { 'access-token': key }),
      graphqlLean: await post({ query: '{ categories(limit: 1) { remaining } }' }, { 'access-token': key }),
      write: await fetch(`${server.url}/v1/collections`, { method: 'POST', headers: { 'content-type': 'application/json', 'access-token': key }, body: '{}' }),
      refused: await fetch(`${server.url}${COLLECTIONS}`, { headers: { 'access-token': 'nftgw_not-a-key' } }),
    };
    const anonymous = { rest: await fetch(`${server.url}${COLLECTIONS}`), graphql: await post({ query: CHAINS }) };
    expect(Object.fromEntries(Object.entries(keyed).map(([name, res]) => [name, res.headers.get('cache-control')]))).toEqual({
      rest: 'no-store',
      restBearer: 'no-store',
      graphql: 'no-store',
      graphqlLean: 'no-store',
      write: 'no-store',
      refused: 'no-store',
    });
    expect(Object.fromEntries(Object.entries(anonymous).map(([name, res]) => [name, res.headers.get('cache-control')]))).toEqual({ rest: null, graphql: null });
  });
});

describe('imports without a valid key', () => {
  let server: TestServer;
  let collectionId: string;
  const LARGE = 20 * 1024 * 1024;
  beforeAll(async () => {
    server = await startServer();
    const { key } = await server.key();
    collectionId = (await saveCollection(server, key)).id;
  });
  afterAll(() => server.close());

  test('when an anonymous client starts a 20 MB multipart upload on /v1, then it is told 401 before it sends the rest', async () => {
    const answer = await partialRequest(server.url, '/v1/assets/import', { 'content-type': MULTIPART }, LARGE, multipartHead(collectionId));
    expect(answer.status).toBe(401);
    expect(answer.body.error.code).toBe('UNAUTHENTICATED');
    expect(answer.headers.connection).toBe('close');
  });

  test('when an anonymous client starts a 20 MB form-urlencoded import, then it is told 401 before it sends the rest', async () => {
    const answer = await partialRequest(server.url, '/v1/assets/import', { 'content-type': 'application/x-www-form-urlencoded' }, LARGE, `collection_id=${collectionId}&file=name%2C`);
    expect(answer.status).toBe(401);
    expect(answer.body.error.code).toBe('UNAUTHENTICATED');
  });

  test('when an unknown key starts a 20 MB upload through GraphQL multipart, then it is told 401 before it sends the rest', async () => {
    const operations = JSON.stringify({ query: IMPORT_ASSETS, variables: { collectionId, file: null } });
    const head =
      `------hardening\r\nContent-Disposition: form-data; name="operations"\r\n\r\n${operations}\r\n` +
      `------hardening\r\nContent-Disposition: form-data; name="map"\r\n\r\n{"0":["variables.file"]}\r\n` +
      `------hardening\r\nContent-Disposition: form-data; name="0"; filename="assets.csv"\r\nContent-Type: text/csv\r\n\r\nname,description\n`;
    const anonymous = await partialRequest(server.url, '/graphql', { 'content-type': MULTIPART, 'apollo-require-preflight': 'true' }, LARGE, head);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    const unknown = await partialRequest(server.url, '/graphql', { 'content-type': MULTIPART, 'apollo-require-preflight': 'true', 'access-token': 'nftgw_not-a-key' }, LARGE, head);
    expect(unknown.status).toBe(401);
    expect(unknown.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
  });
});

describe('WebSocket upgrades and the rate limit', () => {
  test('when an address is at its limit, then its WebSocket upgrade is refused with 429 before the upgrade, and an upgrade spends a token', async () => {
    const server = await startServer({ rateLimit: { keyedPoints: 5, anonymousPoints: 3, durationS: 600, redisUrl: undefined, redisPrefix: `test:${randomUUID()}` } });
    const url = `${server.url.replace('http', 'ws')}/graphql`;
    const upgrade = () =>
      new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string; socket?: WebSocket }>((resolve, reject) => {
        const socket = new WebSocket(url, 'graphql-transport-ws');
        socket.once('open', () => resolve({ status: 101, headers: {}, body: '', socket }));
        socket.once('unexpected-response', (_req, res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        });
        socket.once('error', (err) => (socket.readyState === WebSocket.CLOSED ? undefined : reject(err)));
      });
    try {
      const first = await upgrade();
      expect(first.status).toBe(101);
      first.socket!.close();
      // The upgrade took one of the 3 tokens: two requests are left.
      expect((await server.rest('GET', COLLECTIONS)).headers.get('ratelimit-remaining')).toBe('1');
      expect((await server.rest('GET', COLLECTIONS)).status).toBe(200);
      expect((await server.rest('GET', COLLECTIONS)).status).toBe(429);
      const refused = await upgrade();
      expect(refused.status).toBe(429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(JSON.parse(refused.body).errors[0].extensions.code).toBe('RATE_LIMITED');
    } finally {
      await server.close();
    }
  });
});

describe('request bodies that stall', () => {
  let server: TestServer;
  let key: string;
  let collectionId: string;
  const STALL_MS = 400;
  beforeAll(async () => {
    server = await startServer({ requestBodyTimeoutMs: STALL_MS });
    ({ key } = await server.key());
    collectionId = (await saveCollection(server, key)).id;
  });
  afterAll(() => server.close());

  test('when a GraphQL body stops half-way, then the request is ended with 408 and the server keeps serving', async () => {
    const started = Date.now();
    const answer = await partialRequest(server.url, '/graphql', { 'content-type': 'application/json' }, 200, '{"query": "{ chains');
    expect(answer.status).toBe(408);
    expect(answer.body.errors[0].extensions.code).toBe('REQUEST_TIMEOUT');
    expect(answer.headers.connection).toBe('close');
    expect(Date.now() - started).toBeLessThan(STALL_MS * 5);
    expect((await server.gql(CHAINS)).status).toBe(200);
  });

  test('when a REST write body stops half-way, then it is 408 in the REST shape', async () => {
    const answer = await partialRequest(server.url, '/v1/collections', { 'content-type': 'application/json', 'access-token': key }, 500, '{"name": "stalled');
    expect(answer.status).toBe(408);
    expect(answer.body.error.code).toBe('REQUEST_TIMEOUT');
    expect((await server.rest('GET', COLLECTIONS)).status).toBe(200);
  });

  test('when an import upload stops half-way, then it is 408 and nothing of it is written', async () => {
    const { address } = await server.key();
    const rows = buildCsv(csvRecords(address, 50)).split('\n').slice(1).join('\n');
    const answer = await partialRequest(server.url, '/v1/assets/import', { 'content-type': MULTIPART, 'access-token': key }, 1024 * 1024, multipartHead(collectionId) + rows);
    expect(answer.status).toBe(408);
    expect(answer.body.error.code).toBe('REQUEST_TIMEOUT');
    const [{ n }] = await server.ds.query('SELECT count(*)::int AS n FROM assets WHERE collection_id = $1', [collectionId]);
    expect(n).toBe(0);
    expect((await server.rest('GET', COLLECTIONS)).status).toBe(200);
  });

  test('when a body arrives slowly but steadily, then it is read to its end', async () => {
    const body = JSON.stringify({ query: CHAINS });
    const answer = await new Promise<number>((resolve, reject) => {
      const req = http.request(`${server.url}/graphql`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': String(body.length) } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      });
      req.on('error', reject);
      // One byte every STALL_MS / 2: never silent for STALL_MS, longer than STALL_MS in all.
      const pieces = [body.slice(0, 4), body.slice(4, 8), body.slice(8)];
      pieces.forEach((piece, i) => setTimeout(() => (i === pieces.length - 1 ? req.end(piece) : req.write(piece)), (i * STALL_MS) / 2));
    });
    expect(answer).toBe(200);
  });
});
