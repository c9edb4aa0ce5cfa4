import { HttpResult, randomAddress, startServer, TestServer } from '../setup/server';
import { CollectionRow, saveAsset, saveCollection } from '../factories/marketplace';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

/** Every field of interface.md 2.7, by its documented snake_case name. */
const DOCUMENTED_COLLECTION_FIELDS = [
  'contract_address', 'owner', 'total_supply', 'category', 'name', 'slug', 'description', 'image_url', 'discord_url',
  'telegram_url', 'external_url', 'twitter_username', 'instagram_username', 'fees', 'chain', 'assets',
];

/** A POST /v1/collections body with every documented field; the address is given in mixed case. */
function fullCollectionBody(overrides: Record<string, unknown> = {}) {
  const address = randomAddress();
  return {
    contract_address: `0x${address.slice(2).toUpperCase()}`,
    chain_id: '137',
    category_id: 'music',
    total_supply: 500,
    name: `Sound Waves ${Math.random().toString(36).slice(2, 8)}`,
    description: { en: 'Loops and stems', tags: ['audio'] },
    image_url: 'https://example.com/waves.png',
    discord_url: 'https://discord.gg/waves',
    telegram_url: 'https://t.me/waves',
    external_url: 'https://waves.example.com',
    twitter_username: 'waves',
    instagram_username: 'waves.ig',
    fees: [{ address: randomAddress().toUpperCase().replace('0X', '0x'), basis_points: 250 }],
    ...overrides,
  };
}

/** interface.md 2.7: a response may carry more fields than documented, never fewer. */
function expectDocumentedFields(collection: Record<string, unknown>): void {
  expect(DOCUMENTED_COLLECTION_FIELDS.filter((field) => !(field in collection))).toEqual([]);
}

