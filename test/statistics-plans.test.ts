import { ownDatabase } from './setup/own-database';
import { startServer, TestServer } from './setup/server';

/**
 * Statistics sorted by a figure read about a page of rows whatever the number of collections (issue #38):
 * holders and all-time volume and sales walk indexes of `collection_figures`, a sliding window's volume and
 * sales highest first walk the collections' upper bounds of them and lowest first their lower bounds, and sum
 * a page's candidates (by trend: computed for the collections that sold in its hours, bounded by its trades,
 * and merged with the others by id); the floors walk the collections' floor bounds (lower cheapest first, upper dearest first) and price a page's candidates. Each request's ranking statement is explained on a market of 6,000 collections (built
 * and analysed inside a transaction that is rolled back, so other files never see it): no plan node reads
 * more rows than the collections that sold plus a few pages.
 */
let server: TestServer;
let database: { url: string; drop: () => Promise<void> } | undefined;
beforeAll(async () => {
  // A database of its own: the planner's choice between two near-equal plans of the 6,000 collections must
  // not hang on the rows other files leave in the shared one (a CI run of the whole suite once saw the
  // chain's dearest-first walk priced whole); and the embedded run database serves one transaction at a
  // time, so the minute this file's market stays in its rolled-back transaction would stall every other file.
  database = await ownDatabase('gw_stat_plans');
  server = await startServer({}, { url: database.url });
}, 120_000);
afterAll(async () => {
  await server?.close();
  await database?.drop();
});

const COLLECTIONS = 6000;
/** Collections with sales in the last 30 days (a rollup every 10 days): what a sliding window may compute. */
const SELLING = 300;
/** The rollups of 30 days, and a 10th page (200 rows and the next): a fifth of the collections. */
const BOUND = SELLING * 3 + 250;
/**
 * Highest first, a sliding period's volume or sales walks the collections' upper bounds of it and sums the
 * first page's candidates only: twice its 21 rows, each from its own rollups (three at most here), where
 * summing every collection that sold reads all of theirs (300 to 900).
 */
const SUMMED_BOUND = 2 * 21 * 3 + 30;
/** The rankings that walk those bounds (highest first), or their lower bounds (lowest first). */
const SALES_WALK = /^(VOLUME|TOTAL_TRANSACTIONS) (H6|H24|D7|D30)( DESC| ASC)?( chain 137)?( page 10| counted sales.*)?$/;
/**
 * By floor, a collection is priced from its own listings (three here): the 10th page walks twice its 201
 * rows in the order of their bounds and prices them, and a few more whose bound reaches the page.
 */
const FLOOR_BOUND = 2 * 201 * 3 + 250;

const STATISTICS = /* GraphQL */ `
  query ($orderBy: StatisticsOrderBy!, $period: StatisticsPeriod!, $direction: SortDirection, $chainId: String, $isTrending: Int, $page: String) {
    statistics(orderBy: $orderBy, period: $period, direction: $direction, chainId: $chainId, isTrending: $isTrending, limit: 20, page: $page) {
      result { collectionId }
    }
  }`;

/** The same with `remaining`, which counts every matching collection in the statement (issue #38's counts). */
const STATISTICS_COUNTED = STATISTICS.replace('result { collectionId }', 'remaining result { collectionId }');

/** A cursor of the cheapest floors first, after a floor of 0.1 (about the 7th page here). */
const FLOOR_CURSOR = Buffer.from(JSON.stringify(['floor_price', 'asc', '0.1', '00000000-0000-0000-0000-000000000000'])).toString('base64url');
/** A cursor of the highest 7-day volumes first, after a volume of 12 (about the 5th page here). */
const VOLUME_CURSOR = Buffer.from(JSON.stringify(['volume', 'desc', '12', 'ffffffff-ffff-ffff-ffff-ffffffffffff'])).toString('base64url');
/** A cursor of the lowest 7-day volumes first, after a volume of 0 and the least id (the first page's start). */
const VOLUME_CURSOR_ASC = Buffer.from(JSON.stringify(['volume', 'asc', '0', '00000000-0000-0000-0000-000000000001'])).toString('base64url');
/** A cursor of the dearest floors first, after a floor of 9.5 (about the 5th page here). */
const FLOOR_CURSOR_DESC = Buffer.from(JSON.stringify(['floor_price', 'desc', '9.5', 'ffffffff-ffff-ffff-ffff-ffffffffffff'])).toString('base64url');

