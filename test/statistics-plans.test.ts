import { startServer, TestServer } from './setup/server';

/**
 * Statistics sorted by a figure read about a page of rows whatever the number of collections (issue #38):
 * holders and all-time volume and sales walk indexes of `collection_figures`, a sliding window's volume and
 * sales are computed for the collections that sold in its hours (bounded by its trades) and merged with the
 * others by id. Each request's ranking statement is explained on a market of 6,000 collections (built
 * and analysed inside a transaction that is rolled back, so other files never see it): no plan node reads
 * more rows than the collections that sold plus a few pages.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

const COLLECTIONS = 6000;
/** Collections with sales in the last 30 days (a rollup every 10 days): what a sliding window may compute. */
const SELLING = 300;
/** The rollups of 30 days, and a 10th page (200 rows and the next): a fifth of the collections. */
const BOUND = SELLING * 3 + 250;

const STATISTICS = /* GraphQL */ `
  query ($orderBy: StatisticsOrderBy!, $period: StatisticsPeriod!, $direction: SortDirection, $chainId: String, $isTrending: Int, $page: String) {
    statistics(orderBy: $orderBy, period: $period, direction: $direction, chainId: $chainId, isTrending: $isTrending, limit: 20, page: $page) {
      result { collectionId }
    }
  }`;

interface Captured {
  name: string;
  sql: string;
  parameters: unknown[];
}

/** The ranking statement of each request (the one that merges its sources), as the server sent it. */
async function rankingStatements(requests: Array<{ name: string; variables: Record<string, unknown> }>): Promise<Captured[]> {
  const captured: Captured[] = [];
  let current = '';
  const logger = server.ds.logger as { logQuery: (sql: string, parameters?: unknown[]) => void };
  const logQuery = logger.logQuery;
  logger.logQuery = function (this: unknown, sql: string, parameters?: unknown[], ...rest: unknown[]) {
    if (sql.includes('(SELECT t.* FROM')) captured.push({ name: current, sql, parameters: parameters ?? [] });
    return (logQuery as (...a: unknown[]) => void).call(this, sql, parameters, ...rest);
  };
  try {
    for (const { name, variables } of requests) {
      current = name;
      const res = await server.gql(STATISTICS, variables);
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
];

test('when statistics are sorted by holders, volume or sales over 6,000 collections, then each ranking reads about a page of rows', async () => {
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
    // Sales in the rollups of the last 30 days (their orders are not needed to plan).
    await runner.query(
      `INSERT INTO collection_sales_hourly (collection_id, hour, volume, sales, min_price, max_price, last_sale_at)
       SELECT md5('plans-c' || c)::uuid, date_trunc('hour', now() - make_interval(hours => h), 'UTC'), c % 17 + 1, 1 + c % 3, 1, 1, now() - make_interval(hours => h)
       FROM generate_series(1, $1::int) c CROSS JOIN generate_series(1, 720, 240) h`,
      [SELLING],
    );
    await runner.query('ANALYZE collections, collection_figures, collection_sales_hourly, assets');
    for (const { name, sql, parameters } of statements) {
      const [{ 'QUERY PLAN': [explained] }] = await runner.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, parameters);
      const read = nodesOf(explained.Plan)
        .filter((node) => node['Relation Name'] !== undefined)
        .map((node) => ({ node: `${node['Node Type']} ${node['Relation Name']}`, rows: Number(node['Actual Rows']) * Number(node['Actual Loops']) }));
      const most = read.reduce((a, b) => (b.rows > a.rows ? b : a), { node: 'none', rows: 0 });
      // Over the bound, the plan is shown whole.
      const plan = most.rows <= BOUND ? '' : (await runner.query(`EXPLAIN (ANALYZE, COSTS OFF) ${sql}`, parameters)).map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
      expect({ name, most, plan }).toEqual({ name, most, plan: '' });
    }
  } finally {
    await runner.rollbackTransaction();
    await runner.release();
  }
});