async function createCollection(key: string, overrides: Record<string, unknown> = {}) {
  const res = await server.rest('POST', '/v1/collections', { contract_address: randomAddress(), chain_id: '1', ...overrides }, key);
  if (res.status !== 200) throw new Error(`POST /v1/collections failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** A REST collection as the factories take it. */
function asFactoryRow(c: Record<string, any>): CollectionRow {
  return { id: c.id, contractAddress: c.contract_address, chainId: c.chain.id, owner: c.owner, name: c.name, slug: c.slug, totalSupply: c.total_supply };
}

async function collectionRow(address: string) {
  const rows = await server.ds.query(
    `SELECT id, chain_id, contract_address, owner, name, slug, status, total_supply, category_id, description, image_url,
            discord_url, telegram_url, external_url, twitter_username, instagram_username, fees
       FROM collections WHERE contract_address = $1 ORDER BY chain_id`,
    [address],
  );
  return rows;
}

describe('POST /v1/collections', () => {
  test('when created with every documented field, then the response has the Collection shape in snake_case and the row is stored', async () => {
    const { key, address: owner } = await server.key();
    const body = fullCollectionBody();
    const res = await server.rest('POST', '/v1/collections', body, key);

    expect(res.status).toBe(200);
    const lower = body.contract_address.toLowerCase();
    expect(res.body).toMatchObject({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      contract_address: lower,
      owner,
      total_supply: 500,
      category: { category_id: 'music', category_name: 'Music' },
      name: body.name,
      slug: body.name.toLowerCase().replace(/ /g, '-'),
      description: body.description,
      image_url: body.image_url,
      discord_url: body.discord_url,
      telegram_url: body.telegram_url,
      external_url: body.external_url,
      twitter_username: 'waves',
      instagram_username: 'waves.ig',
      fees: [{ address: body.fees[0].address.toLowerCase(), basis_points: 250, type: 'royalty' }],
      chain: { id: '137', name: 'Polygon', symbol: 'POL' },
      status: 'unverified',
    });
    expect(res.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(res.body).not.toHaveProperty('contractAddress');
    expect(res.body).not.toHaveProperty('totalSupply');

    const rows = await collectionRow(lower);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      id: res.body.id,
      chain_id: '137',
      contract_address: lower,
      owner,
      status: 'unverified',
      total_supply: 500,
      category_id: 'music',
      description: body.description,
      twitter_username: 'waves',
    });
    expect(rows[0].fees).toEqual([{ address: body.fees[0].address.toLowerCase(), basisPoints: 250 }]);
    expectDocumentedFields(res.body);
  });

  test('when created with only contract_address and chain_id, then the name defaults to the address and the other fields are null', async () => {
    const { key } = await server.key();
    const address = randomAddress();
    const res = await server.rest('POST', '/v1/collections', { contract_address: address, chain_id: '1' }, key);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: address, slug: address, total_supply: null, category: null, fees: [], description: null });
    expect(res.body.chain).toEqual({ id: '1', name: 'Ethereum', symbol: 'ETH' });
    expectDocumentedFields(res.body);
  });

  test('when the same contract address is created twice on one chain, then the second is a 409 and only one row exists', async () => {
    const { key } = await server.key();
    const address = randomAddress();
    await createCollection(key, { contract_address: address, chain_id: '56' });
    const res = await server.rest('POST', '/v1/collections', { contract_address: address.toUpperCase().replace('0X', '0x'), chain_id: '56' }, key);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('CONFLICT');
    expect(res.body.error.message).toContain('contract_address');
    expect(await collectionRow(address)).toHaveLength(1);
  });
});

describe('GET /v1/collections/{address}', () => {
  test('when read by its address in upper case, then the collection is returned with assets null by default', async () => {
    const { key } = await server.key();
    const created = await createCollection(key, { name: 'Upper Case Reader' });
    const upper = `0x${created.contract_address.slice(2).toUpperCase()}`;
    const res = await server.rest('GET', `/v1/collections/${upper}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: created.id, contract_address: created.contract_address, name: 'Upper Case Reader' });
    expectDocumentedFields(res.body);
    expect(res.body.assets).toBeNull();
  });

  test('when read with include_assets=true, then assets is a page envelope of its assets with the Asset fields', async () => {
    const { key, address: owner } = await server.key();
    const created = await createCollection(key);
    const collection = asFactoryRow(created);
    await saveAsset(server, key, collection, owner, { name: 'First' });
    await saveAsset(server, key, collection, owner, { name: 'Second' });

    const res = await server.rest('GET', `/v1/collections/${created.contract_address}?include_assets=true`);
    expect(res.status).toBe(200);
    expect(res.body.assets).toMatchObject({ cursor: null, remaining: 0 });
    expect(res.body.assets.result.map((a: { name: string }) => a.name).sort()).toEqual(['First', 'Second']);
    expect(res.body.assets.result[0]).toMatchObject({
      token_address: created.contract_address,
      owner,
      chain: { id: '1', name: 'Ethereum', symbol: 'ETH' },
    });
  });

  test('when the address is unknown, then it is a 404 NOT_FOUND', async () => {
    const res = await server.rest('GET', `/v1/collections/${randomAddress()}`);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
  });

  test('when the address exists on two chains and no chain_id is given, then it is a 409 naming both chains', async () => {
    const { key } = await server.key();
    const address = randomAddress();
    await createCollection(key, { contract_address: address, chain_id: '1', name: 'On Ethereum' });
    await createCollection(key, { contract_address: address, chain_id: '8453', name: 'On Base' });

    const res = await server.rest('GET', `/v1/collections/${address}`);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('CONFLICT');
    expect(res.body.error.message).toContain('1');
    expect(res.body.error.message).toContain('8453');
    expect(res.body.error.message).toContain('chain_id');
  });

  test('when the address exists on two chains and chain_id is given, then that chain’s collection is returned', async () => {
    const { key } = await server.key();
    const address = randomAddress();
    await createCollection(key, { contract_address: address, chain_id: '1', name: 'Eth Twin' });
    await createCollection(key, { contract_address: address, chain_id: '10', name: 'OP Twin' });

    const res = await server.rest('GET', `/v1/collections/${address}?chain_id=10`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'OP Twin', chain: { id: '10', name: 'OP Mainnet', symbol: 'ETH' } });
  });

  test('when chain_id names a chain the address is not on, then it is a 404', async () => {
    const { key } = await server.key();
    const created = await createCollection(key, { chain_id: '1' });
    const res = await server.rest('GET', `/v1/collections/${created.contract_address}?chain_id=137`);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
  });
});

