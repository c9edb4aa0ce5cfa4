import { clock } from '../src/common/clock';
import { startServer, TestServer, HttpResult } from './setup/server';
import { ACCEPT_OFFER, openWindow, OwnedAsset, Party, saveListing, saveOffer, saveOwnedAsset, saveSiblingAsset } from './factories/market';

/** Issue #17, items 1-3: what corrupted data or figures (self-trade, inexact money, a fixed price with two prices). */
let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());
afterEach(() => clock.reset());

const listingPath = (owned: OwnedAsset) => `/v1/assets/listing/${owned.asset.tokenAddress}/${owned.asset.tokenId}`;

/** A REST call whose body is kept as the server wrote it: JSON.parse would round the numbers under test. */
async function restText(method: string, path: string, body?: unknown, key?: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...(key ? { 'access-token': key } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}

async function acceptViaRest(owner: Party, offerId: string): Promise<HttpResult> {
  return server.rest('POST', '/v1/offers/accept', { offer_id: offerId }, owner.key);
}

async function collectionFigures(owned: OwnedAsset) {
  const res = await server.gql(
    `query ($address: Address!) { collection(address: $address) { statistics { volume volumeDecimal totalTransactions } } }`,
    { address: owned.collection.contractAddress },
  );
  expect(res.body.errors).toBeUndefined();
  return res.body.data.collection.statistics as { volume: number; volumeDecimal: string; totalTransactions: number };
}

const offerStatus = async (id: string) => (await server.ds.query('SELECT status FROM offers WHERE id = $1', [id]))[0].status;

describe('self-trade', () => {
  test('when B, holding an active offer, buys the asset through another offer, then the old offer is cancelled and B cannot accept it; no order, no volume', async () => {
    const owned = await saveOwnedAsset(server);
    const buyer = await server.key();
    const oldOffer = await saveOffer(server, buyer.key, owned.asset.id, { price: 1 });
    const winning = await saveOffer(server, buyer.key, owned.asset.id, { price: 2 });
    expect((await acceptViaRest(owned.owner, winning.id)).status).toBe(200);

    expect(await offerStatus(oldOffer.id)).toBe('cancelled');
    const res = await acceptViaRest(buyer, oldOffer.id);

    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('CONFLICT');
    const orders = await server.ds.query('SELECT seller, buyer, price::text FROM orders WHERE asset_id = $1', [owned.asset.id]);
    expect(orders).toEqual([{ seller: owned.owner.address, buyer: buyer.address, price: '2.000000000000000000' }]);
    expect(await collectionFigures(owned)).toMatchObject({ volume: 2, totalTransactions: 1 });
  });

  test('when the owner accepts an offer the owner made (left active from before the fix), then 409 saying one cannot sell to oneself, on both doors', async () => {
    const owned = await saveOwnedAsset(server);
    const { startTime, endTime } = openWindow();
    // Only data written before the fix can hold this: the API refuses an offer on one's own asset and cancels it on purchase.
    const [{ id }] = await server.ds.query(
      `INSERT INTO offers (asset_id, collection_id, chain_id, token_address, token_id, taker, price, start_time, end_time)
       SELECT id, collection_id, chain_id, token_address, token_id, owner, 3, $2, $3 FROM assets WHERE id = $1 RETURNING id`,
      [owned.asset.id, startTime, endTime],
    );

    const rest = await acceptViaRest(owned.owner, id);
    const graphql = await server.gql(ACCEPT_OFFER, { offerId: id }, owned.owner.key);

    expect(rest.status).toBe(409);
    expect(rest.body.error).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('cannot sell to oneself') });
    expect(graphql.body.errors?.[0]).toMatchObject({ extensions: { code: 'CONFLICT' }, message: expect.stringContaining('cannot sell to oneself') });
    expect(await offerStatus(id)).toBe('active');
    expect(await server.ds.query('SELECT id FROM orders WHERE asset_id = $1', [owned.asset.id])).toEqual([]);
  });

  test('when an order with the same seller and buyer is written by any path, then the database refuses it', async () => {
    const owned = await saveOwnedAsset(server);
    const offer = await saveOffer(server, (await server.key()).key, owned.asset.id);
    const write = server.ds.query(
      `INSERT INTO orders (offer_id, asset_id, collection_id, chain_id, token_address, token_id, price, seller, buyer)
       SELECT $2, id, collection_id, chain_id, token_address, token_id, 1, owner, owner FROM assets WHERE id = $1`,
      [owned.asset.id, offer.id],
    );
    await expect(write).rejects.toThrow(/orders_seller_is_not_buyer/);
  });

  test('when the lister makes an offer at the accept price of the own listing, then it is refused and nothing is sold', async () => {
    const owned = await saveOwnedAsset(server);
    await saveListing(server, owned.owner.key, owned.asset.id, { startPrice: 1 });
    const { startTime, endTime } = openWindow();

    const res = await server.rest('POST', '/v1/offers', { asset_id: owned.asset.id, price: 1, start_time: startTime, end_time: endTime }, owned.owner.key);

    expect(res.status).toBe(422);
    expect(await server.ds.query('SELECT id FROM orders WHERE asset_id = $1', [owned.asset.id])).toEqual([]);
  });
});

