import { HttpResult, randomAddress, startServer, TestServer } from '../setup/server';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

/** Every field of interface.md 2.6, by its documented snake_case name. */
const DOCUMENTED_ASSET_FIELDS = [
  'id', 'collection', 'created_at', 'updated_at', 'description', 'fees', 'image_url', 'animation_url', 'external_link',
  'metadata', 'name', 'listing', 'status', 'token_address', 'token_id', 'chain', 'owner',
];
const MAX_TOKEN_ID = ((1n << 256n) - 1n).toString();

interface RestCollection {
  id: string;
  contract_address: string;
  chain: { id: string };
}

/** interface.md 2.6: a response may carry more fields than documented, never fewer. */
function expectDocumentedFields(asset: Record<string, unknown>): void {
  expect(DOCUMENTED_ASSET_FIELDS.filter((field) => !(field in asset))).toEqual([]);
}

async function createCollection(key: string, overrides: Record<string, unknown> = {}): Promise<RestCollection> {
  const res = await server.rest('POST', '/v1/collections', { contract_address: randomAddress(), chain_id: '1', ...overrides }, key);
  if (res.status !== 200) throw new Error(`POST /v1/collections failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

function assetBody(collection: RestCollection, owner: string, overrides: Record<string, unknown> = {}) {
  return {
    collection_id: collection.id,
    name: `Asset ${Math.random().toString(36).slice(2, 8)}`,
    description: 'A REST asset',
    image_url: 'https://example.com/asset.png',
    metadata: { attributes: [{ trait_type: 'eyes', value: 'laser' }] },
    token_address: collection.contract_address,
    chain_id: collection.chain.id,
    owner,
    ...overrides,
  };
}

async function createAsset(key: string, collection: RestCollection, owner: string, overrides: Record<string, unknown> = {}) {
  const res = await server.rest('POST', '/v1/assets', assetBody(collection, owner, overrides), key);
  if (res.status !== 200) throw new Error(`POST /v1/assets failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

async function assetRows(collectionId: string): Promise<{ token_id: string; owner: string; name: string }[]> {
  return server.ds.query(
    'SELECT token_id::text AS token_id, owner, name FROM assets WHERE collection_id = $1 ORDER BY token_id',
    [collectionId],
  );
}

describe('POST /v1/assets', () => {
  test('when created with every documented body field, then the response carries every Asset field in snake_case', async () => {
    const { key, address: owner } = await server.key();
    const royalty = randomAddress();
    const collection = await createCollection(key, {
      chain_id: '43114',
      name: 'Avalanche Art',
      image_url: 'https://example.com/collection.png',
      fees: [{ address: royalty, basis_points: 500 }],
    });
    const body = assetBody(collection, owner.toUpperCase().replace('0X', '0x'), {
      token_address: `0x${collection.contract_address.slice(2).toUpperCase()}`,
      animation_url: 'https://example.com/asset.mp4',
      external_link: 'https://example.com/asset',
    });
    const res = await server.rest('POST', '/v1/assets', body, key);

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      collection: { image_url: 'https://example.com/collection.png', name: 'Avalanche Art', contract_address: collection.contract_address },
      description: 'A REST asset',
      fees: [{ address: royalty, basis_points: 500, type: 'royalty' }],
      image_url: 'https://example.com/asset.png',
      animation_url: 'https://example.com/asset.mp4',
      external_link: 'https://example.com/asset',
      metadata: body.metadata,
      name: body.name,
      status: 'unlisted',
      token_address: collection.contract_address,
      token_id: '1',
      chain: { id: '43114', name: 'Avalanche', symbol: 'AVAX' },
      owner,
    });
    expect(res.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(res.body.updated_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(res.body).not.toHaveProperty('tokenId');

    expect(await assetRows(collection.id)).toEqual([{ token_id: '1', owner, name: body.name }]);
    expectDocumentedFields(res.body);
  });

  test('when several assets are created without token_id, then each contract mints 1, 2, 3 on its own', async () => {
    const { key, address: owner } = await server.key();
    const first = await createCollection(key);
    const second = await createCollection(key);
    const minted: string[] = [];
    for (let i = 0; i < 3; i += 1) minted.push((await createAsset(key, first, owner)).token_id);
    const other = await createAsset(key, second, owner);

    expect(minted).toEqual(['1', '2', '3']);
    expect(other.token_id).toBe('1');
    expect((await assetRows(first.id)).map((r) => r.token_id)).toEqual(['1', '2', '3']);
    expect((await assetRows(second.id)).map((r) => r.token_id)).toEqual(['1']);
  });

  test('when created concurrently, then every request gets its own consecutive token_id', async () => {
    const { key, address: owner } = await server.key();
    const collection = await createCollection(key);
    const results = await Promise.all(Array.from({ length: 6 }, () => server.rest('POST', '/v1/assets', assetBody(collection, owner), key)));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(results.map((r) => Number(r.body.token_id)).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(await assetRows(collection.id)).toHaveLength(6);
  });

  test('when a token_id is given, then it is used and the next mint continues after the highest', async () => {
    const { key, address: owner } = await server.key();
    const collection = await createCollection(key);
    const given = await createAsset(key, collection, owner, { token_id: '41' });
    const next = await createAsset(key, collection, owner);
    expect(given.token_id).toBe('41');
    expect(next.token_id).toBe('42');
  });

  test('when collection_id is the contract address, then the asset joins that collection', async () => {
    const { key, address: owner } = await server.key();
    const collection = await createCollection(key);
    const asset = await createAsset(key, collection, owner, { collection_id: collection.contract_address.toUpperCase().replace('0X', '0x') });
    expect(asset.collection.contract_address).toBe(collection.contract_address);
    expect(await assetRows(collection.id)).toHaveLength(1);
  });

  test('when the token_id is taken, then it is a 409 naming token_id and nothing is written', async () => {
    const { key, address: owner } = await server.key();
    const collection = await createCollection(key);
    await createAsset(key, collection, owner, { token_id: '5', name: 'Original' });
    const res = await server.rest('POST', '/v1/assets', assetBody(collection, owner, { token_id: '5', name: 'Duplicate' }), key);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('CONFLICT');
    expect(res.body.error.message).toContain('5');
    expect(JSON.stringify(res.body.error)).toMatch(/token_id|tokenId|token id/);
    expect(await assetRows(collection.id)).toEqual([{ token_id: '5', owner, name: 'Original' }]);
  });

  test('when token_id is 2^256-1, then it is accepted and read back exactly', async () => {
    const { key, address: owner } = await server.key();
    const collection = await createCollection(key);
    const asset = await createAsset(key, collection, owner, { token_id: MAX_TOKEN_ID });
    expect(asset.token_id).toBe(MAX_TOKEN_ID);
    const read = await server.rest('GET', `/v1/assets/${collection.contract_address}/${MAX_TOKEN_ID}`);
    expect(read.status).toBe(200);
    expect(read.body.id).toBe(asset.id);
    expect((await assetRows(collection.id)).map((r) => r.token_id)).toEqual([MAX_TOKEN_ID]);
  });

  test('when the contract already holds token 2^256-1, then the next mint takes the lowest unused id, never 2^256 (#40)', async () => {
    const { key, address: owner } = await server.key();
    const collection = await createCollection(key);
    await createAsset(key, collection, owner, { token_id: MAX_TOKEN_ID });
    const res = await server.rest('POST', '/v1/assets', assetBody(collection, owner), key);
    expect({ status: res.status, token_id: res.body.token_id }).toEqual({ status: 200, token_id: '1' });
    expect((await assetRows(collection.id)).map((r) => r.token_id).sort()).toEqual(['1', MAX_TOKEN_ID]);
  });

  test('when the collection has reached its total_supply, then the next asset is a 422 and nothing is written', async () => {
    const { key, address: owner } = await server.key();
    const collection = await createCollection(key, { total_supply: 1 });
    await createAsset(key, collection, owner);
    const res = await server.rest('POST', '/v1/assets', assetBody(collection, owner), key);
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('VALIDATION_FAILED');
    expect(await assetRows(collection.id)).toHaveLength(1);
  });

  test('when an admin creates an asset for another owner, then the asset belongs to that owner', async () => {
    const { key, address: collectionOwner } = await server.key();
    const collection = await createCollection(key);
    const { key: adminKey } = await server.key({ admin: true });
    const recipient = randomAddress();
    const asset = await createAsset(adminKey, collection, recipient);
    expect(asset.owner).toBe(recipient);
    expect((await assetRows(collection.id))[0].owner).toBe(recipient);
    expect(recipient).not.toBe(collectionOwner);
  });
});

describe('GET /v1/assets', () => {
  test('when filtered by collection_id as a UUID, then only that collection’s assets are listed in the page envelope', async () => {
    const { key, address: owner } = await server.key();
    const mine = await createCollection(key);
    const other = await createCollection(key);
    const a = await createAsset(key, mine, owner);
    const b = await createAsset(key, mine, owner);
    await createAsset(key, other, owner);

    const res = await server.rest('GET', `/v1/assets?collection_id=${mine.id}`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['cursor', 'remaining', 'result']);
    expect(res.body).toMatchObject({ cursor: null, remaining: 0 });
    expect(res.body.result.map((x: { id: string }) => x.id).sort()).toEqual([a.id, b.id].sort());
    for (const asset of res.body.result) expectDocumentedFields(asset);
  });

  test('when filtered by collection_id as the contract address in any case, then the same assets are listed', async () => {
    const { key, address: owner } = await server.key();
    const collection = await createCollection(key);
    const a = await createAsset(key, collection, owner);
    const upper = `0x${collection.contract_address.slice(2).toUpperCase()}`;
    const res = await server.rest('GET', `/v1/assets?collection_id=${upper}`);
    expect(res.status).toBe(200);
    expect(res.body.result.map((x: { id: string }) => x.id)).toEqual([a.id]);
  });

  test('when filtered by asset_contract, then only assets of that contract are listed', async () => {
    const { key, address: owner } = await server.key();
    const collection = await createCollection(key, { chain_id: '10' });
    const other = await createCollection(key, { chain_id: '10' });
    const a = await createAsset(key, collection, owner);
    await createAsset(key, other, owner);
    const res = await server.rest('GET', `/v1/assets?asset_contract=${collection.contract_address}`);
    expect(res.status).toBe(200);
    expect(res.body.result.map((x: { id: string }) => x.id)).toEqual([a.id]);
  });

  test('when filtered by owner_id, then only that owner’s assets are listed', async () => {
    const { key, address: owner } = await server.key();
    const collection = await createCollection(key);
    const { key: adminKey } = await server.key({ admin: true });
    const someoneElse = randomAddress();
    await createAsset(key, collection, owner);
    const theirs = await createAsset(adminKey, collection, someoneElse);

    const res = await server.rest('GET', `/v1/assets?owner_id=${someoneElse.toUpperCase().replace('0X', '0x')}`);
    expect(res.status).toBe(200);
    expect(res.body.result.map((x: { id: string }) => x.id)).toEqual([theirs.id]);
    expect(res.body.result[0].owner).toBe(someoneElse);
  });

  test('when filtered by status, then unlisted finds the new assets and listed finds none of them', async () => {
    const { key, address: owner } = await server.key();
    const collection = await createCollection(key);
    const a = await createAsset(key, collection, owner);
    const unlisted = await server.rest('GET', `/v1/assets?collection_id=${collection.id}&status=unlisted`);
    const listed = await server.rest('GET', `/v1/assets?collection_id=${collection.id}&status=listed`);
    expect(unlisted.status).toBe(200);
    expect(unlisted.body.result.map((x: { id: string }) => x.id)).toEqual([a.id]);
    expect(unlisted.body.result[0].status).toBe('unlisted');
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({ cursor: null, remaining: 0, result: [] });
  });

  test('when ordered by token_id, then ids sort numerically (2 before 10) in both directions', async () => {
    const { key, address: owner } = await server.key();
    const collection = await createCollection(key);
    for (const tokenId of ['10', '2', '1', '100', '9']) await createAsset(key, collection, owner, { token_id: tokenId });
    const asc = await server.rest('GET', `/v1/assets?collection_id=${collection.id}&order_by=token_id&direction=asc`);
    const desc = await server.rest('GET', `/v1/assets?collection_id=${collection.id}&order_by=token_id&direction=desc`);
    expect(asc.body.result.map((x: { token_id: string }) => x.token_id)).toEqual(['1', '2', '9', '10', '100']);
    expect(desc.body.result.map((x: { token_id: string }) => x.token_id)).toEqual(['100', '10', '9', '2', '1']);
  });

  test('when paged by cursor in token_id order, then every asset is seen once and remaining counts down', async () => {
    const { key, address: owner } = await server.key();
    const collection = await createCollection(key);
    for (let i = 0; i < 5; i += 1) await createAsset(key, collection, owner);
    const seen: string[] = [];
    let page: string | null = null;
    do {
      const res: HttpResult = await server.rest(
        'GET',
        `/v1/assets?collection_id=${collection.id}&order_by=token_id&direction=asc&limit=2${page ? `&page=${encodeURIComponent(page)}` : ''}`,
      );
      expect(res.status).toBe(200);
      seen.push(...res.body.result.map((x: { token_id: string }) => x.token_id));
      expect(res.body.remaining).toBe(5 - seen.length);
      page = res.body.cursor;
    } while (page);
    expect(seen).toEqual(['1', '2', '3', '4', '5']);
  });

  test('when collection_id is unknown, then it is a 404', async () => {
    const res = await server.rest('GET', `/v1/assets?collection_id=${randomAddress()}`);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
  });
});

describe('GET /v1/assets/{token_address}/{token_id}', () => {
  test('when read by contract address in upper case and token id, then the asset is returned with every documented field', async () => {
    const { key, address: owner } = await server.key();
    const collection = await createCollection(key, { name: 'Readable' });
    const created = await createAsset(key, collection, owner);
    const res = await server.rest('GET', `/v1/assets/0x${collection.contract_address.slice(2).toUpperCase()}/${created.token_id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: created.id,
      token_id: '1',
      token_address: collection.contract_address,
      collection: { name: 'Readable', contract_address: collection.contract_address },
      chain: { id: '1', name: 'Ethereum', symbol: 'ETH' },
    });
    expectDocumentedFields(res.body);
  });

  test('when the token does not exist, then it is a 404', async () => {
    const { key, address: owner } = await server.key();
    const collection = await createCollection(key);
    await createAsset(key, collection, owner);
    const missingToken = await server.rest('GET', `/v1/assets/${collection.contract_address}/2`);
    const missingContract = await server.rest('GET', `/v1/assets/${randomAddress()}/1`);
    expect(missingToken.status).toBe(404);
    expect(missingToken.body.error.code).toBe('NOT_FOUND');
    expect(missingContract.status).toBe(404);
  });

  test('when the same contract and token exist on two chains, then chain_id chooses and its absence is a 409 naming both', async () => {
    const { key, address: owner } = await server.key();
    const address = randomAddress();
    const onEthereum = await createCollection(key, { contract_address: address, chain_id: '1' });
    const onSepolia = await createCollection(key, { contract_address: address, chain_id: '11155111' });
    await createAsset(key, onEthereum, owner, { name: 'Mainnet token' });
    await createAsset(key, onSepolia, owner, { name: 'Testnet token' });

    const ambiguous = await server.rest('GET', `/v1/assets/${address}/1`);
    expect(ambiguous.status).toBe(409);
    expect(ambiguous.body.error.code).toBe('CONFLICT');
    expect(ambiguous.body.error.message).toContain('11155111');
    expect(ambiguous.body.error.message).toContain('chain_id');

    const chosen = await server.rest('GET', `/v1/assets/${address}/1?chain_id=11155111`);
    expect(chosen.status).toBe(200);
    expect(chosen.body).toMatchObject({ name: 'Testnet token', chain: { id: '11155111', name: 'Sepolia', symbol: 'ETH' } });

    const wrongChain = await server.rest('GET', `/v1/assets/${address}/1?chain_id=137`);
    expect(wrongChain.status).toBe(404);
  });
});
