import { once } from 'node:events';
import WebSocket from 'ws';
import { HttpResult, startServer, TestServer } from '../setup/server';
import { saveListing, saveOwnedAsset } from '../factories/market';
import { assetInput, saveCollection } from '../factories/marketplace';
import { buildCsv, csvRecord } from '../factories/csv';

/**
 * Issue #40: what a careful client, written from the docs alone, trips on. Each answer here is the one
 * docs/api.md and the OpenAPI document give, on both doors where the door has the operation.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

function expectRefused(res: HttpResult, status: number, code: string, field: string): void {
  expect({ status: res.status, code: res.body.error?.code }).toEqual({ status, code });
  expect(res.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
}

describe('a collection is named by its address, its UUID or its slug wherever one is named', () => {
  test('when GET /v1/collections/{x} (and /history, /depth) is given the slug or the UUID, then it answers the same collection as by address', async () => {
    const { key } = await server.key();
    const collection = await saveCollection(server, key, { name: `Cafe Creme Cats ${Math.random().toString(36).slice(2, 6)}` });
    for (const ref of [collection.contractAddress, collection.id, collection.id.toUpperCase(), collection.slug]) {
      const one = await server.rest('GET', `/v1/collections/${ref}`);
      expect({ ref, status: one.status, id: one.body.id }).toEqual({ ref, status: 200, id: collection.id });
      const history = await server.rest('GET', `/v1/collections/${ref}/history`);
      expect({ ref, status: history.status, id: history.body.id }).toEqual({ ref, status: 200, id: collection.id });
      const depth = await server.rest('GET', `/v1/collections/${ref}/depth`);
      expect({ ref, status: depth.status, id: depth.body.id }).toEqual({ ref, status: 200, id: collection.id });
    }
    const updated = await server.rest('PUT', `/v1/collections/${collection.slug}`, { description: { by: 'slug' } }, key);
    expect({ status: updated.status, id: updated.body.id, description: updated.body.description }).toEqual({ status: 200, id: collection.id, description: { by: 'slug' } });
  });

  test('when the slug or UUID names no collection, or names one on another chain than chain_id, then 404', async () => {
    const { key } = await server.key();
    const collection = await saveCollection(server, key);
    expect((await server.rest('GET', '/v1/collections/no-such-slug')).status).toBe(404);
    expect((await server.rest('GET', '/v1/collections/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await server.rest('GET', `/v1/collections/${collection.slug}?chain_id=137`)).status).toBe(404);
    expect((await server.rest('GET', `/v1/collections/${collection.slug}?chain_id=1`)).status).toBe(200);
  });

  test('when GraphQL collection(id:) is given the slug, the UUID or the address, then the same collection; address and id together are a BAD_REQUEST', async () => {
    const { key } = await server.key();
    const collection = await saveCollection(server, key);
    for (const id of [collection.slug, collection.id, collection.contractAddress]) {
      const res = await server.gql(COLLECTION_BY_ID, { id });
      expect(res.body).toEqual({ data: { collection: { id: collection.id } } });
    }
    const both = await server.gql(`query ($id: String, $address: Address) { collection(id: $id, address: $address) { id } }`, {
      id: collection.slug,
      address: collection.contractAddress,
    });
    expect(both.body.errors?.[0].extensions).toMatchObject({ code: 'BAD_REQUEST', details: [{ field: 'id' }] });
    const renamed = await server.gql(
      `mutation ($id: String!) { updateCollection(id: $id, input: { name: "Renamed by slug" }) { id name } }`,
      { id: collection.slug },
      key,
    );
    expect(renamed.body.data.updateCollection).toEqual({ id: collection.id, name: 'Renamed by slug' });
  });

  test('when the OpenAPI document describes the path, then it says the address, id or slug are taken', async () => {
    const doc = (await server.rest('GET', '/v1/openapi.json')).body;
    for (const path of ['/v1/collections/{address}', '/v1/collections/{address}/history', '/v1/collections/{address}/depth']) {
      const param = doc.paths[path].get.parameters.find((p: { name: string }) => p.name === 'address');
      expect(param.description).toMatch(/UUID, contract address or slug/);
    }
  });
});

describe('chains', () => {
  test('when GET /v1/chains, then every supported chain with its id, name and symbol (docs/chain.md points here)', async () => {
    const res = await server.rest('GET', '/v1/chains');
    expect(res.status).toBe(200);
    expect(res.body).toEqual(expect.arrayContaining([{ id: '1', name: 'Ethereum', symbol: 'ETH' }, { id: '137', name: 'Polygon', symbol: 'POL' }]));
  });

  test('when the sync of a chain no process has followed is read, then following is false and every figure null', async () => {
    const res = await server.rest('GET', '/v1/chains/43114/sync');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ chain_id: '43114', following: false, head_block: null, confirmed_block: null, lag: null, last_applied_block: null });
    const gql = await server.gql(`{ chainSync(chainId: "43114") { following confirmedBlock lag } }`);
    expect(gql.body.data.chainSync).toEqual({ following: false, confirmedBlock: null, lag: null });
  });
});

describe('a malformed id in a path is a 400 naming it, not a 404', () => {
  test.each([
    ['POST', '/v1/listings/not-a-uuid/buy', 'id'],
    ['GET', '/v1/orders/not-a-uuid', 'id'],
    ['GET', '/v1/offers/12345', 'id'],
    ['DELETE', '/v1/offers/12345', 'id'],
    ['GET', '/v1/webhooks/12345', 'id'],
  ])('when %s %s, then 400 naming %s', async (method, path, field) => {
    const { key } = await server.key();
    const res = await server.rest(method, path, method === 'POST' ? {} : undefined, key);
    expectRefused(res, 400, 'BAD_REQUEST', field);
    expect(res.body.error.message).toMatch(/id \(a UUID\), got "(not-a-uuid|12345)"/);
  });

  test('when a well-formed id names nothing, then still 404', async () => {
    const res = await server.rest('GET', '/v1/orders/00000000-0000-4000-8000-000000000000');
    expect({ status: res.status, code: res.body.error.code }).toEqual({ status: 404, code: 'NOT_FOUND' });
  });

  test('when GraphQL is given a malformed id, then BAD_REQUEST naming the argument', async () => {
    const { owner, asset } = await saveOwnedAsset(server);
    await saveListing(server, owner.key, asset.id);
    const buyer = await server.key();
    const res = await server.gql(`mutation { buyListing(listingId: "nope") { id } }`, undefined, buyer.key);
    expect(res.body.errors?.[0].extensions).toMatchObject({ code: "BAD_REQUEST", details: [{ field: "listingId" }] });
  });
});

describe('validation: one rule for each kind of mistake', () => {
  test.each([[-1], ['-1'], [0]])('when max_price is %p on buy, then 422 naming max_price, and nothing is bought', async (maxPrice) => {
    const { owner, asset } = await saveOwnedAsset(server);
    const listing = await saveListing(server, owner.key, asset.id);
    const buyer = await server.key();
    const res = await server.rest('POST', `/v1/listings/${listing.id}/buy`, { max_price: maxPrice }, buyer.key);
    expectRefused(res, 422, 'VALIDATION_FAILED', 'max_price');
    expect(res.body.error.message).toMatch(/^max_price: must be greater than 0/);
    const gql = await server.gql(`mutation ($id: ID!, $p: Price) { buyListing(listingId: $id, maxPrice: $p) { id } }`, { id: listing.id, p: maxPrice }, buyer.key);
    expect(gql.body.errors?.[0].extensions).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ field: 'maxPrice' }] });
    const [{ n }] = await server.ds.query('SELECT count(*)::int AS n FROM orders WHERE listing_id = $1', [listing.id]);
    expect(n).toBe(0);
  });

  test('when metadata is a string, then 400 naming metadata (a wrong JSON type), and nothing is written', async () => {
    const { key, address } = await server.key();
    const collection = await saveCollection(server, key);
    const input = assetInput(collection, address);
    const body = { collection_id: input.collectionId, name: input.name, description: 'd', image_url: input.imageUrl, metadata: '{}', token_address: input.tokenAddress, chain_id: '1', owner: address };
    const res = await server.rest('POST', '/v1/assets', body, key);
    expectRefused(res, 400, 'BAD_REQUEST', 'metadata');
    expect(res.body.error.message).toBe('metadata: must be a JSON object, got string "{}"');
    const [{ n }] = await server.ds.query('SELECT count(*)::int AS n FROM assets WHERE collection_id = $1', [collection.id]);
    expect(n).toBe(0);
  });

  test.each([
    ['a wrong inline type', '{ contractAddress: "0x0000000000000000000000000000000000000001", chainId: "1", name: 5 }', 'input.name'],
    ['an unknown inline field', '{ contractAddress: "0x0000000000000000000000000000000000000001", chainId: "1", colour: "red" }', 'input.colour'],
    ['a bad inline Address', '{ contractAddress: "nope", chainId: "1" }', 'input.contractAddress'],
  ])('when GraphQL createCollection is written with %s, then details name the field as with variables', async (_what, literal, field) => {
    const { key } = await server.key();
    const res = await server.gql(`mutation { createCollection(input: ${literal}) { id } }`, undefined, key);
    expect(res.body.errors?.[0].extensions).toMatchObject({ code: 'BAD_REQUEST', details: [{ field }] });
  });

  test('when a null variable fills a non-null argument, then BAD_REQUEST naming it, the same on every use (compiled and lean roads too), never INTERNAL', async () => {
    const query = 'query($v: Boolean) { collections(includeAssets: $v) { result { fees { type } } } }';
    for (let use = 1; use <= 3; use += 1) {
      const res = await server.gql(query, { v: null });
      expect({ use, status: res.status, errors: res.body.errors?.map((e: { message: string; extensions: unknown }) => ({ message: e.message, extensions: e.extensions })) }).toEqual({
        use,
        status: 400,
        errors: [
          {
            message: expect.stringMatching(/^includeAssets: must not be null/),
            extensions: expect.objectContaining({ code: 'BAD_REQUEST', details: [expect.objectContaining({ field: 'includeAssets' })] }),
          },
        ],
      });
    }
    const fine = await server.gql(query, {});
    expect(fine.body.errors).toBeUndefined();
  });

  test('when a query parameter is repeated, then 400 naming it', async () => {
    const res = await server.rest('GET', '/v1/assets?limit=5&limit=6');
    expectRefused(res, 400, 'BAD_REQUEST', 'limit');
  });

  test('when page is -1, or a cursor of another ordering, then two different messages that say which', async () => {
    const { key, address } = await server.key();
    const collection = await saveCollection(server, key);
    for (let i = 0; i < 2; i += 1) await server.gql(CREATE_ASSET, { input: assetInput(collection, address) }, key);
    const negative = await server.rest('GET', `/v1/assets?collection_id=${collection.id}&page=-1`);
    expectRefused(negative, 400, 'BAD_REQUEST', 'page');
    expect(negative.body.error.message).toMatch(/page must be a page number from 1/);
    const first = await server.rest('GET', `/v1/assets?collection_id=${collection.id}&limit=1`);
    const foreign = await server.rest('GET', `/v1/assets?collection_id=${collection.id}&limit=1&order_by=token_id&page=${first.body.cursor}`);
    expectRefused(foreign, 400, 'BAD_REQUEST', 'page');
    expect(foreign.body.error.details[0].message).toBe('cursor from a different ordering');
  });

  test('when a multipart import has two file parts, then 400 "one file" and nothing is imported', async () => {
    const { key, address } = await server.key();
    const collection = await saveCollection(server, key);
    const form = new FormData();
    form.append('collection_id', collection.id);
    form.append('file', new Blob([buildCsv([csvRecord(address)])], { type: 'text/csv' }), 'a.csv');
    form.append('file', new Blob([buildCsv([csvRecord(address, {}, 2)])], { type: 'text/csv' }), 'b.csv');
    const res = await fetch(`${server.url}/v1/assets/import`, { method: 'POST', headers: { 'access-token': key }, body: form });
    const body = (await res.json()) as { error: { code: string; details: unknown } };
    expect({ status: res.status, code: body.error.code, details: body.error.details }).toEqual({
      status: 400,
      code: 'BAD_REQUEST',
      details: [{ field: 'file', message: expect.stringContaining('one file') }],
    });
    const [{ n }] = await server.ds.query('SELECT count(*)::int AS n FROM assets WHERE collection_id = $1', [collection.id]);
    expect(n).toBe(0);
  });

  test('when one asset takes token id 2^256-1, then minting goes on at the lowest unused id, for creates and imports', async () => {
    const { key, address } = await server.key();
    const collection = await saveCollection(server, key);
    const top = ((1n << 256n) - 1n).toString();
    const minted = async () => (await server.gql(CREATE_ASSET, { input: assetInput(collection, address) }, key)).body.data?.createAsset.tokenId;
    expect(await minted()).toBe('1');
    expect((await server.gql(CREATE_ASSET, { input: assetInput(collection, address, { tokenId: top }) }, key)).body.data?.createAsset.tokenId).toBe(top);
    expect(await minted()).toBe('2');
    expect(await minted()).toBe('3');
    const imported = await fetch(`${server.url}/v1/assets/import`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'access-token': key },
      body: new URLSearchParams({ collection_id: collection.id, file: buildCsv([csvRecord(address), csvRecord(address, {}, 2)]) }).toString(),
    });
    expect(await imported.json()).toMatchObject({ data: { count: 2, first_token_id: '4', last_token_id: '5' } });
  });
});

describe('wording and defaults', () => {
  test('when PUT /v1/assets/listing/{addr}/{id} has an empty body, then 422 asking for a field, and no event is written', async () => {
    const { owner, asset, collection } = await saveOwnedAsset(server);
    await saveListing(server, owner.key, asset.id);
    const [{ n: before }] = await server.ds.query("SELECT count(*)::int AS n FROM events WHERE type = 'listing.updated'");
    const res = await server.rest('PUT', `/v1/assets/listing/${collection.contractAddress}/${asset.tokenId}`, {}, owner.key);
    expectRefused(res, 422, 'VALIDATION_FAILED', 'body');
    expect(res.body.error.message).toMatch(/give at least one field to change: start_price, accept_price/);
    const [{ n: after }] = await server.ds.query("SELECT count(*)::int AS n FROM events WHERE type = 'listing.updated'");
    expect(after).toBe(before);
  });

  test('when categories and tags are listed without a direction, then A to Z; the OpenAPI says so', async () => {
    const doc = (await server.rest('GET', '/v1/openapi.json')).body;
    for (const path of ['/v1/categories', '/v1/tags']) {
      const res = await server.rest('GET', `${path}?limit=100`);
      const names = res.body.result.map((c: { category_name: string }) => c.category_name);
      expect(names).toEqual([...names].sort((a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)));
      const direction = doc.paths[path].get.parameters.find((p: { name: string }) => p.name === 'direction');
      expect(direction.schema.default).toBeUndefined();
      expect(direction.schema.description).toMatch(/when absent, asc \(A to Z\) for order_by=name, desc for every other order/);
    }
  });

  test('when collections are sorted by name without a direction, then A to Z on both doors, first page and cursor alike; by date still newest first', async () => {
    const { key, address } = await server.key();
    const tag = Math.random().toString(36).slice(2, 6);
    for (const name of ['Mid', 'Zeta', 'Alpha']) await saveCollection(server, key, { name: `${name} ${tag}` });
    const expected = ['Alpha', 'Mid', 'Zeta'].map((name) => `${name} ${tag}`);
    const first = await server.rest('GET', `/v1/collections?owner_address=${address}&order_by=name&limit=2&include_assets=false`);
    const second = await server.rest('GET', `/v1/collections?owner_address=${address}&order_by=name&limit=2&include_assets=false&page=${encodeURIComponent(first.body.cursor)}`);
    expect([...first.body.result, ...second.body.result].map((c: { name: string }) => c.name)).toEqual(expected);
    const gqlFirst = await server.gql(COLLECTIONS_BY_NAME, { owner: address, page: null });
    const gqlSecond = await server.gql(COLLECTIONS_BY_NAME, { owner: address, page: gqlFirst.body.data.collections.cursor });
    expect([...gqlFirst.body.data.collections.result, ...gqlSecond.body.data.collections.result].map((c: { name: string }) => c.name)).toEqual(expected);
    // The cursor carries the direction it was read in: asc.
    expect(JSON.parse(Buffer.from(first.body.cursor, 'base64url').toString())[1]).toBe('asc');
    const explicit = await server.rest('GET', `/v1/collections?owner_address=${address}&order_by=name&direction=desc&include_assets=false`);
    expect(explicit.body.result.map((c: { name: string }) => c.name)).toEqual([...expected].reverse());
    const byDate = await server.rest('GET', `/v1/collections?owner_address=${address}&include_assets=false`);
    expect(byDate.body.result.map((c: { name: string }) => c.name)).toEqual(['Alpha', 'Zeta', 'Mid'].map((name) => `${name} ${tag}`));
  });

  test('when a subscription names an unknown event type, then graphql-ws ends it with an error message (not next then complete)', async () => {
    const socket = new WebSocket(`${server.url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
    await once(socket, 'open');
    const messages: { id?: string; type: string; payload?: unknown }[] = [];
    socket.on('message', (m) => messages.push(JSON.parse(String(m))));
    socket.send(JSON.stringify({ type: 'connection_init' }));
    for (let i = 0; i < 500 && !messages.some((m) => m.type === 'connection_ack'); i += 1) await new Promise((r) => setTimeout(r, 20));
    socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: 'subscription { events(types: ["no.such"]) { id } }' } }));
    for (let i = 0; i < 500 && !messages.some((m) => m.id === '1'); i += 1) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 100));
    expect(messages.filter((m) => m.id === '1')).toEqual([
      { id: '1', type: 'error', payload: [expect.objectContaining({ extensions: expect.objectContaining({ code: 'BAD_REQUEST', details: [expect.objectContaining({ field: 'types' })] }) })] },
    ]);
    socket.close();
  });
});

const CREATE_ASSET = /* GraphQL */ `
  mutation ($input: CreateAssetInput!) { createAsset(input: $input) { id tokenId } }`;

const COLLECTIONS_BY_NAME = /* GraphQL */ `
  query ($owner: Address, $page: String) { collections(ownerAddress: $owner, orderBy: NAME, limit: 2, page: $page, includeAssets: false) { cursor result { name } } }`;

const COLLECTION_BY_ID = /* GraphQL */ `
  query ($id: String!) { collection(id: $id) { id } }`;
