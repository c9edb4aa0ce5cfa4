import { clock } from '../src/common/clock';
import { sweepExpired } from '../src/modules/event/expiry.sweeper';
import { OwnedAsset, Party, saveOwnedAsset } from './factories/market';
import { HttpResult, startServer, TestServer } from './setup/server';
import { HOUR, later, SECOND, sleep, wholeSecond } from './setup/time';

/**
 * The auction rules of docs/api.md "Auctions", through both doors. Tests that move the clock never sweep
 * with it (a sweep writes for every row of the shared database): they close auctions on the test clock and
 * let a write on the asset settle them; the sweeper's tests close auctions a moment ahead in real time.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());
afterEach(() => clock.reset());

const assetPath = (owned: OwnedAsset) => `/v1/assets/${owned.asset.tokenAddress}/${owned.asset.tokenId}`;

/** An english auction of the asset through /v1, closing at `closesAt`. */
async function listEnglish(owned: OwnedAsset, startPrice: number | string, closesAt: Date, extra: Record<string, unknown> = {}) {
  const res = await server.rest(
    'POST',
    '/v1/assets/listing',
    { asset_id: owned.asset.id, order_type: 'english_auction', start_price: startPrice, expiration_time: { at: closesAt.toISOString() }, ...extra },
    owned.owner.key,
  );
  expect(res.status).toBe(200);
  return res.body as { id: string };
}

/** An offer window from a minute ago (on the test clock) to `endTime`, an hour after the test clock by default. */
function window(endTime?: Date) {
  const now = clock.now();
  return { start: later(now, -60 * SECOND).toISOString(), end: (endTime ?? later(now, 2 * HOUR)).toISOString() };
}

async function bidRest(bidder: Party, owned: OwnedAsset, price: number | string, endTime?: Date): Promise<HttpResult> {
  const { start, end } = window(endTime);
  return server.rest('POST', '/v1/offers', { asset_id: owned.asset.id, price, start_time: start, end_time: end }, bidder.key);
}

async function bidGql(bidder: Party, owned: OwnedAsset, price: number | string, endTime?: Date): Promise<HttpResult> {
  const { start, end } = window(endTime);
  return server.gql(CREATE_OFFER, { input: { assetId: owned.asset.id, price, startTime: start, endTime: end } }, bidder.key);
}

/** A bid that must be taken as placed: its id. */
async function placed(res: HttpResult): Promise<string> {
  const offer = res.body.data?.createOffer ?? res.body;
  if (!offer?.id || String(offer.status).toLowerCase() !== 'active') throw new Error(`bid not placed: ${JSON.stringify(res.body)}`);
  return offer.id;
}

/** The asset's active listing's exact current price as each door shows it (null when none is active). */
async function currentPrices(owned: OwnedAsset) {
  const rest = await server.rest('GET', assetPath(owned));
  const gql = await server.gql(ASSET, { tokenAddress: owned.asset.tokenAddress, tokenId: owned.asset.tokenId });
  expect(rest.status).toBe(200);
  expect(gql.body.errors).toBeUndefined();
  return {
    rest: rest.body.listing?.current_price_decimal ?? null,
    gql: gql.body.data.asset.listing?.currentPriceDecimal ?? null,
  };
}

async function floorOf(owned: OwnedAsset): Promise<{ floorPriceDecimal: string | null; floorListing: { id: string } | null }> {
  const res = await server.gql(FLOOR, { address: owned.collection.contractAddress });
  expect(res.body.errors).toBeUndefined();
  return res.body.data.collection.statistics;
}

async function ordersOf(owned: OwnedAsset) {
  return server.ds.query('SELECT id, offer_id, listing_id, seller, buyer, price::text FROM orders WHERE asset_id = $1', [owned.asset.id]);
}

async function offerStatuses(owned: OwnedAsset): Promise<Record<string, string>> {
  const rows = await server.ds.query('SELECT id, status FROM offers WHERE asset_id = $1', [owned.asset.id]);
  return Object.fromEntries(rows.map((r: { id: string; status: string }) => [r.id, r.status]));
}

/** The types of the asset's events in the log, in order, with the ids they are about. */
async function eventsOf(owned: OwnedAsset): Promise<{ type: string; id: string }[]> {
  const res = await server.rest('GET', `/v1/events?asset_id=${owned.asset.id}&limit=1000`);
  expect(res.status).toBe(200);
  return res.body.result.map((e: { type: string; data: { id: string } }) => ({ type: e.type, id: e.data.id }));
}

function expectRefusedOnRest(res: HttpResult, minimum: string): void {
  expect(res.status).toBe(422);
  expect(res.body.error).toMatchObject({ code: 'VALIDATION_FAILED', message: expect.stringContaining(`at least ${minimum}`) });
  expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'price', message: expect.stringContaining(`at least ${minimum}`) })]);
}

