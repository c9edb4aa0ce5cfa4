import { isDeepStrictEqual } from 'node:util';
import { startServer, TestServer } from './setup/server';
import { ACCEPT_OFFER, OwnedAsset, Party, saveAcceptedOffer, saveListing, saveOffer, saveOwnedAsset, saveSiblingAsset } from './factories/market';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

const STATUS_OF_CODE: Record<string, number> = { FORBIDDEN: 403, NOT_FOUND: 404, CONFLICT: 409, VALIDATION_FAILED: 422, INTERNAL: 500 };

/** The HTTP status an acceptance got: REST as it is, GraphQL by its error code (200 with data when it succeeded). */
async function accept(i: number, offerId: string, key: string): Promise<number> {
  if (i % 2 === 0) return (await server.rest('POST', '/v1/offers/accept', { asset_id: offerId }, key)).status;
  const res = await server.gql(ACCEPT_OFFER, { offerId }, key);
  if (res.body.data?.acceptOffer) return 200;
  return STATUS_OF_CODE[res.body.errors?.[0]?.extensions?.code] ?? res.status;
}

async function cancel(i: number, offerId: string, key: string): Promise<number> {
  if (i % 2 === 0) return (await server.rest('DELETE', `/v1/offers/${offerId}`, undefined, key)).status;
  const res = await server.gql(CANCEL_OFFER, { id: offerId }, key);
  if (res.body.data?.cancelOffer) return 200;
  return STATUS_OF_CODE[res.body.errors?.[0]?.extensions?.code] ?? res.status;
}

function tally(statuses: number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
  return counts;
}

/** One offer from each taker on the asset, created a batch at a time. */
async function offersFromEach(takers: Party[], assetId: string, batch = 25): Promise<string[]> {
  const ids: string[] = [];
  for (let from = 0; from < takers.length; from += batch) {
    const offers = await Promise.all(takers.slice(from, from + batch).map((t, i) => saveOffer(server, t.key, assetId, { price: 1 + from + i })));
    ids.push(...offers.map((o) => o.id));
  }
  return ids;
}

async function salesOf(assetId: string) {
  const orders: { offer_id: string; buyer: string }[] = await server.ds.query('SELECT offer_id, buyer FROM orders WHERE asset_id = $1', [assetId]);
  const accepted: { id: string }[] = await server.ds.query(`SELECT id FROM offers WHERE asset_id = $1 AND status = 'accepted'`, [assetId]);
  const [{ owner }] = await server.ds.query('SELECT owner FROM assets WHERE id = $1', [assetId]);
  return { orders, accepted, owner };
}

describe('concurrent acceptances', () => {
  test('when the owner accepts 50 offers of 50 takers at once, 20 rounds over, then each round exactly one wins and 49 get 409', async () => {
    const takers = await Promise.all(Array.from({ length: 50 }, () => server.key()));
    let owned: OwnedAsset = await saveOwnedAsset(server);
    const outcomes: Record<number, number>[] = [];
    const databases: { orders: number; acceptedOfferHasTheOrder: boolean; ownerIsTheBuyer: boolean }[] = [];

    for (let round = 0; round < 20; round += 1) {
      if (round > 0) owned = await saveSiblingAsset(server, owned);
      const offerIds = await offersFromEach(takers, owned.asset.id);

      const statuses = await Promise.all(offerIds.map((id, i) => accept(i, id, owned.owner.key)));

      outcomes.push(tally(statuses));
      const { orders, accepted, owner } = await salesOf(owned.asset.id);
      databases.push({
        orders: orders.length,
        acceptedOfferHasTheOrder: accepted.length === 1 && accepted[0].id === orders[0]?.offer_id,
        ownerIsTheBuyer: owner === orders[0]?.buyer,
      });
    }

    expect(databases).toEqual(Array(20).fill({ orders: 1, acceptedOfferHasTheOrder: true, ownerIsTheBuyer: true }));
    expect(outcomes.filter((o) => Object.keys(o).some((status) => Number(status) >= 500))).toEqual([]);
    expect(outcomes).toEqual(Array(20).fill({ 200: 1, 409: 49 }));
  }, 150_000);

  test('when an acceptance races a cancel of the same offer, then exactly one of them succeeds and the database agrees', async () => {
    const owned = await saveOwnedAsset(server);
    const taker = await server.key();
    const races: { accepted: number; cancelled: number; status: string; orders: number; owner: string }[] = [];

    for (let i = 0; i < 10; i += 1) {
      const asset = i === 0 ? owned : await saveSiblingAsset(server, owned);
      await saveListing(server, owned.owner.key, asset.asset.id, { startPrice: 100 });
      const offer = await saveOffer(server, taker.key, asset.asset.id);

      const [accepted, cancelled] = await Promise.all([accept(i, offer.id, owned.owner.key), cancel(i, offer.id, taker.key)]);

      const { orders, owner } = await salesOf(asset.asset.id);
      const [{ status }] = await server.ds.query('SELECT status FROM offers WHERE id = $1', [offer.id]);
      races.push({ accepted, cancelled, status, orders: orders.length, owner });
    }

    const acceptanceWon = { accepted: 200, cancelled: 409, status: 'accepted', orders: 1, owner: taker.address };
    const cancelWon = { accepted: 409, cancelled: 200, status: 'cancelled', orders: 0, owner: owned.owner.address };
    expect(races.filter((race) => !isDeepStrictEqual(race, acceptanceWon) && !isDeepStrictEqual(race, cancelWon))).toEqual([]);
  });
});

describe('database constraints', () => {
  test('when a second active listing row is inserted for an asset, then the database refuses it with a unique violation', async () => {
    const owned = await saveOwnedAsset(server);
    await saveListing(server, owned.owner.key, owned.asset.id);

    const insert = server.ds.query(
      `INSERT INTO listings (asset_id, collection_id, seller, order_type, start_price, listing_time)
       VALUES ($1, $2, $3, 'fixed_price', 1, now())`,
      [owned.asset.id, owned.collection.id, owned.owner.address],
    );

    await expect(insert).rejects.toMatchObject({ driverError: { code: '23505' } });
  });

  test('when a second order row is inserted for the same offer, then the database refuses it with a unique violation', async () => {
    const owned = await saveOwnedAsset(server);
    const taker = await server.key();
    const { orderId } = await saveAcceptedOffer(server, owned, taker);

    const insert = server.ds.query(
      `INSERT INTO orders (offer_id, asset_id, collection_id, chain_id, token_address, token_id, price, seller, buyer)
       SELECT offer_id, asset_id, collection_id, chain_id, token_address, token_id, price, seller, buyer FROM orders WHERE id = $1`,
      [orderId],
    );

    await expect(insert).rejects.toMatchObject({ driverError: { code: '23505' } });
  });
});

const CANCEL_OFFER = /* GraphQL */ `
  mutation ($id: ID!) { cancelOffer(id: $id) { id status } }`;