interface Captured {
  name: string;
  sql: string;
  parameters: unknown[];
}

/** The ranking statement of each request (the one that merges its sources, or reads the floor or sales bounds), as the server sent it. */
async function rankingStatements(requests: Array<{ name: string; variables: Record<string, unknown>; counted?: boolean }>): Promise<Captured[]> {
  const captured: Captured[] = [];
  let current = '';
  const logger = server.ds.logger as { logQuery: (sql: string, parameters?: unknown[]) => void };
  const logQuery = logger.logQuery;
  logger.logQuery = function (this: unknown, sql: string, parameters?: unknown[], ...rest: unknown[]) {
    if (sql.includes('(SELECT t.* FROM') || sql.includes('f.floor_low') || sql.includes('collection_sales_bounds') || sql.includes('collection_sales_lows')) captured.push({ name: current, sql, parameters: parameters ?? [] });
    return (logQuery as (...a: unknown[]) => void).call(this, sql, parameters, ...rest);
  };
  try {
    for (const { name, variables, counted } of requests) {
      current = name;
      const res = await server.gql(counted ? STATISTICS_COUNTED : STATISTICS, variables);
      expect({ name, errors: res.body.errors }).toEqual({ name, errors: undefined });
    }
  } finally {
    logger.logQuery = logQuery;
  }
  return captured;
}

/** The plan nodes of an EXPLAIN (FORMAT JSON) plan, depth first. */
function nodesOf(plan: Record<string, unknown>): Record<string, unknown>[] {
  const children = (plan.Plans as Record<string, unknown>[] | undefined) ?? [];
  return [plan, ...children.flatMap(nodesOf)];
}

