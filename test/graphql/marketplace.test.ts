import { randomUUID } from 'node:crypto';
import { clock } from '../../src/common/clock';
import { HttpResult, randomAddress, startServer, TestServer } from '../setup/server';
import { ACCEPT_OFFER, marketSnapshot, openWindow, OwnedAsset, saveListing, saveOffer, saveOwnedAsset, saveSiblingAsset } from '../factories/market';

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

async function assetMarket(owned: OwnedAsset) {
  const res = await server.gql(ASSET_MARKET, { tokenAddress: owned.asset.tokenAddress, tokenId: owned.asset.tokenId });
  expect(res.body.errors).toBeUndefined();
  return res.body.data.asset as { owner: string; status: string; listing: Record<string, unknown> | null };
}

function createListing(owned: OwnedAsset, input: Record<string, unknown>, key = owned.owner.key) {
  return server.gql(CREATE_LISTING, { input: { assetId: owned.asset.id, ...input } }, key);
}

function createOffer(key: string, assetId: string, input: Record<string, unknown> = {}) {
  return server.gql(CREATE_OFFER, { input: { assetId, price: 1, ...openWindow(), ...input } }, key);
}

/** A refused operation: its error code, and a message that names `mention`; no data. */
function expectRefused(res: HttpResult, code: string, mention: string): void {
  expect(res.body.errors).toHaveLength(1);
  expect(res.body.errors[0]).toMatchObject({ message: expect.stringContaining(mention), extensions: { code } });
  expect(res.body.data ?? null).toBeNull();
}

