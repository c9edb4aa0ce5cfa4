import { randomUUID } from 'node:crypto';
import { clock } from '../src/common/clock';
import { OwnedAsset, Party, saveListing, saveOffer, saveOwnedAsset, saveSiblingAsset } from './factories/market';
import { collectionOfOwners } from './factories/traits';
import { HttpResult, startServer, TestServer } from './setup/server';
import { later, wholeSecond } from './setup/time';

/** Buy now and sweeps (docs/api.md "Buying"), through both doors, with the database read back. */
let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());
afterEach(() => clock.reset());

const STATUS_OF_CODE: Record<string, number> = { NOT_FOUND: 404, CONFLICT: 409, VALIDATION_FAILED: 422, INTERNAL: 500 };

/** A GraphQL answer as the REST door would give its status: 200 with data, else its error code's status. */
function statusOf(res: HttpResult, field: string): number {
  if (res.body.data?.[field]) return 200;
  return STATUS_OF_CODE[res.body.errors?.[0]?.extensions?.code] ?? res.status;
}

interface OrderRow {
  id: string;
  offer_id: string | null;
  listing_id: string;
  asset_id: string;
  price: string;
  seller: string;
  buyer: string;
  status: string;
  unit: number;
}

async function ordersOfListings(listingIds: string[]): Promise<OrderRow[]> {
  return server.ds.query(
    'SELECT id, offer_id, listing_id, asset_id, price::text, seller, buyer, status, unit FROM orders WHERE listing_id = ANY($1::uuid[]) ORDER BY created_at, price, id',
    [listingIds],
  );
}

async function listingStatus(listingId: string): Promise<string> {
  const [{ status }] = await server.ds.query('SELECT status FROM listings WHERE id = $1', [listingId]);
  return status;
}

async function assetRow(assetId: string): Promise<{ owner: string; status: string }> {
  const [row] = await server.ds.query('SELECT owner, status FROM assets WHERE id = $1', [assetId]);
  return row;
}

/** A fresh asset listed by its owner (fixed price 5 unless overridden). */
async function listed(overrides: Record<string, unknown> = {}): Promise<{ owned: OwnedAsset; listing: { id: string } }> {
  const owned = await saveOwnedAsset(server);
  const listing = await saveListing(server, owned.owner.key, owned.asset.id, overrides);
  return { owned, listing };
}

/** A dutch auction from 3 to 1 over a day, with the clock 441.123 s in (docs/api.md: its price is 2.989788819444444444). */
async function dutchAt441s(): Promise<{ owned: OwnedAsset; listing: { id: string } }> {
  const start = wholeSecond();
  clock.set(start);
  const made = await listed({ orderType: 'DUTCH_AUCTION', startPrice: 3, acceptPrice: 1, expirationTime: { durationSeconds: 86400 } });
  clock.set(later(start, 441123));
  return made;
}