function expectRefusedOnGql(res: HttpResult, minimum: string): void {
  expect(res.body.data).toBeNull();
  expect(res.body.errors).toEqual([
    expect.objectContaining({ message: expect.stringContaining(`at least ${minimum}`), extensions: expect.objectContaining({ code: 'VALIDATION_FAILED' }) }),
  ]);
}

describe('english auction bids', () => {
  test('when a bid is below the start price (start 2, bid 0.01), then 422 naming the least acceptable bid on both doors; the price and the floor stay at 2', async () => {
    const owned = await saveOwnedAsset(server);
    const listing = await listEnglish(owned, 2, later(new Date(), HOUR));
    const bidder = await server.key();

    const rest = await bidRest(bidder, owned, 0.01);
    const gql = await bidGql(bidder, owned, '0.01');

    expectRefusedOnRest(rest, '2');
    expectRefusedOnGql(gql, '2');
    expect(await offerStatuses(owned)).toEqual({});
    expect(await currentPrices(owned)).toEqual({ rest: '2', gql: '2' });
    expect(await floorOf(owned)).toEqual({ floorPriceDecimal: '2', floorListing: { id: listing.id } });
  });

  test('when a bid does not beat the best bid by 5%, then 422 naming the minimum; one that does is the current price and the floor on both doors', async () => {
    const owned = await saveOwnedAsset(server);
    await listEnglish(owned, 2, later(new Date(), HOUR));
    const [first, second] = [await server.key(), await server.key()];
    await placed(await bidRest(first, owned, 2));
    expect(await currentPrices(owned)).toEqual({ rest: '2', gql: '2' });

    expectRefusedOnGql(await bidGql(second, owned, '2.05'), '2.1');
    expectRefusedOnRest(await bidRest(second, owned, 2.09), '2.1');
    await placed(await bidGql(second, owned, '2.1'));

    expect(await currentPrices(owned)).toEqual({ rest: '2.1', gql: '2.1' });
    expect((await floorOf(owned)).floorPriceDecimal).toBe('2.1');
    // The next minimum is rounded up to the 18th decimal: 2.1 x 1.05 = 2.205.
    expectRefusedOnRest(await bidRest(first, owned, '2.204999999999999999'), '2.205');
  });

  test('when the increment is set to 0, then a bid must still exceed the best bid, by one unit of the 18th decimal at least', async () => {
    const zero = await startServer({ auctionMinIncrementPercent: 0 });
    try {
      const owned = await saveOwnedAsset(zero);
      await zero.rest(
        'POST',
        '/v1/assets/listing',
        { asset_id: owned.asset.id, order_type: 'english_auction', start_price: 1, expiration_time: { duration_seconds: 3600 } },
        owned.owner.key,
      );
      const [first, second] = [await zero.key(), await zero.key()];
      const bid = (party: Party, price: string) =>
        zero.rest('POST', '/v1/offers', { asset_id: owned.asset.id, price, start_time: window().start, end_time: window().end }, party.key);
      expect((await bid(first, '1.5')).body.status).toBe('active');

      const equal = await bid(second, '1.5');
      const above = await bid(second, '1.500000000000000001');

      expectRefusedOnRest(equal, '1.500000000000000001');
      expect(above.body.status).toBe('active');
    } finally {
      await zero.close();
    }
  });

  test('when a bid reaches the buy-now accept price, then it is taken at once, at the accept price', async () => {
    const owned = await saveOwnedAsset(server);
    const listing = await listEnglish(owned, 2, later(new Date(), HOUR), { accept_price: 10 });
    const [low, buyer] = [await server.key(), await server.key()];
    const lowBid = await placed(await bidRest(low, owned, 3));

    const res = await bidGql(buyer, owned, '12');

    expect(res.body.data.createOffer).toMatchObject({ status: 'ACCEPTED', price: 12 });
    expect(await ordersOf(owned)).toEqual([
      expect.objectContaining({ offer_id: res.body.data.createOffer.id, listing_id: listing.id, buyer: buyer.address, price: '10.000000000000000000' }),
    ]);
    // The sale ended the auction: the other bid is cancelled, not left for the new owner.
    expect((await offerStatuses(owned))[lowBid]).toBe('cancelled');
  });
});

