import { clock } from '../src/common/clock';
import { advanceSalesBounds, recountSalesBounds } from '../src/modules/statistics/sales-bounds';
import { saveOrderAt } from './factories/market-history';
import { saveAsset, saveChain, saveCollection } from './factories/marketplace';
import { freshDatabase } from './setup/global-setup';
import { Random } from './setup/request-generator';
import { startServer, TestServer } from './setup/server';
import { HOUR, later, SECOND } from './setup/time';

/**
 * Statistics sorted by a sliding period's volume or sales (issue #38), highest first: the collections' upper
 * bounds of them (`collection_sales_bounds`, raised by the sales, moved by the sweeper once an hour) are
 * walked and only candidates are summed; lowest first (periods of 6 hours or more), their lower bounds
 * (`collection_sales_lows`, moved with them, changed by sales dated into their hours). The answers are those of summing every collection at the moment of
 * the request, whether the bounds are tight, stale (sales that left the period since the bounds last moved:
 * the test clock moves on) or do not hold (a clock behind the bounds' hour). Random markets (seeded: the seed
 * is in every failure) on a chain of their own, read through both doors, by cursor and by page number.
 */
const SEED = Number(process.env.SALES_SEED ?? Date.now() % 1_000_000);
const DAY = 24 * HOUR;
const PERIOD_MS = { '1h': HOUR, '6h': 6 * HOUR, '24h': DAY, '7d': 7 * DAY, '30d': 30 * DAY } as const;
type Period = keyof typeof PERIOD_MS;
const PERIODS = Object.keys(PERIOD_MS) as Period[];
/** Prices in hundredths: few, so that figures tie and the id decides. */
const PRICES = [50, 100, 125, 200, 300, 500];

interface Sale {
  collectionId: string;
  at: Date;
  cents: number;
}

interface Market {
  chain: string;
  ids: string[];
  assets: Map<string, string>;
  sales: Sale[];
}

/** `count` collections on `chain`, about two thirds of them with 1-6 sales at random moments of [from, to). */
async function buildMarket(server: TestServer, chain: string, count: number, seed: number, from: Date, to: Date): Promise<Market> {
  const random = new Random(seed);
  await saveChain(server, chain, `Sales bounds chain ${chain}`);
  const owner = await server.key();
  const market: Market = { chain, ids: [], assets: new Map(), sales: [] };
  for (let c = 0; c < count; c += 1) {
    const collection = await saveCollection(server, owner.key, { chainId: chain });
    const asset = await saveAsset(server, owner.key, collection, owner.address);
    market.ids.push(collection.id);
    market.assets.set(collection.id, asset.id);
    if (random.chance(0.33)) continue;
    for (let s = random.int(1, 6); s > 0; s -= 1) {
      const at = new Date(from.getTime() + random.int(0, (to.getTime() - from.getTime()) / SECOND - 1) * SECOND);
      await sell(server, market, collection.id, random.pick(PRICES), at);
    }
  }
  return market;
}

async function sell(server: TestServer, market: Market, collectionId: string, cents: number, at: Date): Promise<void> {
  await saveOrderAt(server.ds, market.assets.get(collectionId)!, (cents / 100).toFixed(2), at);
  market.sales.push({ collectionId, at, cents });
}

type Order = 'volume' | 'total_transactions';
type Direction = 'asc' | 'desc';
const DIRECTIONS: Direction[] = ['desc', 'asc'];

/** Every collection of the market as the list must show it at `now`: highest figure first, then the highest id (lowest and lowest, asc). */
function expected(market: Market, period: Period, now: Date, order: Order, direction: Direction = 'desc') {
  const start = now.getTime() - PERIOD_MS[period];
  const rows = market.ids.map((id) => {
    const inPeriod = market.sales.filter((s) => s.collectionId === id && s.at.getTime() >= start && s.at.getTime() < now.getTime());
    return { id, cents: inPeriod.reduce((sum, s) => sum + s.cents, 0), transactions: inPeriod.length };
  });
  const key = (r: (typeof rows)[number]) => (order === 'volume' ? r.cents : r.transactions);
  rows.sort((a, b) => key(b) - key(a) || (a.id < b.id ? 1 : -1));
  if (direction === 'asc') rows.reverse();
  return rows.map((r) => ({ id: r.id, volume: r.cents / 100, transactions: r.transactions }));
}

