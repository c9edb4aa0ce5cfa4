import { createHash } from 'node:crypto';
import { startServer, TestServer } from './setup/server';

const TRUSTED = 'https://shop.example';
let server: TestServer;
beforeAll(async () => {
  server = await startServer({ corsOrigins: [TRUSTED] });
});
afterAll(() => server.close());

function preflight(path: string, origin: string, method: string, headers: string) {
  return fetch(`${server.url}${path}`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
  });
}

const allowed = (res: Response) => (res.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(',');

describe('CORS', () => {
  test('when a page of any origin asks to POST a GraphQL query, then the preflight allows it, without credentials', async () => {
    const res = await preflight('/graphql', 'https://anywhere.example', 'POST', 'content-type');

    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(allowed(res)).toContain('content-type');
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
  });

  test('when a page of an origin not in CORS_ORIGINS asks to send an API key, then the preflight does not allow the header', async () => {
    const res = await preflight('/v1/collections', 'https://anywhere.example', 'POST', 'content-type,access-token');

    expect(allowed(res)).not.toContain('access-token');
    expect(res.headers.get('access-control-allow-methods')).not.toContain('DELETE');
  });

  test('when a page of a trusted origin asks to write with a key, then the preflight allows its origin, the key header and the method', async () => {
    const res = await preflight('/v1/offers/some-id', TRUSTED, 'DELETE', 'access-token,idempotency-key');

    expect(res.headers.get('access-control-allow-origin')).toBe(TRUSTED);
    expect(res.headers.get('vary')).toContain('Origin');
    expect(allowed(res)).toEqual(expect.arrayContaining(['access-token', 'idempotency-key']));
    expect(res.headers.get('access-control-allow-methods')).toContain('DELETE');
  });

  test('when any origin reads, then the response allows it and exposes the request id', async () => {
    const res = await fetch(`${server.url}/v1/categories?limit=1`, { headers: { origin: 'https://anywhere.example' } });

    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-expose-headers')?.toLowerCase()).toContain('x-request-id');
  });
});

describe('automatic persisted queries', () => {
  const query = '{ chains { id name } }';
  const extensions = { persistedQuery: { version: 1, sha256Hash: createHash('sha256').update(query).digest('hex') } };
  const post = (body: object) =>
    fetch(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(
      async (res) => ({ status: res.status, body: (await res.json()) as any }),
    );

  test('when a client sends only the hash of a query the server has not seen, then it is told so, and after one full request the hash alone works', async () => {
    const unknown = await post({ extensions });
    const registered = await post({ query, extensions });
    const byHash = await post({ extensions });
    const byGet = await fetch(`${server.url}/graphql?extensions=${encodeURIComponent(JSON.stringify(extensions))}`, {
      headers: { 'apollo-require-preflight': 'true' },
    }).then((res) => res.json() as Promise<any>);

    expect(unknown.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    expect(registered.body.data.chains.length).toBeGreaterThan(0);
    expect(byHash.body).toEqual(registered.body);
    expect(byGet).toEqual(registered.body);
  });

  test('when the hash does not match the query sent with it, then 400 and nothing is stored under it', async () => {
    const wrong = { persistedQuery: { version: 1, sha256Hash: 'ab'.repeat(32) } };

    const res = await post({ query, extensions: wrong });

    expect(res.status).toBe(400);
    expect((await post({ extensions: wrong })).body.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
  });
});
