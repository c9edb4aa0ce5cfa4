import { startServer, TestServer } from './setup/server';
import { CollectionRow, saveAsset, saveCollection } from './factories/marketplace';
import { saveListing } from './factories/market';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

/** An account owning `collections` collections of `assetsEach` assets each. */
async function accountWithCollections(collections: number, assetsEach: number): Promise<{ owner: string; collections: CollectionRow[] }> {
  const { key, address } = await server.key();
  const created: CollectionRow[] = [];
  for (let c = 0; c < collections; c += 1) {
    const collection = await saveCollection(server, key);
    for (let a = 0; a < assetsEach; a += 1) await saveAsset(server, key, collection, address);
    created.push(collection);
  }
  return { owner: address, collections: created };
}

/** The statements of the GraphQL request, after checking that it returned every collection with its assets. */
async function statementsOfCollectionsWithAssets(owner: string, expectedCollections: number, assetsEach: number): Promise<number> {
  const res = await server.gql(COLLECTIONS_WITH_ASSETS, { owner });
  expect(res.body.errors).toBeUndefined();
  const collections = res.body.data.collections.result;
  expect(collections).toHaveLength(expectedCollections);
  for (const collection of collections) {
    expect(collection.assets.result).toHaveLength(assetsEach);
    for (const asset of collection.assets.result) {
      expect(asset.collection.name).toEqual(expect.any(String));
      expect(asset.chain.name).toBe('Ethereum');
    }
  }
  expect(Number.isInteger(res.sql)).toBe(true);
  return res.sql;
}

describe('SQL statements per request', () => {
  test('when 2 or 20 collections are listed with their assets, their collection and chain, then the statement count is the same and at most 4', async () => {
    const few = await accountWithCollections(2, 3);
    const many = await accountWithCollections(20, 3);

    const forFew = await statementsOfCollectionsWithAssets(few.owner, 2, 3);
    const forMany = await statementsOfCollectionsWithAssets(many.owner, 20, 3);

    expect(forMany).toBe(forFew);
    expect(forMany).toBeLessThanOrEqual(4);
  });

  test('when GET /v1/collections includes the assets of 2 or 20 collections, then the statement count is the same, and 1: the SQL plan builds the whole answer', async () => {
    const few = await accountWithCollections(2, 3);
    const many = await accountWithCollections(20, 3);

    const forFew = await server.rest('GET', `/v1/collections?owner_address=${few.owner}&include_assets=true`);
    const forMany = await server.rest('GET', `/v1/collections?owner_address=${many.owner}&include_assets=true`);

    expect(forFew.status).toBe(200);
    expect(forMany.status).toBe(200);
    expect(forFew.body.result).toHaveLength(2);
    expect(forMany.body.result).toHaveLength(20);
    for (const collection of forMany.body.result) expect(collection.assets.result).toHaveLength(3);
    expect(forMany.body.result.every((c: { chain: { name: string } }) => c.chain.name === 'Ethereum')).toBe(true);
    // One statement builds the collections, their chains and categories, their assets and listings (sql-plan/).
    expect(forFew.sql).toBe(1);
    expect(forMany.sql).toBe(forFew.sql);

    // Without SQL plans the resolvers answer: the collections with their chains and categories, the
    // assets of all of them, their listings; the same answer.
    const off = await startServer({ sqlPlans: false });
    try {
      for (const [account, planned] of [[few, forFew], [many, forMany]] as const) {
        const resolved = await off.rest('GET', `/v1/collections?owner_address=${account.owner}&include_assets=true`);
        expect(resolved.sql).toBe(3);
        // The same JSON (PostgreSQL writes stored JSON such as metadata with its own spacing).
        expect(resolved.body).toEqual(planned.body);
      }
    } finally {
      await off.close();
    }
  });

  test('when 3 or 30 assets of a collection are listed with their collection, chain and fees, then the statement count is the same', async () => {
    const few = await accountWithCollections(1, 3);
    const many = await accountWithCollections(1, 30);

    const statements = async (collection: CollectionRow, expected: number) => {
      const res = await server.gql(ASSETS_WITH_RELATIONS, { collectionId: collection.id });
      expect(res.body.errors).toBeUndefined();
      const assets = res.body.data.assets.result;
      expect(assets).toHaveLength(expected);
      for (const asset of assets) expect(asset).toMatchObject({ collection: { name: collection.name }, chain: { name: 'Ethereum' } });
      expect(Number.isInteger(res.sql)).toBe(true);
      return res.sql;
    };

    expect(await statements(many.collections[0], 30)).toBe(await statements(few.collections[0], 3));
  });
});

