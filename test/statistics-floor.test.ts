import { clock } from '../src/common/clock';
import { Party } from './factories/market';
import { CollectionRow, saveAsset, saveCollection } from './factories/marketplace';
import { HttpResult, startServer, TestServer } from './setup/server';
import { HOUR, later, SECOND } from './setup/time';

/**
 * Statistics sorted by floor price (issue #38): the collections' floor bounds are kept by the writes
 * (migration 1765670000000-collection-floor-bounds) and a page prices its candidates only; the answers
 * are those of pricing every collection at the moment of the request. Random markets (seeded: the seed is
 * in every failure) of fixed prices, dutch and english auctions with bids whose windows open and close,
 * listings in another currency, expiries, cancellations and sales, read at frozen moments. The lists are
 * of a chain of their own, so other files' collections on the shared database do not move them; the list
 * of every chain is checked on the order of this file's collections in it.
 */
const CHAIN = '990067';
const TOKEN = `0x${'f1'.repeat(20)}`;
const SEED = Number(process.env.FLOOR_SEED ?? Date.now() % 1_000_000);

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
  await server.ds.query(`INSERT INTO chains (id, name, symbol) VALUES ($1, 'Floor test chain', 'ETH') ON CONFLICT DO NOTHING`, [CHAIN]);
  await server.ds.query(
    `INSERT INTO currencies (chain_id, address, symbol, decimals) VALUES ($1, '0x${'0'.repeat(40)}', 'ETH', 18), ($1, $2, 'FLR', 6) ON CONFLICT DO NOTHING`,
    [CHAIN, TOKEN],
  );
});
afterAll(async () => {
  clock.reset();
  await server.close();
});

/** mulberry32: a small seeded generator, so a failing market can be built again (FLOOR_SEED). */
function generator(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)];
  return { next, pick };
}

const PRICES = ['0.5', '1', '1.5', '2', '2.25', '3', '5'];
const DURATIONS = [HOUR, 3 * HOUR, 10 * HOUR, 48 * HOUR];

interface Built {
  collections: CollectionRow[];
  parties: Party[];
  made: Date;
}

/** A random market of `count` collections on the test chain, built at the frozen moment `made`. */
async function buildMarket(seed: number, count: number): Promise<Built> {
  const { next, pick } = generator(seed);
  const made = new Date(Math.floor(Date.now() / SECOND) * SECOND);
  clock.set(made);
  const parties = await Promise.all(Array.from({ length: 4 }, () => server.key()));
  const collections: CollectionRow[] = [];
  for (let c = 0; c < count; c += 1) {
    const owner = parties[c % 2];
    const collection = await saveCollection(server, owner.key, { chainId: CHAIN });
    collections.push(collection);
    for (let i = Math.floor(next() * 5); i > 0; i -= 1) {
      const asset = await saveAsset(server, owner.key, collection, owner.address);
      const kind = pick(['none', 'fixed', 'fixed', 'dutch', 'english', 'english', 'token'] as const);
      if (kind === 'none') continue;
      const duration = pick(DURATIONS);
      const terms: Record<string, unknown> = { asset_id: asset.id, expiration_time: { duration_seconds: duration / SECOND }, start_price: pick(PRICES) };
      if (kind === 'dutch') Object.assign(terms, { order_type: 'dutch_auction', start_price: String(6 + Math.floor(next() * 4)), accept_price: pick(PRICES) });
      if (kind === 'english') terms.order_type = 'english_auction';
      if (kind === 'token') terms.currency = 'FLR';
      const listed = await server.rest('POST', '/v1/assets/listing', terms, owner.key);
      expect({ seed, terms, status: listed.status }).toEqual({ seed, terms, status: 200 });
      const bidders = parties.filter((p) => p !== owner);
      if (kind === 'english') {
        for (let b = Math.floor(next() * 3); b > 0; b -= 1) {
          // Bids whose windows open later or close early: the auction's price moves with the clock.
          const start = later(made, pick([-60 * SECOND, 30 * 60 * SECOND, 2 * HOUR]));
          const end = later(start, pick([HOUR, 4 * HOUR, 24 * HOUR]));
          await server.rest(
            'POST',
            '/v1/offers',
            { asset_id: asset.id, price: String(Number(terms.start_price) + 0.25 * (1 + Math.floor(next() * 12))), start_time: start.toISOString(), end_time: end.toISOString() },
            pick(bidders).key,
          );
        }
      }
      const fate = next();
      if (fate < 0.12) {
        const cancelled = await server.rest('DELETE', `/v1/assets/listing/${collection.contractAddress}/${asset.tokenId}?chain_id=${CHAIN}`, undefined, owner.key);
        expect({ seed, cancelled: cancelled.status }).toEqual({ seed, cancelled: 200 });
      } else if (fate < 0.22 && kind === 'fixed') {
        const bought = await server.rest('POST', `/v1/listings/${listed.body.id}/buy`, {}, pick(bidders).key);
        expect({ seed, bought: bought.status }).toEqual({ seed, bought: 200 });
      }
    }
  }
  return { collections, parties, made };
}