const buyRest = (listingId: string, buyer: Party, body: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  server.rest('POST', `/v1/listings/${listingId}/buy`, body, buyer.key, headers);

const buyGql = (listingId: string, buyer: Party, maxPrice?: string) => server.gql(BUY_LISTING, { listingId, maxPrice }, buyer.key);

describe('buy now', () => {
  test('when a buyer buys a fixed-price listing through /v1, then a completed order names the listing, the asset is the buyer\'s and the listing is sold', async () => {
    const { owned, listing } = await listed({ startPrice: '5.25' });
    const buyer = await server.key();

    const res = await buyRest(listing.id, buyer);

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'completed', price: 5.25, price_decimal: '5.25', seller: owned.owner.address, buyer: buyer.address, listing_id: listing.id, offer: null, unit: 1 });
    expect(res.headers.get('location')).toBe(`/v1/orders/${res.body.id}`);
    expect(await ordersOfListings([listing.id])).toEqual([
      expect.objectContaining({ id: res.body.id, offer_id: null, price: '5.250000000000000000', seller: owned.owner.address, buyer: buyer.address, status: 'completed', unit: 1 }),
    ]);
    expect(await listingStatus(listing.id)).toBe('sold');
    expect(await assetRow(owned.asset.id)).toEqual({ owner: buyer.address, status: 'unlisted' });
    const events: { type: string }[] = await server.ds.query('SELECT type FROM events WHERE asset_id = $1 ORDER BY position', [owned.asset.id]);
    expect(events.map((e) => e.type).slice(-3)).toEqual(['listing.sold', 'asset.transferred', 'order.completed']);
    expect((await server.rest('GET', `/v1/orders/${res.body.id}`)).body).toMatchObject({ id: res.body.id, offer: null, listing_id: listing.id });
  });

  test('when a dutch auction is bought through GraphQL 441.123 s into its fall from 3 to 1 over a day, then the order is at 2.989788819444444444 exactly', async () => {
    const { owned, listing } = await dutchAt441s();
    const buyer = await server.key();

    const res = await buyGql(listing.id, buyer);

    expect(res.body.data.buyListing).toMatchObject({
      status: 'COMPLETED',
      priceDecimal: '2.989788819444444444',
      listingId: listing.id,
      offerId: null,
      offer: null,
      listing: { id: listing.id, status: 'SOLD' },
      buyer: buyer.address,
      seller: owned.owner.address,
    });
    expect(await ordersOfListings([listing.id])).toEqual([expect.objectContaining({ price: '2.989788819444444444', buyer: buyer.address })]);
    expect(await assetRow(owned.asset.id)).toEqual({ owner: buyer.address, status: 'unlisted' });
  });

  test('when 10 buyers buy one listing at once (half through each door), then one wins, nine get 409 naming the winning order, and one order is written', async () => {
    const { owned, listing } = await listed();
    const buyers = await Promise.all(Array.from({ length: 10 }, () => server.key()));

    const answers = await Promise.all(
      buyers.map(async (buyer, i) => {
        if (i % 2 === 0) {
          const res = await buyRest(listing.id, buyer);
          return { status: res.status, message: res.body.error?.message as string | undefined };
        }
        const res = await buyGql(listing.id, buyer);
        return { status: statusOf(res, 'buyListing'), message: res.body.errors?.[0]?.message as string | undefined };
      }),
    );

    const orders = await ordersOfListings([listing.id]);
    expect(orders).toHaveLength(1);
    expect(answers.map((a) => a.status).sort()).toEqual([200, ...Array(9).fill(409)]);
    for (const lost of answers.filter((a) => a.status === 409)) expect(lost.message).toContain(`was sold meanwhile (order ${orders[0].id})`);
    const winner = buyers[answers.findIndex((a) => a.status === 200)];
    expect(orders[0].buyer).toBe(winner.address);
    expect(await assetRow(owned.asset.id)).toEqual({ owner: winner.address, status: 'unlisted' });
  });

  test('when a dutch price is above max_price, then the buy is a 409 and nothing changes; at or above the price it buys', async () => {
    const { owned, listing } = await dutchAt441s();
    const buyer = await server.key();

    const refusedRest = await buyRest(listing.id, buyer, { max_price: '2.98' });
    const refusedGql = await buyGql(listing.id, buyer, '2.989788819444444443');

    expect(refusedRest.status).toBe(409);
    expect(refusedRest.body.error).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('costs 2.989788819444444444 now, above the most you would pay (2.98)') });
    expect(statusOf(refusedGql, 'buyListing')).toBe(409);
    expect(await ordersOfListings([listing.id])).toEqual([]);
    expect(await listingStatus(listing.id)).toBe('active');
    expect(await assetRow(owned.asset.id)).toEqual({ owner: owned.owner.address, status: 'listed' });

    const bought = await buyRest(listing.id, buyer, { max_price: '2.989788819444444444' });
    expect(bought.status).toBe(200);
    expect(bought.body.price_decimal).toBe('2.989788819444444444');
  });

  test('when the owner buys their own listing, then it is a 409 like a self-trade and nothing is written', async () => {
    const { owned, listing } = await listed();

    const rest = await buyRest(listing.id, owned.owner);
    const gql = await buyGql(listing.id, owned.owner);

    expect(rest.status).toBe(409);
    expect(rest.body.error.message).toContain("one cannot buy one's own listing");
    expect(statusOf(gql, 'buyListing')).toBe(409);
    expect(await ordersOfListings([listing.id])).toEqual([]);
    expect(await listingStatus(listing.id)).toBe('active');
  });

  test('when an english auction without a buy-now price is bought, then it is a 422 and nothing is written; with one, it sells at that price and its bids are cancelled', async () => {
    const closesAt = later(new Date(), 3600 * 1000).toISOString();
    const plain = await listed({ orderType: 'ENGLISH_AUCTION', startPrice: 2, expirationTime: { at: closesAt } });
    const withBuyNow = await listed({ orderType: 'ENGLISH_AUCTION', startPrice: 2, acceptPrice: 10, expirationTime: { at: closesAt } });
    const bidder = await server.key();
    const bid = await saveOffer(server, bidder.key, withBuyNow.owned.asset.id, { price: 3 });
    const buyer = await server.key();

    const refused = await buyRest(plain.listing.id, buyer);
    const bought = await buyGql(withBuyNow.listing.id, buyer);

    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({ code: 'VALIDATION_FAILED', message: expect.stringContaining('english auction without a buy-now price') });
    expect(await listingStatus(plain.listing.id)).toBe('active');
    expect(bought.body.data.buyListing).toMatchObject({ priceDecimal: '10', buyer: buyer.address });
    const [{ status }] = await server.ds.query('SELECT status FROM offers WHERE id = $1', [bid.id]);
    expect(status).toBe('cancelled');
  });

  test('when a buy is retried with its Idempotency-Key, then the same order is replayed and one order is written', async () => {
    const { listing } = await listed();
    const buyer = await server.key();
    const headers = { 'idempotency-key': randomUUID() };

    const first = await buyRest(listing.id, buyer, {}, headers);
    const retry = await buyRest(listing.id, buyer, {}, headers);

    expect(first.status).toBe(200);
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toEqual(first.body);
    expect((await ordersOfListings([listing.id])).map((o) => o.id)).toEqual([first.body.id]);
  });

  test('when an unknown listing is bought, then it is a 404 (a malformed id a 400); a sold one, a 409', async () => {
    const { listing } = await listed();
    const buyer = await server.key();
    await buyRest(listing.id, buyer);

    expect((await buyRest(randomUUID(), buyer)).status).toBe(404);
    expect((await buyRest('not-an-id', buyer)).status).toBe(400);
    const again = await buyRest(listing.id, await server.key());
    expect(again.status).toBe(409);
    expect(again.body.error.message).toContain('was sold meanwhile');
  });
});

