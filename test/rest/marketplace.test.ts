import { randomUUID } from 'node:crypto';
import { clock } from '../../src/common/clock';
import { randomAddress, startServer, TestServer, HttpResult } from '../setup/server';
import { marketSnapshot, openWindow, OwnedAsset, Party, saveListing, saveOffer, saveOwnedAsset, saveSiblingAsset } from '../factories/market';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());
afterEach(() => clock.reset());

const SECOND = 1000;
const HOUR = 3600 * SECOND;
/** A whole second, so that timestamps stored with millisecond precision come back equal. */
const wholeSecond = () => new Date(Math.floor(Date.now() / SECOND) * SECOND);
const later = (from: Date, ms: number) => new Date(from.getTime() + ms);

/** interface.md 2.5, 2.8 and 2.9: responses may carry more fields than documented, never fewer. */
const LISTING_FIELDS = ['closing_date', 'fees', 'accept_price', 'start_price', 'current_price', 'name', 'token_address', 'token_id', 'chain'];
const OFFER_FIELDS = ['assets', 'taker', 'price', 'start_time', 'end_time'];
const ORDER_FIELDS = ['offer', 'status', 'created_at', 'updated_at'];
const missing = (fields: string[], body: Record<string, unknown>) => fields.filter((f) => !(f in body));

const assetPath = (owned: OwnedAsset) => `/v1/assets/${owned.asset.tokenAddress}/${owned.asset.tokenId}`;
const listingPath = (owned: OwnedAsset) => `/v1/assets/listing/${owned.asset.tokenAddress}/${owned.asset.tokenId}`;

async function listViaRest(owned: OwnedAsset, body: Record<string, unknown>): Promise<HttpResult> {
  return server.rest('POST', '/v1/assets/listing', { asset_id: owned.asset.id, ...body }, owned.owner.key);
}

async function offerViaRest(taker: Party, assetId: string, body: Record<string, unknown> = {}): Promise<HttpResult> {
  const { startTime, endTime } = openWindow();
  return server.rest('POST', '/v1/offers', { asset_id: assetId, price: 1, start_time: startTime, end_time: endTime, ...body }, taker.key);
}

async function currentListing(owned: OwnedAsset) {
  const res = await server.rest('GET', assetPath(owned));
  expect(res.status).toBe(200);
  return { status: res.body.status as string, listing: res.body.listing as Record<string, unknown> | null };
}

/** A refused request: its status, code, and a message that names `mention`. */
function expectRefused(res: HttpResult, status: number, code: string, mention: string): void {
  expect(res.status).toBe(status);
  expect(res.body.error).toMatchObject({ code, message: expect.stringContaining(mention) });
}