/** The kept floor bounds of these collections that differ from a recount from their listings, with both. */
async function boundsAstray(ids: string[]) {
  return server.ds.query(
    `SELECT f.collection_id, f.floor_low::text AS kept_low, x.low::text AS low, f.floor_until AS kept_until, x.until
     FROM collection_figures f CROSS JOIN LATERAL (
       SELECT min(l.price_low) AS low, max(COALESCE(l.closing_date, 'infinity')) AS until FROM listings l
       WHERE l.collection_id = f.collection_id AND l.status = 'active' AND l.currency = $2 AND l.price_low IS NOT NULL) x
     WHERE f.collection_id = ANY($1::uuid[]) AND (f.floor_low IS DISTINCT FROM x.low OR f.floor_until IS DISTINCT FROM x.until)`,
    [ids, `0x${'0'.repeat(40)}`],
  );
}

interface Expected {
  id: string;
  floor: string | null;
  listing: string | null;
  trending: number;
}

const COLLECTION_FLOOR = /* GraphQL */ `
  query ($id: String!) { collection(id: $id) { statistics(period: D7) { floorPriceDecimal floorListingId isTrending } } }`;

/** Each collection's floor now, as a collection's own record computes it: the reference. */
async function reference(collections: CollectionRow[]): Promise<Expected[]> {
  return Promise.all(
    collections.map(async (c) => {
      const res = await server.gql(COLLECTION_FLOOR, { id: c.id });
      expect(res.body.errors).toBeUndefined();
      const s = res.body.data.collection.statistics;
      return { id: c.id, floor: s.floorPriceDecimal, listing: s.floorListingId, trending: s.isTrending };
    }),
  );
}

/** An exact decimal as an integer of 10^-18 units, to compare prices exactly. */
const units = (decimal: string) => {
  const [whole, fraction = ''] = decimal.split('.');
  return BigInt(whole + fraction.padEnd(18, '0'));
};

/** The reference in the list's order: floors (then ids) in the direction, collections without one last, by id. */
function ordered(records: Expected[], direction: 'asc' | 'desc'): Expected[] {
  const sign = direction === 'asc' ? 1 : -1;
  return [...records].sort((a, b) => {
    if (a.floor === null || b.floor === null) return a.floor === b.floor ? sign * (a.id < b.id ? -1 : 1) : a.floor === null ? 1 : -1;
    const diff = units(a.floor) - units(b.floor);
    return diff !== 0n ? sign * (diff < 0n ? -1 : 1) : sign * (a.id < b.id ? -1 : 1);
  });
}

interface Row {
  collection: { id: string };
  floor_price_decimal: string | null;
  floor_listing_id: string | null;
}

const shown = (rows: Row[]): Expected[] => rows.map((r) => ({ id: r.collection.id, floor: r.floor_price_decimal, listing: r.floor_listing_id, trending: 0 }));
const comparable = (records: Expected[]) => records.map(({ id, floor, listing }) => ({ id, floor, listing }));

