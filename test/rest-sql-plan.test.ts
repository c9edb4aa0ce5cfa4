import { clock } from '../src/common/clock';
import { nodeId } from '../src/common/graphql/node';
import { randomAddress, startServer, TestServer } from './setup/server';
import { CollectionRow, saveAsset, saveCollection } from './factories/marketplace';
import { Party, saveListing, saveOffer } from './factories/market';

/**
 * SQL plans on the REST door (src/app/graphql/sql-plan/, src/app/rest/v1/router.ts): a documented
 * /v1 read that PostgreSQL can answer whole is one statement that builds the JSON, from the first request
 * on. Two servers share the database, one with plans and one without (`sqlPlans: false`): for the same
 * request at the same moment (the clock is held still: a dutch auction's price moves with it) their
 * answers must be the same JSON (see jsonTokens), the planned one in one statement, the other in more.
 * Every read keeps to this file's own owner, since other files write to the same database meanwhile.
 */
let server: TestServer;
let off: TestServer;
let owner: Party;
let taker: Party;
let royal: CollectionRow;
let odd: CollectionRow;
let empty: CollectionRow;
let category: { category_id: string; category_name: string };
/** Assets of `odd` that no listing ever touches before the concurrency test lists and cancels them. */
const spare: { id: string; tokenId: string; tokenAddress: string }[] = [];

const HOUR = 3600 * 1000;
/** When the market was made (whole seconds), and the moment the comparisons read it: 441.123 s later. */
const MADE = new Date(Math.floor(Date.now() / 1000) * 1000);
const AT = new Date(MADE.getTime() + 441_123);
const DUTCH_SECONDS = 86400;

const ODD_NAME = 'Quote " backslash \\ newline \n tab \t ctrl \u0001 émoji 🐙 </script> line sep \u2028 end';
const ROYALTIES = [
  { address: randomAddress(), basisPoints: 250 },
  { address: randomAddress(), basisPoints: 100 },
];
const MAKERS = [randomAddress(), randomAddress()];
const FIXED_PRICE = '1.123456789012345678';
const DUTCH_START = '12345678901234567890.123456789012345678';
const DUTCH_ACCEPT = '0.000000000000000001';
const OFFER_PRICE = '3.000000000000000007';
const MAX_PRICE = '99999999999999999999.999999999999999999';
const ASSET_COUNTS = () => new Map([[royal.id, 7], [odd.id, 5], [empty.id, 0]]);

interface Fee { address: string; basis_points: number; type: string }
interface Chain { id: string; name: string; symbol: string }
interface Listing {
  id: string;
  status: string;
  order_type: string;
  fees: Fee[];
  current_price: number;
  current_price_decimal: string;
  start_price_decimal: string;
  accept_price_decimal: string | null;
  chain: Chain;
  closing_date: string | null;
}
interface Asset {
  id: string;
  token_id: string;
  name: string;
  owner: string;
  status: string;
  fees: Fee[];
  chain: Chain;
  collection: { name: string; contract_address: string };
  listing: Listing | null;
}
interface Page<T> { cursor: string | null; remaining: number; result: T[] }
interface Collection {
  id: string;
  name: string;
  fees: Fee[];
  chain: Chain;
  category: { category_id: string; category_name: string } | null;
  assets: Page<Asset> | null;
}

