import { startServer, TestServer } from './setup/server';
import { saveAsset, saveCollection } from './factories/marketplace';
import { collectionOfOwners } from './factories/traits';

/** Issue #14: assets filter by trait on both doors; collections count their traits; assets show their rarity. */
let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

const PALETTE = ['Blue', 'Blue', 'Red', 'Green'];
const traitsOf = (i: number) => [
  { trait_type: 'Background', value: PALETTE[i % 4] },
  { trait_type: 'Eyes', value: i % 2 === 0 ? 'Laser' : 'Sleepy' },
  { trait_type: 'Level', value: i },
];

const ASSETS_BY_TRAIT = /* GraphQL */ `
  query ($collectionId: String, $trait: [String!]) {
    assets(collectionId: $collectionId, trait: $trait, limit: 100, orderBy: TOKEN_ID, direction: ASC) {
      result { tokenId traits { traitType value count rarity } }
    }
  }`;

const tokenIds = (result: { token_id?: string; tokenId?: string }[]) => result.map((a) => a.token_id ?? a.tokenId);

describe('filtering assets by trait', () => {
  test('when trait is repeated, then types combine with AND and values of one type with OR, on REST', async () => {
    const { collection } = await collectionOfOwners(server, 8, traitsOf);
    const base = `/v1/assets?collection_id=${collection.id}&order_by=token_id&direction=asc&limit=100`;

    const blue = await server.rest('GET', `${base}&trait=Background:Blue`);
    const blueOrRed = await server.rest('GET', `${base}&trait=Background:Blue&trait=Background:Red`);
    const blueAndLaser = await server.rest('GET', `${base}&trait=Background:Blue&trait=Eyes:Laser`);
    const none = await server.rest('GET', `${base}&trait=Background:Purple`);

    expect(blue.status).toBe(200);
    expect(tokenIds(blue.body.result)).toEqual(['1', '2', '5', '6']);
    expect(tokenIds(blueOrRed.body.result)).toEqual(['1', '2', '3', '5', '6', '7']);
    expect(tokenIds(blueAndLaser.body.result)).toEqual(['1', '5']);
    expect(none.body.result).toEqual([]);
  });

  test('when the same filter goes through GraphQL, then the same assets come back; numbers match by their text', async () => {
    const { collection } = await collectionOfOwners(server, 8, traitsOf);

    const res = await server.gql(ASSETS_BY_TRAIT, { collectionId: collection.id, trait: ['Background:Blue', 'Eyes:Laser'] });
    const level = await server.gql(ASSETS_BY_TRAIT, { collectionId: collection.id, trait: ['Level:3'] });

    expect(res.body.errors).toBeUndefined();
    expect(tokenIds(res.body.data.assets.result)).toEqual(['1', '5']);
    expect(tokenIds(level.body.data.assets.result)).toEqual(['4']);
  });

  test('when a trait is not written type:value, then 400 naming trait', async () => {
    const res = await server.rest('GET', '/v1/assets?trait=Blue');
    expect(res.status).toBe(400);
    expect(res.body.error.details[0].field).toBe('trait');
  });

  test('when a value holds a colon or a comma, then it is matched whole (split at the first colon only)', async () => {
    const { collection } = await collectionOfOwners(server, 2, (i) => [{ trait_type: 'Motto', value: i ? 'a:b, c' : 'other' }]);

    const res = await server.rest('GET', `/v1/assets?collection_id=${collection.id}&trait=${encodeURIComponent('Motto:a:b, c')}`);

    expect(tokenIds(res.body.result)).toEqual(['2']);
  });
});

