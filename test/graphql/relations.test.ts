import { clock } from '../../src/common/clock';
import { randomAddress, startServer, TestServer } from '../setup/server';
import { saveBulkMarket } from '../factories/bulk-market';
import { ACCEPT_OFFER, CREATE_OFFER, openWindow, Party, saveListing, saveOffer } from '../factories/market';
import { CollectionRow, saveAsset, saveCollection } from '../factories/marketplace';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());
afterEach(() => clock.reset());

type Asset = { id: string; tokenAddress: string; tokenId: string };
type PageOf = { cursor: string | null; remaining: number; result: { id: string }[] };

const ids = (page: PageOf) => page.result.map((item) => item.id);

async function data(query: string, variables: Record<string, unknown> = {}) {
  const res = await server.gql(query, variables);
  expect(res.body.errors).toBeUndefined();
  return res.body.data;
}

/** Ids read back from the database, in a list's default order (newest first, ties by id). */
async function idsInDatabase(sql: string, params: unknown[]): Promise<string[]> {
  const rows: { id: string }[] = await server.ds.query(`${sql} ORDER BY created_at DESC, id DESC`, params);
  return rows.map((r) => r.id);
}

async function collectionOffer(key: string, collectionId: string, input: Record<string, unknown>) {
  const res = await server.gql(CREATE_OFFER, { input: { collectionId, ...openWindow(), ...input } }, key);
  if (!res.body.data?.createOffer) throw new Error(`createOffer failed: ${JSON.stringify(res.body)}`);
  return res.body.data.createOffer as { id: string };
}

async function accept(offerId: string, key: string): Promise<string> {
  const res = await server.gql(ACCEPT_OFFER, { offerId }, key);
  if (!res.body.data?.acceptOffer) throw new Error(`acceptOffer failed: ${JSON.stringify(res.body)}`);
  return res.body.data.acceptOffer.id;
}

async function cancelListing(asset: Asset, key: string) {
  const res = await server.gql(CANCEL_LISTING, { tokenAddress: asset.tokenAddress, tokenId: asset.tokenId }, key);
  if (!res.body.data?.cancelListing) throw new Error(`cancelListing failed: ${JSON.stringify(res.body)}`);
}

/**
 * Alice's collection `art`: a1 listed (a cancelled listing, then an active one) with item offers of Bob
 * and Carol; a2 sold to Bob through its listing; a3 on an english auction with two bids; a4 unlisted with
 * Carol's high item offer; a5 whose english auction was cancelled after a bid, with an offer after that.
 * On `art`: Carol's and Bob's collection offers at 3 (Carol's first), Bob's trait offer at 4 and a
 * collection offer at 9 whose window has not started. Bob's collection `other`: b1, sold to Alice unlisted.
 */
interface Market {
  alice: Party;
  bob: Party;
  carol: Party;
  art: CollectionRow;
  other: CollectionRow;
  a: Record<'a1' | 'a2' | 'a3' | 'a4' | 'a5' | 'b1', Asset>;
  listings: Record<'cancelled' | 'active' | 'sold' | 'auction' | 'cancelledAuction', string>;
  offers: Record<'bobOnA1' | 'carolOnA1' | 'carolCollection' | 'bobCollection' | 'trait' | 'future' | 'carolOnA4' | 'bid1' | 'bid2' | 'bidOnA5' | 'afterAuction', string>;
  orders: Record<'a2ToBob' | 'b1ToAlice', string>;
}