describe('relations loaded for a whole page', () => {
  test('when a page of assets selects some relations, then exactly one statement is added for each relation selected', async () => {
    const { owner } = await accountWithCollections(1, 4);
    const statements = async (fields: string) => {
      const res = await server.gql(`query ($owner: Address) { assets(limit: 10, ownerId: $owner) { result { id ${fields} } } }`, { owner });
      expect(res.body.errors).toBeUndefined();
      expect(res.body.data.assets.result).toHaveLength(4);
      return res.sql;
    };
    const bare = await statements('');
    expect({
      status: await statements('status'),
      listing: await statements('listing { id }'),
      listingAndStatus: await statements('status listing { id }'),
      listingChain: await statements('listing { id chain { id } }'),
      chain: await statements('chain { name }'),
      collectionAndFees: await statements('collection { name } fees { type }'),
      all: await statements('status fees { type } collection { name } chain { name } listing { fees { type } chain { id } }'),
    }).toEqual({
      status: bare + 1,
      listing: bare + 1,
      listingAndStatus: bare + 1,
      listingChain: bare + 2,
      chain: bare + 1,
      collectionAndFees: bare + 1,
      all: bare + 3,
    });
  });
});

describe('SQL statements per request, under concurrency', () => {
  test('when reads and writes of different sizes run in parallel, then each response counts only its own statements', async () => {
    const { owner, collections } = await accountWithCollections(3, 2);
    const { key } = await server.key({ address: owner });
    // Each kind of request alone, one after another: the figures every parallel copy must report again.
    const kinds: { name: string; run: () => Promise<{ status: number; sql: number }> }[] = [
      { name: 'graphql collections x assets', run: () => server.gql(COLLECTIONS_WITH_ASSETS, { owner }) },
      { name: 'rest collections x assets', run: () => server.rest('GET', `/v1/collections?owner_address=${owner}&include_assets=true`) },
      { name: 'rest one asset list', run: () => server.rest('GET', `/v1/assets?collection_id=${collections[0].id}&limit=5`) },
      { name: 'graphql categories', run: () => server.gql('{ categories(limit: 5) { result { name } } }') },
      {
        name: 'rest create asset (a transaction)',
        run: () =>
          server.rest(
            'POST',
            '/v1/assets',
            {
              collection_id: collections[1].id,
              name: 'Counted',
              description: 'd',
              image_url: 'https://example.com/c.png',
              metadata: {},
              token_address: collections[1].contractAddress,
              chain_id: collections[1].chainId,
              owner,
            },
            key,
          ),
      },
    ];
    const alone = new Map<string, number>();
    for (const kind of kinds) {
      const res = await kind.run();
      expect(res.status).toBe(200);
      alone.set(kind.name, res.sql);
    }
    expect(new Set(alone.values()).size).toBeGreaterThan(1);
    // BEGIN, the insert and COMMIT at least: a transaction's statements count for its request too.
    expect(alone.get('rest create asset (a transaction)')).toBeGreaterThanOrEqual(3);

    const parallel = await Promise.all(
      Array.from({ length: 6 }, () => kinds).flat().map(async (kind) => ({ name: kind.name, res: await kind.run() })),
    );
    for (const { name, res } of parallel) {
      expect({ name, status: res.status, sql: res.sql }).toEqual({ name, status: 200, sql: alone.get(name) });
    }
  });
});

describe('request ids in GraphQL errors', () => {
  test('when a GraphQL request fails, then each error carries the request id of the x-request-id header', async () => {
    const missing = await server.gql('query ($id: ID!) { offer(id: $id) { id } }', { id: '00000000-0000-4000-8000-000000000000' });
    const invalid = await server.gql('{ collections { result { noSuchField } } }');
    for (const res of [missing, invalid]) {
      expect(res.body.errors?.length).toBeGreaterThan(0);
      const requestId = res.headers.get('x-request-id');
      expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
      for (const error of res.body.errors!) expect(error.extensions.requestId).toBe(requestId);
    }
    expect(missing.body.errors![0].extensions.code).toBe('NOT_FOUND');
    expect(invalid.body.errors![0].extensions.code).toBe('BAD_REQUEST');
  });
});