describe('GET /v1/collections', () => {
  test('when filtered by owner_address, then only that owner’s collections are listed, with assets null', async () => {
    const { key, address: owner } = await server.key();
    const a = await createCollection(key);
    const b = await createCollection(key);
    const { key: otherKey } = await server.key();
    await createCollection(otherKey);

    const res = await server.rest('GET', `/v1/collections?owner_address=${owner.toUpperCase().replace('0X', '0x')}`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['cursor', 'remaining', 'result']);
    expect(res.body.result.map((c: { id: string }) => c.id).sort()).toEqual([a.id, b.id].sort());
    expect(res.body.remaining).toBe(0);
    for (const c of res.body.result) {
      expectDocumentedFields(c);
      expect(c.assets).toBeNull();
    }
  });

  test('when filtered by chain_id, then only collections on that chain are listed', async () => {
    const { key, address: owner } = await server.key();
    await createCollection(key, { chain_id: '1' });
    const onPolygon = await createCollection(key, { chain_id: '137' });
    const res = await server.rest('GET', `/v1/collections?owner_address=${owner}&chain_id=137`);
    expect(res.status).toBe(200);
    expect(res.body.result.map((c: { id: string }) => c.id)).toEqual([onPolygon.id]);
  });

  test('when filtered by category_id, then only collections of that category are listed', async () => {
    const { key, address: owner } = await server.key();
    const art = await createCollection(key, { category_id: 'art' });
    await createCollection(key, { category_id: 'gaming' });
    await createCollection(key);
    const res = await server.rest('GET', `/v1/collections?owner_address=${owner}&category_id=art`);
    expect(res.status).toBe(200);
    expect(res.body.result.map((c: { id: string }) => c.id)).toEqual([art.id]);
    expect(res.body.result[0].category).toEqual({ category_id: 'art', category_name: 'Art' });
  });

  test('when filtered by status, then only collections with that status are listed', async () => {
    const { key, address: owner } = await server.key();
    const { key: adminKey } = await server.key({ admin: true });
    const verified = await createCollection(key);
    const unverified = await createCollection(key);
    const put = await server.rest('PUT', `/v1/collections/${verified.contract_address}`, { status: 'verified' }, adminKey);
    expect(put.status).toBe(200);

    const v = await server.rest('GET', `/v1/collections?owner_address=${owner}&status=verified`);
    const u = await server.rest('GET', `/v1/collections?owner_address=${owner}&status=unverified`);
    expect(v.body.result.map((c: { id: string }) => c.id)).toEqual([verified.id]);
    expect(v.body.result[0].status).toBe('verified');
    expect(u.body.result.map((c: { id: string }) => c.id)).toEqual([unverified.id]);
  });

  test('when include_assets=true, then each collection carries an assets envelope of its own assets', async () => {
    const { key, address: owner } = await server.key();
    const withAsset = await saveCollection(server, key);
    const empty = await saveCollection(server, key);
    await saveAsset(server, key, withAsset, owner, { name: 'Only One' });

    const res = await server.rest('GET', `/v1/collections?owner_address=${owner}&include_assets=true`);
    expect(res.status).toBe(200);
    const byId = new Map(res.body.result.map((c: { id: string }) => [c.id, c]));
    expect(byId.get(withAsset.id)).toMatchObject({ assets: { cursor: null, remaining: 0, result: [{ name: 'Only One' }] } });
    expect(byId.get(empty.id)).toMatchObject({ assets: { cursor: null, remaining: 0, result: [] } });
  });

  test('when ordered by name ascending with limit 2, then paging by cursor walks the owner’s collections in order', async () => {
    const { key, address: owner } = await server.key();
    for (const name of ['delta', 'alpha', 'charlie', 'bravo', 'echo']) await createCollection(key, { name: `${name} ${owner}` });
    const names: string[] = [];
    let page: string | null = null;
    do {
      const res: HttpResult = await server.rest(
        'GET',
        `/v1/collections?owner_address=${owner}&order_by=name&direction=asc&limit=2${page ? `&page=${encodeURIComponent(page)}` : ''}`,
      );
      expect(res.status).toBe(200);
      names.push(...res.body.result.map((c: { name: string }) => c.name.split(' ')[0]));
      expect(res.body.remaining).toBe(5 - names.length);
      page = res.body.cursor;
    } while (page);
    expect(names).toEqual(['alpha', 'bravo', 'charlie', 'delta', 'echo']);
  });
});