async function saveMarket(): Promise<Market> {
  const [alice, bob, carol] = [await server.key(), await server.key(), await server.key()];
  const art = await saveCollection(server, alice.key);
  const other = await saveCollection(server, bob.key);
  const asset = () => saveAsset(server, alice.key, art, alice.address);
  const a = { a1: await asset(), a2: await asset(), a3: await asset(), a4: await asset(), a5: await asset(), b1: await saveAsset(server, bob.key, other, bob.address) };

  const cancelled = await saveListing(server, alice.key, a.a1.id, { startPrice: 5 });
  await cancelListing(a.a1, alice.key);
  const active = await saveListing(server, alice.key, a.a1.id, { startPrice: 6 });
  const bobOnA1 = await saveOffer(server, bob.key, a.a1.id, { price: 1 });
  const carolOnA1 = await saveOffer(server, carol.key, a.a1.id, { price: 2 });

  const sold = await saveListing(server, alice.key, a.a2.id, { startPrice: 5 });
  await saveOffer(server, bob.key, a.a2.id, { price: 5 });
  const [{ id: a2ToBob }] = await server.ds.query('SELECT id FROM orders WHERE asset_id = $1', [a.a2.id]);

  const auction = await saveListing(server, alice.key, a.a3.id, { orderType: 'ENGLISH_AUCTION', startPrice: 1, expirationTime: { durationSeconds: 3600 } });
  const bid1 = await saveOffer(server, bob.key, a.a3.id, { price: 1 });
  const bid2 = await saveOffer(server, carol.key, a.a3.id, { price: 2 });

  const carolOnA4 = await saveOffer(server, carol.key, a.a4.id, { price: 10 });

  const cancelledAuction = await saveListing(server, alice.key, a.a5.id, { orderType: 'ENGLISH_AUCTION', startPrice: 1 });
  const bidOnA5 = await saveOffer(server, bob.key, a.a5.id, { price: 1 });
  await cancelListing(a.a5, alice.key);
  const afterAuction = await saveOffer(server, carol.key, a.a5.id, { price: '0.5' });

  const carolCollection = await collectionOffer(carol.key, art.id, { price: 3 });
  const bobCollection = await collectionOffer(bob.key, art.id, { price: 3 });
  const trait = await collectionOffer(bob.key, art.id, { price: 4, traits: [{ traitType: 'kind', value: 'test' }] });
  const hour = 3600 * 1000;
  const future = await collectionOffer(bob.key, art.id, {
    price: 9,
    startTime: new Date(Date.now() + hour).toISOString(),
    endTime: new Date(Date.now() + 2 * hour).toISOString(),
  });

  const aliceOnB1 = await saveOffer(server, alice.key, a.b1.id, { price: 2 });
  const b1ToAlice = await accept(aliceOnB1.id, bob.key);

  return {
    alice,
    bob,
    carol,
    art,
    other,
    a,
    listings: { cancelled: cancelled.id, active: active.id, sold: sold.id, auction: auction.id, cancelledAuction: cancelledAuction.id },
    offers: {
      bobOnA1: bobOnA1.id,
      carolOnA1: carolOnA1.id,
      carolCollection: carolCollection.id,
      bobCollection: bobCollection.id,
      trait: trait.id,
      future: future.id,
      carolOnA4: carolOnA4.id,
      bid1: bid1.id,
      bid2: bid2.id,
      bidOnA5: bidOnA5.id,
      afterAuction: afterAuction.id,
    },
    orders: { a2ToBob, b1ToAlice },
  };
}

