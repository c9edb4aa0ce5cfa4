import { clock } from '../src/common/clock';
import { loadConfig } from '../src/config';
import { addConfiguredCurrencies } from '../src/modules/currency/currency.service';
import { openWindow, saveListing, saveOffer, saveOwnedAsset } from './factories/market';
import { collectionOfOwners } from './factories/traits';
import { saveCollection } from './factories/marketplace';
import { startServer, TestServer } from './setup/server';
import { later, wholeSecond } from './setup/time';

/** Currencies (docs/market.md "Currencies"): prices in the native currency or a configured ERC-20, through both doors. */
let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());
afterEach(() => clock.reset());

const NATIVE = '0x0000000000000000000000000000000000000000';
const ETH = { address: NATIVE, symbol: 'ETH', decimals: 18 };
const USDC = { address: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48', symbol: 'USDC', decimals: 6 };
const WETH = { address: '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2', symbol: 'WETH', decimals: 18 };

describe('the currencies of a chain', () => {
  test('when a client reads Ethereum\'s currencies through /v1 and GraphQL, then both list ETH (native, 0x000…0) first, then USDC and WETH', async () => {
    const rest = await server.rest('GET', '/v1/chains/1/currencies');
    const gql = await server.gql(`{ currencies(chainId: "1") { address symbol decimals } chains { chainId currencies { symbol } } }`);

    expect(rest.status).toBe(200);
    expect(rest.body).toEqual([ETH, USDC, WETH].map((c) => ({ chain_id: '1', ...c })));
    expect(gql.body.data.currencies).toEqual([ETH, USDC, WETH]);
    const polygon = gql.body.data.chains.find((c: { chainId: string }) => c.chainId === '137');
    expect(polygon.currencies.map((c: { symbol: string }) => c.symbol)).toEqual(['POL', 'USDC', 'WETH']);
  });

  test('when CURRENCIES names a token, then after the start it is listed and prices may be given in it; a malformed or conflicting one stops the start', async () => {
    const degen = { chainId: '8453', symbol: 'DEGEN', address: '0x4ed4e862860bed51a9570b96d89af5e1b0efefed', decimals: 18 };

    expect(loadConfig({ CURRENCIES: ` 8453:DEGEN:${degen.address.toUpperCase().replace('0X', '0x')}:18 ` }).currencies).toEqual([degen]);
    expect(() => loadConfig({ CURRENCIES: '8453:DEGEN:0x12:18' })).toThrow('CURRENCIES: each entry is <chain_id>:<SYMBOL>:<address>:<decimals 0..18>');
    await addConfiguredCurrencies(server.ds, [degen]);
    await addConfiguredCurrencies(server.ds, [degen]);
    await expect(addConfiguredCurrencies(server.ds, [{ ...degen, decimals: 6 }])).rejects.toThrow('configured already as DEGEN with 18 decimals');
    await expect(addConfiguredCurrencies(server.ds, [{ ...degen, symbol: 'usdc' }])).rejects.toThrow('chain 8453 has usdc at 0x833589fcd6edb6e08f4c7c32d4f71b54bda02913 already');
    await expect(addConfiguredCurrencies(server.ds, [{ ...degen, chainId: '999' }])).rejects.toThrow('no chain 999');

    const base = await server.rest('GET', '/v1/chains/8453/currencies');
    expect(base.body.map((c: { symbol: string }) => c.symbol)).toEqual(['ETH', 'DEGEN', 'USDC', 'WETH']);
    const owner = await server.key();
    const collection = await saveCollection(server, owner.key, { chainId: '8453' });
    const buyer = await server.key();
    const offer = await server.rest('POST', '/v1/offers', { collection_id: collection.id, price: 100, currency: 'degen', ...snake(openWindow()) }, buyer.key);
    expect(offer.body).toMatchObject({ currency: { address: degen.address, symbol: 'DEGEN', decimals: 18 } });
  });

  test('when the chain is unknown, then 404', async () => {
    const res = await server.rest('GET', '/v1/chains/999/currencies');
    expect(res.status).toBe(404);
    expect(res.body.error.message).toContain('no chain 999');
  });
});

describe('listings and offers in a currency', () => {
  test('when a listing is made through /v1 in USDC by symbol, then it shows its currency, and one made without a currency is native as before', async () => {
    const usdc = await saveOwnedAsset(server);
    const plain = await saveOwnedAsset(server);

    const inUsdc = await server.rest('POST', '/v1/assets/listing', { asset_id: usdc.asset.id, start_price: '12.5', currency: 'usdc' }, usdc.owner.key);
    const native = await server.rest('POST', '/v1/assets/listing', { asset_id: plain.asset.id, start_price: 1 }, plain.owner.key);

    expect(inUsdc.status).toBe(200);
    expect(inUsdc.body).toMatchObject({ start_price: 12.5, current_price_decimal: '12.5', currency: USDC });
    expect(native.body).toMatchObject({ start_price: 1, currency: ETH });
    const asset = await server.rest('GET', `/v1/assets/${usdc.asset.tokenAddress}/${usdc.asset.tokenId}?chain_id=1`);
    expect(asset.body.listing).toMatchObject({ id: inUsdc.body.id, currency: USDC });
    const [row] = await server.ds.query('SELECT currency, currency_decimals FROM listings WHERE id = $1', [inUsdc.body.id]);
    expect(row).toEqual({ currency: USDC.address, currency_decimals: 6 });
  });

  test('when a price has more decimals than its currency, or the currency is not one of the chain, then 422 naming the field and nothing is written', async () => {
    const owned = await saveOwnedAsset(server);
    const buyer = await server.key();

    const tooFine = await server.rest('POST', '/v1/assets/listing', { asset_id: owned.asset.id, start_price: '1.0000001', currency: USDC.address }, owned.owner.key);
    const unknown = await server.rest('POST', '/v1/assets/listing', { asset_id: owned.asset.id, start_price: 1, currency: 'DOGE' }, owned.owner.key);
    const offer = await server.rest('POST', '/v1/offers', { asset_id: owned.asset.id, price: '0.1234567', currency: 'USDC', ...snake(openWindow()) }, buyer.key);

    expect(tooFine.status).toBe(422);
    expect(messages(tooFine.body)).toContain('a price in USDC has at most 6 decimals, got 1.0000001 (7)');
    expect(unknown.status).toBe(422);
    expect(messages(unknown.body)).toContain('unknown currency "DOGE" on chain 1; give the address or symbol of one of ETH');
    expect(offer.status).toBe(422);
    expect(messages(offer.body)).toContain('at most 6 decimals');
    expect(await server.ds.query('SELECT id FROM listings WHERE asset_id = $1', [owned.asset.id])).toEqual([]);
    expect(await server.ds.query('SELECT id FROM offers WHERE asset_id = $1', [owned.asset.id])).toEqual([]);
  });

  test('when an offer in WETH meets a native listing\'s price, then it is not taken at once (another currency); one in ETH is', async () => {
    const owned = await saveOwnedAsset(server);
    await saveListing(server, owned.owner.key, owned.asset.id, { startPrice: 2 });
    const buyer = await server.key();

    const weth = await server.gql(CREATE_OFFER, { input: { assetId: owned.asset.id, price: 3, currency: WETH.address, ...openWindow() } }, buyer.key);
    const eth = await server.gql(CREATE_OFFER, { input: { assetId: owned.asset.id, price: 2, ...openWindow() } }, buyer.key);

    expect(weth.body.data.createOffer).toMatchObject({ status: 'ACTIVE', currency: WETH });
    expect(eth.body.data.createOffer).toMatchObject({ status: 'ACCEPTED', currency: ETH });
    const orders = await server.ds.query('SELECT price::text, currency FROM orders WHERE asset_id = $1', [owned.asset.id]);
    expect(orders).toEqual([{ price: '2.000000000000000000', currency: NATIVE }]);
  });

  test('when a bid on a native english auction is in USDC, then 422 naming the auction\'s currency', async () => {
    const owned = await saveOwnedAsset(server);
    await saveListing(server, owned.owner.key, owned.asset.id, { orderType: 'ENGLISH_AUCTION', startPrice: 1, expirationTime: { durationSeconds: 3600 } });
    const bidder = await server.key();

    const res = await server.rest('POST', '/v1/offers', { asset_id: owned.asset.id, price: 5, currency: 'USDC', ...snake(openWindow()) }, bidder.key);

    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'currency', message: expect.stringContaining('is in its currency, ETH') })]);
  });

  test('when an english auction in USDC is bid on, then the minimum next bid is rounded up to whole cents of a millionth (6 decimals)', async () => {
    const owned = await saveOwnedAsset(server);
    await saveListing(server, owned.owner.key, owned.asset.id, {
      orderType: 'ENGLISH_AUCTION',
      startPrice: '1.000001',
      currency: 'USDC',
      expirationTime: { durationSeconds: 3600 },
    });
    const [first, second] = [await server.key(), await server.key()];
    await saveOffer(server, first.key, owned.asset.id, { price: '1.000001', currency: 'USDC' });

    const low = await server.gql(CREATE_OFFER, { input: { assetId: owned.asset.id, price: '1.05', currency: 'USDC', ...openWindow() } }, second.key);

    // 1.000001 x 1.05 = 1.05000105, rounded up to 6 decimals.
    expect(low.body.errors?.[0].extensions.details[0].message).toContain('must be at least 1.050002');
  });

  test('when a dutch auction in USDC falls, then its current price has at most 6 decimals (rounded down)', async () => {
    const start = wholeSecond();
    clock.set(start);
    const owned = await saveOwnedAsset(server);
    const listing = await saveListing(server, owned.owner.key, owned.asset.id, {
      orderType: 'DUTCH_AUCTION',
      startPrice: 3,
      acceptPrice: 1,
      currency: 'USDC',
      expirationTime: { durationSeconds: 86400 },
    });
    clock.set(later(start, 441123));

    const res = await server.gql(`query ($id: ID!) { node(id: $id) { ... on Listing { currentPriceDecimal currency { symbol } } } }`, { id: listing.id });

    // In the native currency this moment is 2.989788819444444444 (docs/api.md); in USDC it stops at the 6th decimal.
    expect(res.body.data.node).toEqual({ currentPriceDecimal: '2.989788', currency: { symbol: 'USDC' } });
  });
});