beforeAll(async () => {
  server = await startServer();
  off = await startServer({ sqlPlans: false });
  owner = await server.key();
  taker = await server.key();
  category = (await server.rest('GET', '/v1/categories?limit=1')).body.result[0];

  clock.set(MADE);
  royal = await saveCollection(server, owner.key, {
    name: 'A royal collection',
    totalSupply: 500,
    categoryId: category.category_id,
    fees: ROYALTIES,
    description: { text: 'Deep "json"', n: 12.5, big: 12345678901234567890, list: [1, 'two', null, { k: true }] },
  });
  odd = await saveCollection(server, owner.key, { name: ODD_NAME, totalSupply: 10, description: ODD_NAME });
  empty = await saveCollection(server, owner.key, { name: 'B empty collection' });

  const royalAsset = (tokenId: string) => saveAsset(server, owner.key, royal, owner.address, { tokenId, name: `Royal ${tokenId}` });
  const assets = [];
  for (let token = 1; token <= 7; token += 1) assets.push(await royalAsset(String(token)));
  await saveListing(server, owner.key, assets[0].id, { startPrice: FIXED_PRICE, makerFees: { [MAKERS[0]]: 150, [MAKERS[1]]: 25 } });
  await saveListing(server, owner.key, assets[1].id, {
    orderType: 'DUTCH_AUCTION',
    startPrice: DUTCH_START,
    acceptPrice: DUTCH_ACCEPT,
    expirationTime: { durationSeconds: DUTCH_SECONDS },
  });
  await saveListing(server, owner.key, assets[2].id, { orderType: 'ENGLISH_AUCTION', startPrice: 2 });
  await saveOffer(server, taker.key, assets[2].id, { price: OFFER_PRICE });
  await saveListing(server, owner.key, assets[3].id, { orderType: 'ENGLISH_AUCTION', startPrice: '7.5', acceptPrice: 100 });
  await saveListing(server, owner.key, assets[4].id, { startPrice: 9 });
  await cancel(assets[4]);
  // Listed two hours before the market was made, for an hour: expired by then.
  clock.set(new Date(MADE.getTime() - 2 * HOUR));
  await saveListing(server, owner.key, assets[5].id, { startPrice: 3, expirationTime: { durationSeconds: 3600 } });
  clock.set(MADE);
  await saveListing(server, owner.key, assets[6].id, { startPrice: 4 });
  const bought = await saveOffer(server, taker.key, assets[6].id, { price: 4 });
  if (bought.status !== 'ACCEPTED') throw new Error(`the offer at the listing's price was not taken: ${JSON.stringify(bought)}`);

  const oddAsset = await saveAsset(server, owner.key, odd, owner.address, {
    tokenId: '1',
    name: ODD_NAME,
    metadata: { attributes: [{ trait_type: 'x', value: 'y "z" \\' }], numbers: [1, 2.5, 1e21, 5e-7, -0.125, 1.5e300], empty: [{}, []] },
  });
  await saveListing(server, owner.key, oddAsset.id, { startPrice: MAX_PRICE });
  for (let token = 2; token <= 5; token += 1) spare.push(await saveAsset(server, owner.key, odd, owner.address, { tokenId: String(token) }));
}, 60_000);

beforeEach(() => clock.set(AT));
afterAll(async () => {
  clock.reset();
  await Promise.all([server?.close(), off?.close()]);
});