const requests = [
  ...['DESC', 'ASC'].flatMap((direction) =>
    ['TOTAL_HOLDERS', 'VOLUME', 'TOTAL_TRANSACTIONS'].flatMap((orderBy) =>
      ['D7', 'D30', 'H24', 'ALL'].map((period) => ({ name: `${orderBy} ${period} ${direction}`, variables: { orderBy, period, direction } })),
    ),
  ),
  { name: 'TOTAL_HOLDERS D30 chain 137', variables: { orderBy: 'TOTAL_HOLDERS', period: 'D30', chainId: '137' } },
  { name: 'VOLUME D7 chain 137', variables: { orderBy: 'VOLUME', period: 'D7', chainId: '137' } },
  { name: 'VOLUME ALL chain 137 page 10', variables: { orderBy: 'VOLUME', period: 'ALL', chainId: '137', page: '10' } },
  { name: 'TOTAL_HOLDERS D7 page 10', variables: { orderBy: 'TOTAL_HOLDERS', period: 'D7', page: '10' } },
  { name: 'TOTAL_HOLDERS D7 trending', variables: { orderBy: 'TOTAL_HOLDERS', period: 'D7', isTrending: 1 } },
  { name: 'TOTAL_HOLDERS D7 not trending', variables: { orderBy: 'TOTAL_HOLDERS', period: 'D7', isTrending: 0 } },
  { name: 'VOLUME ALL trending', variables: { orderBy: 'VOLUME', period: 'ALL', isTrending: 1 } },
  { name: 'VOLUME D30 not trending', variables: { orderBy: 'VOLUME', period: 'D30', isTrending: 0 } },
  // Not trending (most collections): each sort walks as unfiltered and drops the trending ones as it goes.
  ...['DESC', 'ASC'].flatMap((direction) =>
    ['TOTAL_HOLDERS', 'VOLUME', 'TOTAL_TRANSACTIONS'].flatMap((orderBy) =>
      ['D7', 'H24', 'ALL'].map((period) => ({ name: `${orderBy} ${period} ${direction} not trending`, variables: { orderBy, period, direction, isTrending: 0 } })),
    ),
  ),
  { name: 'VOLUME D7 DESC not trending page 10', variables: { orderBy: 'VOLUME', period: 'D7', isTrending: 0, page: '10' } },
  { name: 'TOTAL_TRANSACTIONS D30 ASC not trending page 10', variables: { orderBy: 'TOTAL_TRANSACTIONS', period: 'D30', direction: 'ASC', isTrending: 0, page: '10' } },
  { name: 'TOTAL_HOLDERS D7 DESC not trending page 10', variables: { orderBy: 'TOTAL_HOLDERS', period: 'D7', isTrending: 0, page: '10' } },
  { name: 'TOTAL_HOLDERS D30 DESC not trending', variables: { orderBy: 'TOTAL_HOLDERS', period: 'D30', isTrending: 0 } },
  { name: 'TOTAL_HOLDERS D30 ASC not trending page 10', variables: { orderBy: 'TOTAL_HOLDERS', period: 'D30', direction: 'ASC', isTrending: 0, page: '10' } },
  { name: 'TOTAL_TRANSACTIONS ALL DESC not trending page 10', variables: { orderBy: 'TOTAL_TRANSACTIONS', period: 'ALL', isTrending: 0, page: '10' } },
  { name: 'VOLUME ALL DESC not trending page 10', variables: { orderBy: 'VOLUME', period: 'ALL', isTrending: 0, page: '10' } },
  { name: 'VOLUME D7 DESC not trending counted', variables: { orderBy: 'VOLUME', period: 'D7', isTrending: 0 }, counted: true },
  { name: 'VOLUME D7 DESC not trending counted after a cursor', variables: { orderBy: 'VOLUME', period: 'D7', isTrending: 0, page: VOLUME_CURSOR }, counted: true },
  { name: 'TOTAL_HOLDERS D7 DESC not trending counted', variables: { orderBy: 'TOTAL_HOLDERS', period: 'D7', isTrending: 0 }, counted: true },
  { name: 'VOLUME D7 DESC trending counted', variables: { orderBy: 'VOLUME', period: 'D7', isTrending: 1 }, counted: true },
  // Trending, by the trend window's volume: the kept trend sums' partial index walked (statistics.trend.ts).
  { name: 'VOLUME H24 DESC trending', variables: { orderBy: 'VOLUME', period: 'H24', isTrending: 1 } },
  { name: 'VOLUME D7 ASC trending page 10', variables: { orderBy: 'VOLUME', period: 'D7', direction: 'ASC', isTrending: 1, page: '10' } },
  { name: 'VOLUME D30 DESC trending counted after a cursor', variables: { orderBy: 'VOLUME', period: 'D30', isTrending: 1, page: VOLUME_CURSOR }, counted: true },
  // Highest first by a sliding period's volume or sales: the bounds walked.
  { name: 'VOLUME H24 DESC page 10', variables: { orderBy: 'VOLUME', period: 'H24', page: '10' } },
  { name: 'TOTAL_TRANSACTIONS D7 DESC chain 137 page 10', variables: { orderBy: 'TOTAL_TRANSACTIONS', period: 'D7', chainId: '137', page: '10' } },
  { name: 'VOLUME H6 DESC', variables: { orderBy: 'VOLUME', period: 'H6' } },
  { name: 'VOLUME D7 DESC counted sales', variables: { orderBy: 'VOLUME', period: 'D7' }, counted: true },
  { name: 'VOLUME D7 DESC counted sales after a cursor', variables: { orderBy: 'VOLUME', period: 'D7', page: VOLUME_CURSOR }, counted: true },
  // Lowest first: the lower bounds walked.
  { name: 'VOLUME H24 ASC page 10', variables: { orderBy: 'VOLUME', period: 'H24', direction: 'ASC', page: '10' } },
  { name: 'TOTAL_TRANSACTIONS D7 ASC chain 137 page 10', variables: { orderBy: 'TOTAL_TRANSACTIONS', period: 'D7', direction: 'ASC', chainId: '137', page: '10' } },
  { name: 'VOLUME H6 ASC', variables: { orderBy: 'VOLUME', period: 'H6', direction: 'ASC' } },
  { name: 'VOLUME D7 ASC counted sales', variables: { orderBy: 'VOLUME', period: 'D7', direction: 'ASC' }, counted: true },
  { name: 'VOLUME D7 ASC counted sales after a cursor', variables: { orderBy: 'VOLUME', period: 'D7', direction: 'ASC', page: VOLUME_CURSOR_ASC }, counted: true },
  // The floors, cheapest first (walking their lower bounds) and dearest first (their upper bounds).
  ...(['ASC', 'DESC'] as const).flatMap((direction) => {
    const floor = (name: string, variables: Record<string, unknown>, counted = false) => ({
      name: `FLOOR_PRICE D7 ${direction} ${name}`.trim(),
      variables: { orderBy: 'FLOOR_PRICE', period: 'D7', direction, ...variables },
      counted,
    });
    const cursor = direction === 'ASC' ? FLOOR_CURSOR : FLOOR_CURSOR_DESC;
    return [
      ...['D7', 'ALL'].map((period) => ({ name: `FLOOR_PRICE ${period} ${direction}`, variables: { orderBy: 'FLOOR_PRICE', period, direction }, counted: false })),
      floor('chain 137', { chainId: '137' }),
      floor('page 10', { page: '10' }),
      floor('chain 137 page 10', { chainId: '137', page: '10' }),
      floor('trending', { isTrending: 1 }),
      floor('not trending', { isTrending: 0 }),
      floor('not trending page 10', { isTrending: 0, page: '10' }),
      floor('after a cursor', { page: cursor }),
      // Counted: the count reads every collection's row of collection_figures, but prices (reads listings of)
      // only the collections up to the cursor whose bounds do not tell.
      floor('counted listings', {}, true),
      floor('counted listings after a cursor', { page: cursor }, true),
    ];
  }),
];

