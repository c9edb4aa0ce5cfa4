import { OwnedAsset, Party, saveAcceptedOffer, saveListing, saveOffer, saveOwnedAsset, saveSiblingAsset } from './factories/market';
import { startServer, TestServer } from './setup/server';

/**
 * Price ranges (docs/api.md "Lists"): `minPrice`/`maxPrice` (REST `min_price`/`max_price`) keep a list of
 * offers, of sales or of assets (by their active listing's current price) to the prices within them, ends
 * included, on both doors and in nested lists; a known query that uses them is still answered by its SQL
 * plan (one statement).
 */
let server: TestServer;
let offered: OwnedAsset;
let buyer: Party;
/** A collection whose assets are listed at PRICES (names A, B, C), one of them (D) at 4 USDC, and one (E) unlisted. */
let listed: OwnedAsset;
const PRICES = [1, 2.5, 10];

beforeAll(async () => {
  server = await startServer();
  offered = await saveOwnedAsset(server);
  for (const price of PRICES) await saveOffer(server, (await server.key()).key, offered.asset.id, { price });
  buyer = await server.key();
  for (const price of PRICES) await saveAcceptedOffer(server, await saveOwnedAsset(server), buyer, price);
  listed = await saveOwnedAsset(server);
  const names = ['A', 'B', 'C', 'D', 'E'];
  const assets = [listed, ...(await Promise.all(names.slice(1).map(() => saveSiblingAsset(server, listed))))];
  await server.ds.query('UPDATE assets SET name = t.name FROM unnest($1::uuid[], $2::text[]) t(id, name) WHERE assets.id = t.id', [assets.map((a) => a.asset.id), names]);
  for (const [i, price] of PRICES.entries()) await saveListing(server, listed.owner.key, assets[i].asset.id, { startPrice: price });
  await saveListing(server, listed.owner.key, assets[3].asset.id, { startPrice: 4, currency: 'USDC' });
}, 120_000);
afterAll(() => server.close());