function expectFieldDetail(res: HttpResult, field: string): void {
  expect(res.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
}

describe('POST /v1/assets/listing', () => {
  test('when only start_price is given, then it is a fixed price listing at that price from now, without closing date', async () => {
    const now = wholeSecond();
    clock.set(now);
    const owned = await saveOwnedAsset(server);

    const res = await listViaRest(owned, { start_price: 2.5 });

    expect(res.status).toBe(200);
    expect(missing(LISTING_FIELDS, res.body)).toEqual([]);
    expect(res.body).toMatchObject({
      status: 'active',
      order_type: 'fixed_price',
      start_price: 2.5,
      accept_price: 2.5,
      current_price: 2.5,
      listing_time: now.toISOString(),
      closing_date: null,
      fees: [],
      name: owned.asset.name,
      token_address: owned.asset.tokenAddress,
      token_id: owned.asset.tokenId,
      chain: { id: '1', name: 'Ethereum', symbol: 'ETH' },
      seller: owned.owner.address,
      signature: null,
    });
    const [row] = await server.ds.query('SELECT status, order_type, start_price::text, accept_price::text FROM listings WHERE id = $1', [res.body.id]);
    expect(row).toEqual({ status: 'active', order_type: 'fixed_price', start_price: '2.500000000000000000', accept_price: '2.500000000000000000' });
  });

  test('when the asset is named by token_address and token_id with expiration_time {"at"}, then closing_date is that instant', async () => {
    const owned = await saveOwnedAsset(server);
    const at = later(wholeSecond(), 2 * HOUR).toISOString();

    const res = await server.rest(
      'POST',
      '/v1/assets/listing',
      { token_address: owned.asset.tokenAddress, token_id: owned.asset.tokenId, chain_id: '1', start_price: 3, expiration_time: { at } },
      owned.owner.key,
    );

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ closing_date: at, token_id: owned.asset.tokenId });
  });

  test('when expiration_time is {"duration_seconds"}, then closing_date is that long after listing_time', async () => {
    const owned = await saveOwnedAsset(server);
    const listingTime = later(wholeSecond(), -10 * SECOND);

    const res = await listViaRest(owned, { start_price: 3, listing_time: listingTime.toISOString(), expiration_time: { duration_seconds: 7200 } });

    expect(res.status).toBe(200);
    expect(res.body.listing_time).toBe(listingTime.toISOString());
    expect(res.body.closing_date).toBe(later(listingTime, 2 * HOUR).toISOString());
  });

  test('when maker_fees are given, then fees hold the collection royalties and the maker fees with their types', async () => {
    const royalty = randomAddress();
    const maker = randomAddress();
    const owned = await saveOwnedAsset(server, [{ address: royalty, basisPoints: 500 }]);

    const res = await listViaRest(owned, { start_price: 1, maker_fees: { [maker.toUpperCase().replace('0X', '0x')]: 250 } });

    expect(res.status).toBe(200);
    expect(res.body.fees).toEqual([
      { address: royalty, basis_points: 500, type: 'royalty' },
      { address: maker, basis_points: 250, type: 'maker' },
    ]);
  });

  test('when an asset is listed, then GET of the asset shows it listed with its listing; before it was unlisted', async () => {
    const owned = await saveOwnedAsset(server);
    expect(await currentListing(owned)).toEqual({ status: 'unlisted', listing: null });

    const listed = await listViaRest(owned, { start_price: 4 });

    const { status, listing } = await currentListing(owned);
    expect(status).toBe('listed');
    expect(listing).toMatchObject({ id: listed.body.id, status: 'active', current_price: 4, token_id: owned.asset.tokenId });
  });
});

describe('auction prices', () => {
  test('when time is at 25%, 50% and 99.9% of a dutch auction, then current_price has fallen linearly; at 100% it is no longer listed', async () => {
    const start = wholeSecond();
    clock.set(start);
    const owned = await saveOwnedAsset(server);
    const created = await listViaRest(owned, {
      order_type: 'dutch_auction',
      start_price: 10,
      accept_price: 2,
      expiration_time: { duration_seconds: 1000 },
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ order_type: 'dutch_auction', current_price: 10, closing_date: later(start, 1000 * SECOND).toISOString() });

    const priceAt = async (seconds: number) => {
      clock.set(later(start, seconds * SECOND));
      return (await currentListing(owned)).listing?.current_price;
    };
    expect(await priceAt(250)).toBe(8);
    expect(await priceAt(500)).toBe(6);
    expect(await priceAt(999)).toBe(2.008);
    clock.set(later(start, 1000 * SECOND));
    expect(await currentListing(owned)).toEqual({ status: 'unlisted', listing: null });
  });

  test('when an offer reaches a dutch auction\'s current price, then it is accepted at once; one below it stays active', async () => {
    const start = wholeSecond();
    clock.set(start);
    const owned = await saveOwnedAsset(server);
    await saveListing(server, owned.owner.key, owned.asset.id, { orderType: 'DUTCH_AUCTION', startPrice: 10, acceptPrice: 2, expirationTime: { durationSeconds: 1000 } });
    clock.set(later(start, 500 * SECOND));
    const low = await server.key();
    const high = await server.key();

    const below = await offerViaRest(low, owned.asset.id, { price: 5.99 });
    const reaching = await offerViaRest(high, owned.asset.id, { price: 6 });

    expect(below.body.status).toBe('active');
    expect(reaching.status).toBe(200);
    expect(reaching.body.status).toBe('accepted');
    const after = await marketSnapshot(server, owned.asset.id);
    expect(after.asset.owner).toBe(high.address);
    expect(after.orders).toEqual([expect.objectContaining({ offer_id: reaching.body.id, buyer: high.address, seller: owned.owner.address, price: '6.000000000000000000' })]);
  });

  test('when an english auction has offers, then current_price is the highest active one, start_price without any, and an expired offer no longer counts', async () => {
    const start = wholeSecond();
    clock.set(start);
    const owned = await saveOwnedAsset(server);
    await listViaRest(owned, { order_type: 'english_auction', start_price: 1 });
    expect((await currentListing(owned)).listing?.current_price).toBe(1);

    const first = await server.key();
    const second = await server.key();
    await offerViaRest(first, owned.asset.id, { price: 2 });
    await offerViaRest(second, owned.asset.id, { price: 3, end_time: later(start, 10 * 60 * SECOND).toISOString() });
    expect((await currentListing(owned)).listing?.current_price).toBe(3);

    clock.set(later(start, 11 * 60 * SECOND));
    expect((await currentListing(owned)).listing?.current_price).toBe(2);
  });
});