async function cancel(asset: { tokenAddress: string; tokenId: string }) {
  const res = await server.rest('DELETE', `/v1/assets/listing/${asset.tokenAddress}/${asset.tokenId}`, undefined, owner.key);
  if (res.status !== 200) throw new Error(`cancelListing failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res;
}

/**
 * A JSON text as its tokens, numbers by their value. The planned REST answer is written by PostgreSQL,
 * stored JSON values (metadata, description) included, in PostgreSQL's spelling of jsonb: spaces after
 * `:` and `,`, numbers without an exponent (1e21 as 1000000000000000000000). The same JSON as the
 * resolvers' answer, which these tokens compare: strings byte for byte, every number by its value. Each
 * exact price also comes as its `_decimal` string, which must match to the digit.
 */
function jsonTokens(text: string): string[] {
  const token = /\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|[{}[\],:]|true|false|null)/y;
  const tokens: string[] = [];
  let end = 0;
  for (let found = token.exec(text); found; found = token.exec(text)) {
    tokens.push(/^-?\d/.test(found[1]) ? String(Number(found[1])) : found[1]);
    end = token.lastIndex;
  }
  if (text.slice(end).trim() !== '') throw new Error(`not JSON from offset ${end}: ${text.slice(end, end + 40)}`);
  return tokens;
}

/** The planned and the unplanned answer are the same JSON (see jsonTokens). */
function expectSameJson(planned: string, resolved: string): void {
  expect(jsonTokens(planned)).toEqual(jsonTokens(resolved));
}

/** One GET, as a client reads it: status, the body's bytes, and the server's statement count. */
async function get(target: TestServer, path: string) {
  const res = await fetch(`${target.url}${path}`);
  return { status: res.status, text: await res.text(), sql: Number(res.headers.get('x-sql-statements')) };
}

/** The same GET on the planned server and on the one without plans. */
async function both(path: string) {
  const planned = await get(server, path);
  const resolved = await get(off, path);
  return { planned, resolved };
}

const collectionsPath = (query: string) => `/v1/collections?owner_address=${owner.address}&${query}`;

/** A dutch auction's price at `at`, as docs/api.md defines it: rounded down to 18 decimals. */
function dutchPrice(at: Date): string {
  const units = (text: string) => {
    const [whole, fraction = ''] = text.split('.');
    return BigInt(whole) * 10n ** 18n + BigInt(fraction.padEnd(18, '0'));
  };
  const total = BigInt(DUTCH_SECONDS) * 1_000_000n;
  const elapsed = BigInt(at.getTime() - MADE.getTime()) * 1000n;
  const start = units(DUTCH_START);
  const fall = ((start - units(DUTCH_ACCEPT)) * elapsed + total - 1n) / total;
  const price = (start - fall).toString().padStart(19, '0');
  return `${price.slice(0, -18)}.${price.slice(-18)}`.replace(/\.?0+$/, '');
}

function expectDocumentedParts(collection: Collection) {
  expect(collection.chain).toEqual({ id: '1', name: expect.any(String), symbol: expect.any(String) });
  for (const fee of collection.fees) expect(fee.type).toBe('royalty');
  for (const asset of collection.assets?.result ?? []) {
    expect(['listed', 'unlisted']).toContain(asset.status);
    expect(asset.status === 'listed').toBe(asset.listing !== null);
    expect(asset.fees).toEqual(collection.fees);
    expect(asset.chain).toEqual(collection.chain);
    expect(asset.collection.name).toBe(collection.name);
    if (asset.listing) {
      expect(typeof asset.listing.current_price).toBe('number');
      expect(typeof asset.listing.current_price_decimal).toBe('string');
      // The collection's royalties, then the listing's maker fees.
      expect(asset.listing.fees.slice(0, collection.fees.length)).toEqual(collection.fees);
      for (const fee of asset.listing.fees.slice(collection.fees.length)) expect(fee.type).toBe('maker');
    }
  }
}

describe('GET /v1/collections answered by one statement', () => {
  test.each([
    ['created_at', 'asc'],
    ['created_at', 'desc'],
    ['name', 'asc'],
    ['name', 'desc'],
    ['total_supply', 'asc'],
    ['total_supply', 'desc'],
  ])('when collections with their assets are read by %s %s, then the planned answer is the same JSON in one statement', async (orderBy, direction) => {
    const { planned, resolved } = await both(collectionsPath(`include_assets=true&limit=2&assets_limit=2&order_by=${orderBy}&direction=${direction}`));

    expect(planned.status).toBe(200);
    expectSameJson(planned.text, resolved.text);
    expect(planned.sql).toBe(1);
    expect(resolved.sql).toBeGreaterThan(1);
    const page: Page<Collection> = JSON.parse(planned.text);
    expect(page.cursor).not.toBeNull();
    expect(page.remaining).toBe(1);
    expect(page.result).toHaveLength(2);
    const counts = ASSET_COUNTS();
    for (const collection of page.result) {
      const total = counts.get(collection.id)!;
      expect(collection.assets!.result).toHaveLength(Math.min(2, total));
      expect(collection.assets!.remaining).toBe(Math.max(0, total - 2));
      expect(collection.assets!.cursor === null).toBe(total <= 2);
      expectDocumentedParts(collection);
    }
  });

  test('when every asset of every collection is read, then each kind of listing reads as documented, the same as without plans', async () => {
    const path = collectionsPath('include_assets=true&limit=3&assets_limit=20&order_by=name&direction=asc');
    const { planned, resolved } = await both(path);
    // The documented shape (GET /v1/openapi.json), checked by the test server's rest().
    expect((await server.rest('GET', path)).status).toBe(200);

    expectSameJson(planned.text, resolved.text);
    expect(planned.sql).toBe(1);
    const page: Page<Collection> = JSON.parse(planned.text);
    expect(page).toMatchObject({ cursor: null, remaining: 0 });
    expect(page.result.map((c) => c.name)).toEqual(['A royal collection', 'B empty collection', ODD_NAME]);
    const [first, none, strange] = page.result;
    page.result.forEach(expectDocumentedParts);

    expect(first.category).toEqual(category);
    expect(none.category).toBeNull();
    expect(first.fees).toEqual(ROYALTIES.map((r) => ({ address: r.address, basis_points: r.basisPoints, type: 'royalty' })));
    expect(none.assets).toEqual({ cursor: null, remaining: 0, result: [] });
    const byToken = new Map(first.assets!.result.map((a) => [a.token_id, a]));
    const listingOf = (token: string) => byToken.get(token)!.listing;

    expect(listingOf('1')).toMatchObject({ status: 'active', order_type: 'fixed_price', current_price_decimal: FIXED_PRICE, closing_date: null });
    expect(listingOf('1')!.fees).toEqual([
      ...first.fees,
      { address: MAKERS[0], basis_points: 150, type: 'maker' },
      { address: MAKERS[1], basis_points: 25, type: 'maker' },
    ]);
    expect(planned.text).toContain(`"current_price":${FIXED_PRICE},"current_price_decimal":"${FIXED_PRICE}"`);
    expect(listingOf('2')).toMatchObject({ order_type: 'dutch_auction', start_price_decimal: DUTCH_START, accept_price_decimal: DUTCH_ACCEPT, current_price_decimal: dutchPrice(AT) });
    expect(listingOf('3')).toMatchObject({ order_type: 'english_auction', current_price_decimal: OFFER_PRICE, accept_price_decimal: null });
    expect(listingOf('4')).toMatchObject({ order_type: 'english_auction', current_price_decimal: '7.5', accept_price_decimal: '100' });
    for (const token of ['5', '6', '7']) {
      expect(byToken.get(token)).toMatchObject({ status: 'unlisted', listing: null });
    }
    expect(byToken.get('7')!.owner).toBe(taker.address);

    expect(strange.name).toBe(ODD_NAME);
    const oddAsset = strange.assets!.result.find((a) => a.token_id === '1')!;
    expect(oddAsset.name).toBe(ODD_NAME);
    expect(oddAsset.collection.name).toBe(ODD_NAME);
    expect(oddAsset.listing!.current_price_decimal).toBe(MAX_PRICE);
    expect(planned.text).toContain(`"current_price":${MAX_PRICE},"current_price_decimal":"${MAX_PRICE}"`);
  });

  test.each(['', '&include_assets=false', '&include_assets=0'])(
    'when collections are read without their assets (%s), then assets is null, the same JSON in one statement',
    async (include) => {
      const { planned, resolved } = await both(collectionsPath(`limit=5${include}`));

      expectSameJson(planned.text, resolved.text);
      expect(planned.sql).toBe(1);
      const page: Page<Collection> = JSON.parse(planned.text);
      expect(page.result).toHaveLength(3);
      for (const collection of page.result) expect(collection.assets).toBeNull();
    },
  );

  test.each([
    ['a category', () => collectionsPath(`category_id=${encodeURIComponent(category.category_id)}&include_assets=true`), true, 1],
    ['a status', () => collectionsPath('status=unverified&include_assets=true&assets_limit=3'), true, 3],
    ['an owner without collections', () => `/v1/collections?owner_address=${randomAddress()}&include_assets=true`, true, 0],
    ['a chain', () => collectionsPath('chain_id=1&include_assets=true'), false, 3],
    ['a page number', () => collectionsPath('page=2&limit=1&include_assets=true'), false, 1],
  ])('when collections are read with %s, then the answer is the same JSON as without plans, in one statement only where a plan can answer', async (_filter, path, isPlanned, count) => {
    const { planned, resolved } = await both(path());

    expect(planned.status).toBe(200);
    expectSameJson(planned.text, resolved.text);
    if (isPlanned) expect(planned.sql).toBe(1);
    else expect(planned.sql).toBeGreaterThan(1);
    expect(JSON.parse(planned.text).result).toHaveLength(count);
  });

  test('when collections are read with an API key (through express, not the lean door), then the same JSON, the plan\'s one statement besides the key\'s', async () => {
    const path = collectionsPath('include_assets=true&limit=3&assets_limit=3&order_by=total_supply&direction=desc');
    const withKey = (target: TestServer) => fetch(`${target.url}${path}`, { headers: { 'access-token': taker.key } });
    const [planned, resolved, anonymous] = await Promise.all([withKey(server), withKey(off), get(server, path)]);
    const plannedText = await planned.text();

    expect(planned.status).toBe(200);
    expectSameJson(plannedText, await resolved.text());
    expect(plannedText).toBe(anonymous.text);
    expect(anonymous.sql).toBe(1);
    // The key's lookup is a statement of its own; the answer is the plan's one.
    expect(Number(planned.headers.get('x-sql-statements'))).toBe(2);
    expect(Number(resolved.headers.get('x-sql-statements'))).toBeGreaterThan(2);
  });
});

describe('cursors of planned pages', () => {
  test.each([
    ['created_at', 'asc'],
    ['name', 'desc'],
    ['total_supply', 'asc'],
    ['total_supply', 'desc'],
  ])('when collections by %s %s are followed cursor by cursor, then each is seen once and the planned first cursor leads where the resolvers\' does', async (orderBy, direction) => {
    const query = `limit=1&order_by=${orderBy}&direction=${direction}`;
    const { planned, resolved } = await both(collectionsPath(query));
    expectSameJson(planned.text, resolved.text);
    expect(planned.sql).toBe(1);
    const firstPage: Page<Collection> = JSON.parse(planned.text);
    const fromPlanned = await get(server, collectionsPath(`${query}&page=${encodeURIComponent(firstPage.cursor!)}`));
    const fromResolved = await get(off, collectionsPath(`${query}&page=${encodeURIComponent(JSON.parse(resolved.text).cursor)}`));
    expectSameJson(fromPlanned.text, fromResolved.text);

    const seen: string[] = firstPage.result.map((c) => c.id);
    const remaining = [firstPage.remaining];
    let cursor = firstPage.cursor;
    while (cursor && seen.length < 10) {
      const page: Page<Collection> = JSON.parse((await get(server, collectionsPath(`${query}&page=${encodeURIComponent(cursor)}`))).text);
      seen.push(...page.result.map((c) => c.id));
      remaining.push(page.remaining);
      cursor = page.cursor;
    }
    expect([...seen].sort()).toEqual([royal.id, odd.id, empty.id].sort());
    expect(remaining).toEqual([2, 1, 0]);
  });

  test('when a collection\'s planned assets page is continued on GET /v1/assets, then every asset comes once, as without plans', async () => {
    const first = await both(collectionsPath('include_assets=true&assets_limit=2&order_by=name&direction=asc&limit=1'));
    expectSameJson(first.planned.text, first.resolved.text);
    expect(first.planned.sql).toBe(1);
    const nestedOf = (text: string) => (JSON.parse(text) as Page<Collection>).result[0].assets!;
    expect(nestedOf(first.planned.text)).toMatchObject({ remaining: 5, cursor: expect.any(String) });

    /** The pages after `start`, by its cursor and theirs, as text with their statement counts. */
    const walk = async (target: TestServer, start: Page<Asset>) => {
      const pages: { text: string; sql: number }[] = [];
      let cursor = start.cursor;
      while (cursor && pages.length < 10) {
        const res = await get(target, `/v1/assets?collection_id=${royal.id}&limit=2&page=${encodeURIComponent(cursor)}`);
        expect(res.status).toBe(200);
        pages.push({ text: res.text, sql: res.sql });
        cursor = (JSON.parse(res.text) as Page<Asset>).cursor;
      }
      const all = [start, ...pages.map((p) => JSON.parse(p.text) as Page<Asset>)];
      return { pages, tokens: all.flatMap((p) => p.result.map((a) => a.token_id)), remaining: all.map((p) => p.remaining) };
    };
    const planned = await walk(server, nestedOf(first.planned.text));
    const resolved = await walk(off, nestedOf(first.resolved.text));
    expect([...planned.tokens].sort()).toEqual(['1', '2', '3', '4', '5', '6', '7']);
    expect(planned.remaining).toEqual([5, 3, 1, 0]);
    // Later pages are the resolvers' on both servers: the same bytes in as many statements.
    expect(planned.pages).toEqual(resolved.pages);

    // GET /v1/assets (its assets with their traits): its first page planned too, then page after page.
    const listed = await both(`/v1/assets?collection_id=${royal.id}&limit=2`);
    expect(listed.planned.sql).toBe(1);
    expect(listed.resolved.sql).toBeGreaterThan(1);
    expectSameJson(listed.planned.text, listed.resolved.text);
    const fromList = await walk(server, JSON.parse(listed.planned.text));
    expect(fromList.tokens).toEqual(planned.tokens);
    expect(fromList.remaining).toEqual([5, 3, 1, 0]);
  });
});

describe('the GraphQL twin of the documented shape', () => {
  test('when the same query is sent three times, then the third is answered in one statement with the bytes of the first', async () => {
    const post = async () => {
      const res = await fetch(`${server.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: COLLECTIONS_WITH_LISTINGS, variables: { owner: owner.address } }),
      });
      return { status: res.status, text: await res.text(), sql: Number(res.headers.get('x-sql-statements')) };
    };
    const first = await post();
    await post();
    const third = await post();
    const unplanned = await off.gql(COLLECTIONS_WITH_LISTINGS, { owner: owner.address });

    expect(first.status).toBe(200);
    expect(first.sql).toBeGreaterThan(1);
    expect(third.sql).toBe(1);
    expect(third.text).toBe(first.text);
    expect(JSON.parse(third.text)).toEqual(unplanned.body);
    const { collections } = JSON.parse(third.text).data;
    expect(collections).toMatchObject({ remaining: 1, cursor: expect.any(String) });
    expect(collections.result[0].category).toEqual({ id: nodeId('Category', category.category_id), categoryId: category.category_id, name: category.category_name });
    const assets = collections.result[0].assets;
    expect(assets).toMatchObject({ remaining: 3, cursor: expect.any(String) });
    expect(assets.result.map((a: { status: string }) => a.status)).toEqual(['LISTED', 'LISTED', 'LISTED', 'LISTED']);
    expect(assets.result.map((a: { listing: { currentPriceDecimal: string } }) => a.listing.currentPriceDecimal)).toEqual([
      FIXED_PRICE,
      dutchPrice(AT),
      OFFER_PRICE,
      '7.5',
    ]);
    expect(assets.result[0].listing.fees.map((f: { type: string }) => f.type)).toEqual(['royalty', 'royalty', 'maker', 'maker']);
  });
});