describe('sales in a currency', () => {
  test('when a WETH offer is accepted, then the order, its events and the webhook-visible data say WETH, and the statistics count no volume', async () => {
    const owned = await saveOwnedAsset(server);
    const buyer = await server.key();
    const offer = await saveOffer(server, buyer.key, owned.asset.id, { price: 4, currency: 'WETH' });

    const res = await server.rest('POST', '/v1/offers/accept', { offer_id: offer.id }, owned.owner.key);

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ price: 4, currency: WETH, offer: { id: offer.id, currency: WETH } });
    const events: { type: string; data: Record<string, unknown> }[] = await server.ds.query(
      `SELECT type, data FROM events WHERE asset_id = $1 AND type IN ('asset.transferred', 'order.completed') ORDER BY position`,
      [owned.asset.id],
    );
    expect(events).toEqual([
      expect.objectContaining({ type: 'asset.transferred', data: expect.objectContaining({ currency: WETH, order_id: res.body.id }) }),
      expect.objectContaining({ type: 'order.completed', data: expect.objectContaining({ currency: WETH }) }),
    ]);
    const feed = await server.rest('GET', `/v1/events?collection_id=${owned.collection.id}&types=order.completed`);
    expect(feed.body.result[0].data).toMatchObject({ currency: WETH, price: 4 });
    const stats = await server.gql(`query ($a: Address!) { collection(address: $a) { statistics(period: H24) { volumeDecimal totalTransactions } } }`, {
      a: owned.collection.contractAddress,
    });
    expect(stats.body.data.collection.statistics).toEqual({ volumeDecimal: '0', totalTransactions: 0 });
  });

  test('when the owner of an asset listed in ETH accepts a WETH offer, then the sale is in WETH at the offer\'s price and the listing is sold, its own currency kept', async () => {
    const owned = await saveOwnedAsset(server);
    const listing = await saveListing(server, owned.owner.key, owned.asset.id, { startPrice: 10 });
    const buyer = await server.key();
    const offer = await saveOffer(server, buyer.key, owned.asset.id, { price: 3, currency: 'WETH' });

    const res = await server.rest('POST', '/v1/offers/accept', { offer_id: offer.id }, owned.owner.key);

    expect(res.body).toMatchObject({ price_decimal: '3', currency: WETH, listing_id: listing.id });
    const [sold] = await server.ds.query(`SELECT data FROM events WHERE type = 'listing.sold' AND subject_id = $1`, [listing.id]);
    expect(sold.data).toMatchObject({ currency: ETH, sale_currency: WETH, order_id: res.body.id });
  });

  test('when a USDC listing is bought now, then the order is in USDC at the listing\'s price, and max_price is read in USDC', async () => {
    const owned = await saveOwnedAsset(server);
    const listing = await saveListing(server, owned.owner.key, owned.asset.id, { startPrice: '250.5', currency: 'USDC' });
    const buyer = await server.key();

    const tooLow = await server.rest('POST', `/v1/listings/${listing.id}/buy`, { max_price: 250 }, buyer.key);
    const res = await server.rest('POST', `/v1/listings/${listing.id}/buy`, { max_price: '250.5' }, buyer.key);

    expect(tooLow.status).toBe(409);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ price_decimal: '250.5', currency: USDC, listing_id: listing.id });
    expect(await server.ds.query('SELECT currency FROM orders WHERE listing_id = $1', [listing.id])).toEqual([{ currency: USDC.address }]);
  });

  test('when a collection has native and USDC listings, then its floor is native, a sweep buys native ones by default and USDC ones when asked', async () => {
    const { collection, assets } = await collectionOfOwners(server, 4);
    // USDC at 1 and 2 (cheaper in number), ETH at 3 and 4.
    const listings = await Promise.all(
      assets.map((a, i) => saveListing(server, a.owner.key, a.id, { startPrice: i + 1, ...(i < 2 ? { currency: 'USDC' } : {}) })),
    );
    const sweeper = await server.key();

    const floor = await server.gql(`query ($a: Address!) { collection(address: $a) { floorListing { id currency { symbol } } } }`, { a: collection.contractAddress });
    const native = await server.rest('POST', `/v1/collections/${collection.id}/sweep`, { count: 1, max_total: 10, max_unit_price: 10 }, sweeper.key);
    const usdc = await server.gql(
      `mutation ($input: SweepCollectionInput!) { sweepCollection(input: $input) { orders { listingId currency { symbol } } totalDecimal currency { symbol } } }`,
      { input: { collectionId: collection.id, count: 5, maxTotal: 10, maxUnitPrice: 10, currency: USDC.address } },
      sweeper.key,
    );

    expect(floor.body.data.collection.floorListing).toEqual({ id: listings[2].id, currency: { symbol: 'ETH' } });
    expect(native.body.orders.map((o: { listing_id: string }) => o.listing_id)).toEqual([listings[2].id]);
    expect(native.body.currency).toEqual(ETH);
    expect(usdc.body.data.sweepCollection).toEqual({
      orders: [listings[0], listings[1]].map((l) => ({ listingId: l.id, currency: { symbol: 'USDC' } })),
      totalDecimal: '3',
      currency: { symbol: 'USDC' },
    });
  });

  test('when a sweep names a currency the chain does not have, then 422', async () => {
    const { collection } = await collectionOfOwners(server, 1);
    const sweeper = await server.key();

    const res = await server.rest('POST', `/v1/collections/${collection.id}/sweep`, { count: 1, max_total: 10, max_unit_price: 10, currency: 'POL' }, sweeper.key);

    expect(res.status).toBe(422);
    expect(messages(res.body)).toContain('unknown currency "POL" on chain 1');
  });
});

