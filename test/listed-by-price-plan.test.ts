import { clock } from '../src/common/clock';
import { saveNumberedAssets } from './factories/bulk-market';
import { Logged, logStatements } from './setup/captured-statements';
import { freshDatabase } from './setup/global-setup';
import { startServer, TestServer } from './setup/server';

/**
 * The statements that answer listed assets by current price (issue #38), on a market big enough for
 * PostgreSQL to prefer an index (100,000 assets, 90,000 of them listed: fixed prices, dutch auctions,
 * english auctions with and without bids): the page walks the listings' price indexes and prices a few
 * candidates, never every listed asset (no Seq Scan of assets or listings, no Sort of more than a few
 * hundred rows), and `remaining` and `totalCount` read the kept counts (listed_asset_counts) less the rows up to
 * the cursor, found by the same indexes, never a count of every listed asset. On a database of its own, so the other test files never meet its market. PostgreSQL only:
 * PGlite runs one transaction at a time, and its plans are PostgreSQL's.
 */
const onPostgres = process.env.DATABASE_URL ? describe : describe.skip;

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Parent Relationship'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  Output?: string[];
  Plans?: PlanNode[];
}

/** The nodes of a plan, depth first, leaving out `remaining`'s count (a subplan that counts every matching row: issue #38's counts). */
function pageNodes(plan: PlanNode): PlanNode[] {
  const isCount = (node: PlanNode) => node['Node Type'] === 'Aggregate' && (node.Output ?? []).some((o) => o.startsWith('count('));
  if ((plan['Parent Relationship'] === 'InitPlan' || plan['Parent Relationship'] === 'SubPlan') && isCount(plan)) return [];
  return [plan, ...(plan.Plans ?? []).flatMap(pageNodes)];
}