describe('exact money', () => {
  const HUGE = '12345678901234567890.123456789012345678';

  test('when a listing is priced with 20 digits and 18 decimals, then REST writes exactly those digits as the number and the _decimal string', async () => {
    const owned = await saveOwnedAsset(server);

    const res = await restText('POST', '/v1/assets/listing', { asset_id: owned.asset.id, start_price: HUGE }, owned.owner.key);

    expect(res.status).toBe(200);
    expect(res.text).toContain(`"start_price":${HUGE},"start_price_decimal":"${HUGE}"`);
    expect(res.text).toContain(`"current_price":${HUGE},"current_price_decimal":"${HUGE}"`);
    const [row] = await server.ds.query('SELECT start_price::text FROM listings WHERE asset_id = $1', [owned.asset.id]);
    expect(row.start_price).toBe(HUGE);
  });

  test('when an offer of 0.100000000000000001 is made and accepted, then offer, order and volume keep every decimal', async () => {
    const owned = await saveOwnedAsset(server);
    const sibling = await saveSiblingAsset(server, owned);
    const taker = await server.key();
    const { startTime, endTime } = openWindow();
    const offer = (assetId: string, price: string) =>
      restText('POST', '/v1/offers', { asset_id: assetId, price, start_time: startTime, end_time: endTime }, taker.key);

    const first = await offer(owned.asset.id, '0.100000000000000001');
    const second = await offer(sibling.asset.id, '0.200000000000000002');
    const firstId = JSON.parse(first.text).id;
    const order = await restText('POST', '/v1/offers/accept', { offer_id: firstId }, owned.owner.key);
    await acceptViaRest(owned.owner, JSON.parse(second.text).id);

    expect(first.text).toContain('"price":0.100000000000000001,"price_decimal":"0.100000000000000001"');
    expect(order.text).toContain('"price":0.100000000000000001,"price_decimal":"0.100000000000000001"');
    const graphql = await server.gql(`query ($id: ID!) { offer(id: $id) { price priceDecimal } }`, { id: firstId });
    expect(graphql.body.data.offer).toEqual({ price: 0.1, priceDecimal: '0.100000000000000001' });
    expect((await collectionFigures(owned)).volumeDecimal).toBe('0.300000000000000003');
  });

  test('when a dutch auction is read between its ends, then its current price is exact to 18 decimals, rounded down', async () => {
    const listingTime = new Date(Math.floor(Date.now() / 1000) * 1000);
    clock.set(listingTime);
    const owned = await saveOwnedAsset(server);
    await saveListing(server, owned.owner.key, owned.asset.id, {
      orderType: 'DUTCH_AUCTION',
      startPrice: 3,
      acceptPrice: 1,
      listingTime: listingTime.toISOString(),
      expirationTime: { durationSeconds: 86400 },
    });
    // 441.123 s of 86,400: the price has fallen by 2 x 0.005105590277...; 3 - 0.0102111805555... = 2.98978881944444444(4...)
    clock.set(new Date(listingTime.getTime() + 441_123));

    const rest = await restText('GET', `/v1/assets/${owned.asset.tokenAddress}/${owned.asset.tokenId}`);
    const graphql = await server.gql(
      `query ($a: Address!, $t: TokenId!) { asset(tokenAddress: $a, tokenId: $t) { listing { currentPrice currentPriceDecimal } } }`,
      { a: owned.asset.tokenAddress, t: owned.asset.tokenId },
    );

    expect(rest.text).toContain('"current_price":2.989788819444444444,"current_price_decimal":"2.989788819444444444"');
    expect(graphql.body.data.asset.listing.currentPriceDecimal).toBe('2.989788819444444444');
  });
});

