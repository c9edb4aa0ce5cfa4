import { clock } from '../src/common/clock';
import { startServer, TestServer } from './setup/server';
import { CollectionRow, saveAsset, saveCollection } from './factories/marketplace';
import { CREATE_OFFER, openWindow, saveListing, saveOffer } from './factories/market';

/**
 * Depth (docs/api.md, Charts): Collection.traitFloors (each trait value's cheapest active listing, by the
 * floor's rule) and Collection.priceDepth(buckets) (listings and offers per price range).
 */
let server: TestServer;
const NOW = new Date('2036-06-01T12:00:00.000Z');
const HOUR = 3600 * 1000;

beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());
beforeEach(() => clock.set(NOW));
afterEach(() => clock.reset());

const DEPTH = /* GraphQL */ `
  query ($address: Address!, $buckets: Int) {
    collection(address: $address, chainId: "1") {
      floorListing { id currentPrice }
      traitFloors { traitType value floorPrice floorPriceDecimal floorListingId listedCount assetCount }
      priceDepth(buckets: $buckets) { minPriceDecimal maxPriceDecimal listings offers }
    }
  }`;

const CANCEL_LISTING = /* GraphQL */ `
  mutation ($a: Address!, $t: TokenId!) { cancelListing(tokenAddress: $a, tokenId: $t, chainId: "1") { id status } }`;

const COLLECTIONS_DEPTH = /* GraphQL */ `
  query ($owner: Address!) {
    collections(ownerAddress: $owner, limit: 100) {
      result { id traitFloors { traitType value floorPriceDecimal listedCount } priceDepth(buckets: 3) { listings offers } }
    }
  }`;

const traits = (pairs: [string, string][]) => ({ metadata: { attributes: pairs.map(([trait_type, value]) => ({ trait_type, value })) } });

async function depth(collection: CollectionRow, buckets?: number) {
  const res = await server.gql(DEPTH, { address: collection.contractAddress, buckets });
  if (res.body.errors) throw new Error(JSON.stringify(res.body.errors));
  return res.body.data.collection;
}

describe('trait floors', () => {
  test('when assets with traits are listed, then each trait value has the cheapest active listing and the number listed, and a trait without a listing has none', async () => {
    const owner = await server.key();
    const collection = await saveCollection(server, owner.key);
    const gold1 = await saveAsset(server, owner.key, collection, owner.address, traits([['color', 'gold'], ['hat', 'cap']]));
    const gold2 = await saveAsset(server, owner.key, collection, owner.address, traits([['color', 'gold']]));
    const redAsset = await saveAsset(server, owner.key, collection, owner.address, traits([['color', 'red'], ['hat', 'cap']]));
    const blue = await saveAsset(server, owner.key, collection, owner.address, traits([['color', 'blue']]));
    await saveAsset(server, owner.key, collection, owner.address, traits([['color', 'green']]));
    const gold1Listing = await saveListing(server, owner.key, gold1.id, { startPrice: '3' });
    await saveListing(server, owner.key, gold2.id, { startPrice: '7.5' });
    // A dutch auction from 10 to 2 over 4 hours, half-way now: 6.
    clock.set(new Date(NOW.getTime() - 2 * HOUR));
    await saveListing(server, owner.key, redAsset.id, { orderType: 'DUTCH_AUCTION', startPrice: '10', acceptPrice: '2', expirationTime: { durationSeconds: 4 * 3600 } });
    clock.set(NOW);
    // Cancelled: not listed.
    await saveListing(server, owner.key, blue.id, { startPrice: '1' });
    const cancelled = await server.gql(CANCEL_LISTING, { a: blue.tokenAddress, t: blue.tokenId }, owner.key);
    expect(cancelled.body.errors).toBeUndefined();

    const d = await depth(collection);
    expect(d.traitFloors).toEqual([
      { traitType: 'color', value: 'blue', floorPrice: null, floorPriceDecimal: null, floorListingId: null, listedCount: 0, assetCount: 1 },
      { traitType: 'color', value: 'gold', floorPrice: 3, floorPriceDecimal: '3', floorListingId: gold1Listing.id, listedCount: 2, assetCount: 2 },
      { traitType: 'color', value: 'green', floorPrice: null, floorPriceDecimal: null, floorListingId: null, listedCount: 0, assetCount: 1 },
      { traitType: 'color', value: 'red', floorPrice: 6, floorPriceDecimal: '6', floorListingId: expect.any(String), listedCount: 1, assetCount: 1 },
      { traitType: 'hat', value: 'cap', floorPrice: 3, floorPriceDecimal: '3', floorListingId: gold1Listing.id, listedCount: 2, assetCount: 2 },
    ]);
    // The same rule as the collection's floor.
    expect(d.floorListing).toEqual({ id: gold1Listing.id, currentPrice: 3 });

    // 1 h 45 min later the dutch auction is at 2.5: the floor of both of its traits, and of the collection.
    clock.set(new Date(NOW.getTime() + 1.75 * HOUR));
    const later = await depth(collection);
    const red = later.traitFloors.find((t: { value: string }) => t.value === 'red');
    expect(red).toMatchObject({ floorPriceDecimal: '2.5', listedCount: 1 });
    expect(later.traitFloors.find((t: { value: string }) => t.value === 'cap')).toMatchObject({ floorPriceDecimal: '2.5', floorListingId: red.floorListingId, listedCount: 2 });
    expect(later.floorListing).toEqual({ id: red.floorListingId, currentPrice: 2.5 });
  });
});

