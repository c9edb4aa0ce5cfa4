import { HttpResult, randomAddress, startServer, TestServer } from './setup/server';
import { assetInput, CollectionRow, saveCollection } from './factories/marketplace';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

const HTTP_STATUS: Record<string, number> = {
  BAD_REQUEST: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  VALIDATION_FAILED: 422,
};
const MAX_TOKEN_ID = ((1n << 256n) - 1n).toString();
const BAD_TOKEN_IDS = ['-1', '1e3', '0x10', (1n << 256n).toString()];

/** What must never reach a client: stack frames, driver error names, SQL text, file paths. */
function expectNoInternals(res: HttpResult): void {
  const text = typeof res.body === 'string' ? res.body : JSON.stringify(res.body);
  expect(text).not.toMatch(/\bat [\w$.<>]+ \(|\bat \/|\.[jt]s:\d+:\d+/);
  for (const leak of ['QueryFailedError', 'SELECT', 'INSERT', 'node_modules']) expect(text).not.toContain(leak);
}

/** Every call of this file goes through these two, so every response is checked for leaked internals. */
async function rest(method: string, path: string, body?: unknown, key?: string, headers?: Record<string, string>) {
  const res = await server.rest(method, path, body, key, headers);
  expectNoInternals(res);
  return res;
}
async function gql(query: string, variables?: Record<string, unknown>, key?: string) {
  const res = await server.gql(query, variables, key);
  expectNoInternals(res);
  return res;
}
/** A raw body to /graphql (the helper of the harness always sends valid JSON). */
async function rawGraphql(body: string): Promise<HttpResult> {
  const res = await fetch(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // keep the text
  }
  const result = { status: res.status, headers: res.headers, body: parsed as any, sql: NaN };
  expectNoInternals(result);
  return result;
}

/** The REST error body of decisions.md, with the status of its code and a message that names `field`. */
function expectRestError(res: HttpResult, code: string, field?: string): void {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status: HTTP_STATUS[code], code });
  expect(Object.keys(res.body.error).sort()).toEqual(['code', 'details', 'message', 'request_id']);
  expect(typeof res.body.error.message).toBe('string');
  expect(Array.isArray(res.body.error.details)).toBe(true);
  expect(res.body.error.request_id).toBe(res.headers.get('x-request-id'));
  if (field) expect(res.body.error.message).toContain(field);
}

/** A GraphQL error: the code in extensions, a message naming `field`, HTTP 200 or the status of the code. */
function expectGraphqlError(res: HttpResult, code: string, field?: string): void {
  expect(res.body.errors?.[0]?.extensions?.code).toBe(code);
  expect([200, HTTP_STATUS[code]]).toContain(res.status);
  expect(res.body.data ?? null).toBeNull();
  if (field) expect(res.body.errors?.[0].message).toContain(field);
}

function detailFields(res: HttpResult): string[] {
  const details = (res.body.error?.details ?? res.body.errors?.[0]?.extensions?.details ?? []) as { field: string }[];
  return details.map((d) => d.field);
}

async function count(sql: string, params: unknown[]): Promise<number> {
  const [row] = await server.ds.query(`SELECT count(*)::int AS n FROM ${sql}`, params);
  return row.n;
}
const collectionsAt = (address: string) => count('collections WHERE contract_address = $1', [address.toLowerCase()]);
const collectionsOf = (owner: string) => count('collections WHERE owner = $1', [owner]);
const assetsIn = (collection: CollectionRow) => count('assets WHERE collection_id = $1', [collection.id]);

function restAssetBody(collection: CollectionRow, owner: string, overrides: Record<string, unknown> = {}) {
  return {
    collection_id: collection.id,
    name: 'Error case asset',
    description: 'should not be written',
    image_url: 'https://example.com/x.png',
    metadata: {},
    token_address: collection.contractAddress,
    chain_id: collection.chainId,
    owner,
    ...overrides,
  };
}

/** An account with a collection, for the asset-creating cases. */
async function collectionWithOwner() {
  const { key, address } = await server.key();
  const collection = await saveCollection(server, key);
  return { key, address, collection };
}