describe('answers that depend on the clock', () => {
  test.each([
    ['mid-way through the dutch auction', 12 * HOUR + 1_234, true],
    ['past its closing date', DUTCH_SECONDS * 1000 + 1, false],
  ])('when the clock stands %s, then the planned and unplanned answers agree', async (_moment, offset, listed) => {
    const at = new Date(MADE.getTime() + offset);
    clock.set(at);
    const { planned, resolved } = await both(collectionsPath('include_assets=true&limit=1&assets_limit=20&order_by=name&direction=asc'));

    expectSameJson(planned.text, resolved.text);
    expect(planned.sql).toBe(1);
    const dutch = (JSON.parse(planned.text) as Page<Collection>).result[0].assets!.result.find((a) => a.token_id === '2')!;
    if (listed) {
      expect(dutch.status).toBe('listed');
      expect(dutch.listing!.current_price_decimal).toBe(dutchPrice(at));
    } else {
      expect(dutch).toMatchObject({ status: 'unlisted', listing: null });
    }
  });
});

describe('planned reads beside writes', () => {
  test('when 20 planned reads run while listings are made and cancelled, then every answer is whole and each asset\'s status agrees with its listing', async () => {
    const path = collectionsPath('include_assets=true&limit=3&assets_limit=20');
    const writes = spare.map(async (asset) => {
      for (let round = 0; round < 2; round += 1) {
        await saveListing(server, owner.key, asset.id, { startPrice: `0.00000000000000000${round + 1}` });
        await cancel(asset);
      }
    });
    const reads = Array.from({ length: 20 }, () => get(server, path));
    await Promise.all(writes);

    for (const read of await Promise.all(reads)) {
      expect(read.status).toBe(200);
      expect(read.sql).toBe(1);
      const page: Page<Collection> = JSON.parse(read.text);
      expect(page.result).toHaveLength(3);
      for (const collection of page.result) {
        expect(collection.assets!.result).toHaveLength(ASSET_COUNTS().get(collection.id)!);
        for (const asset of collection.assets!.result) expect(asset.status === 'listed').toBe(asset.listing !== null);
      }
    }
    const { planned, resolved } = await both(path);
    expectSameJson(planned.text, resolved.text);
  });
});