describe('trait counts and rarity', () => {
  test('when a collection is read, then it lists each trait with its count and rarity, kept current as assets are created', async () => {
    const owner = await server.key();
    const collection = await saveCollection(server, owner.key);
    for (const value of ['Blue', 'Blue', 'Red', 'Blue']) {
      await saveAsset(server, owner.key, collection, owner.address, { metadata: { attributes: [{ trait_type: 'Background', value }, { bad: true }, 'junk'] } });
    }
    await saveAsset(server, owner.key, collection, owner.address, { metadata: { attributes: 'not a list' } });

    const res = await server.rest('GET', `/v1/collections/${collection.contractAddress}`);

    expect(res.status).toBe(200);
    expect(res.body.traits).toEqual([
      { trait_type: 'Background', value: 'Blue', count: 3, rarity: 0.6 },
      { trait_type: 'Background', value: 'Red', count: 1, rarity: 0.2 },
    ]);
  });

  test('when an asset is read, then each of its traits shows its count and rarity in the collection, on both doors', async () => {
    const { collection, assets } = await collectionOfOwners(server, 4, traitsOf);

    const rest = await server.rest('GET', `/v1/assets/${assets[2].tokenAddress}/${assets[2].tokenId}`);
    const gql = await server.gql(ASSETS_BY_TRAIT, { collectionId: collection.id, trait: ['Background:Red'] });

    expect(rest.status).toBe(200);
    expect(rest.body.traits).toEqual([
      { trait_type: 'Background', value: 'Red', count: 1, rarity: 0.25 },
      { trait_type: 'Eyes', value: 'Laser', count: 2, rarity: 0.5 },
      { trait_type: 'Level', value: '2', count: 1, rarity: 0.25 },
    ]);
    expect(gql.body.data.assets.result[0].traits.map((t: { traitType: string; value: string }) => `${t.traitType}:${t.value}`)).toEqual([
      'Background:Red',
      'Eyes:Laser',
      'Level:2',
    ]);
  });

  test('when 3 or 30 assets with traits are listed, then the statement count is the same', async () => {
    const few = await collectionOfOwners(server, 3, traitsOf);
    const many = await collectionOfOwners(server, 30, traitsOf);

    const forFew = await server.rest('GET', `/v1/assets?collection_id=${few.collection.id}&limit=100&trait=Eyes:Laser&trait=Eyes:Sleepy`);
    const forMany = await server.rest('GET', `/v1/assets?collection_id=${many.collection.id}&limit=100&trait=Eyes:Laser&trait=Eyes:Sleepy`);
    const gqlFew = await server.gql(ASSETS_BY_TRAIT, { collectionId: few.collection.id });
    const gqlMany = await server.gql(ASSETS_BY_TRAIT, { collectionId: many.collection.id });

    expect(forFew.body.result).toHaveLength(3);
    expect(forMany.body.result).toHaveLength(30);
    expect(forMany.sql).toBe(forFew.sql);
    expect(gqlMany.body.data.assets.result).toHaveLength(30);
    expect(gqlMany.sql).toBe(gqlFew.sql);
  });
});

describe('statements of trait lists', () => {
  test('when 2 or 12 collections are listed with their trait counts, then the statement count is the same', async () => {
    const owner = await server.key({ admin: true });
    const listed = async (n: number) => {
      const name = `Traits ${Math.random().toString(36).slice(2, 8)}`;
      for (let i = 0; i < n; i += 1) {
        const collection = await saveCollection(server, owner.key, { name: `${name} ${i}` });
        await saveAsset(server, owner.key, collection, owner.address, { metadata: { attributes: [{ trait_type: 'Background', value: `v${i}` }] } });
      }
      return owner.address;
    };
    await listed(2);
    const few = await server.gql(COLLECTIONS_WITH_TRAITS, { owner: owner.address });
    await listed(10);
    const many = await server.gql(COLLECTIONS_WITH_TRAITS, { owner: owner.address });

    expect(few.body.errors).toBeUndefined();
    expect(few.body.data.collections.result).toHaveLength(2);
    expect(many.body.data.collections.result).toHaveLength(12);
    for (const c of many.body.data.collections.result) expect(c.traits).toEqual([expect.objectContaining({ traitType: 'Background', count: 1, rarity: 1 })]);
    expect(many.sql).toBe(few.sql);
  });
});

const COLLECTIONS_WITH_TRAITS = /* GraphQL */ `
  query ($owner: Address) {
    collections(ownerAddress: $owner, limit: 100) { result { id traits { traitType value count rarity } } }
  }`;

describe('the trait index', () => {
  // PGlite runs one transaction at a time: 100k rows in one would stall every other test file of the run, so
  // there the table gets 5k (the plan is the same); PostgreSQL gets the full 100k.
  const rows = process.env.DATABASE_URL ? 100_000 : 5_000;

  test(`when ${rows} traits are indexed, then the trait filter of an asset list reads ix_asset_traits_trait, never the whole table`, async () => {
    const { collection, assets } = await collectionOfOwners(server, 1);
    const asset = { id: assets[0].id, collection_id: collection.id };
    await server.ds
      .transaction(async (m) => {
        // Rolled back: many traits of a type of its own, so the planner sees a large table.
        await m.query(
          `INSERT INTO asset_traits (asset_id, collection_id, trait_type, value) SELECT $1, $2, 'Bench', 'v' || g FROM generate_series(1, $3::int) g`,
          [asset.id, asset.collection_id, rows],
        );
        await m.query('ANALYZE asset_traits');
        const planRows: Record<string, string>[] = await m.query(
          `EXPLAIN SELECT t.id FROM assets t
           WHERE t.id IN (SELECT at.asset_id FROM asset_traits at WHERE at.trait_type = $1 AND at.value = ANY($2::text[]))`,
          ['Bench', ['v7', 'v8']],
        );
        const plan = planRows.map((r) => r['QUERY PLAN']).join('\n');
        expect(plan).toContain('ix_asset_traits_trait');
        expect(plan).not.toMatch(/Seq Scan on asset_traits/);
        throw new Rollback();
      })
      .catch((err) => {
        if (!(err instanceof Rollback)) throw err;
      });
    const [{ count }] = await server.ds.query(`SELECT count(*)::int AS count FROM asset_traits WHERE trait_type = 'Bench'`);
    expect(count).toBe(0);
  });
});

class Rollback extends Error {}