/** The list through REST, `limit` a page, by cursor to its end; with `remaining` of each page. */
async function restList(server: TestServer, chain: string, period: Period, order: Order | undefined, limit: number, direction: Direction) {
  const rows: Array<{ id: string; volume: number; transactions: number }> = [];
  const remaining: number[] = [];
  let page: string | null = null;
  do {
    const params: URLSearchParams = new URLSearchParams({ chain_id: chain, period, limit: String(limit), ...(order ? { order_by: order } : {}), ...(direction === 'asc' ? { direction } : {}), ...(page ? { page } : {}) });
    const res = await server.rest('GET', `/v1/statistics?${params}`);
    if (res.status !== 200) throw new Error(`GET /v1/statistics?${params}: ${res.status} ${JSON.stringify(res.body)}`);
    rows.push(...res.body.result.map((r: any) => ({ id: r.collection.id, volume: r.volume, transactions: r.total_transactions })));
    remaining.push(res.body.remaining);
    page = res.body.cursor;
  } while (page);
  return { rows, remaining };
}

const STATISTICS = /* GraphQL */ `
  query ($chainId: String, $period: StatisticsPeriod!, $orderBy: StatisticsOrderBy!, $direction: SortDirection, $limit: Int!, $page: String) {
    statistics(chainId: $chainId, period: $period, orderBy: $orderBy, direction: $direction, limit: $limit, page: $page) {
      totalCount
      result { collectionId volume totalTransactions }
    }
  }`;

const GRAPHQL_PERIOD: Record<Period, string> = { '1h': 'H1', '6h': 'H6', '24h': 'H24', '7d': 'D7', '30d': 'D30' };

/** A page of the list through GraphQL by page number. */
async function graphqlPage(server: TestServer, chain: string, period: Period, order: Order, limit: number, page: number, direction: Direction) {
  const res = await server.gql(STATISTICS, { chainId: chain, period: GRAPHQL_PERIOD[period], orderBy: order.toUpperCase(), direction: direction.toUpperCase(), limit, page: String(page) });
  if (res.body.errors) throw new Error(JSON.stringify(res.body.errors));
  const { totalCount, result } = res.body.data.statistics;
  return { totalCount, rows: result.map((r: any) => ({ id: r.collectionId, volume: Number(r.volume), transactions: r.totalTransactions })) };
}

/**
 * Whether each period's bounds hold at `now` (its `since` at or before the period's start): the page walks
 * them, else it reads without them.
 */
async function boundsHeld(server: TestServer, now: Date): Promise<Record<Period, boolean>> {
  const rows: Array<{ period: Period; since: Date }> = await server.ds.query('SELECT period, since FROM collection_sales_bound_windows');
  return Object.fromEntries(rows.map((r) => [r.period, new Date(r.since).getTime() <= now.getTime() - PERIOD_MS[r.period]])) as Record<Period, boolean>;
}

const ALL_HELD = Object.fromEntries(PERIODS.map((period) => [period, true]));
const NONE_HELD = Object.fromEntries(PERIODS.map((period) => [period, false]));

/**
 * Every period and order at `now` through both doors equal the definition. `held`: whether the bounds must
 * hold (walked) or not (read without them); a moment after the real clock always finds them held.
 */
async function expectExact(server: TestServer, market: Market, now: Date, seed: number, held: boolean | undefined = now.getTime() >= Date.now() || undefined): Promise<void> {
  if (held !== undefined) expect({ now, held: await boundsHeld(server, now) }).toEqual({ now, held: held ? ALL_HELD : NONE_HELD });
  clock.set(now);
  for (const period of PERIODS) {
    for (const [order, direction] of [...DIRECTIONS.flatMap((d) => (['volume', 'total_transactions'] as const).map((o) => [o, d] as const)), [undefined, 'desc'] as const]) {
      const want = expected(market, period, now, order ?? 'volume', direction);
      const context = { seed, now: now.toISOString(), period, order, direction };
      const rest = await restList(server, market.chain, period, order, 4, direction);
      expect({ ...context, rows: rest.rows }).toEqual({ ...context, rows: want });
      const pages = Math.max(1, Math.ceil(want.length / 4));
      expect({ ...context, remaining: rest.remaining }).toEqual({ ...context, remaining: Array.from({ length: pages }, (_, i) => Math.max(0, want.length - 4 * (i + 1))) });
      if (!order) continue;
      const whole = await graphqlPage(server, market.chain, period, order, 100, 1, direction);
      expect({ ...context, graphql: whole }).toEqual({ ...context, graphql: { totalCount: want.length, rows: want } });
      const third = await graphqlPage(server, market.chain, period, order, 3, 3, direction);
      expect({ ...context, page: third }).toEqual({ ...context, page: { totalCount: want.length, rows: want.slice(6, 9) } });
    }
  }
}

