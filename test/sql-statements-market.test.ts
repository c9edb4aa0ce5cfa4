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

/**
 * A collection of one seller with 10 fixed-price listings (prices 2 to 11, cheapest first), and an offer of
 * the sweeper's on each asset below its price, which a purchase of the asset cancels.
 */
async function tenListed(sweeper: Party): Promise<{ collectionId: string; listings: { id: string; assetId: string; offerId: string }[] }> {
  const first = await saveOwnedAsset(server);
  const listings: { id: string; assetId: string; offerId: string }[] = [];
  for (let i = 0; i < 10; i += 1) {
    const owned = i ? await saveSiblingAsset(server, first) : first;
    const listing = await saveListing(server, first.owner.key, owned.asset.id, { startPrice: i + 2 });
    const offer = await saveOffer(server, sweeper.key, owned.asset.id, { price: 1 });
    listings.push({ id: listing.id, assetId: owned.asset.id, offerId: offer.id });
  }
  return { collectionId: first.collection.id, listings };
}

describe('SQL statements of a sweep', () => {
  test('when sweeps buy 1, 5 and 10 listings, then each costs the same statements, and the database shows each bought once, the buyer\'s offers cancelled', async () => {
    const counts: number[] = [];
    for (const count of [1, 5, 10]) {
      const sweeper = await server.key();
      const { collectionId, listings } = await tenListed(sweeper);
      const [{ last: before }] = await server.ds.query('SELECT last::text FROM event_sequence');

      const res = await server.gql(SWEEP, { input: { collectionId, count, maxTotal: 1000, maxUnitPrice: 100 } }, sweeper.key);

      expect(res.body.errors).toBeUndefined();
      const bought = listings.slice(0, count);
      expect(res.body.data.sweepCollection.orders.map((o: { listingId: string }) => o.listingId)).toEqual(bought.map((l) => l.id));
      counts.push(res.sql);
      const orders = await server.ds.query(
        `SELECT listing_id AS "listingId", buyer, price::text, offer_id AS "offerId", status FROM orders WHERE listing_id = ANY($1::uuid[]) ORDER BY orders.price`,
        [listings.map((l) => l.id)],
      );
      expect(orders).toEqual(bought.map((l, i) => ({ listingId: l.id, buyer: sweeper.address, price: (i + 2).toFixed(18), offerId: null, status: 'completed' })));
      const rows = await server.ds.query(
        `SELECT l.id, l.status AS listing, a.owner, o.status AS offer FROM listings l JOIN assets a ON a.id = l.asset_id JOIN offers o ON o.asset_id = a.id
         WHERE l.id = ANY($1::uuid[])`,
        [listings.map((l) => l.id)],
      );
      for (const l of listings) {
        const row = rows.find((r: { id: string }) => r.id === l.id);
        const sold = bought.includes(l);
        expect([row.listing, row.owner === sweeper.address, row.offer]).toEqual(sold ? ['sold', true, 'cancelled'] : ['active', false, 'active']);
      }
      // One sale's events after another, each in the order of a single sale.
      const feed = await server.rest('GET', `/v1/events?collection_id=${collectionId}&after=${before}&limit=100`);
      expect(feed.body.result.map((e: { type: string; data: { id: string } }) => [e.type, e.data.id])).toEqual(
        bought.flatMap((l, i) => [
          ['listing.sold', l.id],
          ['asset.transferred', l.assetId],
          ['offer.cancelled', l.offerId],
          ['order.completed', res.body.data.sweepCollection.orders[i].id],
        ]),
      );
    }

    expect(counts[1]).toBe(counts[0]);
    expect(counts[2]).toBe(counts[0]);
  }, 120_000);
});

const SWEEP = /* GraphQL */ `
  mutation ($input: SweepCollectionInput!) {
    sweepCollection(input: $input) { orders { id listingId } skipped { reason } totalDecimal }
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
