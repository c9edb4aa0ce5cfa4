import { SEARCH_CANDIDATES } from '../src/common/name-search';
import { saveNumberedAssets } from './factories/bulk-market';
import { Logged, logStatements } from './setup/captured-statements';
import { freshDatabase } from './setup/global-setup';
import { startServer, TestServer } from './setup/server';

/**
 * A search among listed assets (issue #38: `status=listed`, or a `currency`) on a market big enough for
 * PostgreSQL to prefer an index (30,000 assets all named `Asset <n>`, a third listed, a quarter of those in
 * WETH): its 1,000 candidates are found by reading about 1,000 listings from the names they keep, not by
 * reading every asset's name and looking up its listing (3,000 names for 1,000 listed, 4,000 in ETH). On a
 * database of its own, so the other test files never meet its market. PostgreSQL only: PGlite runs one
 * transaction at a time, and its plans are PostgreSQL's.
 */
const onPostgres = process.env.DATABASE_URL ? describe : describe.skip;

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

const WETH = '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2';

onPostgres('a search among listed assets on 30,000 assets', () => {
  let server: TestServer;
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  const statements: Logged[] = [];

  beforeAll(async () => {
    db = await freshDatabase('gw_search_listed');
    server = await startServer({}, { url: db.url, queryTimeoutMs: 600_000 });
    await saveNumberedAssets(server.ds, { collections: 30, assets: 30_000, holders: 500, listedWhen: 'i % 3 = 0' });
    await server.ds.query(
      `INSERT INTO listings (asset_id, collection_id, seller, order_type, start_price, accept_price, listing_time, currency)
       SELECT a.id, a.collection_id, a.owner, 'fixed_price', 1, 1, now() - interval '1 hour',
         CASE WHEN a.token_id % 4 = 0 THEN '${WETH}' ELSE '0x0000000000000000000000000000000000000000' END
       FROM assets a WHERE a.status = 'listed'`,
    );
    await server.ds.query('VACUUM ANALYZE assets, listings');
    logStatements(server.ds, (sql) => sql.includes('similarity('), statements);
  }, 600_000);
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  /** The rows the last search's statement read of assets and listings (EXPLAIN ANALYZE: each node's rows, kept or filtered out, at least one, times its loops), and its scans of a whole table. */
  async function readsOfLastSearch(): Promise<{ rows: number; seqScans: string[] }> {
    const { sql, parameters } = statements[statements.length - 1];
    const [{ 'QUERY PLAN': [explained] }] = await server.ds.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, parameters);
    if (process.env.SHOW_PLAN) console.log((await server.ds.query(`EXPLAIN (ANALYZE) ${sql}`, parameters)).map((r: Record<string, string>) => r['QUERY PLAN']).join('\n'));
    const all = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(all)];
    // The nodes run: the walk of the other matches (substrings, similar names) reads none when 1,000 names start with the query.
    const nodes = all(explained.Plan).filter((n) => ['assets', 'listings'].includes(n['Relation Name'] ?? '') && n['Actual Loops']! > 0);
    return {
      // A look-up that finds nothing (an unlisted asset's listing) still reads: one at least per loop.
      rows: nodes.reduce((sum, n) => sum + Math.max(1, n['Actual Rows']! + (n['Rows Removed by Filter'] ?? 0)) * n['Actual Loops']!, 0),
      seqScans: nodes.filter((n) => n['Node Type'] === 'Seq Scan').map((n) => n['Relation Name']!),
    };
  }

  // `walks`: the currencies walked (listed: ETH and WETH, each up to its 1,000th name).
  test.each([
    ['listed', 'status=listed', 'ETH|WETH', 2],
    ['listed in ETH', 'currency=ETH', 'ETH', 1],
    ['listed in WETH', 'currency=WETH', 'WETH', 1],
  ])('when a client searches assets %s by a word every name starts with, then the candidates are read from the listings by name: about as many rows as candidates', async (_, filter, currencies, walks) => {
    const res = await server.rest('GET', `/v1/search/assets?query=asset&${filter}&limit=20`);
    expect(res.status).toBe(200);
    expect(res.body.result).toHaveLength(20);
    expect(res.body.remaining).toBe(SEARCH_CANDIDATES - 20);
    for (const asset of res.body.result as { status: string; listing: { currency: { symbol: string } } }[]) {
      expect(asset.status).toBe('listed');
      expect(asset.listing.currency.symbol).toMatch(new RegExp(`^(${currencies})$`));
    }
    // Each walk's listings and assets (1,000 each), the candidates' rows for the page (1,000), and a few more: not
    // 3,000 names and their listings (4,000 in ETH, 12,000 in WETH) for 1,000 listed.
    const { rows, seqScans } = await readsOfLastSearch();
    expect({ seqScans, bounded: rows <= 1.05 * (1 + 2 * walks) * SEARCH_CANDIDATES, rows }).toEqual({ seqScans: [], bounded: true, rows });
  });
});