/** Every record of GET /v1/statistics by floor price with `query`, page after page by cursor, and each page's `remaining`. */
async function allPages(query: string, limit: number): Promise<{ rows: Row[]; remaining: number[] }> {
  const rows: Row[] = [];
  const remaining: number[] = [];
  let cursor: string | null = null;
  do {
    const res: HttpResult = await server.rest('GET', `/v1/statistics?period=7d&order_by=floor_price&${query}&limit=${limit}${cursor ? `&page=${encodeURIComponent(cursor)}` : ''}`);
    expect({ query, status: res.status, body: res.status === 200 ? undefined : res.body }).toEqual({ query, status: 200, body: undefined });
    rows.push(...res.body.result);
    remaining.push(res.body.remaining);
    cursor = res.body.cursor;
  } while (cursor);
  return { rows, remaining };
}

describe('statistics by floor price over a random market', () => {
  let market: Built;
  beforeAll(async () => {
    market = await buildMarket(SEED, 14);
  }, 300_000);

  test('when the market is built, then every kept floor bound equals a recount from the listings', async () => {
    expect({ seed: SEED, astray: await boundsAstray(market.collections.map((c) => c.id)) }).toEqual({ seed: SEED, astray: [] });
  });

  // Moments when dutch prices have fallen, bids have opened and closed and listings have expired.
  const moments = [['just after listing', 60 * SECOND], ['after 50 minutes', 50 * 60 * SECOND], ['after 2 hours', 2 * HOUR], ['after 5 hours', 5 * HOUR], ['after 30 hours', 30 * HOUR], ['after 3 days', 72 * HOUR]] as const;

  test.each(moments)('when read %s, then every page by floor price is the list of every collection priced, both ways, by cursor and by page number', async (_, after) => {
    clock.set(later(market.made, after));
    const expected = await reference(market.collections);
    for (const direction of ['asc', 'desc'] as const) {
      const want = comparable(ordered(expected, direction));
      const context = { seed: SEED, after, direction };
      for (const limit of [1, 3, 20]) {
        const { rows, remaining } = await allPages(`chain_id=${CHAIN}&direction=${direction}`, limit);
        expect({ ...context, limit, list: comparable(shown(rows)) }).toEqual({ ...context, limit, list: want });
        expect({ ...context, limit, remaining }).toEqual({ ...context, limit, remaining: remaining.map((_, i) => Math.max(0, want.length - (i + 1) * limit)) });
      }
      for (const page of [2, 4]) {
        const res = await server.rest('GET', `/v1/statistics?period=7d&order_by=floor_price&chain_id=${CHAIN}&direction=${direction}&limit=3&page=${page}`);
        expect({ ...context, page, list: comparable(shown(res.body.result)) }).toEqual({ ...context, page, list: want.slice(3 * (page - 1), 3 * page) });
      }
    }
  });

  test('when every chain is listed, then this market\'s collections come in the order of their floors, both ways', async () => {
    clock.set(later(market.made, 2 * HOUR));
    const expected = await reference(market.collections);
    const ids = new Set(market.collections.map((c) => c.id));
    for (const direction of ['asc', 'desc'] as const) {
      const { rows } = await allPages(`direction=${direction}`, 100);
      const mine = comparable(shown(rows.filter((r) => ids.has(r.collection.id))));
      expect({ seed: SEED, direction, mine }).toEqual({ seed: SEED, direction, mine: comparable(ordered(expected, direction)) });
    }
  });

  test('when the list is filtered by is_trending, then each part keeps the order of the floors', async () => {
    // Sales in the week before the reading, so some collections trend.
    clock.set(later(market.made, 3 * HOUR));
    const { pick } = generator(SEED + 1);
    const listed: Array<{ id: string; buyer: Party }> = await server.ds.query(
      `SELECT l.id FROM listings l WHERE l.collection_id = ANY($1::uuid[]) AND l.status = 'active' AND l.order_type = 'fixed_price'
         AND l.currency = $2 AND (l.closing_date IS NULL OR l.closing_date > $3) ORDER BY l.id`,
      [market.collections.map((c) => c.id), `0x${'0'.repeat(40)}`, clock.now()],
    );
    for (const { id } of listed.slice(0, Math.ceil(listed.length / 2))) {
      const seller = (await server.ds.query('SELECT seller FROM listings WHERE id = $1', [id]))[0].seller;
      const buyer = pick(market.parties.filter((p) => p.address.toLowerCase() !== String(seller).toLowerCase()));
      const bought = await server.rest('POST', `/v1/listings/${id}/buy`, {}, buyer.key);
      expect({ seed: SEED, bought: bought.status }).toEqual({ seed: SEED, bought: 200 });
    }
    clock.set(later(market.made, 4 * HOUR));
    const expected = await reference(market.collections);
    for (const trending of [0, 1]) {
      for (const direction of ['asc', 'desc'] as const) {
        const want = comparable(ordered(expected.filter((r) => r.trending === trending), direction));
        const { rows } = await allPages(`chain_id=${CHAIN}&direction=${direction}&is_trending=${trending}`, 2);
        expect({ seed: SEED, trending, direction, list: comparable(shown(rows)) }).toEqual({ seed: SEED, trending, direction, list: want });
      }
    }
    expect({ seed: SEED, astray: await boundsAstray(market.collections.map((c) => c.id)) }).toEqual({ seed: SEED, astray: [] });
  });

  test('when GraphQL asks for statistics by FLOOR_PRICE, then its connection walks the same order as /v1', async () => {
    clock.set(later(market.made, 5 * HOUR));
    const rest = await allPages(`chain_id=${CHAIN}&direction=asc`, 100);
    const ids: string[] = [];
    let after: string | null = null;
    let totalCount = 0;
    do {
      const res: HttpResult = await server.gql(BY_FLOOR, { chainId: CHAIN, after });
      expect(res.body.errors).toBeUndefined();
      ids.push(...res.body.data.statistics.edges.map((e: { node: { collectionId: string } }) => e.node.collectionId));
      totalCount = res.body.data.statistics.totalCount;
      after = res.body.data.statistics.pageInfo.hasNextPage ? res.body.data.statistics.pageInfo.endCursor : null;
    } while (after);
    expect(ids).toEqual(rest.rows.map((r) => r.collection.id));
    expect(totalCount).toBe(market.collections.length);
  });
});