test('when statistics are sorted by holders, volume, sales or the floor (both ways) over 6,000 collections, then each ranking reads about a page of rows', async () => {
  const statements = await rankingStatements(requests);
  expect(statements.map((s) => s.name)).toEqual(requests.map((r) => r.name));
  const runner = server.ds.createQueryRunner();
  await runner.connect();
  await runner.startTransaction();
  try {
    await runner.query(
      `INSERT INTO collections (id, chain_id, contract_address, owner, name, slug, fees, created_at, updated_at)
       SELECT md5('plans-c' || i)::uuid, (ARRAY['1','137','8453','10'])[1 + i % 4], '0x' || substr(md5('plans-contract' || i), 1, 40),
         '0x' || substr(md5('plans-owner'), 1, 40), 'Plans ' || i, 'plans-' || i, '[]'::jsonb, now(), now()
       FROM generate_series(1, $1::int) i`,
      [COLLECTIONS],
    );
    await runner.query(
      `INSERT INTO assets (collection_id, chain_id, token_address, token_id, name, description, image_url, metadata, owner)
       SELECT md5('plans-c' || c)::uuid, (ARRAY['1','137','8453','10'])[1 + c % 4], '0x' || substr(md5('plans-contract' || c), 1, 40), t,
         'A', 'a', 'https://example.com/a.png', '{}'::jsonb, '0x' || substr(md5('plans-holder' || ((c * 7 + t) % (1 + c % 9))), 1, 40)
       FROM generate_series(1, $1::int) c CROSS JOIN generate_series(1, 4) t`,
      [COLLECTIONS],
    );
    // Three listings of each collection's four assets: fixed prices, a dutch auction in one collection of
    // ten (falling to half its price), a fixed price that has closed by the clock in one of seven (not
    // yet swept), and every collection's fourth asset unlisted in one of five without any listing.
    await runner.query(
      `INSERT INTO listings (asset_id, collection_id, seller, order_type, start_price, accept_price, listing_time, closing_date)
       SELECT a.id, a.collection_id, a.owner, CASE WHEN a.token_id = 1 AND c % 10 = 0 THEN 'dutch_auction' ELSE 'fixed_price' END, x.price,
         CASE WHEN a.token_id = 1 AND c % 10 = 0 THEN x.price / 2 ELSE x.price END, now() - interval '2 hours',
         CASE WHEN a.token_id = 1 AND c % 10 = 0 THEN now() + interval '1 day' WHEN a.token_id = 2 AND c % 7 = 0 THEN now() - interval '1 hour' ELSE now() + interval '3 days' END
       FROM generate_series(1, $1::int) c JOIN assets a ON a.collection_id = md5('plans-c' || c)::uuid
       CROSS JOIN LATERAL (SELECT ((('x' || substr(md5(a.id::text), 1, 6))::bit(24)::int % 1000) + 1) / 100.0 AS price) x
       WHERE a.token_id <= 3 AND c % 5 <> 0`,
      [COLLECTIONS],
    );
    // The expiry sweeper marks the listings closed by the clock (within a second in a running market).
    await runner.query(`UPDATE listings SET expiry_swept = true WHERE closing_date <= now() AND NOT expiry_swept`);
    // One statement listing in 4,800 collections keeps their floor bounds in one pass: they equal a recount.
    const [{ astray, floored }] = await runner.query(
      `SELECT count(*) FILTER (WHERE f.floor_low IS DISTINCT FROM x.low OR f.floor_until IS DISTINCT FROM x.until)::int AS astray,
         count(f.floor_low)::int AS floored
       FROM collection_figures f CROSS JOIN LATERAL (
         SELECT min(l.price_low) AS low, max(COALESCE(l.closing_date, 'infinity')) AS until FROM listings l
         WHERE l.collection_id = f.collection_id AND l.status = 'active' AND l.currency = $2 AND l.price_low IS NOT NULL) x
       WHERE f.collection_id IN (SELECT md5('plans-c' || i)::uuid FROM generate_series(1, $1::int) i)`,
      [COLLECTIONS, `0x${'0'.repeat(40)}`],
    );
    expect({ astray, floored }).toEqual({ astray: 0, floored: COLLECTIONS - COLLECTIONS / 5 });
    // Sales in the rollups of the last 30 days (their orders are not needed to plan).
    await runner.query(
      `INSERT INTO collection_sales_hourly (collection_id, hour, volume, sales, min_price, max_price, last_sale_at)
       SELECT md5('plans-c' || c)::uuid, date_trunc('hour', now() - make_interval(hours => h), 'UTC'), c % 17 + 1, 1 + c % 3, 1, 1, now() - make_interval(hours => h)
       FROM generate_series(1, $1::int) c CROSS JOIN generate_series(1, 720, 240) h`,
      [SELLING],
    );
    await runner.query('ANALYZE collections, collection_figures, collection_sales_hourly, collection_sales_bounds, collection_sales_lows, assets, listings');
    /** The plan of a statement explained, and the node that read the most rows, with the whole plan when they are over the bound. */
    const explain = async ({ name, sql, parameters }: Captured) => {
      const [{ 'QUERY PLAN': [explained] }] = await runner.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, parameters);
      const read = nodesOf(explained.Plan)
        .filter((node) => node['Relation Name'] !== undefined && (!name.includes('counted listings') || node['Relation Name'] === 'listings'))
        // By a sliding period's figure, the walk and the count read the collections' bounds (an
        // index; a small table's may be sorted whole): what they sum is the rollups.
        .filter((node) => !SALES_WALK.test(name) || node['Relation Name'] === 'collection_sales_hourly')
        .map((node) => ({ node: `${node['Node Type']} ${node['Relation Name']}`, rows: Number(node['Actual Rows']) * Number(node['Actual Loops']) }));
      const most = read.reduce((a, b) => (b.rows > a.rows ? b : a), { node: 'none', rows: 0 });
      // Over the bound, the plan is shown whole.
      const plan = most.rows <= (name.startsWith('FLOOR_PRICE') ? FLOOR_BOUND : BOUND) ? '' : (await runner.query(`EXPLAIN (ANALYZE, COSTS OFF) ${sql}`, parameters)).map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
      return { explained, most, plan };
    };
    for (const { name, sql, parameters } of statements) {
      const { explained, most, plan } = await explain({ name, sql, parameters });
      expect({ name, most, plan }).toEqual({ name, most, plan: '' });
      if (SALES_WALK.test(name) && !/page 10|cursor/.test(name)) {
        // The first page sums the candidates of the walk along the bounds (each collection's rollups, one
        // index range per collection), not every collection that sold (300).
        const rollups = nodesOf(explained.Plan).filter((node) => node['Relation Name'] === 'collection_sales_hourly');
        const summed = rollups.reduce((sum, node) => sum + Number(node['Actual Rows']) * Number(node['Actual Loops']), 0);
        const collections = Math.max(0, ...rollups.map((node) => Number(node['Actual Loops'])));
        expect({ name, summed: summed <= SUMMED_BOUND, collections: collections <= 2 * 21 + 10 }).toEqual({ name, summed: true, collections: true });
      }
      if (/^VOLUME (H6|H24|D7|D30) (DESC|ASC) trending/.test(name)) {
        // The trending collections walk the kept trend sums' partial index for the page (and count its entries:
        // only collections that sold can trend), and sum only the rollups of the hours where the kept hours and
        // the windows differ (here at most the hour before now's: its 300 rollups), not every collection that sold.
        const rows = (relation: string) =>
          nodesOf(explained.Plan)
            .filter((node) => node['Relation Name'] === relation)
            .reduce((sum, node) => sum + Number(node['Actual Rows']) * Number(node['Actual Loops']), 0);
        // Counted after a cursor, the rows up to it are walked back too (at most the trending ones).
        const page = name.includes('page 10') ? 201 : 21;
        const counted = (name.includes('counted') ? 1 : 0) + (name.includes('cursor') ? 1 : 0);
        expect({ name, rollups: rows('collection_sales_hourly') <= SELLING, kept: rows('collection_sales_lows') <= page + (1 + counted) * SELLING }).toEqual({ name, rollups: true, kept: true });
      }
      if (name.includes('not trending')) {
        // Each collection walked has its trend figures computed (its rollups, one index range per collection):
        // about twice the rows up to the page's end, and the trending collections the walk passes (every one
        // that sold, here, in 30 days: none sold in the 30 before), and the count's, among those that sold.
        const rollups = nodesOf(explained.Plan).filter((node) => node['Relation Name'] === 'collection_sales_hourly');
        const collections = Math.max(0, ...rollups.map((node) => Number(node['Actual Loops'])));
        const walked = 2 * (name.includes('page 10') ? 201 : 21) + 60 + SELLING;
        expect({ name, collections, walked: collections <= walked }).toEqual({ name, collections, walked: true });
      }
    }
    // A market trending as a whole: every collection but the last 100 sells two hours ago, in the trend window of
    // every period, and none in the one before. Not trending, by holders, all-time figures and floor, the page is
    // read from those 100 (the kept sums' partial index of the collections not trending), not walked to through
    // every trending collection (the walk read 5,900 rows of collection_figures here).
    await runner.query(
      `INSERT INTO collection_sales_hourly (collection_id, hour, volume, sales, min_price, max_price, last_sale_at)
       SELECT md5('plans-c' || c)::uuid, date_trunc('hour', now(), 'UTC') - interval '2 hours', 1, 1, 1, 1, date_trunc('hour', now(), 'UTC') - interval '2 hours'
       FROM generate_series(1, $1::int - 100) c
       ON CONFLICT (collection_id, hour) DO UPDATE SET volume = collection_sales_hourly.volume + 1, sales = collection_sales_hourly.sales + 1`,
      [COLLECTIONS],
    );
    await runner.query('ANALYZE collection_sales_hourly, collection_sales_bounds, collection_sales_lows');
    const WHOLE = /^(TOTAL_HOLDERS .*|(VOLUME|TOTAL_TRANSACTIONS) ALL .*|FLOOR_PRICE .*) not trending( page 10)?$/;
    const whole = statements.filter((s) => WHOLE.test(s.name));
    expect(whole.length).toBeGreaterThanOrEqual(12);
    for (const statement of whole) {
      const { most, plan } = await explain(statement);
      expect({ name: `${statement.name} (trending as a whole)`, most, plan }).toEqual({ name: `${statement.name} (trending as a whole)`, most, plan: '' });
    }
  } finally {
    await runner.rollbackTransaction();
    await runner.release();
  }
});
