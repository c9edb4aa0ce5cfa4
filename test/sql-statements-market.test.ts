import { startServer, TestServer } from './setup/server';
import { OwnedAsset, Party, saveAcceptedOffer } from './factories/market';
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