describe('relations, each the rows of its root list', () => {
  let m: Market;
  beforeAll(async () => {
    m = await saveMarket();
  }, 120_000);

  const token = (asset: Asset) => ({ tokenAddress: asset.tokenAddress, tokenId: asset.tokenId });

  test('when an asset is asked for its offers, then they are its item offers (with their asset) and its collection\'s collection offers, as the root lists give them, and no trait offer', async () => {
    const got = await data(ASSET_OFFERS, { ...token(m.a.a1), collectionId: m.art.id });

    expect(ids(got.asset.items)).toEqual(ids(got.itemOffers));
    expect(ids(got.itemOffers).sort()).toEqual([m.offers.bobOnA1, m.offers.carolOnA1].sort());
    expect(ids(got.asset.collectionOffers)).toEqual(ids(got.collectionOffers));
    expect(ids(got.collectionOffers).sort()).toEqual([m.offers.carolCollection, m.offers.bobCollection, m.offers.future].sort());
    expect(ids(got.asset.all).sort()).toEqual([...ids(got.itemOffers), ...ids(got.collectionOffers)].sort());
    expect(ids(got.asset.all)).not.toContain(m.offers.trait);
    expect(ids(got.asset.traitOffers)).toEqual([]);
    for (const offer of got.asset.all.result) expect(offer.asset).toEqual(offer.kind === 'ITEM' ? { id: m.a.a1.id } : null);
  });

  test('when an asset\'s offers are filtered by status and sorted by price, then they are the root list\'s with the same arguments', async () => {
    await server.gql(CANCEL_OFFER, { id: m.offers.bobOnA1 }, m.bob.key);

    const got = await data(ASSET_ACTIVE_OFFERS, token(m.a.a1));

    expect(ids(got.asset.offers)).toEqual(ids(got.offers));
    expect(ids(got.asset.offers)).toEqual([m.offers.carolOnA1]);
    expect(ids(got.asset.cancelled)).toEqual([m.offers.bobOnA1]);
  });

  test('when an asset\'s offers are paged with cursors, then the pages join into the whole list and count what remains', async () => {
    const whole = await data(ASSET_OFFER_PAGE, { ...token(m.a.a1), limit: 100, page: null });
    const first = await data(ASSET_OFFER_PAGE, { ...token(m.a.a1), limit: 2, page: null });
    const second = await data(ASSET_OFFER_PAGE, { ...token(m.a.a1), limit: 2, page: first.asset.offers.cursor });
    const third = await data(ASSET_OFFER_PAGE, { ...token(m.a.a1), limit: 2, page: second.asset.offers.cursor });

    expect(whole.asset.offers.result).toHaveLength(5);
    expect(first.asset.offers.remaining).toBe(3);
    expect(second.asset.offers.remaining).toBe(1);
    expect(third.asset.offers).toMatchObject({ remaining: 0, cursor: null });
    expect([first, second, third].flatMap((p) => ids(p.asset.offers))).toEqual(ids(whole.asset.offers));
  });

  test('when an asset is asked for its orders and listings, then they are its sales and its listings of every status, each as the database holds them', async () => {
    const sold = await data(ASSET_ORDERS_LISTINGS, token(m.a.a2));
    const listed = await data(ASSET_ORDERS_LISTINGS, token(m.a.a1));

    expect(ids(sold.asset.orders)).toEqual(ids(sold.orders));
    expect(ids(sold.asset.orders)).toEqual([m.orders.a2ToBob]);
    expect(ids(sold.asset.listings)).toEqual([m.listings.sold]);
    expect(ids(listed.asset.orders)).toEqual([]);
    expect(ids(listed.asset.listings)).toEqual(await idsInDatabase('SELECT id FROM listings WHERE asset_id = $1', [m.a.a1.id]));
    expect(ids(listed.asset.listings).sort()).toEqual([m.listings.cancelled, m.listings.active].sort());
    expect(ids(listed.asset.cancelled)).toEqual([m.listings.cancelled]);
    expect(ids(listed.asset.active)).toEqual([m.listings.active]);
  });

  test('when a collection is asked for its offers, orders and listings, then they are the root lists\' with the same filters, and the database\'s listings', async () => {
    const got = await data(COLLECTION_MARKET, { address: m.art.contractAddress, collectionId: m.art.id });

    expect(ids(got.collection.offers)).toEqual(ids(got.offers));
    expect(got.collection.offers.remaining).toBe(got.offers.remaining);
    expect(ids(got.collection.traitOffers)).toEqual(ids(got.traitOffers));
    expect(ids(got.collection.traitOffers)).toEqual([m.offers.trait]);
    expect(ids(got.collection.orders)).toEqual(ids(got.orders));
    expect(ids(got.collection.orders)).toEqual([m.orders.a2ToBob]);
    expect(ids(got.collection.listings)).toEqual(await idsInDatabase('SELECT id FROM listings WHERE collection_id = $1', [m.art.id]));
    expect(ids(got.collection.soldListings)).toEqual([m.listings.sold]);
  });

  test('when a collection is asked for its floor listing, then it is the listing of the statistics\' floor (an english auction at its best bid), and null without an active listing', async () => {
    const art = await data(COLLECTION_FLOOR, { address: m.art.contractAddress });
    const other = await data(COLLECTION_FLOOR, { address: m.other.contractAddress });

    expect(art.collection.floorListing).toMatchObject({ id: m.listings.auction, orderType: 'ENGLISH_AUCTION', currentPrice: 2 });
    expect(art.collection.floorListing.id).toBe(art.collection.statistics.floorListing.id);
    expect(art.collection.floorListing.currentPrice).toBe(art.collection.statistics.floorPrice);
    expect(other.collection.floorListing).toBeNull();
    expect(other.collection.statistics.floorListing).toBeNull();
  });

  test('when a collection is asked for its top offer, then it is the earliest of its best started collection offers, above a higher item offer and trait offer', async () => {
    const art = await data(COLLECTION_FLOOR, { address: m.art.contractAddress });
    const other = await data(COLLECTION_FLOOR, { address: m.other.contractAddress });

    expect(art.collection.topOffer).toMatchObject({ id: m.offers.carolCollection, kind: 'COLLECTION', price: 3 });
    expect(other.collection.topOffer).toBeNull();
  });

  test('when an order is asked for its listing, then it is the listing its sale closed, and null for a sale without one', async () => {
    const got = await data(ORDER_LISTINGS, { listed: m.orders.a2ToBob, unlisted: m.orders.b1ToAlice });

    expect(got.listed).toMatchObject({ listingId: m.listings.sold, listing: { id: m.listings.sold, status: 'SOLD' } });
    expect(got.unlisted).toMatchObject({ listingId: null, listing: null });
  });

  test('when listings are asked for their offers, then an english auction has the bids made while it stood, and a fixed-price listing none', async () => {
    const got = await data(LISTING_BIDS, { address: m.alice.address });
    const bidsOf = new Map(got.account.listings.result.map((l: { id: string; offers: PageOf }) => [l.id, ids(l.offers)]));

    expect((bidsOf.get(m.listings.auction) as string[]).sort()).toEqual([m.offers.bid1, m.offers.bid2].sort());
    expect(bidsOf.get(m.listings.cancelledAuction)).toEqual([m.offers.bidOnA5]);
    expect(bidsOf.get(m.listings.active)).toEqual([]);
    expect(bidsOf.get(m.listings.sold)).toEqual([]);
  });

  test('when an account is asked for what it owns and listed, then it is what the root lists and the database give for that address', async () => {
    const got = await data(ACCOUNT_HOLDINGS, { address: m.alice.address });

    expect(got.account.address).toBe(m.alice.address);
    expect(ids(got.account.assets)).toEqual(ids(got.assets));
    expect(ids(got.account.assets).sort()).toEqual([m.a.a1.id, m.a.a3.id, m.a.a4.id, m.a.a5.id, m.a.b1.id].sort());
    expect(ids(got.account.listedAssets)).toEqual([m.a.a1.id, m.a.a3.id]);
    expect(ids(got.account.collections)).toEqual(ids(got.collections));
    expect(ids(got.account.collections)).toEqual([m.art.id]);
    expect(ids(got.account.listings)).toEqual(await idsInDatabase('SELECT id FROM listings WHERE seller = $1', [m.alice.address]));
    expect(got.account.listings.result).toHaveLength(5);
  });

  test('when an account is asked for the offers it made and received, then made is the root list by taker, received the item offers on the assets it owns by others', async () => {
    const alice = await data(ACCOUNT_OFFERS, { address: m.alice.address });
    const bob = await data(ACCOUNT_OFFERS, { address: m.bob.address });

    expect(ids(bob.account.made)).toEqual(ids(bob.offers));
    expect(ids(bob.account.made)).toEqual(expect.arrayContaining([m.offers.bobCollection, m.offers.trait, m.offers.bid1]));
    expect(ids(alice.account.made)).toEqual(ids(alice.offers));
    expect(ids(alice.account.received)).toEqual(
      await idsInDatabase('SELECT o.id, o.created_at FROM offers o JOIN assets a ON a.id = o.asset_id WHERE a.owner = $1 AND o.taker <> a.owner', [m.alice.address]),
    );
    expect(ids(alice.account.received)).not.toContain(m.offers.carolCollection);
    expect(ids(alice.account.received).sort()).toEqual(
      [m.offers.bobOnA1, m.offers.carolOnA1, m.offers.bid1, m.offers.bid2, m.offers.carolOnA4, m.offers.bidOnA5, m.offers.afterAuction].sort(),
    );
  });

  test('when an account is asked for its orders by role, then bought, sold and any are its orders as buyer, as seller and both', async () => {
    const alice = await data(ACCOUNT_ORDERS, { address: m.alice.address });
    const bob = await data(ACCOUNT_ORDERS, { address: m.bob.address });

    expect(ids(alice.account.bought)).toEqual([m.orders.b1ToAlice]);
    expect(ids(alice.account.sold)).toEqual([m.orders.a2ToBob]);
    expect(ids(alice.account.any)).toEqual(ids(alice.orders));
    expect(ids(alice.account.any).sort()).toEqual([m.orders.a2ToBob, m.orders.b1ToAlice].sort());
    expect(ids(bob.account.bought)).toEqual([m.orders.a2ToBob]);
    expect(ids(bob.account.sold)).toEqual([m.orders.b1ToAlice]);
  });

  test('when an address with nothing is asked for, then it is an empty account, not NOT_FOUND', async () => {
    const address = randomAddress().toUpperCase().replace('0X', '0x');

    const got = await data(ACCOUNT_EVERYTHING, { address });

    expect(got.account.address).toBe(address.toLowerCase());
    for (const list of ['assets', 'collections', 'listings', 'made', 'received', 'orders']) {
      expect(got.account[list]).toEqual({ cursor: null, remaining: 0, result: [] });
    }
  });

  test('when a nested list is given a forged cursor, then the answer is a BAD_REQUEST naming page, as for a collection\'s assets', async () => {
    const forged = Buffer.from('["price","desc","x","1"]').toString('base64url');

    const res = await server.gql(ASSET_OFFER_PAGE, { ...token(m.a.a1), limit: 2, page: forged });
    const assets = await server.gql(COLLECTION_ASSET_PAGE, { address: m.art.contractAddress, page: forged });

    expect(res.body.errors?.[0].extensions).toMatchObject({ code: 'BAD_REQUEST' });
    expect(res.body.errors?.[0].message).toContain('page');
    expect(res.status).toBe(assets.status);
    expect(assets.body.errors?.[0].extensions).toMatchObject({ code: 'BAD_REQUEST' });
  });
});

