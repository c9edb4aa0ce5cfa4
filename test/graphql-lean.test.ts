import http from 'node:http';
import { startServer, TestServer } from './setup/server';
import { saveAsset, saveCollection } from './factories/marketplace';

/**
 * A query document that Apollo has validated and graphql-jit compiled runs without Apollo's pipeline
 * from its third use on (src/app/graphql/known.ts, src/app/entry/door.ts). The client must not be able to tell: these tests send
 * the same document many times and hold every answer to the first ones.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

async function post(body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

describe('compiled queries on the lean path', () => {
  test('when the same query is sent again and again, then every answer has the same body, status and headers', async () => {
    const { key, address } = await server.key();
    const collection = await saveCollection(server, key);
    await saveAsset(server, key, collection, address);
    const body = {
      query: `query Lean($a: Address!, $t: TokenId!) { asset(tokenAddress: $a, tokenId: $t) { name owner collection { name } } }`,
      variables: { a: collection.contractAddress, t: '1' },
      operationName: 'Lean',
    };
    const answers = [];
    for (let i = 0; i < 5; i += 1) answers.push(await post(body));
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.text).toBe(answers[0].text);
      expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(answer.headers.get('x-sql-statements')).toBe('1');
      expect(answer.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect(JSON.parse(answers[0].text).data.asset.owner).toBe(address);
    expect(answers[0].text.endsWith('}\n')).toBe(true);
  });

  test('when a known query gets variables that fail, then the error is the one Apollo gives, with the request id, and counts only its own statements', async () => {
    const query = `query ($limit: Int!) { collections(limit: $limit) { result { name } } }`;
    for (let i = 0; i < 3; i += 1) expect((await post({ query, variables: { limit: 1 } })).status).toBe(200);
    const res = await post({ query, variables: { limit: 0 } }, { 'x-request-id': 'lean-test-request-0001' });
    const body = JSON.parse(res.text);
    expect(body.errors[0].extensions).toMatchObject({ code: 'BAD_REQUEST', requestId: 'lean-test-request-0001' });
    // A limit out of range refuses the operation before it runs, as a variable that does not coerce: no data.
    expect(res.status).toBe(400);
    expect(body.data).toBeUndefined();
    expect(res.headers.get('x-sql-statements')).toBe('0');
    const wrongType = JSON.parse((await post({ query, variables: { limit: 'many' } })).text);
    expect(wrongType.errors[0].extensions.code).toBe('BAD_REQUEST');
    expect(wrongType.data).toBeUndefined();
  });

  test('when a known query comes with an unknown API key, then it is refused as before (401)', async () => {
    const query = `{ collections(limit: 1) { result { name } } }`;
    for (let i = 0; i < 3; i += 1) expect((await post({ query })).status).toBe(200);
    const res = await post({ query }, { 'access-token': 'not-a-key-at-all' });
    expect(res.status).toBe(401);
    expect(JSON.parse(res.text).errors[0].extensions.code).toBe('UNAUTHENTICATED');
  });

  test('when a known query asks for application/graphql-response+json, then it gets that media type', async () => {
    const query = `{ collections(limit: 2) { result { name } } }`;
    for (let i = 0; i < 3; i += 1) expect((await post({ query })).status).toBe(200);
    const res = await post({ query }, { accept: 'application/graphql-response+json' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/graphql-response+json');
  });
});

/**
 * The lean door (lean.ts's leanDoor): in front of express, on node:http, a known query is answered
 * without express. A client must not be able to tell which of the two answered.
 */
