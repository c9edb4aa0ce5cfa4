import { randomUUID } from 'node:crypto';
import http from 'node:http';
import zlib from 'node:zlib';
import { openWindow, saveOffer, saveOwnedAsset } from './factories/market';
import { randomAddress, startServer, TestServer } from './setup/server';

/** Issue #17, items 5-12: what HTTP clients expect of each door. */
let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

async function raw(method: string, path: string, init: { body?: string; headers?: Record<string, string> } = {}) {
  const res = await fetch(`${server.url}${path}`, { method, body: init.body, headers: init.headers });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

describe('415 for a body of the wrong type', () => {
  const body = JSON.stringify({ contract_address: randomAddress(), chain_id: '1' });

  test('when a JSON body comes as text/plain or without a content type, then 415 names application/json', async () => {
    const { key } = await server.key();
    for (const headers of [{ 'content-type': 'text/plain' }, {}] as Record<string, string>[]) {
      const res = await raw('POST', '/v1/collections', { body, headers: { 'access-token': key, ...headers } });

      expect(res.status).toBe(415);
      expect(res.body.error).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE', message: expect.stringContaining('application/json') });
      expect(res.body.error.request_id).toBe(res.headers.get('x-request-id'));
    }
  });

  test('when POST /graphql has a text/plain body, then 415 with the code and the request id', async () => {
    const res = await raw('POST', '/graphql', { body: '{"query":"{ chains { id } }"}', headers: { 'content-type': 'text/plain' } });

    expect(res.status).toBe(415);
    expect(res.body.errors[0].extensions).toEqual({ code: 'UNSUPPORTED_MEDIA_TYPE', details: [], requestId: res.headers.get('x-request-id') });
  });

  test('when a write has no body at all, then it is not a 415 (the route says what is missing)', async () => {
    const { key } = await server.key();

    const res = await raw('POST', '/v1/offers/accept', { headers: { 'access-token': key } });

    expect(res.status).not.toBe(415);
  });
});

describe('every failing field in details', () => {
  test('when a REST body has several fields of the wrong type, then one 400 lists each, by its snake_case name, saying "got" once', async () => {
    const { key } = await server.key();

    const res = await server.rest('POST', '/v1/collections', { contract_address: 'nope', chain_id: '1', total_supply: 'many', name: 5 }, key);

    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['contract_address', 'name', 'total_supply']);
    for (const detail of res.body.error.details) expect(detail.message.match(/\bgot\b/g)?.length ?? 0).toBeLessThanOrEqual(1);
  });

  test('when a GraphQL mutation has several bad input fields, then each error names its field in details', async () => {
    const { key } = await server.key();

    const res = await server.gql(
      'mutation ($input: CreateCollectionInput!) { createCollection(input: $input) { id } }',
      { input: { contractAddress: 'nope', chainId: '1', totalSupply: 'many' } },
      key,
    );

    const fields = res.body.errors?.map((e: { extensions: { details: { field: string }[] } }) => e.extensions.details[0]?.field).sort();
    expect(fields).toEqual(['input.contractAddress', 'input.totalSupply']);
  });

  test('when a query parameter is wrong, then its message says "got" once', async () => {
    const res = await server.rest('GET', '/v1/assets?owner_id=0x12');

    expect(res.status).toBe(400);
    expect(res.body.error.message.match(/\bgot\b/g)).toHaveLength(1);
  });
});

describe('a wrong key is a 401 on every request', () => {
  test('when a read carries an unknown key, then 401 on both doors', async () => {
    const wrong = 'nftgw_notAKeyThatExistsAnywhere000000000';

    const rest = await server.rest('GET', '/v1/categories', undefined, wrong);
    const graphql = await server.gql('{ chains { id } }', {}, wrong);

    expect(rest.status).toBe(401);
    expect(rest.body.error.code).toBe('UNAUTHENTICATED');
    expect(graphql.status).toBe(401);
    expect(graphql.body.errors?.[0].extensions).toMatchObject({ code: 'UNAUTHENTICATED', requestId: graphql.headers.get('x-request-id') });
  });

  test('when a read carries a revoked key, then 401; the same read without a key is served', async () => {
    const admin = await server.key({ admin: true });
    const { key } = await server.key();
    const [{ id }] = await server.ds.query('SELECT id FROM api_keys WHERE prefix = $1 ORDER BY created_at DESC LIMIT 1', [key.slice(0, 12)]);
    const revoked = await server.gql('mutation ($id: ID!) { revokeApiKey(id: $id) { id } }', { id }, admin.key);
    expect(revoked.body.errors).toBeUndefined();

    expect((await server.rest('GET', '/v1/categories', undefined, key)).status).toBe(401);
    expect((await server.rest('GET', '/v1/categories')).status).toBe(200);
  });
});