describe('statements of relations, 1 parent against 50', () => {
  let one: { owner: string };
  let fifty: { owner: string };
  beforeAll(async () => {
    one = await saveBulkMarket(server.ds, 1);
    fifty = await saveBulkMarket(server.ds, 50);
  }, 60_000);

  /**
   * The statement counts of `query` over the market of 1 parent and of 50: `items` picks the parents from
   * the answer, and `check` what each must show.
   */
  async function statementsFor(query: string, items: (data: any) => any[], check: (item: any) => void): Promise<[number, number]> {
    const counts: number[] = [];
    for (const [market, expected] of [[one, 1], [fifty, 50]] as const) {
      const res = await server.gql(query, { owner: market.owner });
      expect(res.body.errors).toBeUndefined();
      const parents = items(res.body.data);
      expect(parents).toHaveLength(expected);
      parents.forEach(check);
      expect(Number.isInteger(res.sql)).toBe(true);
      counts.push(res.sql);
    }
    return [counts[0], counts[1]];
  }

  test('when 1 or 50 collections are read with their offers, listings, orders, floor listing and top offer, then the statement count is the same', async () => {
    const [forOne, forFifty] = await statementsFor(COLLECTIONS_WITH_MARKET, (d) => d.collections.result, (c) => {
      expect(c.offers.result).toHaveLength(3);
      expect(c.listings.result.map((l: any) => l.status)).toEqual(['ACTIVE', 'SOLD']);
      expect(c.orders.result).toHaveLength(1);
      expect(c.floorListing).toMatchObject({ orderType: 'ENGLISH_AUCTION', currentPrice: 2 });
      expect(c.topOffer).toMatchObject({ kind: 'COLLECTION', price: 3 });
    });

    expect(forFifty).toBe(forOne);
  });

  test('when 1 or 50 assets are read with their offers, orders and listings, then the statement count is the same', async () => {
    const [forOne, forFifty] = await statementsFor(ASSETS_WITH_MARKET, (d) => d.assets.result, (a) => {
      expect(a.offers.result.map((o: any) => o.kind).sort()).toEqual(['COLLECTION', 'ITEM', 'ITEM']);
      expect(a.orders.result).toHaveLength(1);
      expect(a.listings.result).toHaveLength(2);
    });

    expect(forFifty).toBe(forOne);
  });

  test('when 1 or 50 orders are read with their listings, then the statement count is the same', async () => {
    const [forOne, forFifty] = await statementsFor(ORDERS_WITH_LISTING, (d) => d.orders.result, (o) => expect(o.listing).toMatchObject({ status: 'SOLD' }));

    expect(forFifty).toBe(forOne);
  });

  test('when 1 or 50 listings are read with their bids, through an account, then the statement count is the same', async () => {
    const [forOne, forFifty] = await statementsFor(ACCOUNT_LISTINGS_WITH_BIDS, (d) => d.account.listings.result, (l) => {
      expect(l.offers.result.map((o: any) => o.price)).toEqual([2]);
    });

    expect(forFifty).toBe(forOne);
  });
});

