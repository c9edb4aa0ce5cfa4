import pg from 'pg';
import { freshDatabase } from './setup/global-setup';
import { startServer, TestServer } from './setup/server';
import { captureStatements } from './setup/captured-statements';

/**
 * Issue #38: the assets list, sorted by each documented key in each direction, unfiltered and of one chain,
 * is an index walk with exact counts read from the kept ones, whatever the market's size. On a database of
 * its own, big enough that PostgreSQL's planner prefers an index where one serves (60,000 assets on two
 * chains, a third of them listed at fixed prices, made by generate_series and analyzed), the statements the
 * gateway sends for a first page and the page after its cursor (captured as it sends them, on both roads:
 * SQL plans and resolvers) are explained: no Seq Scan of assets or listings, no Sort over more than a bounded
 * part of them, and counts that read a bounded part (the kept counts, and the rows up to the cursor). The
 * answers' counts are exact (the database holds only this market). PostgreSQL only: a second database of
 * this size is too much for the embedded PGlite, and the plans that matter are PostgreSQL's.
 */
const onPostgres = process.env.DATABASE_URL ? describe : describe.skip;

const ASSETS = 60_000;
/** A Sort or a count over more rows than this is one of the table, not of a page or up to a cursor. */
const BOUNDED = 2_000;
const WATCHED = ['assets', 'listings'];

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  Plans?: PlanNode[];
}

let database: { url: string; drop: () => Promise<void> };
let server: TestServer;
let explainer: pg.Client;
let captured: ReturnType<typeof captureStatements> | undefined;

beforeAll(async () => {
  if (!process.env.DATABASE_URL) return;
  database = await freshDatabase('gw_asset_shapes');
  explainer = new pg.Client({ connectionString: database.url });
  captured = captureStatements(() => explainer);
  server = await startServer({}, { url: database.url, queryTimeoutMs: 600_000 });
  await load(server);
  await explainer.connect();
}, 600_000);

afterAll(async () => {
  captured?.restore();
  await server?.close();
  await explainer?.end();
  await database?.drop();
});

/** 200 collections of 300 assets on chains 1 and 137, names and update times spread, a third listed at fixed prices. */
async function load(s: TestServer): Promise<void> {
  await s.ds.query(
    `INSERT INTO collections (id, chain_id, contract_address, owner, name, slug)
     SELECT md5('c' || i)::uuid, CASE WHEN i % 2 = 0 THEN '1' ELSE '137' END, '0x' || substr(md5('contract' || i) || md5('x' || i), 1, 40),
       '0x' || substr(md5('owner') || md5('x'), 1, 40), 'Collection ' || i, 'collection-' || i FROM generate_series(1, 200) i`,
  );
  await s.ds.query(
    `INSERT INTO assets (id, collection_id, chain_id, token_address, token_id, name, description, image_url, metadata, owner, created_at, updated_at)
     SELECT md5('a' || i)::uuid, md5('c' || (1 + i % 200))::uuid, CASE WHEN (1 + i % 200) % 2 = 0 THEN '1' ELSE '137' END,
       '0x' || substr(md5('contract' || (1 + i % 200)) || md5('x' || (1 + i % 200)), 1, 40), i / 200,
       'Asset ' || md5('n' || i), 'An asset', 'https://img.example/a.png', '{}'::jsonb, '0x' || substr(md5('holder' || i % 5000) || md5('y'), 1, 40),
       now() - make_interval(secs => i), now() - make_interval(secs => (i * 7919) % ${ASSETS})
     FROM generate_series(1, ${ASSETS}) i`,
  );
  await s.ds.query(
    `INSERT INTO listings (asset_id, collection_id, seller, order_type, start_price, accept_price, listing_time)
     SELECT a.id, a.collection_id, a.owner, 'fixed_price', (a.token_id % 97 + 1) / 10.0, (a.token_id % 97 + 1) / 10.0, now() - interval '1 hour'
     FROM assets a WHERE a.token_id % 3 = 0`,
  );
  await s.ds.query('VACUUM ANALYZE assets, listings, asset_counts, listed_asset_counts');
}