describe('malformed bodies', () => {
  test('when a REST body is not valid JSON, then it is a 400 BAD_REQUEST naming the body and nothing is written', async () => {
    const { key, address } = await server.key();
    const res = await rest('POST', '/v1/collections', `{"contract_address": "${randomAddress()}", "chain_id": `, key);
    expectRestError(res, 'BAD_REQUEST', 'JSON');
    expect(res.body.error.message).toContain('body');
    expect(await collectionsOf(address)).toBe(0);
  });

  test('when a GraphQL body is not valid JSON, then it is a 400 BAD_REQUEST', async () => {
    const res = await rawGraphql('{"query": "{ categories { remaining } }", ');
    expect(res.status).toBe(400);
    expect(res.body.errors?.[0].extensions.code).toBe('BAD_REQUEST');
    expect(res.body.errors?.[0].message).toContain('JSON');
  });

  test('when a REST body is a JSON array, then it is a 400 BAD_REQUEST and nothing is written', async () => {
    const { key, address } = await server.key();
    const res = await rest('POST', '/v1/collections', [{ contract_address: randomAddress(), chain_id: '1' }], key);
    expectRestError(res, 'BAD_REQUEST', 'body');
    expect(await collectionsOf(address)).toBe(0);
  });

  test('when a REST body is over 1 MB, then it is a 413 PAYLOAD_TOO_LARGE and nothing is written', async () => {
    const { key } = await server.key();
    const address = randomAddress();
    const res = await rest('POST', '/v1/collections', { contract_address: address, chain_id: '1', description: 'x'.repeat(1_100_000) }, key);
    expectRestError(res, 'PAYLOAD_TOO_LARGE');
    expect(await collectionsAt(address)).toBe(0);
  });

  test('when a GraphQL body is over 1 MB, then it is a 413 PAYLOAD_TOO_LARGE and nothing is written', async () => {
    const { key } = await server.key();
    const address = randomAddress();
    const res = await gql(CREATE_COLLECTION, { input: { contractAddress: address, chainId: '1', description: 'x'.repeat(1_100_000) } }, key);
    expect(res.status).toBe(413);
    expect(res.body.errors?.[0].extensions.code).toBe('PAYLOAD_TOO_LARGE');
    expect(await collectionsAt(address)).toBe(0);
  });
});

describe('wrong types and unknown fields', () => {
  test('when total_supply is "abc" over REST, then it is a 400 naming total_supply and nothing is written', async () => {
    const { key } = await server.key();
    const address = randomAddress();
    const res = await rest('POST', '/v1/collections', { contract_address: address, chain_id: '1', total_supply: 'abc' }, key);
    expectRestError(res, 'BAD_REQUEST', 'total_supply');
    expect(await collectionsAt(address)).toBe(0);
  });

  test('when totalSupply is "abc" over GraphQL, then it is BAD_REQUEST naming totalSupply and nothing is written', async () => {
    const { key } = await server.key();
    const address = randomAddress();
    const res = await gql(CREATE_COLLECTION, { input: { contractAddress: address, chainId: '1', totalSupply: 'abc' } }, key);
    expectGraphqlError(res, 'BAD_REQUEST', 'totalSupply');
    expect(await collectionsAt(address)).toBe(0);
  });

  test('when name is a number over REST, then it is a 400 naming name and nothing is written', async () => {
    const { key } = await server.key();
    const address = randomAddress();
    const res = await rest('POST', '/v1/collections', { contract_address: address, chain_id: '1', name: 42 }, key);
    expectRestError(res, 'BAD_REQUEST', 'name');
    expect(await collectionsAt(address)).toBe(0);
  });

  test('when a REST body has an undocumented field, then it is a 400 naming that field and nothing is written', async () => {
    const { key } = await server.key();
    const address = randomAddress();
    const res = await rest('POST', '/v1/collections', { contract_address: address, chain_id: '1', colour: 'blue' }, key);
    expectRestError(res, 'BAD_REQUEST', 'colour');
    expect(await collectionsAt(address)).toBe(0);
  });
});

