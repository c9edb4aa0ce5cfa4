import { ACCEPT_OFFER, OwnedAsset, Party, saveListing, saveOffer, saveOwnedAsset } from './factories/market';
import { startServer, TestServer } from './setup/server';

/** History of assets, listings and offers, read from the event log through REST and GraphQL. */
let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

interface Story {
  owned: OwnedAsset;
  buyer: Party;
  listingId: string;
  offerId: string;
  orderId: string;
}

/** An asset listed at 5, repriced to 4, and sold by accepting an offer of 3. */
async function soldAsset(): Promise<Story> {
  const owned = await saveOwnedAsset(server);
  const listing = await saveListing(server, owned.owner.key, owned.asset.id, { startPrice: 5 });
  const repriced = await server.rest('PUT', `/v1/assets/listing/${owned.asset.tokenAddress}/${owned.asset.tokenId}`, { start_price: 4 }, owned.owner.key);
  expect(repriced.status).toBe(200);
  const buyer = await server.key();
  const offer = await saveOffer(server, buyer.key, owned.asset.id, { price: 3 });
  const accepted = await server.gql(ACCEPT_OFFER, { offerId: offer.id }, owned.owner.key);
  return { owned, buyer, listingId: listing.id, offerId: offer.id, orderId: accepted.body.data.acceptOffer.id };
}

const historyPath = (owned: OwnedAsset, query = '') => `/v1/assets/${owned.asset.tokenAddress}/${owned.asset.tokenId}/history${query}`;

describe('asset history', () => {
  test('when an asset is created, listed, repriced and sold, then GET .../history shows each step with its price, owners and ids', async () => {
    const story = await soldAsset();
    const { owned } = story;

    const res = await server.rest('GET', historyPath(owned, '?direction=asc'));

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ cursor: null, remaining: 0 });
    const none = { price: null, price_decimal: null, from: null, to: null, listing_id: null, offer_id: null, order_id: null };
    const listed = { ...none, listing_id: story.listingId };
    expect(res.body.result.map(({ id: _id, occurred_at: _at, asset_id: _asset, ...rest }: Record<string, unknown>) => rest)).toEqual([
      { ...none, type: 'asset.created', to: owned.owner.address },
      { ...listed, type: 'listing.created', price: 5, price_decimal: expect.stringMatching(/^5(\.0+)?$/) },
      { ...listed, type: 'listing.updated', price: 4, price_decimal: expect.stringMatching(/^4(\.0+)?$/) },
      { ...listed, type: 'listing.sold', price: 3, price_decimal: expect.stringMatching(/^3(\.0+)?$/), order_id: story.orderId },
      {
        ...listed,
        type: 'asset.transferred',
        price: 3,
        price_decimal: expect.stringMatching(/^3(\.0+)?$/),
        from: owned.owner.address,
        to: story.buyer.address,
        offer_id: story.offerId,
        order_id: story.orderId,
      },
    ]);
    const positions = res.body.result.map((e: { id: string }) => Number(e.id));
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    for (const entry of res.body.result) expect(entry.asset_id).toBe(owned.asset.id);
  });

  test('when the history is read by GraphQL, then it is the same as by REST, newest first by default', async () => {
    const { owned } = await soldAsset();

    const rest = await server.rest('GET', historyPath(owned));
    const gql = await server.gql(ASSET_HISTORY, { address: owned.asset.tokenAddress, tokenId: owned.asset.tokenId });

    expect(gql.body.errors).toBeUndefined();
    const entries = gql.body.data.asset.history.result;
    expect(entries.map((e: { type: string }) => e.type)).toEqual(['asset.transferred', 'listing.sold', 'listing.updated', 'listing.created', 'asset.created']);
    expect(entries).toEqual(
      rest.body.result.map((e: Record<string, unknown>) => ({ id: e.id, type: e.type, price: e.price, from: e.from, to: e.to, orderId: e.order_id })),
    );
  });

  test('when the history is read two entries at a time, then the pages follow each other by cursor with nothing lost or repeated', async () => {
    const { owned } = await soldAsset();
    const all = (await server.rest('GET', historyPath(owned, '?limit=100'))).body.result.map((e: { id: string }) => e.id);

    const seen: string[] = [];
    let page: string | null = null;
    for (let i = 0; i < 5; i += 1) {
      const res: { status: number; body: any } = await server.rest('GET', historyPath(owned, `?limit=2${page ? `&page=${page}` : ''}`));
      expect(res.status).toBe(200);
      seen.push(...res.body.result.map((e: { id: string }) => e.id));
      expect(res.body.remaining).toBe(all.length - seen.length);
      page = res.body.cursor;
      if (!page) break;
    }

    expect(all).toHaveLength(5);
    expect(seen).toEqual(all);
    expect((await server.rest('GET', historyPath(owned, '?limit=2&page=3'))).body.result.map((e: { id: string }) => e.id)).toEqual(all.slice(4));
  });

  test('when types are asked, then only those show, including ones not shown by default', async () => {
    const story = await soldAsset();

    const res = await server.rest('GET', historyPath(story.owned, '?types=order.completed,offer.created&direction=asc'));

    expect(res.status).toBe(200);
    expect(res.body.result).toMatchObject([
      { type: 'offer.created', offer_id: story.offerId, price: 3 },
      { type: 'order.completed', order_id: story.orderId, offer_id: story.offerId, listing_id: story.listingId, from: story.owned.owner.address, to: story.buyer.address, price: 3 },
    ]);
  });

  test('when types, limit or page are not valid, or the asset does not exist, then 400 or 404', async () => {
    const owned = await saveOwnedAsset(server);

    const badType = await server.rest('GET', historyPath(owned, '?types=asset.created,asset.moved'));
    const badLimit = await server.rest('GET', historyPath(owned, '?limit=0'));
    const badPage = await server.rest('GET', historyPath(owned, '?page=bm90LWEtY3Vyc29y'));
    const missing = await server.rest('GET', `/v1/assets/${owned.asset.tokenAddress}/999999/history`);

    expect(badType.status).toBe(400);
    expect(badType.body.error.details).toEqual([expect.objectContaining({ field: 'types' })]);
    expect(badType.body.error.message).toContain('asset.moved');
    expect(badLimit.status).toBe(400);
    expect(badPage.status).toBe(400);
    expect(missing.status).toBe(404);
  });
});