describe('PUT and DELETE /v1/assets/listing/{token_address}/{token_id}', () => {
  test('when the lister changes the prices and the expiration, then the listing shows and stores them', async () => {
    const owned = await saveOwnedAsset(server);
    const listed = await saveListing(server, owned.owner.key, owned.asset.id, { startPrice: 5 });
    const at = later(wholeSecond(), 5 * HOUR).toISOString();

    const res = await server.rest('PUT', listingPath(owned), { start_price: 7, expiration_time: { at } }, owned.owner.key);

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: listed.id, start_price: 7, accept_price: 7, current_price: 7, closing_date: at, status: 'active' });
    const [row] = await server.ds.query('SELECT start_price::text, accept_price::text, closing_date FROM listings WHERE id = $1', [listed.id]);
    expect(row).toEqual({ start_price: '7.000000000000000000', accept_price: '7.000000000000000000', closing_date: new Date(at) });
  });

  test('when the lister deletes the listing, then it is cancelled and the asset is unlisted', async () => {
    const owned = await saveOwnedAsset(server);
    const listed = await saveListing(server, owned.owner.key, owned.asset.id);

    const res = await server.rest('DELETE', listingPath(owned), undefined, owned.owner.key);

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: listed.id, status: 'cancelled' });
    expect(await currentListing(owned)).toEqual({ status: 'unlisted', listing: null });
    const after = await marketSnapshot(server, owned.asset.id);
    expect(after.listings.map((l: { status: string }) => l.status)).toEqual(['cancelled']);
    expect(after.asset.status).toBe('unlisted');
  });
});