describe('unknown enum values', () => {
  test('when order_by=foo over REST, then it is a 400 naming order_by and listing the allowed values', async () => {
    const res = await rest('GET', '/v1/assets?order_by=foo');
    expectRestError(res, 'BAD_REQUEST', 'order_by');
    for (const allowed of ['created_at', 'updated_at', 'name', 'token_id']) expect(res.body.error.message).toContain(allowed);
  });

  test('when direction=sideways over REST, then it is a 400 naming direction and listing asc and desc', async () => {
    const res = await rest('GET', '/v1/collections?direction=sideways');
    expectRestError(res, 'BAD_REQUEST', 'direction');
    expect(res.body.error.message).toContain('asc');
    expect(res.body.error.message).toContain('desc');
  });

  test('when status=bogus filters collections over REST, then it is a 400 listing unverified and verified', async () => {
    const res = await rest('GET', '/v1/collections?status=bogus');
    expectRestError(res, 'BAD_REQUEST', 'status');
    expect(res.body.error.message).toContain('unverified');
    expect(res.body.error.message).toContain('verified');
  });

  test('when an admin sets status "bogus" over REST, then it is a 400 listing the statuses and the row is unchanged', async () => {
    const { key } = await server.key();
    const collection = await saveCollection(server, key);
    const { key: adminKey } = await server.key({ admin: true });
    const res = await rest('PUT', `/v1/collections/${collection.contractAddress}`, { status: 'bogus' }, adminKey);
    expectRestError(res, 'BAD_REQUEST', 'status');
    expect(res.body.error.message).toContain('unverified');
    const [row] = await server.ds.query('SELECT status FROM collections WHERE id = $1', [collection.id]);
    expect(row.status).toBe('unverified');
  });

  test('when orderBy is FOO over GraphQL, then it is BAD_REQUEST naming orderBy and listing the allowed values', async () => {
    const res = await gql(ASSETS, { orderBy: 'FOO' });
    expectGraphqlError(res, 'BAD_REQUEST', 'orderBy');
    for (const allowed of ['CREATED_AT', 'UPDATED_AT', 'NAME', 'TOKEN_ID']) expect(res.body.errors?.[0].message).toContain(allowed);
  });

  test('when direction is SIDEWAYS over GraphQL, then it is BAD_REQUEST naming direction and listing ASC and DESC', async () => {
    const res = await gql(ASSETS, { direction: 'SIDEWAYS' });
    expectGraphqlError(res, 'BAD_REQUEST', 'direction');
    expect(res.body.errors?.[0].message).toContain('ASC');
    expect(res.body.errors?.[0].message).toContain('DESC');
  });
});

describe('paging parameters', () => {
  test.each(['0', '101', 'abc', '1.5'])('when limit=%s over REST, then it is a 400 naming limit', async (limit) => {
    const res = await rest('GET', `/v1/assets?limit=${limit}`);
    expectRestError(res, 'BAD_REQUEST', 'limit');
  });

  test.each([0, 101, 'abc'])('when limit is %p over GraphQL, then it is BAD_REQUEST naming limit', async (limit) => {
    const res = await gql(ASSETS, { limit });
    expectGraphqlError(res, 'BAD_REQUEST', 'limit');
  });

  test('when limit=100 over REST, then it is accepted', async () => {
    const res = await rest('GET', '/v1/categories?limit=100');
    expect(res.status).toBe(200);
  });

  test('when page is an unknown cursor over REST, then it is a 400 naming page', async () => {
    const res = await rest('GET', '/v1/assets?page=not-a-cursor');
    expectRestError(res, 'BAD_REQUEST', 'page');
  });

  test('when page is an unknown cursor over GraphQL, then it is BAD_REQUEST naming page', async () => {
    const res = await gql(ASSETS, { page: 'bm90LWEtY3Vyc29y' });
    expectGraphqlError(res, 'BAD_REQUEST', 'page');
  });

  test('when page is a cursor-shaped value whose id is not an id, then it is a 400 naming page, not a 500', async () => {
    const forged = Buffer.from(JSON.stringify(['created_at', 'desc', '2026-01-01T00:00:00.000Z', 'not-an-id'])).toString('base64url');
    const res = await rest('GET', `/v1/assets?page=${forged}`);
    expectRestError(res, 'BAD_REQUEST', 'page');
  });

  test('when page is a cursor-shaped value whose sort value has the wrong type, then it is a 400 naming page, not a 500', async () => {
    const forged = Buffer.from(JSON.stringify(['token_id', 'asc', 'twelve', '00000000-0000-4000-8000-000000000000'])).toString('base64url');
    const res = await rest('GET', `/v1/assets?order_by=token_id&direction=asc&page=${forged}`);
    expectRestError(res, 'BAD_REQUEST', 'page');
  });

  test('when a cursor of one ordering is used with another, then it is a 400 about the cursor, detailed as page', async () => {
    const { key, address } = await server.key();
    for (let i = 0; i < 2; i += 1) await saveCollection(server, key);
    const first = await rest('GET', `/v1/collections?owner_address=${address}&limit=1&order_by=name`);
    expect(first.body.cursor).toEqual(expect.any(String));
    const res = await rest('GET', `/v1/collections?owner_address=${address}&limit=1&order_by=created_at&page=${first.body.cursor}`);
    expectRestError(res, 'BAD_REQUEST', 'cursor');
    expect(detailFields(res)).toEqual(['page']);
  });
});