describe('on the run database', () => {
  let server: TestServer;
  let market: Market;
  /** The present, whole seconds: the market's sales lie around it, and the bounds' hour is the real clock's. */
  const base = new Date(Math.floor(Date.now() / SECOND) * SECOND);
  beforeAll(async () => {
    server = await startServer();
    market = await buildMarket(server, '990071', 24, SEED, later(base, -35 * DAY), later(base, 2 * DAY));
  }, 120_000);
  afterAll(async () => {
    clock.reset();
    await server.close();
  });

  test('when sales leave the period after the bounds counted them (the clock moves on), then each list by volume or sales is still exact, on both doors', async () => {
    for (const after of [SECOND, 30 * 60 * SECOND, 3 * HOUR, 26 * HOUR, 4 * DAY, 8 * DAY, 31 * DAY]) await expectExact(server, market, later(base, after), SEED);
    // On the hour: no edge hour to read from the orders.
    await expectExact(server, market, new Date(Math.floor(base.getTime() / HOUR) * HOUR + 2 * HOUR), SEED);
  }, 600_000);

  test('when a collection sells while the bounds are stale, then it takes its place in the lists at once', async () => {
    const now = later(base, 3 * DAY);
    await sell(server, market, market.ids[market.ids.length - 1], 500, later(now, -10 * SECOND));
    await sell(server, market, market.ids[market.ids.length - 1], 500, later(now, -2 * HOUR));
    await expectExact(server, market, now, SEED);
  }, 120_000);

  test('when the clock is behind the bounds\' hour, then the lists are read without the bounds, as exact', async () => {
    await expectExact(server, market, later(base, -3 * DAY), SEED, false);
  }, 120_000);
});

/**
 * The sweeper's moves of the bounds' hour, on a database of its own (they move it for every reader of the
 * database): PostgreSQL only.
 */
const onPostgres = process.env.DATABASE_URL ? describe : describe.skip;