/** The rows a node gave in all (its rows per loop times its loops). */
const rowsOf = (node: PlanNode) => node['Actual Rows'] * node['Actual Loops'];

/** What is wrong with a plan: Seq Scans of the watched tables; Sorts and counts over more than a bounded part of them. */
function planProblems(plan: PlanNode): string[] {
  const problems: string[] = [];
  const scans = (node: PlanNode): PlanNode[] => [...(node['Relation Name'] && WATCHED.includes(node['Relation Name']) ? [node] : []), ...(node.Plans ?? []).flatMap(scans)];
  const visit = (node: PlanNode) => {
    if (node['Node Type'] === 'Seq Scan' && WATCHED.includes(node['Relation Name'] ?? '')) problems.push(`Seq Scan on ${node['Relation Name']}`);
    if (node['Node Type'] === 'Sort' || node['Node Type'] === 'Aggregate') {
      const big = scans(node).find((scan) => rowsOf(scan) > BOUNDED);
      if (big) problems.push(`${node['Node Type']} over ${rowsOf(big)} rows of ${big['Relation Name']}`);
    }
    for (const child of node.Plans ?? []) visit(child);
  };
  visit(plan);
  return problems;
}

/** The statements a request sent that read assets, each with what is wrong with its plan (only those with problems). */
async function explained<T>(request: () => Promise<T>): Promise<{ answer: T; problems: Record<string, string[]> }> {
  captured!.take();
  const answer = await request();
  const reads = captured!.take().filter((s) => /^\s*(SELECT|WITH)/i.test(s.text) && /\bassets\b/.test(s.text));
  expect(reads.length).toBeGreaterThan(0);
  const problems: Record<string, string[]> = {};
  for (const statement of reads) {
    const { rows } = await explainer.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${statement.text}`, statement.values);
    const found = planProblems(rows[0]['QUERY PLAN'][0].Plan);
    if (found.length) problems[statement.text.replace(/\s+/g, ' ').slice(0, 300)] = found;
  }
  return { answer, problems };
}

async function countOf(where: string, params: unknown[] = []): Promise<number> {
  return Number((await explainer.query(`SELECT count(*) AS n FROM assets a ${where}`, params)).rows[0].n);
}

const SORTS = ['created_at', 'name', 'token_id', 'updated_at', 'current_price'];

/** The nodes of a plan, depth first. */
const nodesOf = (node: PlanNode & { 'Index Name'?: string }): (PlanNode & { 'Index Name'?: string })[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

onPostgres('statement shapes of the assets list on a market the planner indexes', () => {
  test('when GET /v1/assets is sorted by each documented key in each direction, of every chain and of one, then no page scans or sorts the assets, and remaining is exact from the kept counts, on a first page and after its cursor', async () => {
    const found: Record<string, string[]> = {};
    for (const chain of ['', 'chain_id=1'])
      for (const orderBy of SORTS)
        for (const direction of ['asc', 'desc']) {
          const path = `/v1/assets?order_by=${orderBy}&direction=${direction}&limit=20${chain && `&${chain}`}`;
          const total = chain ? await countOf(`WHERE a.chain_id = '1'`) : ASSETS;
          const first = await explained(() => server.rest('GET', path));
          expect({ path, status: first.answer.status, remaining: first.answer.body.remaining }).toEqual({ path, status: 200, remaining: total - 20 });
          for (const [sql, problems] of Object.entries(first.problems)) found[`${path} ${sql}`] = problems;
          const next = await explained(() => server.rest('GET', `${path}&page=${encodeURIComponent(first.answer.body.cursor)}`));
          expect({ path, status: next.answer.status, remaining: next.answer.body.remaining }).toEqual({ path, status: 200, remaining: total - 40 });
          for (const [sql, problems] of Object.entries(next.problems)) found[`${path} (after its cursor) ${sql}`] = problems;
        }
    expect(found).toEqual({});
  }, 600_000);

  test('when GraphQL pages the assets by each documented key with totalCount, then no statement scans or sorts the assets, and totalCount is every asset', async () => {
    const found: Record<string, string[]> = {};
    for (const orderBy of SORTS.map((s) => s.toUpperCase()))
      for (const direction of ['ASC', 'DESC']) {
        let after: string | undefined;
        for (const page of [1, 2]) {
          const { answer, problems } = await explained(() => server.gql(ASSETS_CONNECTION, { orderBy, direction, after }));
          expect(answer.body.errors).toBeUndefined();
          expect({ orderBy, direction, page, totalCount: answer.body.data.assets.totalCount }).toEqual({ orderBy, direction, page, totalCount: ASSETS });
          for (const [sql, p] of Object.entries(problems)) found[`${orderBy} ${direction} page ${page} ${sql}`] = p;
          after = answer.body.data.assets.edges.at(-1).cursor;
        }
        // The envelope's first page (planned in SQL where the plans take it).
        const { answer, problems } = await explained(() => server.gql(ASSETS_PAGE, { orderBy, direction }));
        expect(answer.body.data.assets.remaining).toBe(ASSETS - 20);
        for (const [sql, p] of Object.entries(problems)) found[`${orderBy} ${direction} envelope ${sql}`] = p;
      }
    expect(found).toEqual({});
  }, 600_000);
});

onPostgres('a search among one owner\'s assets', () => {
  test('when one owner\'s assets are searched by a name every asset starts with, then the statement\'s generic plan (a named statement\'s after five runs) reads that owner\'s rows, not the name indexes\' every match', async () => {
    const owner = (await explainer.query(`SELECT owner FROM assets GROUP BY owner ORDER BY count(*) DESC, owner LIMIT 1`)).rows[0].owner as string;
    const found: Record<string, string[]> = {};
    let prepared = 0;
    for (const request of [
      () => server.rest('GET', `/v1/search/assets?query=asset&owner_id=${owner}`),
      () => server.gql(`query ($owner: Address) { searchAssets(query: "asset", ownerId: $owner) { remaining result { id name } } }`, { owner }),
    ]) {
      captured!.take();
      const answer = await request();
      expect(answer.status).toBe(200);
      for (const statement of captured!.take().filter((s) => /\bctid\b/.test(s.text))) {
        // The statement prepared under a name, as the gateway's connections prepare it, then explained as its generic plan.
        const name = `generic_search_${(prepared += 1)}`;
        await explainer.query({ name, text: statement.text, values: statement.values });
        await explainer.query('SET plan_cache_mode = force_generic_plan');
        const args = statement.values.map((v) => (v === null ? 'NULL' : explainer.escapeLiteral(v instanceof Date ? v.toISOString() : String(v)))).join(', ');
        const { rows } = await explainer.query(`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE ${name}(${args})`);
        await explainer.query(`RESET plan_cache_mode; DEALLOCATE ${name}`);
        const heavy = nodesOf(rows[0]['QUERY PLAN'][0].Plan).filter((node) => node['Node Type'].includes('Index') && rowsOf(node) > BOUNDED);
        if (heavy.length) found[statement.text.replace(/\s+/g, ' ').slice(0, 200)] = heavy.map((node) => `${node['Node Type']} on ${node['Index Name']}: ${rowsOf(node)} rows`);
      }
    }
    expect(found).toEqual({});
  }, 300_000);
});

const ASSETS_CONNECTION = `query ($orderBy: AssetOrderBy, $direction: SortDirection, $after: String) {
  assets(orderBy: $orderBy, direction: $direction, first: 20, after: $after) { totalCount edges { cursor node { id name } } } }`;
const ASSETS_PAGE = `query ($orderBy: AssetOrderBy, $direction: SortDirection) {
  assets(orderBy: $orderBy, direction: $direction, limit: 20) { remaining cursor result { id name tokenId } } }`;