describe('addresses and token ids', () => {
  test.each(['0X12 3', 'Xyz', 'no_such.thing', '-x-'])(
    'when the collection address is %p over REST (no address, UUID or slug), then it is a 400 naming address',
    async (address) => {
      const res = await rest('GET', `/v1/collections/${encodeURIComponent(address)}`);
      expectRestError(res, 'BAD_REQUEST', 'address');
    },
  );

  test.each(['0x123', 'xyz', `0x${'g'.repeat(40)}`])('when the collection address is %p over REST, a slug no collection has, then it is a 404', async (address) => {
    const res = await rest('GET', `/v1/collections/${address}`);
    expectRestError(res, 'NOT_FOUND', 'collection');
  });

  test('when owner_id is not an address over REST, then it is a 400 naming owner_id', async () => {
    const res = await rest('GET', '/v1/assets?owner_id=alice');
    expectRestError(res, 'BAD_REQUEST', 'owner_id');
  });

  test('when contract_address is not an address on create over REST, then it is a 400 naming contract_address and nothing is written', async () => {
    const { key, address } = await server.key();
    const res = await rest('POST', '/v1/collections', { contract_address: '0xnothex', chain_id: '1' }, key);
    expectRestError(res, 'BAD_REQUEST', 'contract_address');
    expect(await collectionsOf(address)).toBe(0);
  });

  test('when the address is not an address over GraphQL, then it is BAD_REQUEST naming address', async () => {
    const res = await gql(COLLECTION, { address: '0x123' });
    expectGraphqlError(res, 'BAD_REQUEST', 'address');
  });

  test('when contractAddress is not an address on create over GraphQL, then it is BAD_REQUEST and nothing is written', async () => {
    const { key, address } = await server.key();
    const res = await gql(CREATE_COLLECTION, { input: { contractAddress: '0x123', chainId: '1' } }, key);
    expectGraphqlError(res, 'BAD_REQUEST', 'contractAddress');
    expect(await collectionsOf(address)).toBe(0);
  });

  test.each(BAD_TOKEN_IDS)('when token_id is %s in a REST path, then it is a 400 naming token_id', async (tokenId) => {
    const res = await rest('GET', `/v1/assets/${randomAddress()}/${encodeURIComponent(tokenId)}`);
    expectRestError(res, 'BAD_REQUEST', 'token_id');
  });

  test.each(BAD_TOKEN_IDS)('when token_id is %s on create over REST, then it is a 400 naming token_id and nothing is written', async (tokenId) => {
    const { key, address, collection } = await collectionWithOwner();
    const res = await rest('POST', '/v1/assets', restAssetBody(collection, address, { token_id: tokenId }), key);
    expectRestError(res, 'BAD_REQUEST', 'token_id');
    expect(await assetsIn(collection)).toBe(0);
  });

  test.each(BAD_TOKEN_IDS)('when tokenId is %s over GraphQL, then it is BAD_REQUEST naming tokenId', async (tokenId) => {
    const res = await gql(ASSET, { tokenAddress: randomAddress(), tokenId });
    expectGraphqlError(res, 'BAD_REQUEST', 'tokenId');
  });

  test.each(BAD_TOKEN_IDS)('when tokenId is %s on createAsset over GraphQL, then it is BAD_REQUEST and nothing is written', async (tokenId) => {
    const { key, address, collection } = await collectionWithOwner();
    const res = await gql(CREATE_ASSET, { input: assetInput(collection, address, { tokenId }) }, key);
    expectGraphqlError(res, 'BAD_REQUEST', 'tokenId');
    expect(await assetsIn(collection)).toBe(0);
  });

  test('when token_id is 2^256-1, then it is a valid id: an unknown token is a 404, not a 400', async () => {
    const rested = await rest('GET', `/v1/assets/${randomAddress()}/${MAX_TOKEN_ID}`);
    expectRestError(rested, 'NOT_FOUND');
    const graphed = await gql(ASSET, { tokenAddress: randomAddress(), tokenId: MAX_TOKEN_ID });
    expectGraphqlError(graphed, 'NOT_FOUND');
  });
});