onPostgres('on a database of its own', () => {
  let db: { url: string; drop: () => Promise<void> };
  let server: TestServer;
  let market: Market;
  const base = new Date(Math.floor(Date.now() / HOUR) * HOUR + 17 * 60 * SECOND + 123);
  beforeAll(async () => {
    db = await freshDatabase('gw_sales_bounds');
    server = await startServer({}, { url: db.url });
    market = await buildMarket(server, '990072', 30, SEED + 1, later(base, -2 * DAY), later(base, 40 * DAY));
  }, 120_000);
  afterAll(async () => {
    clock.reset();
    await server?.close();
    await db?.drop();
  });

  /** The bounds that differ from the sales of their collection from their period's hour on. */
  const astray = (exact: boolean) =>
    server.ds.query(
      `SELECT b.collection_id, b.period, b.volume_high::text AS volume_high, x.volume::text AS volume, b.sales_high, x.sales
       FROM collection_sales_bounds b JOIN collection_sales_bound_windows w ON w.period = b.period
       CROSS JOIN LATERAL (SELECT COALESCE(sum(r.volume), 0) AS volume, COALESCE(sum(r.sales), 0)::int AS sales FROM collection_sales_hourly r
         WHERE r.collection_id = b.collection_id AND r.hour >= w.since) x
       WHERE ${exact ? '(b.volume_high, b.sales_high) IS DISTINCT FROM (x.volume, x.sales)' : '(b.volume_high < x.volume OR b.sales_high < x.sales)'}`,
    );

  /**
   * The lows that differ from the sales of their collection in their hours, [since + 2 h, since + length - 1 h):
   * exact always (a move and a rollup's change never overlap).
   */
  const astrayLows = () =>
    server.ds.query(
      `SELECT l.collection_id, l.period, l.volume_low::text AS volume_low, x.volume::text AS volume, l.sales_low, x.sales
       FROM collection_sales_lows l JOIN collection_sales_bound_windows w ON w.period = l.period
       CROSS JOIN LATERAL (SELECT COALESCE(sum(r.volume), 0) AS volume, COALESCE(sum(r.sales), 0)::int AS sales FROM collection_sales_hourly r
         WHERE r.collection_id = l.collection_id AND r.hour >= w.since + interval '2 hours' AND r.hour < w.since + make_interval(secs => w.seconds) - interval '1 hour') x
       WHERE (l.volume_low, l.sales_low) IS DISTINCT FROM (x.volume, x.sales)`,
    );

  /**
   * The kept counts of trending collections (migration 1765900000000) that differ from a count of the kept sums
   * that trend, by period and chain; and how many trend in all (so that a test shows it counted some).
   */
  const astrayTrendingCounts = async () => {
    const [row] = await server.ds.query(
      `SELECT (SELECT count(*)::int FROM collection_sales_lows WHERE trend_volume > 0 AND trend_volume >= 1.5 * previous_volume) AS trending,
         (SELECT COALESCE(jsonb_agg(d), '[]') FROM (
           SELECT period, chain_id, k.n::int AS kept, c.n::int AS counted
           FROM (SELECT period, chain_id, sum(n) AS n FROM collection_trending_counts GROUP BY 1, 2) k
           FULL JOIN (SELECT period, chain_id, count(*) AS n FROM collection_sales_lows WHERE trend_volume > 0 AND trend_volume >= 1.5 * previous_volume GROUP BY 1, 2) c
             USING (period, chain_id)
           WHERE COALESCE(k.n, 0) <> COALESCE(c.n, 0)) d) AS astray`,
    );
    return row as { trending: number; astray: unknown[] };
  };

  /** Whether the lows of every period of 6 hours or more hold at `now` (their hours inside the period). */
  const lowsHeld = async (now: Date) => {
    const rows: Array<{ period: Period; since: Date; seconds: number }> = await server.ds.query('SELECT period, since, seconds FROM collection_sales_bound_windows WHERE seconds >= 21600');
    return rows.every((r) => new Date(r.since).getTime() + 2 * HOUR >= now.getTime() - r.seconds * 1000 && new Date(r.since).getTime() + r.seconds * 1000 - HOUR <= now.getTime());
  };

  test('when the bounds\' hour moves on as the sweeper moves it, then each bound is its collection\'s sales from that hour on, and the lists stay exact', async () => {
    let trendingSeen = 0;
    expect(await astray(true)).toEqual([]);
    for (const moved of [5 * HOUR, 3 * DAY, 9 * DAY, 33 * DAY]) {
      expect(await advanceSalesBounds(server.ds, later(base, moved))).toBe(true);
      expect({ moved, astray: await astray(true), astrayLows: await astrayLows() }).toEqual({ moved, astray: [], astrayLows: [] });
      trendingSeen = Math.max(trendingSeen, (await astrayTrendingCounts()).trending);
      expect({ moved, astrayTrendingCounts: (await astrayTrendingCounts()).astray }).toEqual({ moved, astrayTrendingCounts: [] });
      // Walked lowest first too, an hour after the move.
      expect(await lowsHeld(later(base, moved + 40 * 60 * SECOND))).toBe(true);
      for (const after of [moved, moved + 40 * 60 * SECOND, moved + 30 * HOUR]) await expectExact(server, market, later(base, after), SEED + 1, true);
    }
    // Some collections trended at some move: the kept counts counted something.
    expect(trendingSeen).toBeGreaterThan(0);
    // Never back: a move to an earlier hour leaves them; a clock behind them reads without them.
    expect(await advanceSalesBounds(server.ds, base)).toBe(true);
    expect(await astray(true)).toEqual([]);
    expect((await astrayTrendingCounts()).astray).toEqual([]);
    await expectExact(server, market, later(base, 2 * DAY), SEED + 1, false);
  }, 600_000);

  test('when sales land in the hours a move takes away while it runs, then no bound falls below its collection\'s sales, and a recount makes them exact', async () => {
    const moveTo = later(base, 40 * DAY);
    const old = later(moveTo, -31 * DAY);
    // Sales dated back into the hours that leave the lows, that stay in them, and that enter them.
    const sales = market.ids.slice(0, 12).flatMap((id, i) => [
      sell(server, market, id, 100 + i, later(old, i * 60 * SECOND)),
      sell(server, market, id, 200 + i, later(moveTo, i * 60 * SECOND)),
      sell(server, market, id, 300 + i, later(moveTo, -3 * DAY + i * 60 * SECOND)),
      sell(server, market, id, 50 + i, later(moveTo, -2 * HOUR - i * 60 * SECOND)),
      sell(server, market, id, 75 + i, later(moveTo, -7 * DAY + 2 * HOUR + i * 60 * SECOND)),
    ]);
    const [moved] = await Promise.all([advanceSalesBounds(server.ds, moveTo), ...sales]);
    expect(typeof moved).toBe('boolean');
    expect(await astrayLows()).toEqual([]);
    await advanceSalesBounds(server.ds, moveTo);
    expect(await astray(false)).toEqual([]);
    expect(await astrayLows()).toEqual([]);
    await expectExact(server, market, later(moveTo, HOUR), SEED + 1);
    expect((await astrayTrendingCounts()).astray).toEqual([]);
    await recountSalesBounds(server.ds, moveTo);
    expect(await astray(true)).toEqual([]);
    expect(await astrayLows()).toEqual([]);
    expect((await astrayTrendingCounts()).astray).toEqual([]);
    await expectExact(server, market, later(moveTo, HOUR), SEED + 1);
  }, 600_000);
});