describe('listing and offer history', () => {
  test('when a listing is sold, then Offer.history shows its creation and its acceptance with the order', async () => {
    const story = await soldAsset();

    const res = await server.gql(OFFER_AND_LISTING_HISTORY, { offerId: story.offerId });

    expect(res.body.errors).toBeUndefined();
    const offer = res.body.data.offer;
    expect(offer.history).toEqual({
      remaining: 0,
      cursor: null,
      result: [
        expect.objectContaining({ type: 'offer.created', offerId: story.offerId, orderId: null, price: 3 }),
        expect.objectContaining({ type: 'offer.accepted', offerId: story.offerId, orderId: story.orderId, price: 3 }),
      ],
    });
  });

  test('when a listing is repriced and then cancelled, then Listing.history shows it, on the active listing and in the cancellation\'s answer', async () => {
    const owned = await saveOwnedAsset(server);
    const listing = await saveListing(server, owned.owner.key, owned.asset.id, { startPrice: 5 });
    await server.rest('PUT', `/v1/assets/listing/${owned.asset.tokenAddress}/${owned.asset.tokenId}`, { start_price: 4 }, owned.owner.key);
    const token = { address: owned.asset.tokenAddress, tokenId: owned.asset.tokenId };

    const active = await server.gql(ACTIVE_LISTING_HISTORY, token);
    const cancelled = await server.gql(CANCEL_LISTING_WITH_HISTORY, token, owned.owner.key);

    expect(active.body.errors).toBeUndefined();
    const steps = (history: { result: Record<string, unknown>[] }) => history.result.map((e) => [e.type, e.listingId, e.priceDecimal]);
    expect(steps(active.body.data.asset.listing.history)).toEqual([
      ['listing.created', listing.id, expect.stringMatching(/^5(\.0+)?$/)],
      ['listing.updated', listing.id, expect.stringMatching(/^4(\.0+)?$/)],
    ]);
    expect(cancelled.body.errors).toBeUndefined();
    expect(steps(cancelled.body.data.cancelListing.history)).toEqual([
      ...steps(active.body.data.asset.listing.history),
      ['listing.cancelled', listing.id, expect.stringMatching(/^4(\.0+)?$/)],
    ]);
  });

  test('when an offer is cancelled, then its history ends with the cancellation', async () => {
    const owned = await saveOwnedAsset(server);
    const bidder = await server.key();
    const offer = await saveOffer(server, bidder.key, owned.asset.id, { price: 2 });
    expect((await server.rest('DELETE', `/v1/offers/${offer.id}`, undefined, bidder.key)).status).toBe(200);

    const res = await server.gql(OFFER_AND_LISTING_HISTORY, { offerId: offer.id });

    expect(res.body.data.offer.history.result.map((e: { type: string }) => e.type)).toEqual(['offer.created', 'offer.cancelled']);
  });
});

const ASSET_HISTORY = /* GraphQL */ `
  query ($address: Address!, $tokenId: TokenId!) {
    asset(tokenAddress: $address, tokenId: $tokenId) { history { result { id type price from to orderId } } }
  }`;

const OFFER_AND_LISTING_HISTORY = /* GraphQL */ `
  query ($offerId: ID!) {
    offer(id: $offerId) { history(direction: ASC) { remaining cursor result { id type offerId orderId price } } }
  }`;

const ACTIVE_LISTING_HISTORY = /* GraphQL */ `
  query ($address: Address!, $tokenId: TokenId!) {
    asset(tokenAddress: $address, tokenId: $tokenId) { listing { history(direction: ASC) { result { type listingId priceDecimal } } } }
  }`;

const CANCEL_LISTING_WITH_HISTORY = /* GraphQL */ `
  mutation ($address: Address!, $tokenId: TokenId!) {
    cancelListing(tokenAddress: $address, tokenId: $tokenId) { history(direction: ASC) { result { type listingId priceDecimal } } }
  }`;
