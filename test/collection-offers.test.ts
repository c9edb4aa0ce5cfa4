import { startServer, TestServer } from './setup/server';
import { openWindow, saveListing } from './factories/market';
import { collectionOfOwners, HeldAsset } from './factories/traits';

/** Issue #14: offers on a whole collection, or on the assets of a collection that carry given traits. */
let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

const CREATE = /* GraphQL */ `
  mutation ($input: CreateOfferInput!) {
    createOffer(input: $input) { id kind status quantity filled collectionId assetId tokenId traits { traitType value } }
  }`;
const ACCEPT = /* GraphQL */ `
  mutation ($offerId: ID!, $tokenAddress: Address, $tokenId: TokenId) {
    acceptOffer(offerId: $offerId, tokenAddress: $tokenAddress, tokenId: $tokenId) { id seller buyer price unit offer { id status filled quantity } }
  }`;

const bg = (value: string) => [{ trait_type: 'Background', value }, { trait_type: 'Eyes', value: 'Laser' }];

async function makeOffer(key: string, body: Record<string, unknown>) {
  return server.rest('POST', '/v1/offers', { price: 1, start_time: openWindow().startTime, end_time: openWindow().endTime, ...body }, key);
}

async function accept(offerId: string, asset: HeldAsset) {
  return server.rest('POST', '/v1/offers/accept', { offer_id: offerId, token_address: asset.tokenAddress, token_id: asset.tokenId }, asset.owner.key);
}