describe('english auction close', () => {
  test('when the clock passes the close, then the auction is no longer listed at once, and the seller accepting a lower bid meets the sale to the best bid (409)', async () => {
    const owned = await saveOwnedAsset(server);
    const closesAt = later(wholeSecond(), HOUR);
    const listing = await listEnglish(owned, 2, closesAt);
    const [low, high] = [await server.key(), await server.key()];
    const lowBid = await placed(await bidRest(low, owned, 2));
    const highBid = await placed(await bidGql(high, owned, 3));
    clock.set(later(closesAt, SECOND));

    expect(await currentPrices(owned)).toEqual({ rest: null, gql: null });
    const rest = await server.rest('POST', '/v1/offers/accept', { offer_id: lowBid }, owned.owner.key);
    const gql = await server.gql(ACCEPT_OFFER, { offerId: highBid }, owned.owner.key);

    expect(rest.status).toBe(409);
    expect(rest.body.error.message).toContain(`closed at ${closesAt.toISOString()}`);
    expect(gql.body.errors).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: 'CONFLICT' }) })]);
    const orders = await ordersOf(owned);
    expect(orders).toEqual([
      { id: expect.any(String), offer_id: highBid, listing_id: listing.id, seller: owned.owner.address, buyer: high.address, price: '3.000000000000000000' },
    ]);
    expect(rest.body.error.message).toContain(orders[0].id);
    expect(await offerStatuses(owned)).toEqual({ [lowBid]: 'cancelled', [highBid]: 'accepted' });
    const asset = await server.gql(ASSET, { tokenAddress: owned.asset.tokenAddress, tokenId: owned.asset.tokenId });
    expect(asset.body.data.asset).toMatchObject({ owner: high.address, status: 'UNLISTED', listing: null });
  });

  test('when an english auction with bids closes, then the sweeper sells to the best bid standing at the close: one order, the owner changed, the events written', async () => {
    const owned = await saveOwnedAsset(server);
    // Far enough ahead for the three bids to be placed on a loaded machine (the lapsed one ends 1 s before the close).
    const closesAt = later(new Date(), 6000);
    const listing = await listEnglish(owned, 2, closesAt);
    const [first, best, lapsed] = [await server.key(), await server.key(), await server.key()];
    const firstBid = await placed(await bidRest(first, owned, 2));
    const bestBid = await placed(await bidGql(best, owned, 3));
    // Higher, but its window ends before the close: it does not stand at the close.
    const lapsedBid = await placed(await bidRest(lapsed, owned, 4, later(closesAt, -1000)));
    await sleep(closesAt.getTime() - Date.now() + 50);

    await Promise.all(Array.from({ length: 4 }, () => sweepExpired(server.ds, new Date())));

    const orders = await ordersOf(owned);
    expect(orders).toEqual([
      { id: expect.any(String), offer_id: bestBid, listing_id: listing.id, seller: owned.owner.address, buyer: best.address, price: '3.000000000000000000' },
    ]);
    const [stored] = await server.ds.query('SELECT status FROM listings WHERE id = $1', [listing.id]);
    expect(stored.status).toBe('sold');
    expect(await offerStatuses(owned)).toEqual({ [firstBid]: 'cancelled', [bestBid]: 'accepted', [lapsedBid]: 'active' });
    const rest = await server.rest('GET', `/v1/orders/${orders[0].id}`);
    const gql = await server.gql(ORDER, { id: orders[0].id });
    expect(rest.body).toMatchObject({ price_decimal: '3', buyer: best.address, seller: owned.owner.address, listing_id: listing.id, offer: { id: bestBid, status: 'accepted' } });
    expect(gql.body.data.order).toMatchObject({ priceDecimal: '3', buyer: best.address, seller: owned.owner.address, listingId: listing.id, offer: { id: bestBid, status: 'ACCEPTED' } });
    expect((await server.rest('GET', assetPath(owned))).body).toMatchObject({ owner: best.address, status: 'unlisted', listing: null });
    const sale = (await eventsOf(owned)).filter((e) => !['offer.created', 'listing.created', 'asset.created', 'offer.expired'].includes(e.type));
    expect(sale).toEqual([
      { type: 'offer.accepted', id: bestBid },
      { type: 'listing.sold', id: listing.id },
      { type: 'asset.transferred', id: owned.asset.id },
      { type: 'offer.cancelled', id: firstBid },
      { type: 'order.completed', id: orders[0].id },
    ]);
  });

  test('when sweeps in two servers and the seller\'s acceptances race at the close, then exactly one order is written, to the best bid', async () => {
    const other = await startServer();
    try {
      const owned = await saveOwnedAsset(server);
      const closesAt = later(new Date(), 4000);
      await listEnglish(owned, 1, closesAt);
      const [low, high] = [await server.key(), await server.key()];
      const lowBid = await placed(await bidRest(low, owned, 1));
      const highBid = await placed(await bidRest(high, owned, 5));
      await sleep(closesAt.getTime() - Date.now() + 50);

      const results = await Promise.all([
        ...Array.from({ length: 3 }, (_, i) => sweepExpired((i % 2 ? other : server).ds, new Date())),
        server.rest('POST', '/v1/offers/accept', { offer_id: lowBid }, owned.owner.key),
        other.gql(ACCEPT_OFFER, { offerId: lowBid }, owned.owner.key),
      ]);

      expect(await ordersOf(owned)).toEqual([expect.objectContaining({ offer_id: highBid, buyer: high.address, price: '5.000000000000000000' })]);
      const [restAccept, gqlAccept] = results.slice(3) as HttpResult[];
      expect(restAccept.status).toBe(409);
      expect(gqlAccept.body.errors[0].extensions.code).toBe('CONFLICT');
      const sales = (await eventsOf(owned)).filter((e) => ['order.completed', 'listing.sold', 'listing.expired'].includes(e.type));
      expect(sales.map((e) => e.type).sort()).toEqual(['listing.sold', 'order.completed']);
    } finally {
      await other.close();
    }
  });

  test('when an english auction closes without a bid, then it expires: one listing.expired event, no order, the owner unchanged', async () => {
    const owned = await saveOwnedAsset(server);
    const closesAt = later(new Date(), 2500);
    const listing = await listEnglish(owned, 2, closesAt);
    await sleep(closesAt.getTime() - Date.now() + 50);

    await Promise.all(Array.from({ length: 3 }, () => sweepExpired(server.ds, new Date())));

    expect(await ordersOf(owned)).toEqual([]);
    expect((await eventsOf(owned)).filter((e) => e.type.startsWith('listing.'))).toEqual([
      { type: 'listing.created', id: listing.id },
      { type: 'listing.expired', id: listing.id },
    ]);
    expect((await server.rest('GET', assetPath(owned))).body).toMatchObject({ owner: owned.owner.address, status: 'unlisted', listing: null });
  });
});

