import { startServer, TestServer } from './setup/server';
import { CollectionRow, saveAsset, saveCollection } from './factories/marketplace';

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

  test('when GET /v1/collections includes the assets of 2 or 20 collections, then the statement count is the same', async () => {
    const few = await accountWithCollections(2, 3);
    const many = await accountWithCollections(20, 3);

    const forFew = await server.rest('GET', `/v1/collections?owner_address=${few.owner}&include_assets=true`);
    const forMany = await server.rest('GET', `/v1/collections?owner_address=${many.owner}&include_assets=true`);

    expect(forFew.status).toBe(200);
    expect(forMany.status).toBe(200);
    expect(forFew.body.result).toHaveLength(2);
    expect(forMany.body.result).toHaveLength(20);
    for (const collection of forMany.body.result) expect(collection.assets.result).toHaveLength(3);
    expect(Number.isInteger(forFew.sql)).toBe(true);
    expect(forMany.sql).toBe(forFew.sql);
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