function expectFieldDetail(res: HttpResult, field: string): void {
  expect(res.body.errors[0].extensions.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
}

describe('createListing, updateListing, cancelListing', () => {
  test('when an asset is listed with a start price only, then it is a fixed price listing from now, shown on the asset as listed', async () => {
    const now = wholeSecond();
    clock.set(now);
    const royalty = randomAddress();
    const maker = randomAddress();
    const owned = await saveOwnedAsset(server, [{ address: royalty, basisPoints: 300 }]);
    expect(await assetMarket(owned)).toMatchObject({ status: 'UNLISTED', listing: null });

    const res = await createListing(owned, { startPrice: '1.5', makerFees: { [maker]: 200 } });

    expect(res.body.errors).toBeUndefined();
    const listing = res.body.data.createListing;
    expect(listing).toMatchObject({
      status: 'ACTIVE',
      orderType: 'FIXED_PRICE',
      startPrice: 1.5,
      acceptPrice: 1.5,
      currentPrice: 1.5,
      listingTime: now.toISOString(),
      closingDate: null,
      seller: owned.owner.address,
      tokenAddress: owned.asset.tokenAddress,
      tokenId: owned.asset.tokenId,
      chain: { chainId: '1' },
      fees: [
        { address: royalty, basisPoints: 300, type: 'royalty' },
        { address: maker, basisPoints: 200, type: 'maker' },
      ],
    });
    expect(await assetMarket(owned)).toMatchObject({ status: 'LISTED', listing: { id: listing.id, currentPrice: 1.5 } });
  });

  test('when expirationTime is given as at or as durationSeconds, then it becomes the closing date', async () => {
    const owned = await saveOwnedAsset(server);
    const other = await saveSiblingAsset(server, owned);
    const listingTime = wholeSecond();
    const at = later(listingTime, 3 * HOUR).toISOString();

    const byAt = await createListing(owned, { startPrice: 2, expirationTime: { at } });
    const byDuration = await createListing(other, { startPrice: 2, listingTime: listingTime.toISOString(), expirationTime: { durationSeconds: 90 } });

    expect(byAt.body.data.createListing.closingDate).toBe(at);
    expect(byDuration.body.data.createListing.closingDate).toBe(later(listingTime, 90 * SECOND).toISOString());
  });

  test('when time is at 25% and 50% of a dutch auction, then its current price has fallen linearly; at 100% the asset is unlisted', async () => {
    const start = wholeSecond();
    clock.set(start);
    const owned = await saveOwnedAsset(server);
    await createListing(owned, { orderType: 'DUTCH_AUCTION', startPrice: 3, acceptPrice: 1, expirationTime: { durationSeconds: 400 } });

    clock.set(later(start, 100 * SECOND));
    expect((await assetMarket(owned)).listing?.currentPrice).toBe(2.5);
    clock.set(later(start, 200 * SECOND));
    expect((await assetMarket(owned)).listing?.currentPrice).toBe(2);
    clock.set(later(start, 400 * SECOND));
    expect(await assetMarket(owned)).toMatchObject({ status: 'UNLISTED', listing: null });
  });

  test('when an english auction gets offers, then its current price is the highest active offer, else its start price', async () => {
    const owned = await saveOwnedAsset(server);
    await createListing(owned, { orderType: 'ENGLISH_AUCTION', startPrice: 1 });
    expect((await assetMarket(owned)).listing?.currentPrice).toBe(1);
    const bidder = await server.key();

    const bid = await saveOffer(server, bidder.key, owned.asset.id, { price: 4 });
    expect((await assetMarket(owned)).listing?.currentPrice).toBe(4);
    await server.gql(CANCEL_OFFER, { id: bid.id }, bidder.key);
    expect((await assetMarket(owned)).listing?.currentPrice).toBe(1);
  });

  test('when the lister changes a fixed-price listing\'s start price, then its accept price moves with it, shown and stored', async () => {
    const owned = await saveOwnedAsset(server);
    const listed = await saveListing(server, owned.owner.key, owned.asset.id, { startPrice: 5 });

    const res = await server.gql(
      UPDATE_LISTING,
      { tokenAddress: owned.asset.tokenAddress, tokenId: owned.asset.tokenId, input: { startPrice: 8 } },
      owned.owner.key,
    );

    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.updateListing).toMatchObject({ id: listed.id, startPrice: 8, acceptPrice: 8, currentPrice: 8, status: 'ACTIVE' });
    const [row] = await server.ds.query('SELECT start_price::text, accept_price::text FROM listings WHERE id = $1', [listed.id]);
    expect(row).toEqual({ start_price: '8.000000000000000000', accept_price: '8.000000000000000000' });
  });

  test('when the lister cancels the listing, then it is cancelled and the asset is unlisted', async () => {
    const owned = await saveOwnedAsset(server);
    const listed = await saveListing(server, owned.owner.key, owned.asset.id);

    const res = await server.gql(CANCEL_LISTING, { tokenAddress: owned.asset.tokenAddress, tokenId: owned.asset.tokenId }, owned.owner.key);

    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.cancelListing).toMatchObject({ id: listed.id, status: 'CANCELLED' });
    expect(await assetMarket(owned)).toMatchObject({ status: 'UNLISTED', listing: null });
    const [row] = await server.ds.query('SELECT status FROM listings WHERE id = $1', [listed.id]);
    expect(row.status).toBe('cancelled');
  });
});