describe('PUT /v1/collections/{address}', () => {
  test('when the owner updates documented fields, then the response and the row carry the new values', async () => {
    const { key } = await server.key();
    const created = await createCollection(key, { name: 'Before' });
    const res = await server.rest(
      'PUT',
      `/v1/collections/${created.contract_address.toUpperCase().replace('0X', '0x')}`,
      { name: 'After', description: { en: 'updated' }, twitter_username: 'after', image_url: 'https://example.com/after.png' },
      key,
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: created.id, name: 'After', description: { en: 'updated' }, twitter_username: 'after' });

    const [row] = await collectionRow(created.contract_address);
    expect(row).toMatchObject({ name: 'After', description: { en: 'updated' }, twitter_username: 'after', image_url: 'https://example.com/after.png' });
    expectDocumentedFields(res.body);
  });

  test('when another account’s key updates the collection, then it is a 403 and the row is unchanged', async () => {
    const { key } = await server.key();
    const created = await createCollection(key, { name: 'Mine' });
    const { key: strangerKey } = await server.key();
    const res = await server.rest('PUT', `/v1/collections/${created.contract_address}`, { name: 'Stolen' }, strangerKey);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('FORBIDDEN');
    const [row] = await collectionRow(created.contract_address);
    expect(row.name).toBe('Mine');
  });

  test('when an admin updates someone else’s collection, then it succeeds', async () => {
    const { key } = await server.key();
    const created = await createCollection(key, { name: 'Owned' });
    const { key: adminKey } = await server.key({ admin: true });
    const res = await server.rest('PUT', `/v1/collections/${created.contract_address}`, { name: 'Curated' }, adminKey);
    expect(res.status).toBe(200);
    expect(res.body.name).toBe('Curated');
    const [row] = await collectionRow(created.contract_address);
    expect(row.name).toBe('Curated');
  });

  test('when the owner (not an admin) sets status, then it is a 403 and the status stays unverified', async () => {
    const { key } = await server.key();
    const created = await createCollection(key);
    const res = await server.rest('PUT', `/v1/collections/${created.contract_address}`, { status: 'verified' }, key);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('FORBIDDEN');
    expect(res.body.error.message).toContain('status');
    const [row] = await collectionRow(created.contract_address);
    expect(row.status).toBe('unverified');
  });

  test('when an admin sets status verified, then the response and the row say verified', async () => {
    const { key } = await server.key();
    const created = await createCollection(key);
    const { key: adminKey } = await server.key({ admin: true });
    const res = await server.rest('PUT', `/v1/collections/${created.contract_address}`, { status: 'verified' }, adminKey);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('verified');
    const [row] = await collectionRow(created.contract_address);
    expect(row.status).toBe('verified');
  });

  test('when no key is sent, then it is a 401 and the row is unchanged', async () => {
    const { key } = await server.key();
    const created = await createCollection(key, { name: 'Keyless' });
    const res = await server.rest('PUT', `/v1/collections/${created.contract_address}`, { name: 'Changed' });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('UNAUTHENTICATED');
    const [row] = await collectionRow(created.contract_address);
    expect(row.name).toBe('Keyless');
  });

  test('when the key is sent as Authorization: Bearer, then the owner can update', async () => {
    const { key } = await server.key();
    const created = await createCollection(key, { name: 'Bearer Before' });
    const res = await server.rest('PUT', `/v1/collections/${created.contract_address}`, { name: 'Bearer After' }, undefined, {
      authorization: `Bearer ${key}`,
    });
    expect(res.status).toBe(200);
    expect(res.body.name).toBe('Bearer After');
  });

  test('when the address is on two chains, then chain_id chooses which one is updated', async () => {
    const { key } = await server.key();
    const address = randomAddress();
    await createCollection(key, { contract_address: address, chain_id: '1', name: 'Left' });
    await createCollection(key, { contract_address: address, chain_id: '42161', name: 'Right' });
    const ambiguous = await server.rest('PUT', `/v1/collections/${address}`, { name: 'Both?' }, key);
    expect(ambiguous.status).toBe(409);
    const res = await server.rest('PUT', `/v1/collections/${address}?chain_id=42161`, { name: 'Right, renamed' }, key);
    expect(res.status).toBe(200);
    const rows = await collectionRow(address);
    expect(rows.map((r: { chain_id: string; name: string }) => [r.chain_id, r.name])).toEqual([
      ['1', 'Left'],
      ['42161', 'Right, renamed'],
    ]);
  });

  test('when the address is unknown, then it is a 404', async () => {
    const { key } = await server.key();
    const res = await server.rest('PUT', `/v1/collections/${randomAddress()}`, { name: 'Nobody' }, key);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
  });
});