describe('collection offers', () => {
  test('when a quantity-2 collection offer is made through REST, then it shows kind, quantity, filled, and no asset', async () => {
    const { collection } = await collectionOfOwners(server, 1);
    const buyer = await server.key();

    const res = await makeOffer(buyer.key, { collection_id: collection.contractAddress, quantity: 2, price: '1.5' });

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ kind: 'collection', status: 'active', quantity: 2, filled: 0, traits: [], collection_id: collection.id,
      asset_id: null, token_id: null, token_address: collection.contractAddress, price: 1.5, price_decimal: '1.5' });
    expect(res.body.assets).toEqual({ cursor: null, remaining: 0, result: [] });
  });

  test('when two owners accept a quantity-2 offer, then each writes an order for their asset and the offer is accepted after the second', async () => {
    const { collection, assets } = await collectionOfOwners(server, 3);
    const buyer = await server.key();
    const offer = (await makeOffer(buyer.key, { collection_id: collection.id, quantity: 2, price: '0.1' })).body;

    const first = await accept(offer.id, assets[0]);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ seller: assets[0].owner.address, buyer: buyer.address, asset_id: assets[0].id, price_decimal: '0.1', unit: 1 });
    expect(first.body.offer).toMatchObject({ status: 'active', filled: 1, quantity: 2 });

    const second = await server.gql(ACCEPT, { offerId: offer.id, tokenAddress: assets[1].tokenAddress, tokenId: assets[1].tokenId }, assets[1].owner.key);
    expect(second.body.errors).toBeUndefined();
    expect(second.body.data.acceptOffer.offer).toMatchObject({ status: 'ACCEPTED', filled: 2 });
    expect(second.body.data.acceptOffer.unit).toBe(2);

    const third = await accept(offer.id, assets[2]);
    expect(third.status).toBe(409);
    expect(third.body.error.code).toBe('CONFLICT');
    const owners = await server.ds.query('SELECT owner FROM assets WHERE collection_id = $1 ORDER BY token_id', [collection.id]);
    expect(owners.map((o: { owner: string }) => o.owner)).toEqual([buyer.address, buyer.address, assets[2].owner.address]);
    const orders = await server.ds.query('SELECT unit, asset_id FROM orders WHERE offer_id = $1 ORDER BY unit', [offer.id]);
    expect(orders).toEqual([{ unit: 1, asset_id: assets[0].id }, { unit: 2, asset_id: assets[1].id }]);
  });

  test('when a unit is filled, then offer.filled is logged per unit and offer.accepted once, with the order and the transfer', async () => {
    const { collection, assets } = await collectionOfOwners(server, 2);
    const buyer = await server.key();
    const offer = (await makeOffer(buyer.key, { collection_id: collection.id, quantity: 2 })).body;
    expect((await accept(offer.id, assets[0])).status).toBe(200);
    expect((await accept(offer.id, assets[1])).status).toBe(200);

    const events = await server.rest('GET', `/v1/events?collection_id=${collection.id}&limit=100`);
    const ofOffer = events.body.result.filter((e: { type: string; data: { id: string } }) => e.data.id === offer.id).map((e: { type: string }) => e.type);
    expect(ofOffer).toEqual(['offer.created', 'offer.filled', 'offer.filled', 'offer.accepted']);
    const types = events.body.result.map((e: { type: string }) => e.type);
    expect(types.filter((t: string) => t === 'order.completed')).toHaveLength(2);
    expect(types.filter((t: string) => t === 'asset.transferred')).toHaveLength(2);
  });

  test('when 50 owners accept a quantity-3 offer at once, then exactly 3 orders are written and the other 47 get 409', async () => {
    const { collection, assets } = await collectionOfOwners(server, 50);
    const buyer = await server.key();
    const offer = (await makeOffer(buyer.key, { collection_id: collection.id, quantity: 3 })).body;

    const results = await Promise.all(assets.map((asset) => accept(offer.id, asset)));

    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(3);
    expect(statuses.filter((s) => s === 409)).toHaveLength(47);
    const orders = await server.ds.query('SELECT unit FROM orders WHERE offer_id = $1 ORDER BY unit', [offer.id]);
    expect(orders).toEqual([{ unit: 1 }, { unit: 2 }, { unit: 3 }]);
    const [row] = await server.ds.query('SELECT status, filled FROM offers WHERE id = $1', [offer.id]);
    expect(row).toEqual({ status: 'accepted', filled: 3 });
    const [{ count }] = await server.ds.query('SELECT count(*)::int AS count FROM assets WHERE collection_id = $1 AND owner = $2', [collection.id, buyer.address]);
    expect(count).toBe(3);
  });

  test('when an owner accepts through GraphQL naming the asset by id, then the unit is sold', async () => {
    const { collection, assets } = await collectionOfOwners(server, 1);
    const buyer = await server.key();
    const offer = (await makeOffer(buyer.key, { collection_id: collection.id })).body;

    const res = await server.gql(
      `mutation ($offerId: ID!, $assetId: ID) { acceptOffer(offerId: $offerId, assetId: $assetId) { seller buyer assetId offer { status filled } } }`,
      { offerId: offer.id, assetId: assets[0].id },
      assets[0].owner.key,
    );

    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.acceptOffer).toEqual({ seller: assets[0].owner.address, buyer: buyer.address, assetId: assets[0].id, offer: { status: 'ACCEPTED', filled: 1 } });
  });

  test('when an asset of another collection is offered, then 422 naming token_address, and nothing is written', async () => {
    const { collection } = await collectionOfOwners(server, 1);
    const other = await collectionOfOwners(server, 1);
    const buyer = await server.key();
    const offer = (await makeOffer(buyer.key, { collection_id: collection.id })).body;

    const res = await accept(offer.id, other.assets[0]);

    expect(res.status).toBe(422);
    expect(res.body.error.details[0].field).toBe('token_address');
    expect(await server.ds.query('SELECT id FROM orders WHERE offer_id = $1', [offer.id])).toEqual([]);
  });

  test('when the accept names no asset, then 422; when a stranger names an asset, then 403', async () => {
    const { collection, assets } = await collectionOfOwners(server, 1);
    const buyer = await server.key();
    const stranger = await server.key();
    const offer = (await makeOffer(buyer.key, { collection_id: collection.id })).body;

    const none = await server.rest('POST', '/v1/offers/accept', { offer_id: offer.id }, assets[0].owner.key);
    const foreign = await server.rest('POST', '/v1/offers/accept', { offer_id: offer.id, token_address: assets[0].tokenAddress, token_id: assets[0].tokenId }, stranger.key);

    expect(none.status).toBe(422);
    expect(foreign.status).toBe(403);
  });

  test("when the offer's maker owns an asset of the collection and accepts with it, then 409: one cannot sell to oneself", async () => {
    const { collection, assets } = await collectionOfOwners(server, 1);
    const offer = (await makeOffer(assets[0].owner.key, { collection_id: collection.id })).body;
    expect(offer.kind).toBe('collection');

    const res = await accept(offer.id, assets[0]);

    expect(res.status).toBe(409);
    expect(res.body.error.message).toContain('cannot sell to oneself');
  });

  test('when a listed asset is sold to a collection offer, then its listing is sold and the buyer\'s own item offers on it are cancelled', async () => {
    const { collection, assets } = await collectionOfOwners(server, 1);
    const buyer = await server.key();
    const listing = await saveListing(server, assets[0].owner.key, assets[0].id, { startPrice: 50 });
    const itemOffer = (await makeOffer(buyer.key, { asset_id: assets[0].id, price: 2 })).body;
    const offer = (await makeOffer(buyer.key, { collection_id: collection.id, price: 3 })).body;

    expect((await accept(offer.id, assets[0])).status).toBe(200);

    const [l] = await server.ds.query('SELECT status FROM listings WHERE id = $1', [listing.id]);
    expect(l.status).toBe('sold');
    const [o] = await server.ds.query('SELECT status FROM offers WHERE id = $1', [itemOffer.id]);
    expect(o.status).toBe('cancelled');
    const [order] = await server.ds.query('SELECT listing_id, price::text FROM orders WHERE offer_id = $1', [offer.id]);
    expect(order).toEqual({ listing_id: listing.id, price: '3.000000000000000000' });
  });

  test('when an item offer is accepted naming another asset, then 422; naming its own asset, then it is sold as before', async () => {
    const { assets } = await collectionOfOwners(server, 2);
    const buyer = await server.key();
    const offer = (await makeOffer(buyer.key, { asset_id: assets[0].id })).body;
    expect(offer).toMatchObject({ kind: 'item', quantity: 1, filled: 0 });

    const wrong = await server.rest('POST', '/v1/offers/accept', { offer_id: offer.id, token_address: assets[1].tokenAddress, token_id: assets[1].tokenId }, assets[0].owner.key);
    const right = await accept(offer.id, assets[0]);

    expect(wrong.status).toBe(422);
    expect(right.status).toBe(200);
    expect(right.body.offer).toMatchObject({ status: 'accepted', filled: 1, kind: 'item' });
  });

  test('when an offer mixes asset_id with collection_id, or has a quantity out of range, then 422 naming each field', async () => {
    const { collection, assets } = await collectionOfOwners(server, 1);
    const buyer = await server.key();

    const mixed = await makeOffer(buyer.key, { asset_id: assets[0].id, collection_id: collection.id, quantity: 2 });
    const zero = await makeOffer(buyer.key, { collection_id: collection.id, quantity: 0 });
    const missing = await makeOffer(buyer.key, {});

    expect(mixed.status).toBe(422);
    expect(mixed.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['collection_id', 'quantity']);
    expect(zero.status).toBe(422);
    expect(zero.body.error.details[0].field).toBe('quantity');
    expect(missing.status).toBe(422);
    expect(missing.body.error.details[0].field).toBe('asset_id');
  });
});