describe('lists by price within a currency', () => {
  test('when a collection\'s listings are in ETH and USDC, then listings(currency: USDC) sorted by price holds the USDC ones alone, cheapest first', async () => {
    const { collection, assets } = await collectionOfOwners(server, 4);
    // ETH at 1 and 2, USDC at 4 and 3: sorted together the amounts would interleave.
    const prices = [1, 2, 4, 3];
    const listings = await Promise.all(assets.map((a, i) => saveListing(server, a.owner.key, a.id, { startPrice: prices[i], ...(i >= 2 ? { currency: 'usdc' } : {}) })));

    const read = await server.gql(
      `query ($a: Address!, $c: String) { collection(address: $a) {
         listings(status: ACTIVE, orderBy: CURRENT_PRICE, direction: ASC, currency: $c) { remaining result { id currency { symbol } } } } }`,
      { a: collection.contractAddress, c: 'USDC' },
    );
    const native = await server.gql(
      `query ($a: Address!, $c: String) { collection(address: $a) { listings(orderBy: CURRENT_PRICE, direction: ASC, currency: $c) { result { id } } } }`,
      { a: collection.contractAddress, c: ETH.address },
    );

    expect(read.body.data.collection.listings.result).toEqual([listings[3], listings[2]].map((l) => ({ id: l.id, currency: { symbol: 'USDC' } })));
    expect(native.body.data.collection.listings.result).toEqual([listings[0], listings[1]].map((l) => ({ id: l.id })));
  });

  test('when offers are in WETH and ETH, then GET /v1/offers?currency=WETH&order_by=price and GraphQL offers(currency) hold the WETH ones alone, in price order', async () => {
    const owned = await saveOwnedAsset(server);
    const offers = [];
    for (const [price, currency] of [[3, 'WETH'], [1, undefined], [2, 'WETH'], [5, undefined]] as const) {
      const buyer = await server.key();
      offers.push(await saveOffer(server, buyer.key, owned.asset.id, { price, ...(currency ? { currency } : {}) }));
    }

    const rest = await server.rest('GET', `/v1/offers?token_address=${owned.asset.tokenAddress}&token_id=${owned.asset.tokenId}&currency=weth&order_by=price&direction=asc`);
    const gql = await server.gql(
      `query ($t: Address!, $i: TokenId!, $c: String) { asset(tokenAddress: $t, tokenId: $i) { offers(currency: $c, orderBy: PRICE, direction: DESC) { result { id } } } }`,
      { t: owned.asset.tokenAddress, i: owned.asset.tokenId, c: WETH.address },
    );

    expect(rest.status).toBe(200);
    expect(rest.body.result.map((o: { id: string; currency: { symbol: string } }) => [o.id, o.currency.symbol])).toEqual([
      [offers[2].id, 'WETH'],
      [offers[0].id, 'WETH'],
    ]);
    expect(gql.body.data.asset.offers.result).toEqual([{ id: offers[0].id }, { id: offers[2].id }]);
  });

  test('when a collection\'s sales are in WETH and ETH, then GET /v1/orders?currency=WETH&order_by=price and GraphQL orders(currency) hold the WETH sales alone', async () => {
    const { collection, assets } = await collectionOfOwners(server, 3);
    const sales = [];
    for (const [i, [price, currency]] of ([[2, 'WETH'], [1, undefined], [3, 'WETH']] as const).entries()) {
      const buyer = await server.key();
      const offer = await saveOffer(server, buyer.key, assets[i].id, { price, ...(currency ? { currency } : {}) });
      sales.push((await server.rest('POST', '/v1/offers/accept', { offer_id: offer.id }, assets[i].owner.key)).body);
    }

    const rest = await server.rest('GET', `/v1/orders?collection_id=${collection.id}&currency=WETH&order_by=price&direction=desc`);
    const gql = await server.gql(`query ($c: String!) { orders(collectionId: $c, currency: "eth", orderBy: PRICE) { result { id currency { symbol } } } }`, { c: collection.id });

    expect(rest.status).toBe(200);
    expect(rest.body.result.map((o: { id: string }) => o.id)).toEqual([sales[2].id, sales[0].id]);
    expect(gql.body.data.orders.result).toEqual([{ id: sales[1].id, currency: { symbol: 'ETH' } }]);
  });

  test('when a collection\'s assets are listed in ETH and USDC, then assets(currency: USDC) sorted by current price holds the USDC-listed ones alone, on both doors, in searches and in a collection\'s or an account\'s assets', async () => {
    const { collection, assets } = await collectionOfOwners(server, 5);
    // ETH at 1 and 2, USDC at 4 and 3, the fifth unlisted: sorted together the amounts would interleave.
    const prices = [1, 2, 4, 3];
    await Promise.all(prices.map((price, i) => saveListing(server, assets[i].owner.key, assets[i].id, { startPrice: price, ...(i >= 2 ? { currency: 'usdc' } : {}) })));
    const ids = (page: { result: { id: string }[] }) => page.result.map((a) => a.id);

    const rest = await server.rest('GET', `/v1/assets?collection_id=${collection.id}&order_by=current_price&direction=asc&currency=USDC`);
    const gql = await server.gql(
      `query ($c: String!, $a: Address!, $usdcSeller: Address!, $ethSeller: Address!) {
         usdc: assets(collectionId: $c, orderBy: CURRENT_PRICE, direction: ASC, currency: "usdc") { remaining result { id listing { currentPrice currency { symbol } } } }
         native: assets(collectionId: $c, orderBy: CURRENT_PRICE, direction: DESC, currency: "${ETH.address}") { result { id } }
         every: assets(collectionId: $c, orderBy: CURRENT_PRICE) { result { id } }
         collection(address: $a) { assets(orderBy: CURRENT_PRICE, direction: ASC, currency: "USDC") { remaining result { id } } }
         searchAssets(query: "Imported", collectionId: $c, currency: "USDC") { result { id } }
         usdcSeller: account(address: $usdcSeller) { assets(currency: "USDC") { result { id } } }
         ethSeller: account(address: $ethSeller) { assets(currency: "USDC") { result { id } } } }`,
      { c: collection.id, a: collection.contractAddress, usdcSeller: assets[2].owner.address, ethSeller: assets[0].owner.address },
    );

    expect(rest.status).toBe(200);
    expect(ids(rest.body)).toEqual([assets[3].id, assets[2].id]);
    expect(rest.body.remaining).toBe(0);
    expect(gql.body.errors).toBeUndefined();
    const data = gql.body.data;
    expect(data.usdc).toEqual({
      remaining: 0,
      result: [
        { id: assets[3].id, listing: { currentPrice: 3, currency: { symbol: 'USDC' } } },
        { id: assets[2].id, listing: { currentPrice: 4, currency: { symbol: 'USDC' } } },
      ],
    });
    expect(ids(data.native)).toEqual([assets[1].id, assets[0].id]);
    expect(data.every.result).toHaveLength(5);
    expect(ids(data.collection.assets)).toEqual([assets[3].id, assets[2].id]);
    expect(ids(data.searchAssets).sort()).toEqual([assets[2].id, assets[3].id].sort());
    expect(ids(data.usdcSeller.assets)).toEqual([assets[2].id]);
    expect(ids(data.ethSeller.assets)).toEqual([]);
  });

  test('when an assets list names a currency no chain has, then 422 on currency through both doors and in the collection\'s assets', async () => {
    const owned = await saveOwnedAsset(server);

    const rest = await server.rest('GET', '/v1/assets?order_by=current_price&currency=DOGE');
    const search = await server.rest('GET', '/v1/search/assets?query=anything&currency=DOGE');
    const gql = await server.gql(`{ assets(orderBy: CURRENT_PRICE, currency: "DOGE") { result { id } } }`);
    const nested = await server.gql(`query ($a: Address!) { collection(address: $a) { assets(currency: "DOGE") { result { id } } } }`, { a: owned.collection.contractAddress });

    for (const res of [rest, search]) {
      expect(res.status).toBe(422);
      expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'currency', message: expect.stringContaining('no chain has a currency "DOGE"') })]);
    }
    for (const res of [gql, nested]) {
      expect(res.body.errors?.[0]).toMatchObject({ extensions: { code: 'VALIDATION_FAILED' }, message: expect.stringContaining('currency: no chain has a currency "DOGE"') });
    }
  });

  test('when a list names a currency no chain has, then 422 on currency through both doors', async () => {
    const owned = await saveOwnedAsset(server);

    const rest = await server.rest('GET', '/v1/offers?currency=DOGE');
    const gql = await server.gql(`query ($a: Address!) { collection(address: $a) { listings(currency: "DOGE") { result { id } } } }`, { a: owned.collection.contractAddress });

    expect(rest.status).toBe(422);
    expect(rest.body.error.details).toEqual([expect.objectContaining({ field: 'currency', message: expect.stringContaining('no chain has a currency "DOGE"') })]);
    expect(gql.body.errors?.[0]).toMatchObject({ extensions: { code: 'VALIDATION_FAILED' }, message: expect.stringContaining('currency: no chain has a currency "DOGE"') });
  });
});

/** The messages of a REST error's details, one a line. */
function messages(body: { error: { details: { message: string }[] } }): string {
  return body.error.details.map((d) => d.message).join('\n');
}

/** An offer window in REST's words. */
function snake(window: { startTime: string; endTime: string }) {
  return { start_time: window.startTime, end_time: window.endTime };
}

const CREATE_OFFER = /* GraphQL */ `
  mutation ($input: CreateOfferInput!) {
    createOffer(input: $input) { id status priceDecimal currency { address symbol decimals } }
  }`;