const CANCEL_LISTING = /* GraphQL */ `
  mutation ($tokenAddress: Address!, $tokenId: TokenId!) { cancelListing(tokenAddress: $tokenAddress, tokenId: $tokenId) { id status } }`;

const CANCEL_OFFER = /* GraphQL */ `
  mutation ($id: ID!) { cancelOffer(id: $id) { id status } }`;

const ASSET_OFFERS = /* GraphQL */ `
  query ($tokenAddress: Address!, $tokenId: TokenId!, $collectionId: String) {
    asset(tokenAddress: $tokenAddress, tokenId: $tokenId) {
      all: offers(limit: 100) { result { id kind asset { id } } }
      items: offers(kind: ITEM, limit: 100) { result { id } }
      collectionOffers: offers(kind: COLLECTION, limit: 100) { result { id } }
      traitOffers: offers(kind: TRAIT, limit: 100) { result { id } }
    }
    itemOffers: offers(tokenAddress: $tokenAddress, tokenId: $tokenId, limit: 100) { result { id } }
    collectionOffers: offers(collectionId: $collectionId, kind: COLLECTION, limit: 100) { result { id } }
  }`;

const ASSET_ACTIVE_OFFERS = /* GraphQL */ `
  query ($tokenAddress: Address!, $tokenId: TokenId!) {
    asset(tokenAddress: $tokenAddress, tokenId: $tokenId) {
      offers(kind: ITEM, status: ACTIVE, orderBy: PRICE, direction: ASC) { result { id } }
      cancelled: offers(status: CANCELLED) { result { id } }
    }
    offers(tokenAddress: $tokenAddress, tokenId: $tokenId, status: ACTIVE, orderBy: PRICE, direction: ASC) { result { id } }
  }`;