describe('price depth', () => {
  test('when listings and offers have prices, then each of the equal ranges from the lowest to the highest price counts its own, the highest in the last', async () => {
    const owner = await server.key();
    const collection = await saveCollection(server, owner.key);
    const assets = [];
    for (let i = 0; i < 3; i += 1) assets.push(await saveAsset(server, owner.key, collection, owner.address));
    await saveListing(server, owner.key, assets[0].id, { startPrice: '1' });
    await saveListing(server, owner.key, assets[1].id, { startPrice: '2' });
    await saveListing(server, owner.key, assets[2].id, { startPrice: '3' });
    const bidder = await server.key();
    await saveOffer(server, bidder.key, assets[0].id, { price: '0.5' });
    const collectionOffer = await server.gql(CREATE_OFFER, { input: { collectionId: collection.id, price: '5', ...openWindow() } }, bidder.key);
    expect(collectionOffer.body.errors).toBeUndefined();
    // Not yet open: not counted.
    await saveOffer(server, bidder.key, assets[1].id, { price: '4', startTime: new Date(NOW.getTime() + HOUR).toISOString(), endTime: new Date(NOW.getTime() + 2 * HOUR).toISOString() });

    const d = await depth(collection, 4);
    expect(d.priceDepth).toEqual([
      { minPriceDecimal: '0.5', maxPriceDecimal: '1.625', listings: 1, offers: 1 },
      { minPriceDecimal: '1.625', maxPriceDecimal: '2.75', listings: 1, offers: 0 },
      { minPriceDecimal: '2.75', maxPriceDecimal: '3.875', listings: 1, offers: 0 },
      { minPriceDecimal: '3.875', maxPriceDecimal: '5', listings: 0, offers: 1 },
    ]);
    const all = (await depth(collection)).priceDepth;
    expect(all).toHaveLength(10);
    expect(all.reduce((n: number, b: { listings: number }) => n + b.listings, 0)).toBe(3);
    expect(all.reduce((n: number, b: { offers: number }) => n + b.offers, 0)).toBe(2);
  });

  test('when a collection has neither listings nor offers, then no buckets; when buckets is out of 1 to 100, then BAD_REQUEST', async () => {
    const owner = await server.key();
    const collection = await saveCollection(server, owner.key);
    expect((await depth(collection, 5)).priceDepth).toEqual([]);
    for (const buckets of [0, 101]) {
      const res = await server.gql(DEPTH, { address: collection.contractAddress, buckets });
      expect(res.body.errors?.[0].extensions.code).toBe('BAD_REQUEST');
      expect(res.body.errors?.[0].message).toContain('buckets must be an integer from 1 to 100');
    }
  });
});

test('when 1 or 20 collections read traitFloors and priceDepth, then the request takes the same number of statements', async () => {
  const one = await server.key();
  await saveCollection(server, one.key);
  const many = await server.key();
  const collections: CollectionRow[] = [];
  for (let i = 0; i < 20; i += 1) collections.push(await saveCollection(server, many.key));
  const asset = await saveAsset(server, many.key, collections[3], many.address, traits([['size', 'xl']]));
  await saveListing(server, many.key, asset.id, { startPrice: '2' });
  const a = await server.gql(COLLECTIONS_DEPTH, { owner: one.address });
  const b = await server.gql(COLLECTIONS_DEPTH, { owner: many.address });
  expect(a.body.errors).toBeUndefined();
  expect(b.body.errors).toBeUndefined();
  expect(b.body.data.collections.result).toHaveLength(20);
  expect(b.sql).toBe(a.sql);
  const third = b.body.data.collections.result.find((c: { id: string }) => c.id === collections[3].id);
  expect(third.traitFloors).toEqual([{ traitType: 'size', value: 'xl', floorPriceDecimal: '2', listedCount: 1 }]);
  expect(third.priceDepth).toEqual([{ listings: 0, offers: 0 }, { listings: 0, offers: 0 }, { listings: 1, offers: 0 }]);
});