describe('offers and orders', () => {
  test('when an offer is made, then the caller is its taker, it is active, and offers() finds it by token, taker and status', async () => {
    const owned = await saveOwnedAsset(server);
    const taker = await server.key();

    const res = await createOffer(taker.key, owned.asset.id, { price: '0.75' });

    expect(res.body.errors).toBeUndefined();
    const offer = res.body.data.createOffer;
    expect(offer).toMatchObject({ status: 'ACTIVE', taker: taker.address, price: 0.75, assets: { result: [{ id: owned.asset.id }] } });
    const ids = async (variables: Record<string, unknown>) =>
      (await server.gql(OFFERS, variables)).body.data.offers.result.map((o: { id: string }) => o.id);
    expect(await ids({ tokenAddress: owned.asset.tokenAddress, tokenId: owned.asset.tokenId })).toEqual([offer.id]);
    expect(await ids({ ownerId: taker.address })).toEqual([offer.id]);
    expect(await ids({ ownerId: taker.address, status: 'ACTIVE' })).toEqual([offer.id]);
    expect(await ids({ ownerId: taker.address, status: 'ACCEPTED' })).toEqual([]);
    const byId = await server.gql(OFFER, { id: offer.id });
    expect(byId.body.data.offer).toMatchObject({ id: offer.id, status: 'ACTIVE', taker: taker.address });
  });

  test('when the owner accepts an offer, then the taker owns the unlisted asset, the listing is sold and a completed order is readable', async () => {
    const owned = await saveOwnedAsset(server);
    const listing = await saveListing(server, owned.owner.key, owned.asset.id, { startPrice: 9 });
    const taker = await server.key();
    const offer = await saveOffer(server, taker.key, owned.asset.id, { price: 3 });

    const res = await server.gql(ACCEPT_OFFER, { offerId: offer.id }, owned.owner.key);

    expect(res.body.errors).toBeUndefined();
    const order = res.body.data.acceptOffer;
    expect(order).toMatchObject({ status: 'COMPLETED', price: 3, seller: owned.owner.address, buyer: taker.address, offer: { id: offer.id, status: 'ACCEPTED' } });
    expect(await assetMarket(owned)).toEqual({ owner: taker.address, status: 'UNLISTED', listing: null });
    const after = await marketSnapshot(server, owned.asset.id);
    expect(after.listings).toEqual([expect.objectContaining({ id: listing.id, status: 'sold' })]);
    expect(after.offers).toEqual([expect.objectContaining({ id: offer.id, status: 'accepted' })]);
    expect(after.orders).toEqual([{ id: order.id, offer_id: offer.id, seller: owned.owner.address, buyer: taker.address, price: '3.000000000000000000' }]);

    const ids = async (variables: Record<string, unknown>) =>
      (await server.gql(ORDERS, variables)).body.data.orders.result.map((o: { id: string }) => o.id);
    expect(await ids({ ownerId: owned.owner.address })).toEqual([order.id]);
    expect(await ids({ ownerId: taker.address })).toEqual([order.id]);
    expect(await ids({ collectionId: owned.collection.id, tokenId: owned.asset.tokenId })).toEqual([order.id]);
    const byId = await server.gql(ORDER, { id: order.id });
    expect(byId.body.data.order).toMatchObject({ id: order.id, status: 'COMPLETED', listingId: listing.id, offer: { id: offer.id } });
  });

  test('when an offer reaches the accept price, then it is accepted in the same request and an order exists', async () => {
    const owned = await saveOwnedAsset(server);
    await saveListing(server, owned.owner.key, owned.asset.id, { startPrice: 4 });
    const taker = await server.key();

    const res = await createOffer(taker.key, owned.asset.id, { price: 4 });

    expect(res.body.data.createOffer).toMatchObject({ status: 'ACCEPTED', taker: taker.address });
    const after = await marketSnapshot(server, owned.asset.id);
    expect(after.asset.owner).toBe(taker.address);
    expect(after.orders).toEqual([expect.objectContaining({ offer_id: res.body.data.createOffer.id, buyer: taker.address, price: '4.000000000000000000' })]);
  });

  test('when the maker cancels an offer, then it is cancelled', async () => {
    const owned = await saveOwnedAsset(server);
    const taker = await server.key();
    const offer = await saveOffer(server, taker.key, owned.asset.id);

    const res = await server.gql(CANCEL_OFFER, { id: offer.id }, taker.key);

    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.cancelOffer).toMatchObject({ id: offer.id, status: 'CANCELLED' });
    const [row] = await server.ds.query('SELECT status FROM offers WHERE id = $1', [offer.id]);
    expect(row.status).toBe('cancelled');
  });
});