const ASSET_OFFER_PAGE = /* GraphQL */ `
  query ($tokenAddress: Address!, $tokenId: TokenId!, $limit: Int!, $page: String) {
    asset(tokenAddress: $tokenAddress, tokenId: $tokenId) { offers(limit: $limit, page: $page, orderBy: PRICE) { cursor remaining result { id price } } }
  }`;

const COLLECTION_ASSET_PAGE = /* GraphQL */ `
  query ($address: Address!, $page: String) { collection(address: $address) { assets(page: $page) { result { id } } } }`;

const ASSET_ORDERS_LISTINGS = /* GraphQL */ `
  query ($tokenAddress: Address!, $tokenId: TokenId!) {
    asset(tokenAddress: $tokenAddress, tokenId: $tokenId) {
      orders { result { id } }
      listings { result { id status } }
      cancelled: listings(status: CANCELLED) { result { id } }
      active: listings(status: ACTIVE) { result { id } }
    }
    orders(tokenAddress: $tokenAddress, tokenId: $tokenId) { result { id } }
  }`;

const COLLECTION_MARKET = /* GraphQL */ `
  query ($address: Address!, $collectionId: String) {
    collection(address: $address) {
      offers(limit: 100) { remaining result { id } }
      traitOffers: offers(kind: TRAIT) { result { id } }
      orders { result { id } }
      listings(limit: 100) { result { id } }
      soldListings: listings(status: SOLD) { result { id } }
    }
    offers(collectionId: $collectionId, limit: 100) { remaining result { id } }
    traitOffers: offers(collectionId: $collectionId, kind: TRAIT) { result { id } }
    orders(collectionId: $collectionId) { result { id } }
  }`;