onPostgres('listed assets by current price on 100,000 assets', () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  let server: TestServer;
  let collectionId: string;
  const statements: Logged[] = [];

  beforeAll(async () => {
    db = await freshDatabase('gw_listed_price');
    // The loading statements take their time on a shared machine; the pages are held to their plans, not to a time.
    server = await startServer({}, { url: db.url, queryTimeoutMs: 600_000 });
    await saveNumberedAssets(server.ds, { collections: 100, assets: 100_000, holders: 5000, listedWhen: 'i % 10 <> 0' });
    // A twentieth dutch auctions (falling by a tenth around a price of 0.01-9.97), a twentieth english
    // auctions (every other one with a bid at twice its start price), the rest fixed prices (0.01-9.97).
    await server.ds.query(
      `INSERT INTO listings (asset_id, collection_id, seller, order_type, start_price, accept_price, listing_time, closing_date)
       SELECT a.id, a.collection_id, a.owner, CASE a.token_id % 20 WHEN 1 THEN 'dutch_auction' WHEN 2 THEN 'english_auction' ELSE 'fixed_price' END,
         CASE a.token_id % 20 WHEN 1 THEN p.price * 1.05 WHEN 2 THEN (a.token_id % 500 + 1) / 100.0 ELSE p.price END,
         CASE a.token_id % 20 WHEN 1 THEN p.price * 0.95 WHEN 2 THEN NULL ELSE p.price END,
         now() - interval '1 hour', CASE WHEN a.token_id % 20 IN (1, 2) THEN now() + interval '1 day' END
       FROM assets a CROSS JOIN LATERAL (SELECT (a.token_id % 997 + 1) / 100.0 AS price) p WHERE a.status = 'listed'`,
    );
    await server.ds.query(
      `INSERT INTO offers (asset_id, collection_id, chain_id, token_address, token_id, taker, price, start_time, end_time)
       SELECT l.asset_id, l.collection_id, a.chain_id, a.token_address, a.token_id, '0x' || substr(md5('bidder') || md5('z'), 1, 40),
         l.start_price * 2, now() - interval '1 minute', now() + interval '2 hours'
       FROM listings l JOIN assets a ON a.id = l.asset_id WHERE l.order_type = 'english_auction' AND a.token_id % 40 = 2`,
    );
    await server.ds.query('VACUUM ANALYZE assets, listings, offers');
    collectionId = (await server.ds.query(`SELECT md5('c7')::uuid AS id`))[0].id;
    logStatements(server.ds, (sql) => sql.includes('price_low'), statements);
  }, 900_000);
  afterEach(() => clock.reset());
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  /** The plan of the statement the last request sent, run (EXPLAIN ANALYZE). */
  async function lastPlan(): Promise<PlanNode> {
    const { sql, parameters } = statements[statements.length - 1];
    const [{ 'QUERY PLAN': [explained] }] = await server.ds.query(`EXPLAIN (ANALYZE, VERBOSE, FORMAT JSON) ${sql}`, parameters);
    return explained.Plan;
  }

  /** What would make the page cost in proportion to the market: a scan of a whole table, a sort of many rows. */
  function costsOfScale(plan: PlanNode) {
    return pageNodes(plan)
      .filter((n) => (n['Node Type'] === 'Seq Scan' && ['assets', 'listings', 'offers'].includes(n['Relation Name']!)) || (n['Node Type'] === 'Sort' && n['Actual Rows']! * n['Actual Loops']! > 500))
      .map((n) => `${n['Node Type']} ${n['Relation Name'] ?? ''} ${n['Actual Rows']} rows`);
  }

  test.each([
    ['the cheapest', 'status=listed&direction=asc'],
    ['the dearest', 'status=listed&direction=desc'],
    ['the cheapest in ETH', 'currency=ETH&direction=asc'],
    ['the dearest of a collection', 'status=listed&direction=desc&collection_id=COLLECTION'],
    ['the cheapest of a collection in ETH', 'currency=ETH&direction=asc&collection_id=COLLECTION'],
  ])('when a client pages through %s listed assets to the 10th page, then each page walks the price indexes', async (_, query) => {
    let cursor: string | null = null;
    for (let page = 1; page <= 10; page += 1) {
      const path: string = `/v1/assets?order_by=current_price&limit=20&${query.replace('COLLECTION', collectionId)}${cursor ? `&page=${cursor}` : ''}`;
      const res = await server.rest('GET', path);
      expect(res.status).toBe(200);
      expect(res.body.result).toHaveLength(20);
      cursor = res.body.cursor;
      if (page === 1 || page === 10) expect({ page, costs: costsOfScale(await lastPlan()) }).toEqual({ page, costs: [] });
    }
  });

  /** What would make a count cost in proportion to the market: `costsOfScale` anywhere in the plan, counts included, and a scan of many rows of assets or listings. */
  function countCostsOfScale(plan: PlanNode): string[] {
    const all = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(all)];
    return all(plan)
      .filter(
        (n) =>
          (n['Node Type'] === 'Seq Scan' && ['assets', 'listings', 'offers'].includes(n['Relation Name']!)) ||
          (n['Node Type'] === 'Sort' && n['Actual Rows']! * n['Actual Loops']! > 500) ||
          (['assets', 'listings'].includes(n['Relation Name'] ?? '') && n['Actual Rows']! * n['Actual Loops']! > 2000),
      )
      .map((n) => `${n['Node Type']} ${n['Relation Name'] ?? ''} ${n['Actual Rows']} rows x ${n['Actual Loops']}`);
  }

  test.each([
    ['the cheapest', 'status=listed&direction=asc', 90_000],
    ['the dearest', 'status=listed&direction=desc', 90_000],
    ['the cheapest in ETH', 'currency=ETH&direction=asc', 90_000],
    ['the dearest of a collection', 'status=listed&direction=desc&collection_id=COLLECTION', 1_000],
  ])('when a client counts %s listed assets (remaining, totalCount) on the first and the 10th page, then the counts read kept figures and the rows up to the cursor, never every listed asset', async (_, query, total) => {
    // One moment for every page: a dutch price falls between two requests, and the rows up to a cursor with it.
    clock.set(new Date());
    let cursor: string | null = null;
    for (let page = 1; page <= 10; page += 1) {
      const path: string = `/v1/assets?order_by=current_price&limit=20&${query.replace('COLLECTION', collectionId)}${cursor ? `&page=${cursor}` : ''}`;
      const res = await server.rest('GET', path);
      expect(res.status).toBe(200);
      expect(res.body.remaining).toBe(total - 20 * page);
      if (page === 1 || page === 10) expect({ page, costs: countCostsOfScale(await lastPlan()) }).toEqual({ page, costs: [] });
      cursor = res.body.cursor;
    }
    const args = Object.fromEntries(new URLSearchParams(query.replace('COLLECTION', collectionId)));
    const gql = await server.gql(
      `query ($after: String, $status: AssetStatus, $currency: String, $collectionId: String, $direction: SortDirection) {
        assets(status: $status, currency: $currency, collectionId: $collectionId, orderBy: CURRENT_PRICE, direction: $direction, first: 20, after: $after) { totalCount edges { node { id } } } }`,
      { after: cursor, status: args.status?.toUpperCase() ?? null, currency: args.currency ?? null, collectionId: args.collection_id ?? null, direction: args.direction.toUpperCase() },
    );
    expect(gql.body.errors).toBeUndefined();
    expect(gql.body.data.assets.totalCount).toBe(total);
    expect(countCostsOfScale(await lastPlan())).toEqual([]);
  });

  test.each([
    ['listed', 7],
    ['unlisted', 1],
  ])("when a client pages through a collection's assets by current price (all %s), on /v1 and in Collection.assets, then each page walks the indexes", async (_, n) => {
    const [c] = await server.ds.query(`SELECT id, contract_address AS address FROM collections WHERE id = md5('c' || $1::int)::uuid`, [n]);
    for (const direction of ['asc', 'desc']) {
      let cursor: string | null = null;
      for (let page = 1; page <= 10; page += 1) {
        const res: { status: number; body: { result: unknown[]; cursor: string } } = await server.rest('GET', `/v1/assets?collection_id=${c.id}&order_by=current_price&direction=${direction}&limit=20${cursor ? `&page=${cursor}` : ''}`);
        expect(res.status).toBe(200);
        expect(res.body.result).toHaveLength(20);
        cursor = res.body.cursor;
        if (page === 1 || page === 10) expect({ direction, page, costs: costsOfScale(await lastPlan()) }).toEqual({ direction, page, costs: [] });
      }
      const logged = statements.length;
      const gql = await server.gql(
        `query ($address: Address, $direction: SortDirection) { collection(address: $address, chainId: "1") { assets(orderBy: CURRENT_PRICE, direction: $direction, first: 20) { edges { node { id } } } } }`,
        { address: c.address, direction: direction.toUpperCase() },
      );
      expect(gql.body.errors).toBeUndefined();
      expect(gql.body.data.collection.assets.edges).toHaveLength(20);
      // Its own statement reads the price bounds.
      expect(statements.length).toBeGreaterThan(logged);
      expect({ direction, costs: costsOfScale(await lastPlan()) }).toEqual({ direction, costs: [] });
    }
  });

  test('when GraphQL asks for the cheapest listed assets without counting them, then its whole statement walks the price indexes', async () => {
    const res = await server.gql(`{ assets(status: LISTED, orderBy: CURRENT_PRICE, direction: ASC, first: 20) { edges { node { id } } pageInfo { endCursor } } }`);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.assets.edges).toHaveLength(20);
    const plan = await lastPlan();
    expect(costsOfScale(plan)).toEqual([]);
    // Nothing left out: the statement has no count.
    expect(pageNodes(plan)).toHaveLength(JSON.stringify(plan).split('"Node Type"').length - 1);
  });

  // Last in the file: it moves prices.
  test('when 40,000 listings share the cheapest price, then the count of a page after a cursor among them reads the price index as far as the cursor, not every listing at that price', async () => {
    await server.ds.query(
      `UPDATE listings SET start_price = 0.001, accept_price = 0.001 WHERE id IN (
         SELECT id FROM listings WHERE order_type = 'fixed_price' AND status = 'active' ORDER BY asset_id LIMIT 40000)`,
    );
    await server.ds.query('VACUUM ANALYZE listings');
    let cursor: string | null = null;
    for (let page = 1; page <= 3; page += 1) {
      const res: { status: number; body: { remaining: number; cursor: string; result: { listing: { current_price_decimal: string } }[] } } = await server.rest(
        'GET',
        `/v1/assets?status=listed&order_by=current_price&direction=asc&limit=20${cursor ? `&page=${cursor}` : ''}`,
      );
      expect(res.status).toBe(200);
      expect(res.body.remaining).toBe(90_000 - 20 * page);
      expect(res.body.result.map((a) => a.listing.current_price_decimal)).toEqual(Array(20).fill('0.001'));
      cursor = res.body.cursor;
    }
    // Page 3's statement: its count reads the rows up to the cursor (40 at that price) and the page the 21 after it.
    const { sql, parameters } = statements[statements.length - 1];
    const [{ 'QUERY PLAN': [explained] }] = await server.ds.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`, parameters);
    type Scan = PlanNode & { 'Index Name'?: string; 'Shared Hit Blocks': number; 'Shared Read Blocks': number };
    const all = (n: Scan): Scan[] => [n, ...((n.Plans ?? []) as Scan[]).flatMap(all)];
    const scans = all(explained.Plan).filter((n) => n['Index Name']?.startsWith('ix_listings_price_'));
    const blocks = scans.reduce((sum, n) => sum + n['Shared Hit Blocks'] + n['Shared Read Blocks'], 0);
    // The scans of the price indexes (not the candidates' listings, read by asset): every listing at that price is some 250 pages of the index.
    expect({ blocks, small: blocks < 150 }).toEqual({ blocks, small: true });
  });
});