describe('offers', () => {
  test('when an offer is made, then its taker is the caller, it is active and its assets envelope holds the asset', async () => {
    const owned = await saveOwnedAsset(server);
    const taker = await server.key();
    const { startTime, endTime } = openWindow();

    const res = await server.rest('POST', '/v1/offers', { asset_id: owned.asset.id, price: 1.25, start_time: startTime, end_time: endTime }, taker.key);

    expect(res.status).toBe(200);
    expect(missing(OFFER_FIELDS, res.body)).toEqual([]);
    expect(res.body).toMatchObject({ status: 'active', taker: taker.address, price: 1.25, start_time: startTime, end_time: endTime });
    expect(res.body.assets).toMatchObject({ cursor: null, remaining: 0, result: [{ id: owned.asset.id, token_id: owned.asset.tokenId, owner: owned.owner.address }] });
    const [row] = await server.ds.query('SELECT taker, status, price::text FROM offers WHERE id = $1', [res.body.id]);
    expect(row).toEqual({ taker: taker.address, status: 'active', price: '1.250000000000000000' });
  });

  test('when offers are listed by token_address and token_id, by owner_id and by status, then each filter keeps only its offers', async () => {
    const owned = await saveOwnedAsset(server);
    const other = await saveSiblingAsset(server, owned);
    const alice = await server.key();
    const bob = await server.key();
    const a1 = await saveOffer(server, alice.key, owned.asset.id, { price: 1 });
    const b1 = await saveOffer(server, bob.key, owned.asset.id, { price: 2 });
    const a2 = await saveOffer(server, alice.key, other.asset.id, { price: 3 });
    await server.rest('DELETE', `/v1/offers/${b1.id}`, undefined, bob.key);
    const ids = (res: HttpResult) => res.body.result.map((o: { id: string }) => o.id).sort();

    const byToken = await server.rest('GET', `/v1/offers?token_address=${owned.asset.tokenAddress}&token_id=${owned.asset.tokenId}`);
    const byOwner = await server.rest('GET', `/v1/offers?owner_id=${alice.address}`);
    const activeOnToken = await server.rest('GET', `/v1/offers?token_address=${owned.asset.tokenAddress}&token_id=${owned.asset.tokenId}&status=active`);
    const cancelledOfBob = await server.rest('GET', `/v1/offers?owner_id=${bob.address}&status=cancelled`);

    expect(ids(byToken)).toEqual([a1.id, b1.id].sort());
    expect(ids(byOwner)).toEqual([a1.id, a2.id].sort());
    expect(byOwner.body.result.every((o: { taker: string }) => o.taker === alice.address)).toBe(true);
    expect(ids(activeOnToken)).toEqual([a1.id]);
    expect(ids(cancelledOfBob)).toEqual([b1.id]);
  });

  test('when an offer is read by id, then it shows its fields', async () => {
    const owned = await saveOwnedAsset(server);
    const taker = await server.key();
    const offer = await saveOffer(server, taker.key, owned.asset.id, { price: 2 });

    const res = await server.rest('GET', `/v1/offers/${offer.id}`);

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: offer.id, status: 'active', taker: taker.address, price: 2, assets: { result: [{ id: owned.asset.id }] } });
  });

  test('when the maker deletes an offer, then it is cancelled', async () => {
    const owned = await saveOwnedAsset(server);
    const taker = await server.key();
    const offer = await saveOffer(server, taker.key, owned.asset.id);

    const res = await server.rest('DELETE', `/v1/offers/${offer.id}`, undefined, taker.key);

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: offer.id, status: 'cancelled' });
    const [row] = await server.ds.query('SELECT status FROM offers WHERE id = $1', [offer.id]);
    expect(row.status).toBe('cancelled');
  });
});