const COLLECTIONS_WITH_ASSETS = /* GraphQL */ `
  query ($owner: Address) {
    collections(limit: 20, ownerAddress: $owner) {
      result { assets(limit: 20) { result { collection { name } chain { name } } } }
    }
  }`;

const ASSETS_WITH_RELATIONS = /* GraphQL */ `
  query ($collectionId: String) {
    assets(limit: 50, collectionId: $collectionId) {
      result { collection { name } chain { name } fees { type } }
    }
  }`;

describe('one asset with its collection', () => {
  test('when an asset is read by token with its collection, then one statement answers both (a join), and the collection is whole', async () => {
    const { owner, collections } = await accountWithCollections(1, 1);
    const [collection] = collections;
    const res = await server.gql(
      `query ($a: Address!, $t: TokenId!) { asset(tokenAddress: $a, tokenId: $t) { id owner collection { id name contractAddress slug fees { type } } } }`,
      { a: collection.contractAddress, t: '1' },
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.asset.owner).toBe(owner);
    expect(res.body.data.asset.collection).toMatchObject({ id: collection.id, name: collection.name, contractAddress: collection.contractAddress, slug: collection.slug });
    expect(res.sql).toBe(1);
    // Without the collection: the asset alone, one statement too.
    const bare = await server.gql(`query ($a: Address!, $t: TokenId!) { asset(tokenAddress: $a, tokenId: $t) { id } }`, { a: collection.contractAddress, t: '1' });
    expect(bare.body.errors).toBeUndefined();
    expect(bare.sql).toBe(1);
  });

  test('when the token does not exist, then the join answers NOT_FOUND as before', async () => {
    const { collections } = await accountWithCollections(1, 0);
    const res = await server.gql(`query ($a: Address!, $t: TokenId!) { asset(tokenAddress: $a, tokenId: $t) { id collection { name } } }`, {
      a: collections[0].contractAddress,
      t: '77',
    });
    expect(res.body.errors![0].extensions.code).toBe('NOT_FOUND');
  });
});

describe('assets of one collection', () => {
  test('when the first page of a collection is read by its id, then one statement answers; an unknown or empty collection is still told apart', async () => {
    const { collections } = await accountWithCollections(2, 0);
    const { key, address } = await server.key();
    const [full, empty] = collections;
    const owned = await saveCollection(server, key);
    for (let i = 0; i < 3; i += 1) await saveAsset(server, key, owned, address);
    const query = `query ($c: String!, $page: String) { assets(collectionId: $c, orderBy: TOKEN_ID, direction: ASC, limit: 2, page: $page) { cursor result { tokenId } } }`;
    const first = await server.gql(query, { c: owned.id.toUpperCase() });
    expect(first.body.errors).toBeUndefined();
    expect(first.body.data.assets.result.map((a: { tokenId: string }) => a.tokenId)).toEqual(['1', '2']);
    expect(first.sql).toBe(1);
    const next = await server.gql(query, { c: owned.id, page: first.body.data.assets.cursor });
    expect(next.body.data.assets.result.map((a: { tokenId: string }) => a.tokenId)).toEqual(['3']);
    // An existing collection without assets: an empty page, not an error.
    const none = await server.gql(query, { c: empty.id });
    expect(none.body.errors).toBeUndefined();
    expect(none.body.data.assets.result).toEqual([]);
    expect(full.id).not.toBe(empty.id);
    const unknown = await server.gql(query, { c: '00000000-0000-4000-8000-000000000077' });
    expect(unknown.body.errors![0].extensions.code).toBe('NOT_FOUND');
  });
});