describe('validation of creates (422)', () => {
  test('when a collection names an unknown chain_id over REST, then it is a 422 whose details name chain_id and nothing is written', async () => {
    const { key } = await server.key();
    const address = randomAddress();
    const res = await rest('POST', '/v1/collections', { contract_address: address, chain_id: '999999' }, key);
    expectRestError(res, 'VALIDATION_FAILED', 'chain_id');
    expect(detailFields(res)).toEqual(['chain_id']);
    expect(await collectionsAt(address)).toBe(0);
  });

  test('when a collection names an unknown chainId over GraphQL, then it is VALIDATION_FAILED naming chainId and nothing is written', async () => {
    const { key } = await server.key();
    const address = randomAddress();
    const res = await gql(CREATE_COLLECTION, { input: { contractAddress: address, chainId: '999999' } }, key);
    expectGraphqlError(res, 'VALIDATION_FAILED', 'chainId');
    expect(detailFields(res)).toEqual(['chainId']);
    expect(await collectionsAt(address)).toBe(0);
  });

  test('when contract_address and chain_id are missing over REST, then it is a 422 naming both and nothing is written', async () => {
    const { key, address } = await server.key();
    const res = await rest('POST', '/v1/collections', { name: 'No address' }, key);
    expectRestError(res, 'VALIDATION_FAILED', 'contract_address');
    expect(res.body.error.message).toContain('chain_id');
    expect(detailFields(res).sort()).toEqual(['chain_id', 'contract_address']);
    expect(await collectionsOf(address)).toBe(0);
  });

  test('when contractAddress and chainId are missing over GraphQL, then it is VALIDATION_FAILED naming both and nothing is written', async () => {
    const { key, address } = await server.key();
    const res = await gql(CREATE_COLLECTION, { input: { name: 'No address' } }, key);
    expectGraphqlError(res, 'VALIDATION_FAILED', 'contractAddress');
    expect(detailFields(res).sort()).toEqual(['chainId', 'contractAddress']);
    expect(await collectionsOf(address)).toBe(0);
  });

  test('when an asset names an unknown collection over REST, then it is a 422 naming collection_id', async () => {
    const { key, address, collection } = await collectionWithOwner();
    const res = await rest('POST', '/v1/assets', restAssetBody(collection, address, { collection_id: randomAddress() }), key);
    expectRestError(res, 'VALIDATION_FAILED', 'collection_id');
    expect(detailFields(res)).toContain('collection_id');
    expect(await assetsIn(collection)).toBe(0);
  });

  test('when an asset names an unknown collection over GraphQL, then it is VALIDATION_FAILED naming collectionId', async () => {
    const { key, address, collection } = await collectionWithOwner();
    const res = await gql(CREATE_ASSET, { input: assetInput(collection, address, { collectionId: '00000000-0000-4000-8000-000000000000' }) }, key);
    expectGraphqlError(res, 'VALIDATION_FAILED', 'collectionId');
    expect(await assetsIn(collection)).toBe(0);
  });

  test('when token_address is not the collection’s over REST, then it is a 422 naming token_address and nothing is written', async () => {
    const { key, address, collection } = await collectionWithOwner();
    const res = await rest('POST', '/v1/assets', restAssetBody(collection, address, { token_address: randomAddress() }), key);
    expectRestError(res, 'VALIDATION_FAILED', 'token_address');
    expect(detailFields(res)).toEqual(['token_address']);
    expect(await assetsIn(collection)).toBe(0);
  });

  test('when tokenAddress is not the collection’s over GraphQL, then it is VALIDATION_FAILED naming tokenAddress', async () => {
    const { key, address, collection } = await collectionWithOwner();
    const res = await gql(CREATE_ASSET, { input: assetInput(collection, address, { tokenAddress: randomAddress() }) }, key);
    expectGraphqlError(res, 'VALIDATION_FAILED', 'tokenAddress');
    expect(await assetsIn(collection)).toBe(0);
  });

  test('when chain_id is not the collection’s chain over REST, then it is a 422 naming chain_id', async () => {
    const { key, address, collection } = await collectionWithOwner();
    const res = await rest('POST', '/v1/assets', restAssetBody(collection, address, { chain_id: '137' }), key);
    expectRestError(res, 'VALIDATION_FAILED', 'chain_id');
    expect(await assetsIn(collection)).toBe(0);
  });

  test('when required asset fields are missing over REST, then one 422 names each of them and nothing is written', async () => {
    const { key, address, collection } = await collectionWithOwner();
    const body = restAssetBody(collection, address);
    const res = await rest(
      'POST',
      '/v1/assets',
      { collection_id: body.collection_id, token_address: body.token_address, chain_id: body.chain_id, owner: body.owner },
      key,
    );
    expectRestError(res, 'VALIDATION_FAILED', 'name');
    expect(detailFields(res).sort()).toEqual(['description', 'image_url', 'metadata', 'name']);
    expect(await assetsIn(collection)).toBe(0);
  });
});