describe('POST /v1/offers/accept', () => {
  test('when the owner accepts an offer named in asset_id, then the asset passes to the taker, the listing is sold and a completed order is written', async () => {
    const owned = await saveOwnedAsset(server);
    const listing = await saveListing(server, owned.owner.key, owned.asset.id, { startPrice: 10 });
    const taker = await server.key();
    const rival = await server.key();
    const offer = await saveOffer(server, taker.key, owned.asset.id, { price: 7 });
    const rivalOffer = await saveOffer(server, rival.key, owned.asset.id, { price: 6 });

    const res = await server.rest('POST', '/v1/offers/accept', { asset_id: offer.id }, owned.owner.key);

    expect(res.status).toBe(200);
    expect(missing(ORDER_FIELDS, res.body)).toEqual([]);
    expect(res.body).toMatchObject({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      status: 'completed',
      price: 7,
      seller: owned.owner.address,
      buyer: taker.address,
      listing_id: listing.id,
      offer: { id: offer.id, status: 'accepted', taker: taker.address, price: 7 },
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const after = await marketSnapshot(server, owned.asset.id);
    expect(after.asset).toMatchObject({ owner: taker.address, status: 'unlisted' });
    expect(after.listings).toEqual([expect.objectContaining({ id: listing.id, status: 'sold' })]);
    expect(after.offers.map((o: { id: string; status: string }) => [o.id, o.status]).sort()).toEqual(
      [[offer.id, 'accepted'], [rivalOffer.id, 'active']].sort(),
    );
    expect(after.orders).toEqual([{ id: res.body.id, offer_id: offer.id, seller: owned.owner.address, buyer: taker.address, price: '7.000000000000000000' }]);
    const asset = await server.rest('GET', assetPath(owned));
    expect(asset.body).toMatchObject({ owner: taker.address, status: 'unlisted', listing: null });
  });

  test('when the offer is named in offer_id, then it is accepted likewise', async () => {
    const owned = await saveOwnedAsset(server);
    const taker = await server.key();
    const offer = await saveOffer(server, taker.key, owned.asset.id);

    const res = await server.rest('POST', '/v1/offers/accept', { offer_id: offer.id }, owned.owner.key);

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'completed', offer: { id: offer.id, status: 'accepted' }, listing_id: null });
  });

  test('when an offer reaches the listing\'s accept_price, then it is accepted in the same request; one below stays active', async () => {
    const owned = await saveOwnedAsset(server);
    await listViaRest(owned, { start_price: 5 });
    const low = await server.key();
    const high = await server.key();

    const below = await offerViaRest(low, owned.asset.id, { price: 4.99 });
    const reaching = await offerViaRest(high, owned.asset.id, { price: 5 });

    expect(below.body.status).toBe('active');
    expect(reaching.status).toBe(200);
    expect(reaching.body.status).toBe('accepted');
    const after = await marketSnapshot(server, owned.asset.id);
    expect(after.asset.owner).toBe(high.address);
    expect(after.listings.map((l: { status: string }) => l.status)).toEqual(['sold']);
    expect(after.orders).toEqual([expect.objectContaining({ offer_id: reaching.body.id, seller: owned.owner.address, buyer: high.address })]);
  });
});