describe('the lean door in front of express', () => {
  const VOLATILE = new Set(['date', 'x-request-id', 'ratelimit-remaining', 'ratelimit-reset', 'keep-alive', 'connection']);
  const headersOf = (headers: Headers) => Object.fromEntries([...headers].filter(([name]) => !VOLATILE.has(name)));

  async function postRaw(url: string, body: string, headers: Record<string, string> = {}) {
    const res = await fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    return { status: res.status, headers: res.headers, text: await res.text() };
  }

  test('when a known query is answered by the door, then its headers and body are those express and Apollo gave the first time', async () => {
    const limited = await startServer({ rateLimit: { keyedPoints: 1000, anonymousPoints: 1000, durationS: 3600, redisUrl: undefined, redisPrefix: `lean-door-${Date.now()}` } });
    try {
      // Only this test's own collections: other test files write to the same database meanwhile.
      const { key, address } = await limited.key();
      await saveCollection(limited, key);
      await saveCollection(limited, key);
      const body = JSON.stringify({ query: `query ($o: Address!) { collections(ownerAddress: $o, limit: 2) { result { name } } }`, variables: { o: address } });
      const answers = [];
      for (let i = 0; i < 4; i += 1) answers.push(await postRaw(limited.url, body, { 'x-request-id': `lean-door-${i}-abcdef` }));
      for (const [i, answer] of answers.entries()) {
        expect(answer.status).toBe(200);
        expect(answer.text).toBe(answers[0].text);
        expect(headersOf(answer.headers)).toEqual(headersOf(answers[0].headers));
        expect(answer.headers.get('x-request-id')).toBe(`lean-door-${i}-abcdef`);
      }
      // 998: the key's first request (saveCollection), a key not yet known valid, spent one of the address's tokens too.
      expect(answers.map((a) => Number(a.headers.get('ratelimit-remaining')))).toEqual([998, 997, 996, 995]);
      expect(headersOf(answers[3].headers)).toMatchObject({ 'access-control-allow-origin': '*', etag: expect.stringMatching(/^W\//), 'x-sql-statements': '1' });
    } finally {
      await limited.close();
    }
  });

  test('when the client accepts gzip and the answer is over 1 KB, then the door compresses it as express does', async () => {
    const { key, address } = await server.key();
    const collection = await saveCollection(server, key);
    for (let i = 0; i < 12; i += 1) await saveAsset(server, key, collection, address, { description: 'x'.repeat(100) });
    const body = JSON.stringify({ query: `query ($c: String!) { assets(collectionId: $c, limit: 12) { result { name description owner } } }`, variables: { c: collection.id } });
    const answers = [];
    for (let i = 0; i < 4; i += 1) answers.push(await postRaw(server.url, body, { 'accept-encoding': 'gzip' }));
    for (const answer of answers) {
      expect(answer.headers.get('content-encoding')).toBe('gzip');
      expect(answer.headers.get('vary')).toBe('Accept-Encoding');
      expect(answer.text).toBe(answers[0].text);
    }
    expect(Buffer.byteLength(answers[0].text)).toBeGreaterThan(1024);
  });

  test('when the body the door read is not JSON, or not an object, then express refuses it with its own 400 and the request id', async () => {
    for (const bad of ['{"query": "{ collections { result { name } } }"', '"just a string"', '{"query": 1}x']) {
      const res = await postRaw(server.url, bad, { 'x-request-id': 'lean-door-bad-json-1' });
      expect(res.status).toBe(400);
      const parsed = JSON.parse(res.text);
      expect(parsed.errors[0].extensions).toMatchObject({ code: 'BAD_REQUEST', requestId: 'lean-door-bad-json-1' });
      expect(parsed.errors[0].message).toBe('the request body is not valid JSON');
    }
  });

  test.each([
    ['in memory', undefined],
    ['in Redis', 'redis://127.0.0.1:6379'],
  ])('when requests pass the door to express, then each takes one token of the rate limit (%s), and the 429 is the same', async (_where, redisUrl) => {
    const limited = await startServer({ rateLimit: { keyedPoints: 100, anonymousPoints: 6, durationS: 3600, redisUrl, redisPrefix: `lean-door-rl-${Date.now()}` } });
    try {
      // Until Redis is connected, requests pass without a limit (fail open) and take no token.
      for (let i = 0; i < 100 && !(await postRaw(limited.url, '{"query":"{ __typename }"}')).headers.get('ratelimit-remaining'); i += 1) {
        await new Promise((r) => setTimeout(r, 50));
      }
      const known = JSON.stringify({ query: `{ collections(limit: 3) { result { name } } }` });
      const remaining = [];
      // The first two go to Apollo (unknown, then compiled), the rest through the door.
      for (let i = 0; i < 5; i += 1) remaining.push(Number((await postRaw(limited.url, known)).headers.get('ratelimit-remaining')));
      expect(remaining).toEqual([4, 3, 2, 1, 0]);
      const refused = await postRaw(limited.url, known);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(JSON.parse(refused.text).errors[0].extensions.code).toBe('RATE_LIMITED');
    } finally {
      await limited.close();
    }
  });

  test('when the door answers, then the request has its log metrics like any other', async () => {
    const query = `query LeanDoorCounted { collections(limit: 1) { result { name } } }`;
    const count = async () => {
      const text = await (await fetch(`${server.url}/metrics`)).text();
      const line = text.split('\n').find((l) => l.startsWith('gateway_http_requests_total{') && l.includes('route="LeanDoorCounted"') && l.includes('status="200"'));
      return line ? Number(line.split(' ').pop()) : 0;
    };
    for (let i = 0; i < 6; i += 1) expect((await post({ query })).status).toBe(200);
    expect(await count()).toBe(6);
  });

  test('when many known queries run in parallel through the door, then each gets its own request id, answer and statement count', async () => {
    const { key, address } = await server.key();
    for (let i = 0; i < 3; i += 1) await saveCollection(server, key);
    const query = `query ($o: Address!, $limit: Int!) { collections(ownerAddress: $o, limit: $limit) { result { name } } }`;
    for (let i = 0; i < 3; i += 1) await post({ query, variables: { o: address, limit: 1 } });
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => postRaw(server.url, JSON.stringify({ query, variables: { o: address, limit: (i % 3) + 1 } }), { 'x-request-id': `lean-door-par-${i}-xyz` })),
    );
    answers.forEach((answer, i) => {
      expect(answer.status).toBe(200);
      expect(answer.headers.get('x-request-id')).toBe(`lean-door-par-${i}-xyz`);
      expect(answer.headers.get('x-sql-statements')).toBe('1');
      expect(JSON.parse(answer.text).data.collections.result).toHaveLength((i % 3) + 1);
    });
  });
});


describe('the lean door: GET routes of /v1', () => {
  const VOLATILE = new Set(['date', 'x-request-id', 'ratelimit-remaining', 'ratelimit-reset', 'keep-alive', 'connection', 'etag']);
  const headersOf = (headers: Headers) => Object.fromEntries([...headers].filter(([name]) => !VOLATILE.has(name)));
  /** A GET by node:http, which sends no Accept-Encoding (fetch asks for gzip), with the body's bytes. */
  const rawGet = (path: string, headers: Record<string, string>) =>
    new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      http.get(`${server.url}${path}`, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      }).on('error', reject);
    });

  test('when a GET route is answered by the door, then body and headers are those express gives (a conditional request goes to express)', async () => {
    const { key, address } = await server.key();
    const collection = await saveCollection(server, key);
    await saveAsset(server, key, collection, address);
    await saveAsset(server, key, collection, address);
    const paths = [
      `/v1/collections?owner_address=${address}&include_assets=true`,
      `/v1/assets?collection_id=${collection.id}&order_by=token_id&direction=asc&limit=50`,
      `/v1/assets/${collection.contractAddress}/1`,
      `/v1/assets/${collection.contractAddress.toUpperCase().replace('0X', '0x')}/2`,
      `/v1/collections/${collection.contractAddress}`,
    ];
    for (const path of paths) {
      const door = await fetch(`${server.url}${path}`);
      // If-None-Match keeps the request away from the door; express answers it in full (no ETag matches).
      const express = await fetch(`${server.url}${path}`, { headers: { 'if-none-match': '"no-such-etag"' } });
      const doorText = await door.text();
      expect(door.status).toBe(200);
      expect(doorText).toBe(await express.text());
      expect(headersOf(door.headers)).toEqual(headersOf(express.headers));
      expect(door.headers.get('etag')).toBe(express.headers.get('etag'));
    }
    // A conditional GET with the answer's own ETag: 304 from express, as before.
    const first = await fetch(`${server.url}${paths[2]}`);
    await first.text();
    // (node:http, not fetch: fetch adds Cache-Control: no-cache to a request with If-None-Match.)
    const status = await new Promise<number>((resolve, reject) => {
      http.get(`${server.url}${paths[2]}`, { headers: { 'if-none-match': first.headers.get('etag')! } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      }).on('error', reject);
    });
    expect(status).toBe(304);
  });

  test('when a GET answer is large (its head written first) and the client asks no encoding, then bytes and headers are those express gives', async () => {
    const { key, address } = await server.key();
    const collection = await saveCollection(server, key);
    for (let i = 0; i < 4; i += 1) await saveAsset(server, key, collection, address, { description: `${i}`.repeat(30_000) });
    const path = `/v1/assets?collection_id=${collection.id}&limit=10`;
    // node:http sends no Accept-Encoding (fetch asks for gzip): the door writes the head, then the body.
    const door = await rawGet(path, {});
    const express = await rawGet(path, { 'if-none-match': '"no-such-etag"' });
    expect(door.status).toBe(200);
    expect(door.body.length).toBeGreaterThan(120_000);
    expect(door.body.equals(express.body)).toBe(true);
    expect(Number(door.headers['content-length'])).toBe(door.body.length);
    const plain = (h: http.IncomingHttpHeaders) => Object.fromEntries(Object.entries(h).filter(([name]) => !VOLATILE.has(name) || name === 'etag'));
    expect(plain(door.headers)).toEqual(plain(express.headers));
    expect(door.headers['x-sql-statements']).toBe('1');
  });

  test('when a planned page is written item by item with multi-byte text, then bytes, length and ETag are those express gives; an empty page too', async () => {
    const { key, address } = await server.key();
    const collection = await saveCollection(server, key, { name: 'Bäume 🌳 «un»' });
    for (let i = 0; i < 3; i += 1) await saveAsset(server, key, collection, address, { name: `Blatt ${i} — ☘`, description: `ü${i}😀`.repeat(8_000) });
    const nobody = '0x00000000000000000000000000000000000000ff';
    for (const path of [`/v1/collections?owner_address=${address}&include_assets=true`, `/v1/assets?collection_id=${collection.id}&limit=2`, `/v1/collections?owner_address=${nobody}`]) {
      const door = await rawGet(path, {});
      const express = await rawGet(path, { 'if-none-match': '"no-such-etag"' });
      expect(door.status).toBe(200);
      expect(door.body.equals(express.body)).toBe(true);
      expect(Number(door.headers['content-length'])).toBe(door.body.length);
      expect(door.headers.etag).toBe(express.headers.etag);
      expect(door.headers['x-sql-statements']).toBe('1');
      const page = JSON.parse(door.body.toString('utf8'));
      if (path.includes(nobody)) expect(page).toEqual({ cursor: null, remaining: 0, result: [] });
      else expect(page.result.length).toBeGreaterThan(0);
    }
  });

  test('when a GET route meets an error at the door, then express answers it, with one log line and the same request id', async () => {
    const missing = await fetch(`${server.url}/v1/assets/0x${'ab'.repeat(20)}/123456789`, { headers: { 'x-request-id': 'lean-door-rest-404-a' } });
    expect(missing.status).toBe(404);
    const body = (await missing.json()) as { error: { code: string; request_id: string } };
    expect(body.error).toMatchObject({ code: 'NOT_FOUND', request_id: 'lean-door-rest-404-a' });
    const bad = await fetch(`${server.url}/v1/assets?limit=0`, { headers: { 'x-request-id': 'lean-door-rest-400-a' } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { request_id: string } }).error.request_id).toBe('lean-door-rest-400-a');
    const count = async (status: string) => {
      const text = await (await fetch(`${server.url}/metrics`)).text();
      const line = text.split('\n').find((l) => l.startsWith('gateway_http_requests_total{') && l.includes('route="/v1/assets/:token_address/:token_id"') && l.includes(`status="${status}"`));
      return line ? Number(line.split(' ').pop()) : 0;
    };
    const before = await count('404');
    await (await fetch(`${server.url}/v1/assets/0x${'ab'.repeat(20)}/1234567891`)).text();
    expect(await count('404')).toBe(before + 1);
  });
});