describe('listing prices by order type', () => {
  test('when a fixed-price listing at 5 is changed to start_price 4, then its accept price is 4 and an offer at 4 buys it', async () => {
    const owned = await saveOwnedAsset(server);
    await saveListing(server, owned.owner.key, owned.asset.id, { startPrice: 5 });
    const updated = await server.rest('PUT', listingPath(owned), { start_price: 4 }, owned.owner.key);
    const taker = await server.key();

    const offer = await saveOffer(server, taker.key, owned.asset.id, { price: 4 });

    expect(updated.body).toMatchObject({ start_price: 4, accept_price: 4, current_price: 4 });
    expect(offer.status).toBe('ACCEPTED');
    const [asset] = await server.ds.query('SELECT owner FROM assets WHERE id = $1', [owned.asset.id]);
    expect(asset.owner).toBe(taker.address);
  });

  test('when only accept_price of a fixed-price listing is changed, then the start price moves with it', async () => {
    const owned = await saveOwnedAsset(server);
    await saveListing(server, owned.owner.key, owned.asset.id, { startPrice: 5 });

    const res = await server.rest('PUT', listingPath(owned), { accept_price: '6.5' }, owned.owner.key);

    expect(res.body).toMatchObject({ start_price: 6.5, accept_price: 6.5, current_price: 6.5 });
  });

  test('when a fixed-price listing is given two different prices, then 422 naming accept_price, on create and on change, and nothing changes', async () => {
    const owned = await saveOwnedAsset(server);
    const created = await server.rest('POST', '/v1/assets/listing', { asset_id: owned.asset.id, start_price: 5, accept_price: 4 }, owned.owner.key);
    await saveListing(server, owned.owner.key, owned.asset.id, { startPrice: 5 });

    const changed = await server.rest('PUT', listingPath(owned), { start_price: 7, accept_price: 6 }, owned.owner.key);

    for (const res of [created, changed]) {
      expect(res.status).toBe(422);
      expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'accept_price', message: expect.stringContaining('one price') })]);
    }
    const rows = await server.ds.query('SELECT start_price::text, accept_price::text FROM listings WHERE asset_id = $1', [owned.asset.id]);
    expect(rows).toEqual([{ start_price: '5.000000000000000000', accept_price: '5.000000000000000000' }]);
  });

  test('when both prices are given equal in another spelling, then the fixed-price listing takes them', async () => {
    const owned = await saveOwnedAsset(server);

    const res = await server.rest('POST', '/v1/assets/listing', { asset_id: owned.asset.id, start_price: '5', accept_price: '5.000' }, owned.owner.key);

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ start_price: 5, accept_price: 5 });
  });

  test('when an english auction is given an accept price below its start price, then 422 naming accept_price', async () => {
    const owned = await saveOwnedAsset(server);

    const res = await server.rest(
      'POST',
      '/v1/assets/listing',
      { asset_id: owned.asset.id, order_type: 'english_auction', start_price: 5, accept_price: 4 },
      owned.owner.key,
    );

    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'accept_price' })]);
  });

  test('when a dutch auction\'s accept price differs from its start price only in the 18th decimal, then it is accepted as below', async () => {
    const owned = await saveOwnedAsset(server);

    const res = await server.rest(
      'POST',
      '/v1/assets/listing',
      {
        asset_id: owned.asset.id,
        order_type: 'dutch_auction',
        start_price: '1.000000000000000002',
        accept_price: '1.000000000000000001',
        expiration_time: { duration_seconds: 3600 },
      },
      owned.owner.key,
    );

    expect(res.status).toBe(200);
    expect(res.body.accept_price_decimal).toBe('1.000000000000000001');
  });
});