const COLLECTION_FLOOR = /* GraphQL */ `
  query ($address: Address!) {
    collection(address: $address) {
      floorListing { id orderType currentPrice }
      topOffer { id kind price }
      statistics(period: ALL) { floorPrice floorListing { id } }
    }
  }`;

const ORDER_LISTINGS = /* GraphQL */ `
  query ($listed: ID!, $unlisted: ID!) {
    listed: order(id: $listed) { listingId listing { id status } }
    unlisted: order(id: $unlisted) { listingId listing { id status } }
  }`;

const LISTING_BIDS = /* GraphQL */ `
  query ($address: Address!) {
    account(address: $address) { listings(limit: 100) { result { id offers(limit: 100) { result { id } } } } }
  }`;

const ACCOUNT_HOLDINGS = /* GraphQL */ `
  query ($address: Address!) {
    account(address: $address) {
      address
      assets(limit: 100) { result { id } }
      listedAssets: assets(status: LISTED, orderBy: CREATED_AT, direction: ASC) { result { id } }
      collections { result { id } }
      listings(limit: 100) { result { id } }
    }
    assets(ownerId: $address, limit: 100) { result { id } }
    collections(ownerAddress: $address) { result { id } }
  }`;

const ACCOUNT_OFFERS = /* GraphQL */ `
  query ($address: Address!) {
    account(address: $address) {
      made: offers(limit: 100) { result { id } }
      received: offers(role: RECEIVED, limit: 100) { result { id } }
    }
    offers(ownerId: $address, limit: 100) { result { id } }
  }`;

const ACCOUNT_ORDERS = /* GraphQL */ `
  query ($address: Address!) {
    account(address: $address) {
      bought: orders(role: BOUGHT) { result { id } }
      sold: orders(role: SOLD) { result { id } }
      any: orders { result { id } }
    }
    orders(ownerId: $address) { result { id } }
  }`;

const ACCOUNT_EVERYTHING = /* GraphQL */ `
  query ($address: Address!) {
    account(address: $address) {
      address
      assets { cursor remaining result { id } }
      collections { cursor remaining result { id } }
      listings { cursor remaining result { id } }
      made: offers(role: MADE) { cursor remaining result { id } }
      received: offers(role: RECEIVED) { cursor remaining result { id } }
      orders { cursor remaining result { id } }
    }
  }`;

const COLLECTIONS_WITH_MARKET = /* GraphQL */ `
  query ($owner: Address) {
    collections(ownerAddress: $owner, limit: 50) {
      result {
        id
        offers { remaining result { id kind } }
        listings { result { id status } }
        orders { result { id price } }
        floorListing { id orderType currentPrice }
        topOffer { id kind price }
      }
    }
  }`;

const ASSETS_WITH_MARKET = /* GraphQL */ `
  query ($owner: Address) {
    assets(ownerId: $owner, limit: 50) {
      result { id offers { remaining result { id kind } } orders { result { id } } listings { result { id status } } }
    }
  }`;

const ORDERS_WITH_LISTING = /* GraphQL */ `
  query ($owner: Address) {
    orders(ownerId: $owner, limit: 50) { result { id listing { id status } } }
  }`;

const ACCOUNT_LISTINGS_WITH_BIDS = /* GraphQL */ `
  query ($owner: Address!) {
    account(address: $owner) { listings(status: ACTIVE, limit: 50) { result { id offers { remaining result { id price } } } } }
  }`;