describe('authentication and ownership', () => {
  test('when a write has no key over REST, then it is a 401 UNAUTHENTICATED and nothing is written', async () => {
    const address = randomAddress();
    const res = await rest('POST', '/v1/collections', { contract_address: address, chain_id: '1' });
    expectRestError(res, 'UNAUTHENTICATED', 'access-token');
    expect(await collectionsAt(address)).toBe(0);
  });

  test('when a write has no key over GraphQL, then it is UNAUTHENTICATED and nothing is written', async () => {
    const address = randomAddress();
    const res = await gql(CREATE_COLLECTION, { input: { contractAddress: address, chainId: '1' } });
    expectGraphqlError(res, 'UNAUTHENTICATED', 'key');
    expect(await collectionsAt(address)).toBe(0);
  });

  test('when the key is unknown over REST, then it is a 401 and nothing is written', async () => {
    const address = randomAddress();
    const res = await rest('POST', '/v1/collections', { contract_address: address, chain_id: '1' }, 'nftgw_not-a-real-key');
    expectRestError(res, 'UNAUTHENTICATED', 'key');
    expect(await collectionsAt(address)).toBe(0);
  });

  test('when the bearer key is unknown over REST, then it is a 401', async () => {
    const { key } = await server.key();
    const collection = await saveCollection(server, key);
    const res = await rest('PUT', `/v1/collections/${collection.contractAddress}`, { name: 'x' }, undefined, {
      authorization: 'Bearer nftgw_not-a-real-key',
    });
    expectRestError(res, 'UNAUTHENTICATED');
  });

  test('when the key is unknown over GraphQL, then it is UNAUTHENTICATED and nothing is written', async () => {
    const address = randomAddress();
    const res = await gql(CREATE_COLLECTION, { input: { contractAddress: address, chainId: '1' } }, 'nftgw_not-a-real-key');
    expectGraphqlError(res, 'UNAUTHENTICATED', 'key');
    expect(await collectionsAt(address)).toBe(0);
  });

  test('when another account’s key updates a collection over REST, then it is a 403 FORBIDDEN and the row is unchanged', async () => {
    const { key } = await server.key();
    const collection = await saveCollection(server, key, { name: 'Not yours' });
    const { key: strangerKey } = await server.key();
    const res = await rest('PUT', `/v1/collections/${collection.contractAddress}`, { name: 'Mine now' }, strangerKey);
    expectRestError(res, 'FORBIDDEN', collection.contractAddress);
    const [row] = await server.ds.query('SELECT name FROM collections WHERE id = $1', [collection.id]);
    expect(row.name).toBe('Not yours');
  });

  test('when another account’s key updates a collection over GraphQL, then it is FORBIDDEN and the row is unchanged', async () => {
    const { key } = await server.key();
    const collection = await saveCollection(server, key, { name: 'Still not yours' });
    const { key: strangerKey } = await server.key();
    const res = await gql(UPDATE_COLLECTION, { address: collection.contractAddress, input: { name: 'Mine now' } }, strangerKey);
    expectGraphqlError(res, 'FORBIDDEN', collection.contractAddress);
    const [row] = await server.ds.query('SELECT name FROM collections WHERE id = $1', [collection.id]);
    expect(row.name).toBe('Still not yours');
  });

  test('when another account’s key creates an asset in a collection it does not own, then it is a 403 and nothing is written', async () => {
    const { collection } = await collectionWithOwner();
    const { key: strangerKey, address: stranger } = await server.key();
    const rested = await rest('POST', '/v1/assets', restAssetBody(collection, stranger), strangerKey);
    expectRestError(rested, 'FORBIDDEN');
    const graphed = await gql(CREATE_ASSET, { input: assetInput(collection, stranger) }, strangerKey);
    expectGraphqlError(graphed, 'FORBIDDEN');
    expect(await assetsIn(collection)).toBe(0);
  });

  test('when a user key creates an asset for another owner over REST, then it is a 403 naming owner and nothing is written', async () => {
    const { key, collection } = await collectionWithOwner();
    const res = await rest('POST', '/v1/assets', restAssetBody(collection, randomAddress()), key);
    expectRestError(res, 'FORBIDDEN', 'owner');
    expect(await assetsIn(collection)).toBe(0);
  });

  test('when a user key creates an asset for another owner over GraphQL, then it is FORBIDDEN naming owner and nothing is written', async () => {
    const { key, collection } = await collectionWithOwner();
    const res = await gql(CREATE_ASSET, { input: assetInput(collection, randomAddress()) }, key);
    expectGraphqlError(res, 'FORBIDDEN', 'owner');
    expect(await assetsIn(collection)).toBe(0);
  });
});