/** A collection of one seller with one fixed-price listing per price, in the order given. */
async function collectionListedAt(prices: (number | string)[]): Promise<{ owned: OwnedAsset; listings: { id: string; assetId: string; price: number | string }[] }> {
  const first = await saveOwnedAsset(server);
  const listings: { id: string; assetId: string; price: number | string }[] = [];
  for (const price of prices) {
    const owned = listings.length ? await saveSiblingAsset(server, first) : first;
    const listing = await saveListing(server, first.owner.key, owned.asset.id, { startPrice: price });
    listings.push({ id: listing.id, assetId: owned.asset.id, price });
  }
  return { owned: first, listings };
}

const sweepRest = (collection: string, sweeper: Party, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  server.rest('POST', `/v1/collections/${collection}/sweep`, body, sweeper.key, headers);

const sweepGql = (input: Record<string, unknown>, sweeper: Party) => server.gql(SWEEP, { input }, sweeper.key);

describe('sweep', () => {
  test('when 3 of 6 listings are swept, then the 3 cheapest are bought, cheapest first, and the database agrees', async () => {
    const { owned, listings } = await collectionListedAt([4, 1, 6, 2, '3.5', 5]);
    const sweeper = await server.key();

    const res = await sweepRest(owned.collection.contractAddress, sweeper, { count: 3, max_total: 100, max_unit_price: 100 });

    expect(res.status).toBe(200);
    const cheapest = [listings[1], listings[3], listings[4]];
    expect(res.body.orders.map((o: { listing_id: string }) => o.listing_id)).toEqual(cheapest.map((l) => l.id));
    expect(res.body).toMatchObject({ total: 6.5, total_decimal: '6.5', skipped: [] });
    const orders = await ordersOfListings(listings.map((l) => l.id));
    expect(orders.map((o) => [o.listing_id, o.buyer, o.price, o.offer_id])).toEqual(
      cheapest.map((l) => [l.id, sweeper.address, `${Number(l.price).toFixed(18)}`, null]),
    );
    for (const l of listings) expect(await listingStatus(l.id)).toBe(cheapest.includes(l) ? 'sold' : 'active');
    for (const l of cheapest) expect((await assetRow(l.assetId)).owner).toBe(sweeper.address);
  });

  test('when listings cost more than max_unit_price, then the sweep buys those below it and says it stopped at the next one, price_above_max', async () => {
    const { owned, listings } = await collectionListedAt([1, 2, 3, 4]);
    const sweeper = await server.key();

    const res = await sweepGql({ collectionId: owned.collection.id, count: 4, maxTotal: 100, maxUnitPrice: '2.5' }, sweeper);

    const sweep = res.body.data.sweepCollection;
    expect(sweep.orders.map((o: { listingId: string }) => o.listingId)).toEqual([listings[0].id, listings[1].id]);
    expect(sweep).toMatchObject({ totalDecimal: '3', skipped: [{ listingId: listings[2].id, reason: 'PRICE_ABOVE_MAX', priceDecimal: '3' }] });
    expect(await ordersOfListings(listings.map((l) => l.id))).toHaveLength(2);
  });

  test('when the next listing would pass max_total, then the sweep stops there, total_reached', async () => {
    const { owned, listings } = await collectionListedAt([1, 2, 3]);
    const sweeper = await server.key();

    const res = await sweepRest(owned.collection.id, sweeper, { count: 3, max_total: 4, max_unit_price: 10 });

    expect(res.body.error).toBeUndefined();
    expect(res.body.orders).toHaveLength(2);
    expect(res.body).toMatchObject({ total_decimal: '3', skipped: [{ listing_id: listings[2].id, reason: 'total_reached', price_decimal: '3' }] });
    expect(await listingStatus(listings[2].id)).toBe('active');
  });

  test('when the sweeper listed the cheapest one, then it is skipped as own_listing and the next is bought', async () => {
    const { collection, assets } = await collectionOfOwners(server, 3);
    const listings = await Promise.all(assets.map((a, i) => saveListing(server, a.owner.key, a.id, { startPrice: i + 1 })));
    const sweeper = assets[0].owner;

    const res = await sweepRest(collection.id, sweeper, { count: 1, max_total: 10, max_unit_price: 10 });

    expect(res.body).toMatchObject({ skipped: [{ reason: 'own_listing', listing_id: listings[0].id, price_decimal: '1' }], total_decimal: '2' });
    expect(res.body.orders.map((o: { listing_id: string }) => o.listing_id)).toEqual([listings[1].id]);
    expect(await listingStatus(listings[0].id)).toBe('active');
    expect((await assetRow(assets[1].id)).owner).toBe(sweeper.address);
  });

  test('when traits are given, then only listings of assets carrying them are bought', async () => {
    const { collection, assets } = await collectionOfOwners(server, 6, (i) => [{ trait_type: 'Background', value: i % 2 ? 'Blue' : 'Red' }]);
    const listings = await Promise.all(assets.map((a, i) => saveListing(server, a.owner.key, a.id, { startPrice: i + 1 })));
    const sweeper = await server.key();

    const res = await sweepRest(collection.contractAddress, sweeper, {
      count: 10,
      max_total: 100,
      max_unit_price: 100,
      traits: [{ trait_type: 'Background', value: 'Blue' }],
    });

    expect(res.body.error).toBeUndefined();
    expect(res.status).toBe(200);
    expect(res.body.orders.map((o: { listing_id: string }) => o.listing_id)).toEqual([listings[1].id, listings[3].id, listings[5].id]);
    expect(res.body.total_decimal).toBe('12');
  });

  test('when partial is false and not all fit, then it is a 409 and nothing is bought; when all fit, all are bought', async () => {
    const { owned, listings } = await collectionListedAt([1, 2, 3]);
    const sweeper = await server.key();

    const refused = await sweepRest(owned.collection.id, sweeper, { count: 3, max_total: 5, max_unit_price: 10, partial: false });
    const tooMany = await sweepGql({ collectionId: owned.collection.id, count: 4, maxTotal: 100, maxUnitPrice: 100, partial: false }, sweeper);

    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toContain('only 2 of 3 listings could be bought');
    expect(statusOf(tooMany, 'sweepCollection')).toBe(409);
    expect(await ordersOfListings(listings.map((l) => l.id))).toEqual([]);
    for (const l of listings) expect(await listingStatus(l.id)).toBe('active');

    const all = await sweepRest(owned.collection.id, sweeper, { count: 3, max_total: 6, max_unit_price: 3, partial: false });
    expect(all.status).toBe(200);
    expect(await ordersOfListings(listings.map((l) => l.id))).toHaveLength(3);
  });

  test('when count is out of 1..50 or a maximum is not positive, then it is a 422 naming the field', async () => {
    const { owned } = await collectionListedAt([1]);
    const sweeper = await server.key();

    const res = await sweepRest(owned.collection.id, sweeper, { count: 51, max_total: 0, max_unit_price: 1 });

    expect(res.status).toBe(422);
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['count', 'max_total']);
  });

  test('when two sweeps of 10 over 15 listings start at once, then no listing is sold twice, all 15 are sold and each answer agrees with the database', async () => {
    const { owned, listings } = await collectionListedAt(Array.from({ length: 15 }, (_, i) => i + 1));
    const [a, b] = await Promise.all([server.key(), server.key()]);

    const [viaRest, viaGql] = await Promise.all([
      sweepRest(owned.collection.id, a, { count: 10, max_total: 1000, max_unit_price: 100 }),
      sweepGql({ collectionId: owned.collection.id, count: 10, maxTotal: 1000, maxUnitPrice: 100 }, b),
    ]);

    const orders = await ordersOfListings(listings.map((l) => l.id));
    expect(new Set(orders.map((o) => o.listing_id)).size).toBe(orders.length);
    expect(orders).toHaveLength(15);
    const restIds = viaRest.body.orders.map((o: { id: string }) => o.id).sort();
    const gqlIds = viaGql.body.data.sweepCollection.orders.map((o: { id: string }) => o.id).sort();
    expect(restIds).toEqual(orders.filter((o) => o.buyer === a.address).map((o) => o.id).sort());
    expect(gqlIds).toEqual(orders.filter((o) => o.buyer === b.address).map((o) => o.id).sort());
    const skipped = [...viaRest.body.skipped.map((s: { reason: string }) => s.reason), ...viaGql.body.data.sweepCollection.skipped.map((s: { reason: string }) => s.reason.toLowerCase())];
    expect(skipped.filter((r) => r !== 'sold_meanwhile')).toEqual([]);
    for (const l of listings) expect(await listingStatus(l.id)).toBe('sold');
  });
});