describe('dutch auction fill', () => {
  test('when an offer above a dutch auction\'s current price is taken (3 while the price is 2.98…), then the order is at the current price of that moment', async () => {
    const start = wholeSecond();
    clock.set(start);
    const [viaRest, viaGql] = [await saveOwnedAsset(server), await saveOwnedAsset(server)];
    for (const owned of [viaRest, viaGql]) {
      const res = await server.rest(
        'POST',
        '/v1/assets/listing',
        { asset_id: owned.asset.id, order_type: 'dutch_auction', start_price: 3, accept_price: 1, expiration_time: { duration_seconds: 86400 } },
        owned.owner.key,
      );
      expect(res.status).toBe(200);
    }
    // docs/api.md: 3 -> 1 over a day, read 441.123 s in.
    clock.set(later(start, 441123));
    const buyer = await server.key();

    const rest = await bidRest(buyer, viaRest, 3);
    const gql = await bidGql(buyer, viaGql, '3');

    expect(rest.body).toMatchObject({ status: 'accepted', price_decimal: '3' });
    expect(gql.body.data.createOffer).toMatchObject({ status: 'ACCEPTED', price: 3 });
    for (const owned of [viaRest, viaGql]) {
      const [order] = await ordersOf(owned);
      expect(order).toMatchObject({ buyer: buyer.address, price: '2.989788819444444444' });
      expect((await server.rest('GET', `/v1/orders/${order.id}`)).body).toMatchObject({ price_decimal: '2.989788819444444444', price: 2.989788819444444444 });
      expect((await server.gql(ORDER, { id: order.id })).body.data.order).toMatchObject({ priceDecimal: '2.989788819444444444' });
    }
  });

  test('when an offer above a fixed price is taken, then the order is at the listing\'s price', async () => {
    const owned = await saveOwnedAsset(server);
    await server.rest('POST', '/v1/assets/listing', { asset_id: owned.asset.id, start_price: 5 }, owned.owner.key);
    const buyer = await server.key();

    const res = await bidRest(buyer, owned, 10);

    expect(res.body).toMatchObject({ status: 'accepted', price_decimal: '10' });
    expect(await ordersOf(owned)).toEqual([expect.objectContaining({ buyer: buyer.address, price: '5.000000000000000000' })]);
  });
});

const CREATE_OFFER = /* GraphQL */ `
  mutation ($input: CreateOfferInput!) { createOffer(input: $input) { id status price } }`;

const ACCEPT_OFFER = /* GraphQL */ `
  mutation ($offerId: ID!) { acceptOffer(offerId: $offerId) { id } }`;

const ASSET = /* GraphQL */ `
  query ($tokenAddress: Address!, $tokenId: TokenId!) {
    asset(tokenAddress: $tokenAddress, tokenId: $tokenId) { owner status listing { id currentPriceDecimal } }
  }`;

const FLOOR = /* GraphQL */ `
  query ($address: Address!) {
    collection(address: $address) { statistics(period: ALL) { floorPriceDecimal floorListing { id } } }
  }`;

const ORDER = /* GraphQL */ `
  query ($id: ID!) { order(id: $id) { priceDecimal buyer seller listingId offer { id status } } }`;