/** The same document three times: the first answer is the resolvers', the third the plan's when there is one. */
async function thrice(query: string, variables: Record<string, unknown>) {
  const answers = [];
  for (let i = 0; i < 3; i += 1) {
    const res = await fetch(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
    answers.push({ status: res.status, text: await res.text(), sql: Number(res.headers.get('x-sql-statements')) });
  }
  return { first: answers[0], third: answers[2] };
}

const prices = (page: { result: { price: number }[] }) => page.result.map((item) => item.price);

describe('offers within a price range', () => {
  test('when offers are read with minPrice and maxPrice, then only those priced within the range (ends included) come, in one planned statement', async () => {
    const { first, third } = await thrice(OFFERS, { collectionId: offered.collection.id, min: 2.5, max: '10' });

    expect(prices(JSON.parse(first.text).data.offers)).toEqual([2.5, 10]);
    expect(third.text).toBe(first.text);
    expect(third.sql).toBe(1);
  });

  test("when an asset's offers are read with a price range, then the nested page keeps those within it, in one planned statement", async () => {
    const { first, third } = await thrice(ASSET_OFFERS, { tokenAddress: offered.asset.tokenAddress, tokenId: offered.asset.tokenId, max: 2.5 });

    expect(prices(JSON.parse(first.text).data.asset.offers)).toEqual([1, 2.5]);
    expect(third.text).toBe(first.text);
    expect(third.sql).toBe(1);
  });

  test('when /v1/offers is asked with min_price and max_price, then the same offers come, in as many statements as without them', async () => {
    const base = `/v1/offers?collection_id=${offered.collection.id}&order_by=price&direction=asc`;
    const ranged = await server.rest('GET', `${base}&min_price=2&max_price=5`);
    const all = await server.rest('GET', base);

    expect(ranged.status).toBe(200);
    expect(prices(ranged.body)).toEqual([2.5]);
    expect(prices(all.body)).toEqual(PRICES);
    expect(ranged.sql).toBe(all.sql);
  });
});

describe('sales within a price range', () => {
  test('when orders are read with a price range, then only the sales within it come, in one planned statement', async () => {
    const { first, third } = await thrice(ORDERS, { ownerId: buyer.address, min: '1', max: 2.5 });

    expect(prices(JSON.parse(first.text).data.orders)).toEqual([1, 2.5]);
    expect(third.text).toBe(first.text);
    expect(third.sql).toBe(1);
  });

  test("when an account's purchases are read with minPrice, then the nested page keeps those at or above it", async () => {
    const res = await server.gql(`query ($a: Address!) { account(address: $a) { orders(role: BOUGHT, minPrice: 2.5, orderBy: PRICE, direction: ASC) { remaining result { price } } } }`, {
      a: buyer.address,
    });

    expect(res.body.data.account.orders).toEqual({ remaining: 0, result: [{ price: 2.5 }, { price: 10 }] });
  });

  test('when /v1/orders is asked with min_price, then the sales at or above it come', async () => {
    const res = await server.rest('GET', `/v1/orders?owner_id=${buyer.address}&min_price=2.5&order_by=price&direction=asc`);

    expect(res.status).toBe(200);
    expect(prices(res.body)).toEqual([2.5, 10]);
  });
});

const names = (page: { result: { name: string }[] }) => page.result.map((item) => item.name);

describe('assets within a price range', () => {
  test("when assets are read with minPrice and maxPrice, then only those whose active listing's current price is within the range come (ends included), in one planned statement", async () => {
    const { first, third } = await thrice(ASSETS, { collectionId: listed.collection.id, min: 2.5, max: '10' });

    // D's 4 USDC is within the range too: without `currency`, amounts of every currency are compared as they are.
    expect(JSON.parse(first.text).data.assets).toEqual({
      remaining: 0,
      result: [{ name: 'B', listing: { currentPrice: 2.5 } }, { name: 'C', listing: { currentPrice: 10 } }, { name: 'D', listing: { currentPrice: 4 } }],
    });
    expect(third.text).toBe(first.text);
    expect(third.sql).toBe(1);
  });

  test('when a price range is given without a currency, then amounts of every currency are compared as they are; with one, only assets listed in it', async () => {
    const any = await server.gql(ASSETS, { collectionId: listed.collection.id, min: 3, max: 5 });
    const usdc = await server.gql(ASSETS, { collectionId: listed.collection.id, min: 3, max: 5, currency: 'USDC' });
    const eth = await server.gql(ASSETS, { collectionId: listed.collection.id, min: 3, max: 5, currency: 'ETH' });

    expect(names(any.body.data.assets)).toEqual(['D']);
    expect(names(usdc.body.data.assets)).toEqual(['D']);
    expect(names(eth.body.data.assets)).toEqual([]);
  });

  test("when a collection's assets are read with maxPrice, then the nested page keeps the listed ones at or below it, in one planned statement", async () => {
    const query = `query ($address: String!, $max: Price) { collection(id: $address) { assets(maxPrice: $max, orderBy: NAME, direction: ASC) { remaining result { name } } } }`;
    const { first, third } = await thrice(query, { address: listed.collection.id, max: 4 });

    expect(JSON.parse(first.text).data.collection.assets).toEqual({ remaining: 0, result: [{ name: 'A' }, { name: 'B' }, { name: 'D' }] });
    expect(third.text).toBe(first.text);
    expect(third.sql).toBe(1);
  });

  test("when an account's assets are read with minPrice, then only its assets listed at or above it come", async () => {
    const res = await server.gql(`query ($a: Address!) { account(address: $a) { assets(minPrice: 2.5, orderBy: NAME, direction: ASC) { remaining result { name } } } }`, { a: listed.owner.address });

    expect(res.body.data.account.assets).toEqual({ remaining: 0, result: [{ name: 'B' }, { name: 'C' }, { name: 'D' }] });
  });

  test('when /v1/assets and /v1/search/assets are asked with min_price and max_price, then the assets listed within the range come', async () => {
    const ranged = await server.rest('GET', `/v1/assets?collection_id=${listed.collection.id}&order_by=current_price&direction=asc&min_price=1&max_price=2.5`);
    const search = await server.rest('GET', `/v1/search/assets?query=B&collection_id=${listed.collection.id}&min_price=2&max_price=3`);

    expect(ranged.status).toBe(200);
    expect(ranged.body.result.map((a: { name: string; listing: { current_price: number } }) => [a.name, a.listing.current_price])).toEqual([['A', 1], ['B', 2.5]]);
    expect(search.status).toBe(200);
    expect(names(search.body)).toEqual(['B']);
  });
});

describe('a price range that is not one', () => {
  test.each(['offers', 'orders', 'assets'])('when /v1/%s is asked with a negative, a non-numeric or an upside-down range, then 400 naming the parameter', async (list) => {
    const negative = await server.rest('GET', `/v1/${list}?min_price=-1`);
    const word = await server.rest('GET', `/v1/${list}?max_price=cheap`);
    const upsideDown = await server.rest('GET', `/v1/${list}?min_price=5&max_price=2`);

    expect([negative.status, word.status, upsideDown.status]).toEqual([400, 400, 400]);
    expect(negative.body.error.details).toEqual([{ field: 'min_price', message: 'must be a price of at least 0, got -1' }]);
    expect(word.body.error.message).toContain('max_price');
    expect(upsideDown.body.error.details).toEqual([{ field: 'max_price', message: 'must not be below the minimum price (5), got 2' }]);
  });

  test('when GraphQL lists are asked with a negative or upside-down range, root or nested, then BAD_REQUEST naming the argument', async () => {
    const assets = await server.gql(`{ assets(minPrice: 2, maxPrice: 1) { remaining } }`);
    const collectionAssets = await server.gql(`query ($c: String!) { collection(id: $c) { assets(maxPrice: -1) { remaining } } }`, { c: listed.collection.id });
    const offers = await server.gql(`{ offers(maxPrice: -0.5) { remaining } }`);
    const orders = await server.gql(`{ orders(minPrice: 3, maxPrice: 1) { remaining } }`);
    const nested = await server.gql(`query ($a: Address!) { account(address: $a) { offers(minPrice: -2) { remaining } } }`, { a: buyer.address });

    expect(assets.body.errors?.[0].extensions).toMatchObject({ code: 'BAD_REQUEST', details: [{ field: 'maxPrice', message: 'must not be below the minimum price (2), got 1' }] });
    expect(collectionAssets.body.errors?.[0].extensions).toMatchObject({ code: 'BAD_REQUEST', details: [{ field: 'maxPrice', message: 'must be a price of at least 0, got -1' }] });
    expect(offers.body.errors?.[0].extensions).toMatchObject({ code: 'BAD_REQUEST', details: [{ field: 'maxPrice', message: 'must be a price of at least 0, got -0.5' }] });
    expect(orders.body.errors?.[0].extensions).toMatchObject({ code: 'BAD_REQUEST', details: [{ field: 'maxPrice', message: 'must not be below the minimum price (3), got 1' }] });
    expect(nested.body.errors?.[0].extensions).toMatchObject({ code: 'BAD_REQUEST', details: [{ field: 'minPrice', message: 'must be a price of at least 0, got -2' }] });
  });
});

const OFFERS = /* GraphQL */ `
  query ($collectionId: String, $min: Price, $max: Price) {
    offers(collectionId: $collectionId, minPrice: $min, maxPrice: $max, orderBy: PRICE, direction: ASC) {
      remaining result { price priceDecimal asset { name } }
    }
  }`;

const ASSETS = /* GraphQL */ `
  query ($collectionId: String, $min: Price, $max: Price, $currency: String) {
    assets(collectionId: $collectionId, minPrice: $min, maxPrice: $max, currency: $currency, orderBy: NAME, direction: ASC) {
      remaining result { name listing { currentPrice } }
    }
  }`;

const ASSET_OFFERS = /* GraphQL */ `
  query ($tokenAddress: Address!, $tokenId: TokenId!, $max: Price) {
    asset(tokenAddress: $tokenAddress, tokenId: $tokenId) {
      name offers(maxPrice: $max, orderBy: PRICE, direction: ASC) { remaining result { price taker } }
    }
  }`;

const ORDERS = /* GraphQL */ `
  query ($ownerId: Address, $min: Price, $max: Price) {
    orders(ownerId: $ownerId, minPrice: $min, maxPrice: $max, orderBy: PRICE, direction: ASC) {
      remaining result { price asset { name } }
    }
  }`;