test('when parallel writers list, reprice, cancel and buy in the same collections, then every kept floor bound equals a recount', async () => {
  clock.reset();
  const [owner, buyer] = [await server.key(), await server.key()];
  const collections = [await saveCollection(server, owner.key, { chainId: CHAIN }), await saveCollection(server, owner.key, { chainId: CHAIN })];
  const assets = await Promise.all(Array.from({ length: 12 }, (_, i) => saveAsset(server, owner.key, collections[i % 2], owner.address)));
  const list = (i: number, price: string, terms: Record<string, unknown> = {}) =>
    server.rest('POST', '/v1/assets/listing', { asset_id: assets[i].id, start_price: price, expiration_time: { duration_seconds: 3600 * (1 + i) }, ...terms }, owner.key);
  const first = await Promise.all(assets.map((_, i) => list(i, String(1 + (i % 5)), i % 4 === 3 ? { order_type: 'dutch_auction', start_price: '9', accept_price: String(0.5 + i / 10) } : {})));
  expect(first.map((r) => r.status).every((s) => s === 200)).toBe(true);
  const ids = collections.map((c) => c.id);
  expect(await boundsAstray(ids)).toEqual([]);
  // Each of the cheapest listings leaves at once (cancelled, bought or repriced) while others come.
  const writes = assets.map((asset, i) => {
    const path = `/v1/assets/listing/${collections[i % 2].contractAddress}/${asset.tokenId}?chain_id=${CHAIN}`;
    if (i % 4 === 0) return server.rest('DELETE', path, undefined, owner.key);
    if (i % 4 === 1) return server.rest('POST', `/v1/listings/${first[i].body.id}/buy`, {}, buyer.key);
    if (i % 4 === 2) return server.rest('PUT', path, { start_price: String(0.25 + i / 100) }, owner.key);
    return server.rest('DELETE', path, undefined, owner.key).then(() => list(i, '0.75'));
  });
  const results = await Promise.all(writes);
  expect(results.map((r) => r.status)).toEqual(results.map(() => 200));
  expect(await boundsAstray(ids)).toEqual([]);
}, 120_000);

const BY_FLOOR = /* GraphQL */ `
  query ($chainId: String, $after: String) {
    statistics(orderBy: FLOOR_PRICE, period: D7, chainId: $chainId, direction: ASC, first: 4, after: $after) {
      edges { node { collectionId } }
      pageInfo { hasNextPage endCursor }
      totalCount
    }
  }`;