const COLLECTIONS_WITH_LISTINGS = /* GraphQL */ `
  query ($owner: Address!) {
    collections(limit: 2, orderBy: NAME, direction: ASC, ownerAddress: $owner, includeAssets: true) {
      cursor
      remaining
      result {
        id name description totalSupply status createdAt
        fees { type basisPoints address }
        chain { id chainId name symbol }
        category { id categoryId name }
        assets(limit: 4, orderBy: TOKEN_ID, direction: ASC) {
          cursor
          remaining
          result {
            id tokenId name owner metadata status
            fees { type basisPoints address }
            chain { name }
            collection { name }
            listing {
              id assetId status orderType seller name tokenId tokenAddress listingTime closingDate createdAt updatedAt
              startPrice startPriceDecimal acceptPrice acceptPriceDecimal currentPrice currentPriceDecimal
              fees { type basisPoints address }
              chain { name }
            }
          }
        }
      }
    }
  }`;

describe('GET /v1/assets and /v1/assets/{token_address}/{token_id}, with traits', () => {
  let traits: CollectionRow;
  const backgrounds = ['Blue', 'Blue', 'Red', 'Blue', 'Gold'];

  beforeAll(async () => {
    traits = await saveCollection(server, owner.key, { name: 'C collection of traits' });
    for (let token = 1; token <= backgrounds.length; token += 1) {
      const attributes: unknown[] = [{ trait_type: 'Background', value: backgrounds[token - 1] }, { trait_type: 'Level', value: token % 2 }];
      if (token === 3) attributes.push({ trait_type: 'Shiny', value: true }, { trait_type: 'bad', value: { nested: 1 } }, 'not an object');
      await saveAsset(server, owner.key, traits, owner.address, { tokenId: String(token), metadata: { attributes } });
    }
  });

  test.each(['1', '3', '5'])('when asset %s is read by its token, then the planned answer is the same JSON in one statement, rarities included', async (tokenId) => {
    const { planned, resolved } = await both(`/v1/assets/${traits.contractAddress}/${tokenId}`);
    expect(planned.status).toBe(200);
    expect(planned.sql).toBe(1);
    expect(resolved.sql).toBeGreaterThan(1);
    expectSameJson(planned.text, resolved.text);
    const asset = JSON.parse(planned.text) as { token_id: string; traits: { trait_type: string; value: string; count: number; rarity: number }[] };
    expect(asset.token_id).toBe(tokenId);
    const background = asset.traits.find((t) => t.trait_type === 'Background')!;
    const carriers = backgrounds.filter((b) => b === background.value).length;
    expect(background).toEqual({ trait_type: 'Background', value: backgrounds[Number(tokenId) - 1], count: carriers, rarity: carriers / backgrounds.length });
    expect(asset.traits.map((t) => t.trait_type)).toEqual(tokenId === '3' ? ['Background', 'Level', 'Shiny'] : ['Background', 'Level']);
  });

  test('when the assets of the collection are listed by token id, then the first page is planned and the same JSON', async () => {
    const { planned, resolved } = await both(`/v1/assets?collection_id=${traits.id}&order_by=token_id&direction=asc&limit=2`);
    expect(planned.sql).toBe(1);
    expect(resolved.sql).toBeGreaterThan(1);
    expectSameJson(planned.text, resolved.text);
    expect(JSON.parse(planned.text)).toMatchObject({ remaining: 3, cursor: expect.any(String), result: [{ token_id: '1' }, { token_id: '2' }] });
  });

  test.each([
    ['an unknown token', () => `/v1/assets/${traits.contractAddress}/999`, 404],
    ['an unknown collection id', () => '/v1/assets?collection_id=00000000-0000-4000-8000-000000000000&limit=2', 404],
    ['a collection without assets', () => `/v1/assets?collection_id=${empty.id}&limit=2`, 200],
  ])('when %s is asked for, then the answer is the resolvers\' (the plan steps aside where it cannot tell)', async (_case, path, status) => {
    const { planned, resolved } = await both(path());
    expect(planned.status).toBe(status);
    expect(resolved.status).toBe(status);
    // Errors carry each request's own id.
    const withoutIds = (text: string) => text.replace(/"request_id":"[^"]+"/, '');
    expectSameJson(withoutIds(planned.text), withoutIds(resolved.text));
  });
});