describe('refused operations change nothing', () => {
  test('when someone other than the owner accepts an offer, then FORBIDDEN', async () => {
    const owned = await saveOwnedAsset(server);
    const taker = await server.key();
    const stranger = await server.key();
    const offer = await saveOffer(server, taker.key, owned.asset.id);
    const before = await marketSnapshot(server, owned.asset.id);

    const res = await server.gql(ACCEPT_OFFER, { offerId: offer.id }, stranger.key);

    expectRefused(res, 'FORBIDDEN', 'owner');
    expect(await marketSnapshot(server, owned.asset.id)).toEqual(before);
  });

  test('when an accepted, a cancelled or an expired offer is accepted, then CONFLICT naming its status', async () => {
    const start = wholeSecond();
    clock.set(start);
    const owned = await saveOwnedAsset(server);
    const sold = await saveSiblingAsset(server, owned);
    const taker = await server.key();
    const accepted = await saveOffer(server, taker.key, sold.asset.id);
    await server.gql(ACCEPT_OFFER, { offerId: accepted.id }, owned.owner.key);
    const cancelled = await saveOffer(server, taker.key, owned.asset.id);
    await server.gql(CANCEL_OFFER, { id: cancelled.id }, taker.key);
    const expiring = await saveOffer(server, taker.key, owned.asset.id, { endTime: later(start, 60 * SECOND).toISOString() });
    clock.set(later(start, 61 * SECOND));
    const before = [await marketSnapshot(server, owned.asset.id), await marketSnapshot(server, sold.asset.id)];

    const again = await server.gql(ACCEPT_OFFER, { offerId: accepted.id }, taker.key);
    const ofCancelled = await server.gql(ACCEPT_OFFER, { offerId: cancelled.id }, owned.owner.key);
    const ofExpired = await server.gql(ACCEPT_OFFER, { offerId: expiring.id }, owned.owner.key);

    expectRefused(again, 'CONFLICT', 'accepted');
    expectRefused(ofCancelled, 'CONFLICT', 'cancelled');
    expectRefused(ofExpired, 'CONFLICT', 'expired');
    expect([await marketSnapshot(server, owned.asset.id), await marketSnapshot(server, sold.asset.id)]).toEqual(before);
  });

  test('when an offer whose window has not started is accepted, then VALIDATION_FAILED naming offerId; an unknown offer is NOT_FOUND', async () => {
    const owned = await saveOwnedAsset(server);
    const taker = await server.key();
    const now = wholeSecond();
    const offer = await saveOffer(server, taker.key, owned.asset.id, { startTime: later(now, HOUR).toISOString(), endTime: later(now, 2 * HOUR).toISOString() });
    const before = await marketSnapshot(server, owned.asset.id);
    const unknown = randomUUID();

    const early = await server.gql(ACCEPT_OFFER, { offerId: offer.id }, owned.owner.key);
    const missing = await server.gql(ACCEPT_OFFER, { offerId: unknown }, owned.owner.key);

    expectRefused(early, 'VALIDATION_FAILED', 'offerId');
    expectFieldDetail(early, 'offerId');
    expectRefused(missing, 'NOT_FOUND', unknown);
    expect(await marketSnapshot(server, owned.asset.id)).toEqual(before);
  });

  test('when an offer is on one\'s own asset, at price 0, ending before it starts or in the past, then VALIDATION_FAILED naming the field', async () => {
    const owned = await saveOwnedAsset(server);
    const taker = await server.key();
    const now = wholeSecond();
    const before = await marketSnapshot(server, owned.asset.id);

    const own = await createOffer(owned.owner.key, owned.asset.id);
    const zero = await createOffer(taker.key, owned.asset.id, { price: 0 });
    const reversed = await createOffer(taker.key, owned.asset.id, { startTime: later(now, 2 * HOUR).toISOString(), endTime: later(now, HOUR).toISOString() });
    const past = await createOffer(taker.key, owned.asset.id, { startTime: later(now, -2 * HOUR).toISOString(), endTime: later(now, -HOUR).toISOString() });

    expectRefused(own, 'VALIDATION_FAILED', 'assetId');
    expectFieldDetail(own, 'assetId');
    expectRefused(zero, 'VALIDATION_FAILED', 'price');
    expectFieldDetail(zero, 'price');
    for (const res of [reversed, past]) {
      expectRefused(res, 'VALIDATION_FAILED', 'endTime');
      expectFieldDetail(res, 'endTime');
    }
    expect(await marketSnapshot(server, owned.asset.id)).toEqual(before);
  });

  test('when an offer has a negative price, then VALIDATION_FAILED naming price, as for a price of 0', async () => {
    const owned = await saveOwnedAsset(server);
    const taker = await server.key();
    const before = await marketSnapshot(server, owned.asset.id);

    const res = await createOffer(taker.key, owned.asset.id, { price: -2 });

    expect(res.body.errors?.[0]).toMatchObject({ message: expect.stringContaining('price'), extensions: { code: 'VALIDATION_FAILED' } });
    expect(await marketSnapshot(server, owned.asset.id)).toEqual(before);
  });

  test('when an offer names an unknown asset, then NOT_FOUND naming it', async () => {
    const taker = await server.key();
    const unknown = randomUUID();

    const res = await createOffer(taker.key, unknown);

    expectRefused(res, 'NOT_FOUND', unknown);
    expect(await server.ds.query('SELECT id FROM offers WHERE taker = $1', [taker.address])).toEqual([]);
  });

  test('when someone other than the maker cancels an offer, then FORBIDDEN', async () => {
    const owned = await saveOwnedAsset(server);
    const taker = await server.key();
    const offer = await saveOffer(server, taker.key, owned.asset.id);
    const before = await marketSnapshot(server, owned.asset.id);

    const res = await server.gql(CANCEL_OFFER, { id: offer.id }, owned.owner.key);

    expectRefused(res, 'FORBIDDEN', 'maker');
    expect(await marketSnapshot(server, owned.asset.id)).toEqual(before);
  });

  test('when someone other than the owner lists, or the asset is already listed, then FORBIDDEN and CONFLICT', async () => {
    const owned = await saveOwnedAsset(server);
    const stranger = await server.key();
    await saveListing(server, owned.owner.key, owned.asset.id);
    const before = await marketSnapshot(server, owned.asset.id);

    const byStranger = await createListing(owned, { startPrice: 1 }, stranger.key);
    const twice = await createListing(owned, { startPrice: 1 });

    expectRefused(byStranger, 'FORBIDDEN', 'owner');
    expectRefused(twice, 'CONFLICT', 'already');
    expect(await marketSnapshot(server, owned.asset.id)).toEqual(before);
  });

  test('when a dutch auction lacks an accept price below its start price or an expiration, or fees exceed 10000, then VALIDATION_FAILED naming the field', async () => {
    const owned = await saveOwnedAsset(server, [{ address: randomAddress(), basisPoints: 6000 }]);
    const before = await marketSnapshot(server, owned.asset.id);
    const expiring = { expirationTime: { durationSeconds: 600 } };

    const noAccept = await createListing(owned, { orderType: 'DUTCH_AUCTION', startPrice: 5, ...expiring });
    const acceptAbove = await createListing(owned, { orderType: 'DUTCH_AUCTION', startPrice: 5, acceptPrice: 6, ...expiring });
    const noExpiration = await createListing(owned, { orderType: 'DUTCH_AUCTION', startPrice: 5, acceptPrice: 1 });
    const fees = await createListing(owned, { startPrice: 1, makerFees: { [randomAddress()]: 3000, [randomAddress()]: 1001 } });

    for (const res of [noAccept, acceptAbove]) {
      expectRefused(res, 'VALIDATION_FAILED', 'acceptPrice');
      expectFieldDetail(res, 'acceptPrice');
    }
    expectRefused(noExpiration, 'VALIDATION_FAILED', 'expirationTime');
    expectFieldDetail(noExpiration, 'expirationTime');
    expectRefused(fees, 'VALIDATION_FAILED', 'makerFees');
    expectFieldDetail(fees, 'makerFees');
    expect(await marketSnapshot(server, owned.asset.id)).toEqual(before);
  });
});