describe('sweep racing buyers', () => {
  test('when buyers buy 5 of 10 listings while a sweep of 10 runs, then each listing is sold once, and the sweep skips as sold_meanwhile only what the buyers took', async () => {
    const { owned, listings } = await collectionListedAt(Array.from({ length: 10 }, (_, i) => i + 1));
    const sweeper = await server.key();
    const buyers = await Promise.all(Array.from({ length: 5 }, () => server.key()));
    const taken = listings.filter((_, i) => i % 2 === 1);

    const [swept, ...buys] = await Promise.all([
      sweepRest(owned.collection.id, sweeper, { count: 10, max_total: 1000, max_unit_price: 100 }),
      ...taken.map((l, i) => buyRest(l.id, buyers[i])),
    ]);

    expect(swept.status).toBe(200);
    const orders = await ordersOfListings(listings.map((l) => l.id));
    expect(new Set(orders.map((o) => o.listing_id)).size).toBe(orders.length);
    expect(orders).toHaveLength(10);
    const bySweeper = orders.filter((o) => o.buyer === sweeper.address);
    expect(swept.body.orders.map((o: { id: string }) => o.id).sort()).toEqual(bySweeper.map((o) => o.id).sort());
    const lostToBuyers = orders.filter((o) => o.buyer !== sweeper.address).map((o) => o.listing_id).sort();
    expect(buys.filter((b) => b.status === 200).map((b) => b.body.listing_id).sort()).toEqual(lostToBuyers);
    const skipped: { reason: string; listing_id: string }[] = swept.body.skipped;
    expect(skipped.filter((s) => s.reason !== 'sold_meanwhile' || !lostToBuyers.includes(s.listing_id))).toEqual([]);
    for (const l of listings) expect(await listingStatus(l.id)).toBe('sold');
  });
});

const BUY_LISTING = /* GraphQL */ `
  mutation ($listingId: ID!, $maxPrice: Price) {
    buyListing(listingId: $listingId, maxPrice: $maxPrice) {
      id status price priceDecimal seller buyer listingId offerId offer { id } listing { id status }
    }
  }`;

const SWEEP = /* GraphQL */ `
  mutation ($input: SweepCollectionInput!) {
    sweepCollection(input: $input) {
      orders { id listingId buyer priceDecimal }
      skipped { listingId assetId reason price priceDecimal message }
      total totalDecimal
    }
  }`;