describe('search by name', () => {
  /** A collection of 12 assets named `<word> <i>` (a word of this test alone), with traits, a third of them listed. */
  async function searchable(): Promise<{ word: string; collection: CollectionRow }> {
    const { key, address } = await server.key();
    const word = `needle${Math.random().toString(36).slice(2, 8)}`;
    const collection = await saveCollection(server, key, { name: `${word} works` });
    for (let i = 0; i < 12; i += 1) {
      const asset = await saveAsset(server, key, collection, address, { name: `${word} ${i}`, metadata: { attributes: [{ trait_type: 'Eyes', value: i % 2 ? 'Blue' : 'Red' }] } });
      if (i % 3 === 0) await saveListing(server, key, asset.id);
    }
    return { word, collection };
  }

  test('when GET /v1/search/assets answers 2 or 10 assets (traits, listing, collection), then the statement count is the same, and 1; the resolvers answer the same', async () => {
    const { word, collection } = await searchable();
    const path = (limit: number) => `/v1/search/assets?query=${word}&collection_id=${collection.id}&limit=${limit}`;
    const few = await server.rest('GET', path(2));
    const many = await server.rest('GET', path(10));
    expect(few.status).toBe(200);
    expect(many.body.result).toHaveLength(10);
    expect(many.body.remaining).toBe(2);
    expect(many.body.result.filter((a: { listing: unknown }) => a.listing !== null)).not.toHaveLength(0);
    expect(many.body.result[0].traits).toEqual([expect.objectContaining({ trait_type: 'Eyes' })]);
    // One statement builds the page, the ranking, the count and each asset's traits, listing and collection (sql-plan/).
    expect(few.sql).toBe(1);
    expect(many.sql).toBe(few.sql);

    const off = await startServer({ sqlPlans: false });
    try {
      for (const [limit, planned] of [[2, few], [10, many]] as const) {
        const resolved = await off.rest('GET', path(limit));
        expect(resolved.sql).toBeGreaterThan(1);
        expect(resolved.body).toEqual(planned.body);
      }
      // The next page (by the cursor) is the resolvers' on both servers.
      const next = `${path(10)}&page=${encodeURIComponent(many.body.cursor)}`;
      expect((await server.rest('GET', next)).body).toEqual((await off.rest('GET', next)).body);
    } finally {
      await off.close();
    }
  });

  test('when GraphQL searches assets or collections with their relations, 2 or 10 of them, then the statement count is the same; the resolvers answer the same', async () => {
    const { word, collection } = await searchable();
    const statements = async (target: TestServer, limit: number) => {
      const res = await target.gql(SEARCH_WITH_RELATIONS, { query: word, collectionId: collection.id, limit });
      expect(res.body.errors).toBeUndefined();
      expect(res.body.data.searchAssets.result).toHaveLength(limit);
      expect(res.body.data.searchCollections.result).toEqual([{ name: `${word} works`, chain: { name: 'Ethereum' } }]);
      return res;
    };
    // The first uses of a document are validated by Apollo and compiled; then it is known, and planned.
    for (let i = 0; i < 2; i += 1) await statements(server, 2);
    const few = await statements(server, 2);
    const many = await statements(server, 10);
    // Both roots, their pages, counts and relations in one statement (sql-plan/).
    expect(few.sql).toBe(1);
    expect(many.sql).toBe(few.sql);

    // One root alone is read as one row per asset, its count a window over the ranked candidates (sql-plan/page.ts).
    const alone = async (target: TestServer) => {
      const res = await target.gql(SEARCH_ALONE, { query: word, collectionId: collection.id, limit: 5 });
      expect(res.body.errors).toBeUndefined();
      return res;
    };
    for (let i = 0; i < 2; i += 1) await alone(server);
    const planned = await alone(server);
    expect(planned.sql).toBe(1);
    expect(planned.body.data.searchAssets).toMatchObject({ remaining: 7, cursor: expect.any(String) });

    const off = await startServer({ sqlPlans: false });
    try {
      expect((await statements(off, 10)).body).toEqual(many.body);
      expect((await alone(off)).body).toEqual(planned.body);
    } finally {
      await off.close();
    }
  });
});

const SEARCH_ALONE = /* GraphQL */ `
  query ($query: String!, $collectionId: String, $limit: Int) {
    searchAssets(query: $query, collectionId: $collectionId, limit: $limit) { cursor remaining result { id name tokenId } }
  }
`;

const SEARCH_WITH_RELATIONS = /* GraphQL */ `
  query ($query: String!, $collectionId: String, $limit: Int) {
    searchAssets(query: $query, collectionId: $collectionId, limit: $limit) {
      cursor remaining result { id name status collection { name } chain { name } listing { currentPrice } traits { traitType value count } }
    }
    searchCollections(query: $query) { remaining result { name chain { name } } }
  }
`;