describe('GET /v1/orders', () => {
  test('when orders are filtered by owner_id, collection_id and token_id, then each filter keeps only matching orders; GET by id reads one', async () => {
    const owned = await saveOwnedAsset(server);
    const sibling = await saveSiblingAsset(server, owned);
    const buyer = await server.key();
    const first = await saveOffer(server, buyer.key, owned.asset.id, { price: 2 });
    const second = await saveOffer(server, buyer.key, sibling.asset.id, { price: 3 });
    const firstOrder = await server.rest('POST', '/v1/offers/accept', { offer_id: first.id }, owned.owner.key);
    const secondOrder = await server.rest('POST', '/v1/offers/accept', { offer_id: second.id }, owned.owner.key);
    const ids = (res: HttpResult) => res.body.result.map((o: { id: string }) => o.id).sort();
    const both = [firstOrder.body.id, secondOrder.body.id].sort();

    expect(ids(await server.rest('GET', `/v1/orders?owner_id=${owned.owner.address}`))).toEqual(both);
    expect(ids(await server.rest('GET', `/v1/orders?owner_id=${buyer.address}`))).toEqual(both);
    expect(ids(await server.rest('GET', `/v1/orders?collection_id=${owned.collection.id}`))).toEqual(both);
    expect(ids(await server.rest('GET', `/v1/orders?collection_id=${owned.collection.contractAddress}&token_id=${sibling.asset.tokenId}`))).toEqual([secondOrder.body.id]);
    expect(ids(await server.rest('GET', `/v1/orders?owner_id=${buyer.address}&status=completed`))).toEqual(both);
    expect(ids(await server.rest('GET', `/v1/orders?owner_id=${randomAddress()}`))).toEqual([]);

    const one = await server.rest('GET', `/v1/orders/${firstOrder.body.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: firstOrder.body.id, status: 'completed', price: 2, seller: owned.owner.address, buyer: buyer.address, offer: { id: first.id } });
  });
});

describe('refused acceptances change nothing', () => {
  test('when someone other than the owner accepts, then 403 FORBIDDEN', async () => {
    const owned = await saveOwnedAsset(server);
    const taker = await server.key();
    const stranger = await server.key();
    const offer = await saveOffer(server, taker.key, owned.asset.id);
    const before = await marketSnapshot(server, owned.asset.id);

    const res = await server.rest('POST', '/v1/offers/accept', { asset_id: offer.id }, stranger.key);

    expectRefused(res, 403, 'FORBIDDEN', 'owner');
    expect(await marketSnapshot(server, owned.asset.id)).toEqual(before);
  });

  test('when an offer already accepted is accepted again by the new owner, then 409 CONFLICT', async () => {
    const owned = await saveOwnedAsset(server);
    const taker = await server.key();
    const offer = await saveOffer(server, taker.key, owned.asset.id);
    await server.rest('POST', '/v1/offers/accept', { asset_id: offer.id }, owned.owner.key);
    const before = await marketSnapshot(server, owned.asset.id);

    const res = await server.rest('POST', '/v1/offers/accept', { asset_id: offer.id }, taker.key);

    expectRefused(res, 409, 'CONFLICT', 'accepted');
    expect(await marketSnapshot(server, owned.asset.id)).toEqual(before);
  });

  test('when a cancelled offer is accepted, then 409 CONFLICT', async () => {
    const owned = await saveOwnedAsset(server);
    const taker = await server.key();
    const offer = await saveOffer(server, taker.key, owned.asset.id);
    await server.rest('DELETE', `/v1/offers/${offer.id}`, undefined, taker.key);
    const before = await marketSnapshot(server, owned.asset.id);

    const res = await server.rest('POST', '/v1/offers/accept', { asset_id: offer.id }, owned.owner.key);

    expectRefused(res, 409, 'CONFLICT', 'cancelled');
    expect(await marketSnapshot(server, owned.asset.id)).toEqual(before);
  });

  test('when an offer whose window has not started is accepted, then 422 naming offer_id', async () => {
    const owned = await saveOwnedAsset(server);
    const taker = await server.key();
    const now = wholeSecond();
    const offer = await saveOffer(server, taker.key, owned.asset.id, { startTime: later(now, HOUR).toISOString(), endTime: later(now, 2 * HOUR).toISOString() });
    const before = await marketSnapshot(server, owned.asset.id);

    const res = await server.rest('POST', '/v1/offers/accept', { offer_id: offer.id }, owned.owner.key);

    expectRefused(res, 422, 'VALIDATION_FAILED', 'offer_id');
    expectFieldDetail(res, 'offer_id');
    expect(await marketSnapshot(server, owned.asset.id)).toEqual(before);
  });

  test('when an unknown offer is accepted, then 404 NOT_FOUND naming it', async () => {
    const { key } = await server.key();
    const id = randomUUID();

    const res = await server.rest('POST', '/v1/offers/accept', { asset_id: id }, key);

    expectRefused(res, 404, 'NOT_FOUND', id);
  });
});

describe('refused offers change nothing', () => {
  test('when the owner offers on its own asset, then 422 naming asset_id', async () => {
    const owned = await saveOwnedAsset(server);
    const before = await marketSnapshot(server, owned.asset.id);

    const res = await offerViaRest(owned.owner, owned.asset.id);

    expectRefused(res, 422, 'VALIDATION_FAILED', 'asset_id');
    expectFieldDetail(res, 'asset_id');
    expect(await marketSnapshot(server, owned.asset.id)).toEqual(before);
  });

  test('when the price is 0 or negative, then 422 naming price, the same for both', async () => {
    const owned = await saveOwnedAsset(server);
    const taker = await server.key();
    const before = await marketSnapshot(server, owned.asset.id);

    const zero = await offerViaRest(taker, owned.asset.id, { price: 0 });
    const negative = await offerViaRest(taker, owned.asset.id, { price: -1 });
    const negativeText = await offerViaRest(taker, owned.asset.id, { price: '-0.5' });

    for (const refused of [zero, negative, negativeText]) {
      expectRefused(refused, 422, 'VALIDATION_FAILED', 'price');
      expectFieldDetail(refused, 'price');
    }
    expect(await marketSnapshot(server, owned.asset.id)).toEqual(before);
  });

  test('when end_time is not after start_time, or already past, then 422 naming end_time', async () => {
    const owned = await saveOwnedAsset(server);
    const taker = await server.key();
    const now = wholeSecond();
    const before = await marketSnapshot(server, owned.asset.id);

    const reversed = await offerViaRest(taker, owned.asset.id, { start_time: later(now, 2 * HOUR).toISOString(), end_time: later(now, HOUR).toISOString() });
    const equal = await offerViaRest(taker, owned.asset.id, { start_time: later(now, HOUR).toISOString(), end_time: later(now, HOUR).toISOString() });
    const past = await offerViaRest(taker, owned.asset.id, { start_time: later(now, -2 * HOUR).toISOString(), end_time: later(now, -HOUR).toISOString() });

    for (const res of [reversed, equal, past]) {
      expectRefused(res, 422, 'VALIDATION_FAILED', 'end_time');
      expectFieldDetail(res, 'end_time');
    }
    expect(past.body.error.message).toContain('future');
    expect(await marketSnapshot(server, owned.asset.id)).toEqual(before);
  });

  test('when the asset is unknown, then 404 NOT_FOUND naming it', async () => {
    const taker = await server.key();
    const id = randomUUID();

    const res = await offerViaRest(taker, id);

    expectRefused(res, 404, 'NOT_FOUND', id);
    expect(await server.ds.query('SELECT id FROM offers WHERE taker = $1', [taker.address])).toEqual([]);
  });

  test('when someone other than the maker deletes an offer, then 403 FORBIDDEN', async () => {
    const owned = await saveOwnedAsset(server);
    const taker = await server.key();
    const offer = await saveOffer(server, taker.key, owned.asset.id);
    const before = await marketSnapshot(server, owned.asset.id);

    const res = await server.rest('DELETE', `/v1/offers/${offer.id}`, undefined, owned.owner.key);

    expectRefused(res, 403, 'FORBIDDEN', 'maker');
    expect(await marketSnapshot(server, owned.asset.id)).toEqual(before);
  });
});

describe('refused listings change nothing', () => {
  test('when someone other than the owner lists the asset, then 403 FORBIDDEN', async () => {
    const owned = await saveOwnedAsset(server);
    const stranger = await server.key();
    const before = await marketSnapshot(server, owned.asset.id);

    const res = await server.rest('POST', '/v1/assets/listing', { asset_id: owned.asset.id, start_price: 1 }, stranger.key);

    expectRefused(res, 403, 'FORBIDDEN', 'owner');
    expect(await marketSnapshot(server, owned.asset.id)).toEqual(before);
  });

  test('when the asset is already listed, then 409 CONFLICT', async () => {
    const owned = await saveOwnedAsset(server);
    await saveListing(server, owned.owner.key, owned.asset.id);
    const before = await marketSnapshot(server, owned.asset.id);

    const res = await listViaRest(owned, { start_price: 9 });

    expectRefused(res, 409, 'CONFLICT', 'already');
    expect(await marketSnapshot(server, owned.asset.id)).toEqual(before);
  });

  test('when a dutch auction has no accept_price below start_price, then 422 naming accept_price', async () => {
    const owned = await saveOwnedAsset(server);
    const before = await marketSnapshot(server, owned.asset.id);
    const dutch = { order_type: 'dutch_auction', start_price: 5, expiration_time: { duration_seconds: 600 } };

    const without = await listViaRest(owned, dutch);
    const above = await listViaRest(owned, { ...dutch, accept_price: 5 });

    for (const res of [without, above]) {
      expectRefused(res, 422, 'VALIDATION_FAILED', 'accept_price');
      expectFieldDetail(res, 'accept_price');
    }
    expect(await marketSnapshot(server, owned.asset.id)).toEqual(before);
  });

  test('when a dutch auction has no expiration, then 422 naming expiration_time', async () => {
    const owned = await saveOwnedAsset(server);
    const before = await marketSnapshot(server, owned.asset.id);

    const res = await listViaRest(owned, { order_type: 'dutch_auction', start_price: 5, accept_price: 1 });

    expectRefused(res, 422, 'VALIDATION_FAILED', 'expiration_time');
    expectFieldDetail(res, 'expiration_time');
    expect(await marketSnapshot(server, owned.asset.id)).toEqual(before);
  });

  test('when the collection royalties and maker fees add up to more than 10000, then 422 naming maker_fees', async () => {
    const owned = await saveOwnedAsset(server, [{ address: randomAddress(), basisPoints: 9000 }]);
    const before = await marketSnapshot(server, owned.asset.id);

    const res = await listViaRest(owned, { start_price: 1, maker_fees: { [randomAddress()]: 1001 } });

    expectRefused(res, 422, 'VALIDATION_FAILED', 'maker_fees');
    expectFieldDetail(res, 'maker_fees');
    expect(await marketSnapshot(server, owned.asset.id)).toEqual(before);
  });
});

describe('expiry is a fact of time', () => {
  test('when time reaches a listing\'s closing_date, then the asset shows unlisted without listing and can be listed again', async () => {
    const start = wholeSecond();
    clock.set(start);
    const owned = await saveOwnedAsset(server);
    const first = await listViaRest(owned, { start_price: 3, expiration_time: { duration_seconds: 60 } });

    clock.set(later(start, 60 * SECOND));
    expect(await currentListing(owned)).toEqual({ status: 'unlisted', listing: null });
    const listedAssets = await server.rest('GET', `/v1/assets?owner_id=${owned.owner.address}&status=listed`);
    expect(listedAssets.body.result).toEqual([]);

    const again = await listViaRest(owned, { start_price: 4 });
    expect(again.status).toBe(200);
    expect(again.body.id).not.toBe(first.body.id);
    expect((await currentListing(owned)).listing).toMatchObject({ id: again.body.id, current_price: 4 });
    const rows = await server.ds.query('SELECT id, status FROM listings WHERE asset_id = $1', [owned.asset.id]);
    expect(rows).toEqual(expect.arrayContaining([{ id: first.body.id, status: 'expired' }, { id: again.body.id, status: 'active' }]));
  });

  test('when time passes an offer\'s end_time, then it shows expired in the list and by id, and accepting it is a 409 that changes nothing', async () => {
    const start = wholeSecond();
    clock.set(start);
    const owned = await saveOwnedAsset(server);
    const taker = await server.key();
    const offer = await saveOffer(server, taker.key, owned.asset.id, { endTime: later(start, 10 * 60 * SECOND).toISOString() });

    clock.set(later(start, 10 * 60 * SECOND + 1));
    const byId = await server.rest('GET', `/v1/offers/${offer.id}`);
    const expired = await server.rest('GET', `/v1/offers?owner_id=${taker.address}&status=expired`);
    const active = await server.rest('GET', `/v1/offers?owner_id=${taker.address}&status=active`);
    const before = await marketSnapshot(server, owned.asset.id);
    const accept = await server.rest('POST', '/v1/offers/accept', { asset_id: offer.id }, owned.owner.key);

    expect(byId.body.status).toBe('expired');
    expect(expired.body.result.map((o: { id: string; status: string }) => [o.id, o.status])).toEqual([[offer.id, 'expired']]);
    expect(active.body.result).toEqual([]);
    expectRefused(accept, 409, 'CONFLICT', 'expired');
    expect(await marketSnapshot(server, owned.asset.id)).toEqual(before);
  });
});