describe('405 for a known path with another method', () => {
  test('when PATCH is sent to /v1/collections/{address}, then 405 with Allow listing GET, HEAD and PUT', async () => {
    const res = await raw('PATCH', `/v1/collections/${randomAddress()}`);

    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, PUT, HEAD');
    expect(res.body.error).toMatchObject({ code: 'METHOD_NOT_ALLOWED', message: expect.stringContaining('GET, PUT, HEAD') });
  });

  test('when an unknown path is asked, then it is still a 404', async () => {
    expect((await raw('GET', '/v1/nothing-here')).status).toBe(404);
  });
});

describe('errors made by Apollo carry the request id', () => {
  test.each([
    ['an empty body', { method: 'POST', body: '', headers: { 'content-type': 'application/json' } }],
    ['a GET without a query', { method: 'GET', headers: { 'apollo-require-preflight': 'true' } }],
    ['a batch', { method: 'POST', body: '[{"query":"{ chains { id } }"}]', headers: { 'content-type': 'application/json' } }],
    ['a GET blocked as CSRF', { method: 'GET', path: '/graphql?query=%7Bchains%7Bid%7D%7D', headers: {} }],
  ])('when /graphql gets %s, then the error body has the code and the request id', async (_what, init) => {
    const res = await raw(init.method, (init as { path?: string }).path ?? '/graphql', init);

    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.body.errors[0].extensions.requestId).toBe(res.headers.get('x-request-id'));
    expect(res.body.errors[0].extensions.code).toEqual(expect.any(String));
  });
});

describe('Location of what a create made', () => {
  test('when a collection, an asset, a listing, an offer and an order are created, then each 200 has a Location that GETs it', async () => {
    const owned = await saveOwnedAsset(server);
    const address = randomAddress();
    const collection = await server.rest('POST', '/v1/collections', { contract_address: address, chain_id: '137' }, owned.owner.key);
    const listing = await server.rest('POST', '/v1/assets/listing', { asset_id: owned.asset.id, start_price: 3 }, owned.owner.key);
    const buyer = await server.key();
    const { startTime, endTime } = openWindow();
    const offer = await server.rest('POST', '/v1/offers', { asset_id: owned.asset.id, price: 1, start_time: startTime, end_time: endTime }, buyer.key);
    const order = await server.rest('POST', '/v1/offers/accept', { offer_id: offer.body.id }, owned.owner.key);

    expect(collection.headers.get('location')).toBe(`/v1/collections/${address}?chain_id=137`);
    expect(listing.headers.get('location')).toBe(`/v1/assets/${owned.asset.tokenAddress}/${owned.asset.tokenId}?chain_id=1`);
    expect(offer.headers.get('location')).toBe(`/v1/offers/${offer.body.id}`);
    expect(order.headers.get('location')).toBe(`/v1/orders/${order.body.id}`);
    for (const res of [collection, listing, offer, order]) {
      expect(res.status).toBe(200);
      expect((await server.rest('GET', res.headers.get('location')!)).status).toBe(200);
    }
  });

  test('when a create is refused, then there is no Location', async () => {
    const owned = await saveOwnedAsset(server);
    await saveOffer(server, (await server.key()).key, owned.asset.id);

    const res = await server.rest('POST', '/v1/offers', { asset_id: randomUUID(), price: 1, ...openWindow() }, owned.owner.key);

    expect(res.status).toBe(404);
    expect(res.headers.get('location')).toBeNull();
  });
});

describe('compressed responses', () => {
  /** A GET that keeps the body as sent (fetch would decompress it): its encoding, and its bytes. */
  function getRaw(path: string, encoding: string): Promise<{ encoding: string | undefined; body: Buffer }> {
    return new Promise((resolve, reject) => {
      http
        .get(`${server.url}${path}`, { headers: { 'accept-encoding': encoding } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ encoding: res.headers['content-encoding'], body: Buffer.concat(chunks) }));
        })
        .on('error', reject);
    });
  }

  test('when a client accepts gzip or br and the body is over 1 KB, then it comes compressed, and decompresses to the same JSON', async () => {
    const owned = await saveOwnedAsset(server);
    // A collection (the resolvers' answer), and a planned page of the owner's (its items sent as rows, in
    // pieces; other files add collections of their own meanwhile).
    const paths = [`/v1/collections/${owned.collection.contractAddress}?include_assets=true`, `/v1/collections?owner_address=${owned.owner.address}&include_assets=true`];
    for (const path of paths) {
      const plain = await getRaw(path, 'identity');

      const gzip = await getRaw(path, 'gzip');
      const br = await getRaw(path, 'br');

      expect(plain.encoding).toBeUndefined();
      expect(plain.body.length).toBeGreaterThan(1024);
      expect(gzip.encoding).toBe('gzip');
      expect(br.encoding).toBe('br');
      expect(zlib.gunzipSync(gzip.body).equals(plain.body)).toBe(true);
      expect(zlib.brotliDecompressSync(br.body).equals(plain.body)).toBe(true);
      expect(gzip.body.length).toBeLessThan(plain.body.length);
    }
  });

  test('when the body is under 1 KB, then it is sent as it is', async () => {
    const res = await getRaw('/healthz', 'gzip, br');

    expect(res.encoding).toBeUndefined();
    expect(JSON.parse(res.body.toString())).toEqual({ status: 'ok' });
  });
});