describe('unknown routes', () => {
  test('when a path is not in the route table, then it is a 404 in the error shape', async () => {
    const res = await rest('GET', '/v1/nothing-here');
    expectRestError(res, 'NOT_FOUND');
  });
});

const CREATE_COLLECTION = /* GraphQL */ `
  mutation ($input: CreateCollectionInput!) {
    createCollection(input: $input) { id contractAddress }
  }`;

const UPDATE_COLLECTION = /* GraphQL */ `
  mutation ($address: Address!, $input: UpdateCollectionInput!) {
    updateCollection(address: $address, input: $input) { id name }
  }`;

const COLLECTION = /* GraphQL */ `
  query ($address: Address!) {
    collection(address: $address) { id }
  }`;

const CREATE_ASSET = /* GraphQL */ `
  mutation ($input: CreateAssetInput!) {
    createAsset(input: $input) { id tokenId }
  }`;

const ASSET = /* GraphQL */ `
  query ($tokenAddress: Address!, $tokenId: TokenId!) {
    asset(tokenAddress: $tokenAddress, tokenId: $tokenId) { id }
  }`;

const ASSETS = /* GraphQL */ `
  query ($orderBy: AssetOrderBy, $direction: SortDirection, $limit: Int, $page: String) {
    assets(orderBy: $orderBy, direction: $direction, limit: $limit, page: $page) { cursor remaining result { id } }
  }`;
