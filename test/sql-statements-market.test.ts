import { startServer, TestServer } from './setup/server';
import { OwnedAsset, Party, saveAcceptedOffer, saveListing, saveOffer, saveOwnedAsset, saveSiblingAsset } from './factories/market';
import { CollectionRow, saveAsset, saveCollection } from './factories/marketplace';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

/**
 * A seller and a buyer with `count` completed sales between them, over assets spread across
 * collections of 5 assets each, so that nested fields load from several parents at every level.
 */
async function salesBetweenTwo(count: number): Promise<{ seller: string; buyer: string }> {
  const seller: Party = await server.key();
  const buyer: Party = await server.key();
  const assets: OwnedAsset[] = [];
  let collection: CollectionRow | undefined;
  for (let i = 0; i < count; i += 1) {
    if (i % 5 === 0) collection = await saveCollection(server, seller.key);
    const asset = await saveAsset(server, seller.key, collection!, seller.address);
    assets.push({ owner: seller, collection: collection!, asset });
  }
  for (const owned of assets) await saveAcceptedOffer(server, owned, buyer, 2);
  return { seller: seller.address, buyer: buyer.address };
}

async function statements(query: string, variables: Record<string, unknown>, items: (data: any) => unknown[], expected: number): Promise<number> {
  const res = await server.gql(query, variables);
  expect(res.body.errors).toBeUndefined();
  expect(items(res.body.data)).toHaveLength(expected);
  expect(Number.isInteger(res.sql)).toBe(true);
  return res.sql;
}

describe('SQL statements of marketplace lists', () => {
  let few: { seller: string; buyer: string };
  let many: { seller: string; buyer: string };
  beforeAll(async () => {
    few = await salesBetweenTwo(2);
    many = await salesBetweenTwo(20);
  }, 180_000);

  test('when 2 or 20 offers are listed with their assets\' collections, then the statement count is the same', async () => {
    const collectionNames = (data: any) => data.offers.result.map((o: any) => o.assets.result[0].collection.name);

    const forFew = await statements(OFFERS_WITH_COLLECTIONS, { taker: few.buyer }, collectionNames, 2);
    const forMany = await statements(OFFERS_WITH_COLLECTIONS, { taker: many.buyer }, collectionNames, 20);

    expect(forMany).toBe(forFew);
  });

  test('when 2 or 20 orders are listed with their offers\' assets, then the statement count is the same', async () => {
    const assetNames = (data: any) => data.orders.result.map((o: any) => o.offer.assets.result[0].name);

    const forFew = await statements(ORDERS_WITH_ASSETS, { who: few.seller }, assetNames, 2);
    const forMany = await statements(ORDERS_WITH_ASSETS, { who: many.seller }, assetNames, 20);

    expect(forMany).toBe(forFew);
  });

  test('when 2 or 20 offers are listed with their history and their assets\' history, then the statement count is the same', async () => {
    const histories = (data: any) =>
      data.offers.result.map((o: any) => {
        expect(o.history.result.map((h: any) => h.type)).toEqual(['offer.accepted', 'offer.created']);
        expect(o.assets.result[0].history.result.map((h: any) => h.type)).toEqual(['asset.transferred', 'asset.created']);
        return o;
      });

    const forFew = await statements(OFFERS_WITH_HISTORY, { taker: few.buyer }, histories, 2);
    const forMany = await statements(OFFERS_WITH_HISTORY, { taker: many.buyer }, histories, 20);

    expect(forMany).toBe(forFew);
  });
});

describe('SQL statements of a sweep', () => {
  /** A collection of one seller with `count` fixed-price listings at 1, 2, 3, ... */
  async function listedCollection(count: number): Promise<string> {
    const first = await saveOwnedAsset(server);
    for (let i = 0; i < count; i += 1) {
      const owned = i ? await saveSiblingAsset(server, first) : first;
      await saveListing(server, first.owner.key, owned.asset.id, { startPrice: i + 1 });
    }
    return first.collection.id;
  }

  test('when a sweep buys 1 or 10 listings, then it runs the same number of statements, and the events of each sale are written', async () => {
    const [one, ten] = [await listedCollection(2), await listedCollection(12)];
    const sweeper = await server.key();
    // The sweeper's own offer on an asset it buys is cancelled, as a buy cancels it.
    const [cheapest] = await server.ds.query(`SELECT asset_id FROM listings WHERE collection_id = $1 AND start_price = 1`, [ten]);
    await saveOffer(server, sweeper.key, cheapest.asset_id, { price: '0.5' });

    const sweep = async (collectionId: string, count: number) => {
      const res = await server.gql(SWEEP, { input: { collectionId, count, maxTotal: 1000, maxUnitPrice: 100 } }, sweeper.key);
      expect(res.body.errors).toBeUndefined();
      expect(res.body.data.sweepCollection.orders).toHaveLength(count);
      return res.sql;
    };
    const forOne = await sweep(one, 1);
    const forTen = await sweep(ten, 10);
    expect(forTen).toBe(forOne);

    const events: { type: string; n: number }[] = await server.ds.query(
      `SELECT type, count(*)::int AS n FROM events WHERE collection_id = $1 AND type IN ('listing.sold', 'asset.transferred', 'order.completed', 'offer.cancelled')
       GROUP BY type ORDER BY type`,
      [ten],
    );
    expect(events).toEqual([
      { type: 'asset.transferred', n: 10 },
      { type: 'listing.sold', n: 10 },
      { type: 'offer.cancelled', n: 1 },
      { type: 'order.completed', n: 10 },
    ]);
  }, 60_000);
});

const SWEEP = /* GraphQL */ `
  mutation ($input: SweepCollectionInput!) {
    sweepCollection(input: $input) { orders { id } skipped { reason } }
  }`;

const OFFERS_WITH_HISTORY = /* GraphQL */ `
  query ($taker: Address) {
    offers(limit: 20, ownerId: $taker) {
      result { history { remaining result { type orderId } } assets { result { history { result { type price from to } } } } }
    }
  }`;

const OFFERS_WITH_COLLECTIONS = /* GraphQL */ `
  query ($taker: Address) {
    offers(limit: 20, ownerId: $taker) { result { assets { result { collection { name } } } } }
  }`;

const ORDERS_WITH_ASSETS = /* GraphQL */ `
  query ($who: Address) {
    orders(limit: 20, ownerId: $who) { result { offer { assets { result { name } } } } }
  }`;