describe('GET /v1/collections/{address}/depth', () => {
  test('when a collection has listings and offers, then REST answers its trait floors, price ranges and best collection offer with the documented names', async () => {
    const owner = await server.key();
    const bidder = await server.key();
    const collection = await saveCollection(server, owner.key);
    const gold = await saveAsset(server, owner.key, collection, owner.address, traits([['color', 'gold']]));
    const listing = await saveListing(server, owner.key, gold.id, { startPrice: '4' });
    const offer = await server.gql(CREATE_OFFER, { input: { collectionId: collection.id, price: '2', ...openWindow() } }, bidder.key);
    expect(offer.body.errors).toBeUndefined();

    const res = await server.rest('GET', `/v1/collections/${collection.contractAddress}/depth?buckets=2&chain_id=1`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: collection.id, contract_address: collection.contractAddress, chain: { id: '1' } });
    expect(res.body.trait_floors).toEqual([
      { trait_type: 'color', value: 'gold', floor_price: 4, floor_price_decimal: '4', floor_listing_id: listing.id, listed_count: 1, asset_count: 1 },
    ]);
    expect(res.body.price_depth).toEqual([
      { min_price: 2, min_price_decimal: '2', max_price: 3, max_price_decimal: '3', listings: 0, offers: 1 },
      { min_price: 3, min_price_decimal: '3', max_price: 4, max_price_decimal: '4', listings: 1, offers: 0 },
    ]);
    expect(res.body.top_offer).toMatchObject({ id: offer.body.data.createOffer.id, kind: 'collection', price_decimal: '2' });

    expect((await server.rest('GET', `/v1/collections/${collection.contractAddress}/depth?buckets=0`)).status).toBe(400);
    expect((await server.rest('GET', '/v1/collections/0x000000000000000000000000000000000000dead/depth')).status).toBe(404);
  });
});

describe('top offer of an asset', () => {
  const ASSETS_TOP_OFFER = /* GraphQL */ `
    query ($collectionId: String!) { assets(collectionId: $collectionId, orderBy: TOKEN_ID, direction: ASC) { result { id topOffer { id kind priceDecimal } } } }`;

  test('when an asset has item, collection and trait offers, then its top offer is the highest that could buy it, on both doors, batched', async () => {
    const owner = await server.key();
    const bidder = await server.key();
    const collection = await saveCollection(server, owner.key);
    const gold = await saveAsset(server, owner.key, collection, owner.address, traits([['color', 'gold'], ['hat', 'cap']]));
    const plain = await saveAsset(server, owner.key, collection, owner.address, traits([['color', 'red']]));
    const bareCollection = await saveCollection(server, owner.key);
    const bare = await saveAsset(server, owner.key, bareCollection, owner.address);
    const offer = async (input: Record<string, unknown>) => {
      const res = await server.gql(CREATE_OFFER, { input: { ...input, ...openWindow() } }, bidder.key);
      expect(res.body.errors).toBeUndefined();
      return res.body.data.createOffer.id as string;
    };
    await saveOffer(server, bidder.key, gold.id, { price: '3' });
    const collectionOffer = await offer({ collectionId: collection.id, price: '5' });
    // Gold (any hat value listed for it) carries it; red does not.
    const goldOffer = await offer({ collectionId: collection.id, price: '7', traits: [{ traitType: 'color', value: 'gold' }, { traitType: 'hat', value: 'cap' }, { traitType: 'hat', value: 'top' }] });
    await offer({ collectionId: collection.id, price: '9', traits: [{ traitType: 'color', value: 'gold' }, { traitType: 'hat', value: 'top' }] });
    // Below its collection offer.
    await saveOffer(server, bidder.key, plain.id, { price: '4' });

    const res = await server.gql(ASSETS_TOP_OFFER, { collectionId: collection.id });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.assets.result).toEqual([
      { id: gold.id, topOffer: { id: goldOffer, kind: 'TRAIT', priceDecimal: '7' } },
      { id: plain.id, topOffer: { id: collectionOffer, kind: 'COLLECTION', priceDecimal: '5' } },
    ]);
    // One statement for the top offers of the page, whatever its length.
    const single = await server.gql(ASSETS_TOP_OFFER, { collectionId: bareCollection.id });
    expect(single.body.data.assets.result).toEqual([{ id: bare.id, topOffer: null }]);
    expect(res.sql).toBe(single.sql);

    const rest = await server.rest('GET', `/v1/assets/${plain.tokenAddress}/${plain.tokenId}/top-offer?chain_id=1`);
    expect(rest.status).toBe(200);
    expect(rest.body).toMatchObject({ id: plain.id, token_id: plain.tokenId, top_offer: { id: collectionOffer, kind: 'collection', price_decimal: '5' } });
    const none = await server.rest('GET', `/v1/assets/${bare.tokenAddress}/${bare.tokenId}/top-offer`);
    expect(none.status).toBe(200);
    expect(none.body.top_offer).toBeNull();
  });
});