describe('trait offers', () => {
  test('when a trait offer is made through GraphQL, then only an asset carrying the traits can fill it; another is 422', async () => {
    const { collection, assets } = await collectionOfOwners(server, 3, (i) => bg(['Blue', 'Red', 'Green'][i]));
    const buyer = await server.key();
    const res = await server.gql(
      CREATE,
      { input: { collectionId: collection.id, traits: [{ traitType: 'Background', value: 'Red' }, { traitType: 'Background', value: 'Blue' }, { traitType: 'Eyes', value: 'Laser' }], quantity: 2, price: 1, ...openWindow() } },
      buyer.key,
    );
    expect(res.body.errors).toBeUndefined();
    const offer = res.body.data.createOffer;
    expect(offer).toMatchObject({ kind: 'TRAIT', quantity: 2, filled: 0, assetId: null, traits: [{ traitType: 'Background', value: 'Red' }, { traitType: 'Background', value: 'Blue' }, { traitType: 'Eyes', value: 'Laser' }] });

    const green = await accept(offer.id, assets[2]);
    const blue = await accept(offer.id, assets[0]);
    const red = await accept(offer.id, assets[1]);

    expect(green.status).toBe(422);
    expect(green.body.error.message).toContain('does not carry the traits');
    expect(blue.status).toBe(200);
    expect(red.status).toBe(200);
    expect(red.body.offer).toMatchObject({ status: 'accepted', filled: 2, kind: 'trait' });
  });

  test('when a trait has an empty value, then 422 naming traits[0].value', async () => {
    const { collection } = await collectionOfOwners(server, 1);
    const buyer = await server.key();

    const res = await makeOffer(buyer.key, { collection_id: collection.id, traits: [{ trait_type: 'Background', value: '' }] });

    expect(res.status).toBe(422);
    expect(res.body.error.details[0].field).toBe('traits[0].value');
  });
});

describe('GET /v1/offers by collection and kind', () => {
  test('when offers of every kind exist on a collection, then collection_id lists them all and kind picks one kind', async () => {
    const { collection, assets } = await collectionOfOwners(server, 1, () => bg('Blue'));
    const buyer = await server.key();
    const item = (await makeOffer(buyer.key, { asset_id: assets[0].id })).body;
    const whole = (await makeOffer(buyer.key, { collection_id: collection.id })).body;
    const trait = (await makeOffer(buyer.key, { collection_id: collection.id, traits: [{ trait_type: 'Background', value: 'Blue' }] })).body;

    const all = await server.rest('GET', `/v1/offers?collection_id=${collection.id}&limit=100`);
    const traitOnly = await server.rest('GET', `/v1/offers?collection_id=${collection.contractAddress}&kind=trait`);
    const bad = await server.rest('GET', `/v1/offers?kind=everything`);

    expect(all.status).toBe(200);
    expect(all.body.result.map((o: { id: string }) => o.id).sort()).toEqual([item.id, whole.id, trait.id].sort());
    expect(traitOnly.body.result.map((o: { id: string; kind: string }) => [o.id, o.kind])).toEqual([[trait.id, 'trait']]);
    expect(bad.status).toBe(400);
  });
});