describe('expiry is a fact of time', () => {
  test('when a listing reaches its closing date, then the asset is unlisted without listing and can be listed again', async () => {
    const start = wholeSecond();
    clock.set(start);
    const owned = await saveOwnedAsset(server);
    await createListing(owned, { startPrice: 2, expirationTime: { durationSeconds: 30 } });

    clock.set(later(start, 30 * SECOND));
    expect(await assetMarket(owned)).toMatchObject({ status: 'UNLISTED', listing: null });
    const again = await createListing(owned, { startPrice: 3 });

    expect(again.body.errors).toBeUndefined();
    expect(await assetMarket(owned)).toMatchObject({ status: 'LISTED', listing: { id: again.body.data.createListing.id, currentPrice: 3 } });
  });

  test('when an offer passes its end time, then it is listed and read as expired and no longer sets an english auction\'s price', async () => {
    const start = wholeSecond();
    clock.set(start);
    const owned = await saveOwnedAsset(server);
    await createListing(owned, { orderType: 'ENGLISH_AUCTION', startPrice: 1 });
    const taker = await server.key();
    const offer = await saveOffer(server, taker.key, owned.asset.id, { price: 5, endTime: later(start, 60 * SECOND).toISOString() });
    expect((await assetMarket(owned)).listing?.currentPrice).toBe(5);

    clock.set(later(start, 61 * SECOND));

    expect((await assetMarket(owned)).listing?.currentPrice).toBe(1);
    expect((await server.gql(OFFER, { id: offer.id })).body.data.offer.status).toBe('EXPIRED');
    const expired = await server.gql(OFFERS, { ownerId: taker.address, status: 'EXPIRED' });
    expect(expired.body.data.offers.result.map((o: { id: string }) => o.id)).toEqual([offer.id]);
  });
});

