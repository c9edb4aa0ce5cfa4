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

/**
 * The kept floor bounds of these collections that differ from a recount from their listings, with both: the
 * lower bound and the last closing, and the upper bound (the least highest price of a listing the sweeper
 * has not marked closed, if any, the latest closing of equal ones) with its listing's closing.
 */
async function boundsAstray(ids: string[]) {
  return server.ds.query(
    `SELECT f.collection_id, f.floor_low::text AS kept_low, x.low::text AS low, f.floor_until AS kept_until, x.until,
       f.floor_high::text AS kept_high, h.high::text AS high, f.floor_high_until AS kept_high_until, h.until AS high_until
     FROM collection_figures f CROSS JOIN LATERAL (
       SELECT min(l.price_low) AS low, max(COALESCE(l.closing_date, 'infinity')) AS until FROM listings l
       WHERE l.collection_id = f.collection_id AND l.status = 'active' AND l.currency = $2 AND l.price_low IS NOT NULL) x
     LEFT JOIN LATERAL (
       SELECT l.price_high AS high, COALESCE(l.closing_date, 'infinity') AS until FROM listings l
       WHERE l.collection_id = f.collection_id AND l.status = 'active' AND l.currency = $2 AND l.price_low IS NOT NULL
       ORDER BY l.expiry_swept, l.price_high, l.closing_date DESC NULLS FIRST LIMIT 1) h ON true
     WHERE f.collection_id = ANY($1::uuid[])
       AND (f.floor_low IS DISTINCT FROM x.low OR f.floor_until IS DISTINCT FROM x.until OR f.floor_high IS DISTINCT FROM h.high OR f.floor_high_until IS DISTINCT FROM h.until)`,
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

describe('statistics by floor price, dearest first, as the clock moves', () => {
  /** A chain of this describe's own: five collections, each floor of a kind. */
  const OWN_CHAIN = '9900711';
  let made: Date;
  let named: Record<'fixedClosing' | 'dutch' | 'english' | 'fixed' | 'unlisted', string>;
  beforeAll(async () => {
    await server.ds.query(`INSERT INTO chains (id, name, symbol) VALUES ($1, 'Dearest floor chain', 'ETH') ON CONFLICT DO NOTHING`, [OWN_CHAIN]);
    await server.ds.query(`INSERT INTO currencies (chain_id, address, symbol, decimals) VALUES ($1, '0x${'0'.repeat(40)}', 'ETH', 18) ON CONFLICT DO NOTHING`, [OWN_CHAIN]);
    made = new Date(Math.floor(Date.now() / SECOND) * SECOND);
    clock.set(made);
    const [owner, bidder] = [await server.key(), await server.key()];
    const collection = () => saveCollection(server, owner.key, { chainId: OWN_CHAIN });
    const list = async (c: CollectionRow, terms: Record<string, unknown>) => {
      const asset = await saveAsset(server, owner.key, c, owner.address);
      const res = await server.rest('POST', '/v1/assets/listing', { asset_id: asset.id, ...terms }, owner.key);
      expect({ terms, status: res.status, body: res.status === 200 ? undefined : res.body }).toEqual({ terms, status: 200, body: undefined });
      return asset;
    };
    const [fixedClosing, dutch, english, fixed, unlisted] = await Promise.all([collection(), collection(), collection(), collection(), collection()]);
    // A fixed price of 1 that closes in an hour, under one of 4 open two days: the floor rises from 1 to 4 by the clock.
    await list(fixedClosing, { start_price: '1', expiration_time: { duration_seconds: 3600 } });
    await list(fixedClosing, { start_price: '4', expiration_time: { duration_seconds: 48 * 3600 } });
    // A dutch auction from 9 to 1 over ten hours: 9 at first, 7.4 after two hours.
    await list(dutch, { order_type: 'dutch_auction', start_price: '9', accept_price: '1', expiration_time: { duration_seconds: 10 * 3600 } });
    // An english auction from 3 with a bid of 3.5: its price is the bid.
    const auctioned = await list(english, { order_type: 'english_auction', start_price: '3', expiration_time: { duration_seconds: 48 * 3600 } });
    const bid = await server.rest('POST', '/v1/offers', { asset_id: auctioned.id, price: '3.5', start_time: later(made, -60 * SECOND).toISOString(), end_time: later(made, 24 * HOUR).toISOString() }, bidder.key);
    expect(bid.status).toBe(200);
    await list(fixed, { start_price: '2', expiration_time: { duration_seconds: 48 * 3600 } });
    await saveAsset(server, owner.key, unlisted, owner.address);
    named = { fixedClosing: fixedClosing.id, dutch: dutch.id, english: english.id, fixed: fixed.id, unlisted: unlisted.id };
  }, 120_000);

  const nameOf = (id: string) => Object.entries(named).find(([, v]) => v === id)?.[0] ?? id;
  const page = async (query: string) => {
    const res = await server.rest('GET', `/v1/statistics?period=7d&order_by=floor_price&chain_id=${OWN_CHAIN}&limit=2${query}`);
    expect({ query, status: res.status }).toEqual({ query, status: 200 });
    return { rows: (res.body.result as Row[]).map((r) => [nameOf(r.collection.id), r.floor_price_decimal]), remaining: res.body.remaining, cursor: res.body.cursor as string | null };
  };
  /** Pages of two by cursor, dearest first (the default direction), and each page's remaining. */
  const walk = async () => {
    const first = await page('');
    const second = await page(`&page=${encodeURIComponent(first.cursor!)}`);
    const third = await page(`&page=${encodeURIComponent(second.cursor!)}`);
    return [first, second, third].map(({ rows, remaining }) => ({ rows, remaining }));
  };

  test('when read just after listing, then the dutch auction leads, then the english auction at its bid, the fixed prices and the unlisted collection last', async () => {
    clock.set(later(made, 60 * SECOND));
    expect(await walk()).toEqual([
      { rows: [['dutch', '8.986666666666666666'], ['english', '3.5']], remaining: 3 },
      { rows: [['fixed', '2'], ['fixedClosing', '1']], remaining: 1 },
      { rows: [['unlisted', null]], remaining: 0 },
    ]);
  });

  test('when the cheapest listing of a collection closes by the clock, then its floor rises and it moves up the list, before and after the sweeper marks it', async () => {
    clock.set(later(made, 2 * HOUR));
    const after = [
      { rows: [['dutch', '7.4'], ['fixedClosing', '4']], remaining: 3 },
      { rows: [['english', '3.5'], ['fixed', '2']], remaining: 1 },
      { rows: [['unlisted', null]], remaining: 0 },
    ];
    // Its upper bound (1, until the hour) has expired: the collection is priced for want of one.
    expect(await walk()).toEqual(after);
    const kept = async () =>
      (await server.ds.query(`SELECT floor_high::text AS high, floor_high_until AS until FROM collection_figures WHERE collection_id = $1`, [named.fixedClosing]))[0];
    expect(await kept()).toEqual({ high: '1.000000000000000000', until: later(made, HOUR) });
    // The sweeper's mark (expiry_swept, the statement sweepExpired writes for a closed listing): the writes choose
    // the open listing's bound (4, for two days). Marked here for this collection only: a sweep two hours ahead
    // writes for every row of the database the test files share, and settled another file's english auction early
    // (auctions.test.ts, whose bid ending before that sweep's clock then stayed active).
    await server.ds.query(`UPDATE listings SET expiry_swept = true WHERE collection_id = $1 AND status = 'active' AND closing_date <= $2`, [named.fixedClosing, later(made, 2 * HOUR)]);
    expect(await kept()).toEqual({ high: '4.000000000000000000', until: later(made, 48 * HOUR) });
    expect(await walk()).toEqual(after);
    expect(await boundsAstray(Object.values(named))).toEqual([]);
  });

  test('when GraphQL asks for statistics by FLOOR_PRICE dearest first, then its connection walks the same order, with totalCount', async () => {
    clock.set(later(made, 2 * HOUR));
    const names: string[] = [];
    let after: string | null = null;
    let totalCount = 0;
    do {
      const res: HttpResult = await server.gql(BY_FLOOR.replace('direction: ASC', 'direction: DESC').replace('first: 4', 'first: 2'), { chainId: OWN_CHAIN, after });
      expect(res.body.errors).toBeUndefined();
      names.push(...res.body.data.statistics.edges.map((e: { node: { collectionId: string } }) => nameOf(e.node.collectionId)));
      totalCount = res.body.data.statistics.totalCount;
      after = res.body.data.statistics.pageInfo.hasNextPage ? res.body.data.statistics.pageInfo.endCursor : null;
    } while (after);
    expect({ names, totalCount }).toEqual({ names: ['dutch', 'fixedClosing', 'english', 'fixed', 'unlisted'], totalCount: 5 });
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

  // English auctions of a third collection, bid on in parallel: their highest prices, and so its upper
  // bound, move with each bid (kept by the offers' and the listings' triggers).
  const auctions = await saveCollection(server, owner.key, { chainId: CHAIN });
  const lots = await Promise.all(Array.from({ length: 3 }, () => saveAsset(server, owner.key, auctions, owner.address)));
  const opened = await Promise.all(
    lots.map((lot, i) => server.rest('POST', '/v1/assets/listing', { asset_id: lot.id, order_type: 'english_auction', start_price: String(1 + i), expiration_time: { duration_seconds: 7200 } }, owner.key)),
  );
  expect(opened.map((r) => r.status)).toEqual([200, 200, 200]);
  const bidders = await Promise.all(Array.from({ length: 4 }, () => server.key()));
  const bids = await Promise.all(
    lots.flatMap((lot, i) => bidders.map((bidder, b) => server.rest('POST', '/v1/offers', { asset_id: lot.id, price: String(1 + i + 0.5 * (b + 1)), start_time: new Date(Date.now() - 60 * SECOND).toISOString(), end_time: new Date(Date.now() + HOUR).toISOString() }, bidder.key))),
  );
  // A bid that arrives after a higher one is below the auction's minimum: a 422.
  expect(bids.map((r) => r.status).filter((status) => status !== 200 && status !== 422)).toEqual([]);
  expect(await boundsAstray([...ids, auctions.id])).toEqual([]);
  // The upper bound is the least of the auctions' best bids (each has one: the first bid to arrive is taken).
  const best = lots.map((_, i) => Math.max(...bidders.map((_, b) => (bids[i * bidders.length + b].status === 200 ? 1 + i + 0.5 * (b + 1) : 0))));
  expect(best.every((price) => price > 0)).toBe(true);
  const [kept] = await server.ds.query(`SELECT floor_high::float8 AS high FROM collection_figures WHERE collection_id = $1`, [auctions.id]);
  expect(kept).toEqual({ high: Math.min(...best) });
}, 120_000);

const BY_FLOOR = /* GraphQL */ `
  query ($chainId: String, $after: String) {
    statistics(orderBy: FLOOR_PRICE, period: D7, chainId: $chainId, direction: ASC, first: 4, after: $after) {
      edges { node { collectionId } }
      pageInfo { hasNextPage endCursor }
      totalCount
    }
  }`;