const LISTING_FIELDS = /* GraphQL */ `
  id status orderType startPrice acceptPrice currentPrice listingTime closingDate seller tokenAddress tokenId
  chain { chainId }
  fees { address basisPoints type }`;

const ASSET_MARKET = /* GraphQL */ `
  query ($tokenAddress: Address!, $tokenId: TokenId!) {
    asset(tokenAddress: $tokenAddress, tokenId: $tokenId) { owner status listing { ${LISTING_FIELDS} } }
  }`;

const CREATE_LISTING = /* GraphQL */ `
  mutation ($input: CreateListingInput!) { createListing(input: $input) { ${LISTING_FIELDS} } }`;

const UPDATE_LISTING = /* GraphQL */ `
  mutation ($tokenAddress: Address!, $tokenId: TokenId!, $input: UpdateListingInput!) {
    updateListing(tokenAddress: $tokenAddress, tokenId: $tokenId, input: $input) { ${LISTING_FIELDS} }
  }`;

const CANCEL_LISTING = /* GraphQL */ `
  mutation ($tokenAddress: Address!, $tokenId: TokenId!) {
    cancelListing(tokenAddress: $tokenAddress, tokenId: $tokenId) { id status }
  }`;

const CREATE_OFFER = /* GraphQL */ `
  mutation ($input: CreateOfferInput!) {
    createOffer(input: $input) { id status taker price startTime endTime assets { result { id } } }
  }`;

const CANCEL_OFFER = /* GraphQL */ `
  mutation ($id: ID!) { cancelOffer(id: $id) { id status } }`;

const OFFERS = /* GraphQL */ `
  query ($tokenAddress: Address, $tokenId: TokenId, $ownerId: Address, $status: OfferStatus) {
    offers(tokenAddress: $tokenAddress, tokenId: $tokenId, ownerId: $ownerId, status: $status) { result { id status } }
  }`;

const OFFER = /* GraphQL */ `
  query ($id: ID!) { offer(id: $id) { id status taker price } }`;

const ORDERS = /* GraphQL */ `
  query ($ownerId: Address, $collectionId: String, $tokenId: TokenId) {
    orders(ownerId: $ownerId, collectionId: $collectionId, tokenId: $tokenId) { result { id } }
  }`;

const ORDER = /* GraphQL */ `
  query ($id: ID!) { order(id: $id) { id status price seller buyer listingId offer { id status } } }`;
