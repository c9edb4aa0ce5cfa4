import pg from 'pg';
import { freshDatabase } from './setup/global-setup';
import { startServer, TestServer } from './setup/server';
import { captureStatements } from './setup/captured-statements';

/**
 * Issue #38, item 4: every documented list of offers, orders and collections, with each sort and filter,
 * is an index walk, whatever the market's size. On a database of its own, big enough that PostgreSQL's
 * planner prefers an index where one serves (60,000 offers, 20,000 orders, 10,000 collections, made by
 * generate_series and analyzed), the statements the gateway sends for each list (captured as it sends
 * them, on both roads: SQL plans and resolvers) are explained: no Seq Scan of those tables, and no Sort
 * over more than a bounded part of them (a token's or an account's few offers may be sorted).
 */

const OFFERS = 60_000;
const ORDERS = 20_000;
/** Accepted offers ending before every active one. */
const ACCEPTED_FIRST = 10_000;
const COLLECTIONS = 10_000;
/** A Sort or a kept count over more rows than this is one of the table, not of one parent's rows or up to a cursor. */
const BOUNDED_SORT = 2_000;
const WATCHED = ['offers', 'orders', 'collections'];

let database: { url: string; drop: () => Promise<void> };
let server: TestServer;
let explainer: pg.Client;
let captured: ReturnType<typeof captureStatements> | undefined;

/**
 * PostgreSQL only: on the embedded PGlite a second database loaded with this market exhausted the test
 * worker (its process died); the plans that matter are PostgreSQL's.
 */
const onPostgres = process.env.DATABASE_URL ? describe : describe.skip;

beforeAll(async () => {
  if (!process.env.DATABASE_URL) return;
  database = await freshDatabase('gw_shapes');
  explainer = new pg.Client({ connectionString: database.url });
  await explainer.connect();
  await load(explainer);
  captured = captureStatements(() => explainer);
  server = await startServer({}, { url: database.url });
}, 300_000);

afterAll(async () => {
  captured?.restore();
  await server?.close();
  await explainer?.end();
  await database?.drop();
});

/** The market: 100 collections of 100 assets with offers and sales on them, and 20,000 collections more. */
async function load(c: pg.Client): Promise<void> {
  await c.query(
    `INSERT INTO collections (id, chain_id, contract_address, owner, name, slug, total_supply, status, created_at)
     SELECT md5('c' || i)::uuid, '1', '0x' || substr(md5('contract' || i) || md5('x' || i), 1, 40), '0x' || substr(md5('owner' || (i % 50)) || md5('y'), 1, 40),
       'Collection ' || i, 'collection-' || i, CASE WHEN i % 10 = 0 THEN NULL ELSE i % 5000 END,
       CASE WHEN i % 3 = 0 THEN 'verified' ELSE 'unverified' END, now() - make_interval(mins => i)
     FROM generate_series(1, $1::int) i`,
    [COLLECTIONS],
  );
  await c.query(
    `INSERT INTO assets (id, collection_id, chain_id, token_address, token_id, name, description, image_url, metadata, owner, created_at, updated_at)
     SELECT md5('a' || ci || '-' || t)::uuid, md5('c' || ci)::uuid, '1', '0x' || substr(md5('contract' || ci) || md5('x' || ci), 1, 40), t,
       'Asset ' || ci || '/' || t, 'Token ' || t, 'https://img.example/' || t || '.png', '{}'::jsonb, '0x' || substr(md5('holder' || ((ci * 31 + t) % 500)) || md5('z'), 1, 40), now(), now()
     FROM generate_series(1, 100) ci CROSS JOIN generate_series(1, 100) t`,
  );
  // Kinds 80/10/10 %, statuses active, accepted (1 in 11), cancelled (1 in 7); a quarter ended; prices and times spread.
  await c.query(
    `INSERT INTO offers (id, kind, asset_id, token_id, traits, collection_id, chain_id, token_address, taker, price, start_time, end_time, status, created_at, updated_at)
     SELECT md5('o' || k)::uuid, x.kind, CASE WHEN x.kind = 'item' THEN a.id END, CASE WHEN x.kind = 'item' THEN a.token_id END,
       CASE WHEN x.kind = 'trait' THEN '[{"trait_type":"Background","value":"Blue"}]'::jsonb END,
       a.collection_id, '1', a.token_address, '0x' || substr(md5('taker' || (k % 1000)) || md5('w'), 1, 40), (k % 997 + 1) / 100.0,
       now() - interval '60 days', now() + make_interval(hours => (k % 200) - 50),
       CASE WHEN k % 11 = 0 THEN 'accepted' WHEN k % 7 = 0 THEN 'cancelled' ELSE 'active' END,
       now() - make_interval(secs => k), now()
     FROM generate_series(1, $1::int) k
     CROSS JOIN LATERAL (SELECT CASE WHEN k % 10 < 8 THEN 'item' WHEN k % 10 = 8 THEN 'collection' ELSE 'trait' END AS kind) x
     JOIN assets a ON a.id = md5('a' || (1 + k % 100) || '-' || (1 + (k / 100) % 100))::uuid`,
    [OFFERS],
  );
  await c.query(
    `INSERT INTO orders (offer_id, asset_id, collection_id, chain_id, token_address, token_id, price, seller, buyer, status, created_at, updated_at)
     SELECT o.id, o.asset_id, o.collection_id, o.chain_id, o.token_address, o.token_id, o.price, '0x' || substr(md5('seller' || o.token_id) || md5('v'), 1, 40),
       o.taker, CASE WHEN k % 13 = 0 THEN 'failed' ELSE 'completed' END, now() - make_interval(mins => k), now()
     FROM generate_series(1, $1::int) k JOIN offers o ON o.id = md5('o' || (k * 5 - 4))::uuid`,
    [ORDERS],
  );
  // Accepted offers that end before every active one (a market's oldest offers were accepted and end first):
  // active offers ending first must not walk them.
  await c.query(
    `INSERT INTO offers (id, kind, asset_id, token_id, collection_id, chain_id, token_address, taker, price, start_time, end_time, status, created_at, updated_at)
     SELECT md5('accepted' || k)::uuid, 'item', a.id, a.token_id, a.collection_id, '1', a.token_address, '0x' || substr(md5('taker' || (k % 1000)) || md5('w'), 1, 40),
       (k % 997 + 1) / 100.0, now() - interval '60 days', now() + make_interval(secs => 60 + k % 600), 'accepted', now() - make_interval(days => 70, secs => k), now()
     FROM generate_series(1, $1::int) k JOIN assets a ON a.id = md5('a' || (1 + k % 100) || '-' || (1 + (k / 100) % 100))::uuid`,
    [ACCEPTED_FIRST],
  );
  // The expiry sweeper has caught up: what ended is marked (the active count subtracts only what it has not reached).
  await c.query(`UPDATE offers SET expiry_swept = true WHERE status = 'active' AND end_time <= now()`);
  await c.query('VACUUM ANALYZE');
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

/** The rows a node gave in all (its rows per loop times its loops). */
const rowsOf = (node: PlanNode) => node['Actual Rows'] * node['Actual Loops'];

/**
 * How a statement's counts (`remaining`, `totalCount`: an Aggregate) are judged: `bounded`, each reads at
 * most a bounded part of the tables (the kept counts, and the rows up to a cursor); `scanned`, as the rest of
 * the plan (no Seq Scan: filters the kept counts do not cover are counted from an index); `ignored`, not
 * looked at (collections' counts are the collection module's).
 */
type Counts = 'bounded' | 'scanned' | 'ignored';

/** What is wrong with a statement's plan: Seq Scans of the watched tables, Sorts of more than a bounded part of them. */
function planProblems(plan: PlanNode, counts: Counts): string[] {
  const problems: string[] = [];
  const scans = (node: PlanNode): PlanNode[] => [...(node['Relation Name'] && WATCHED.includes(node['Relation Name']) ? [node] : []), ...(node.Plans ?? []).flatMap(scans)];
  const visit = (node: PlanNode) => {
    if (node['Node Type'] === 'Aggregate' && counts !== 'scanned') {
      const big = counts === 'bounded' && scans(node).find((scan) => rowsOf(scan) > BOUNDED_SORT);
      if (big) problems.push(`count reads ${rowsOf(big)} rows of ${big['Relation Name']}`);
      return;
    }
    if (node['Node Type'] === 'Seq Scan' && WATCHED.includes(node['Relation Name'] ?? '')) problems.push(`Seq Scan on ${node['Relation Name']}`);
    // An index walked in the page's order whose rows are mostly filtered out reads the table, not the page.
    const removed = (node['Rows Removed by Filter'] ?? 0) * node['Actual Loops'];
    if (node['Node Type'] !== 'Seq Scan' && WATCHED.includes(node['Relation Name'] ?? '') && removed > BOUNDED_SORT) {
      problems.push(`${node['Node Type']} on ${node['Relation Name']} filters out ${removed} rows`);
    }
    if (node['Node Type'] === 'Sort') {
      const big = scans(node).find((scan) => rowsOf(scan) > BOUNDED_SORT);
      if (big) problems.push(`Sort over ${rowsOf(big)} rows of ${big['Relation Name']}`);
    }
    for (const child of node.Plans ?? []) visit(child);
  };
  visit(plan);
  return problems;
}

/** The statements a request sent that read the watched tables, each with what is wrong with its plan. */
async function explained(request: () => Promise<{ status: number }>, counts: Counts): Promise<{ sql: string; problems: string[] }[]> {
  return (await planned(request)).map(({ sql, plan }) => ({ sql, problems: planProblems(plan, counts) }));
}

/** The plan problems of a REST list's first page and of the page after its cursor, by request. */
async function restProblems(path: string, counts: Counts): Promise<Record<string, string[]>> {
  const found: Record<string, string[]> = {};
  let cursor: string | null = null;
  const first = await explained(async () => {
    const res = await server.rest('GET', path);
    cursor = res.body.cursor;
    return res;
  }, counts);
  for (const s of first) if (s.problems.length) found[`${path} ${s.sql}`] = s.problems;
  expect(cursor).not.toBeNull();
  const next = await explained(() => server.rest('GET', `${path}&page=${encodeURIComponent(cursor!)}`), counts);
  for (const s of next) if (s.problems.length) found[`${path} (after its cursor) ${s.sql}`] = s.problems;
  return found;
}

/** The statements a request sent that read the watched tables, each explained with the values it sent. */
async function planned(request: () => Promise<{ status: number }>): Promise<{ sql: string; plan: PlanNode }[]> {
  captured!.take();
  const res = await request();
  expect(res.status).toBe(200);
  const reads = captured!.take().filter((s) => /^\s*(SELECT|WITH)/i.test(s.text) && WATCHED.some((t) => new RegExp(`\\b${t}\\b`).test(s.text)));
  expect(reads.length).toBeGreaterThan(0);
  const out: { sql: string; plan: PlanNode }[] = [];
  for (const statement of reads) {
    const { rows } = await explainer.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${statement.text}`, statement.values);
    out.push({ sql: statement.text.replace(/\s+/g, ' ').slice(0, 300), plan: rows[0]['QUERY PLAN'][0].Plan });
  }
  return out;
}

/** The scans of the watched tables in a plan's subtree. */
const scansOf = (node: PlanNode): PlanNode[] => [...(WATCHED.includes(node['Relation Name'] ?? '') ? [node] : []), ...(node.Plans ?? []).flatMap(scansOf)];

/** The counts of a plan (its Aggregates), not looked into further. */
const aggregates = (node: PlanNode): PlanNode[] => (node['Node Type'] === 'Aggregate' ? [node] : (node.Plans ?? []).flatMap(aggregates));

/** How many offers or orders match `params` (status, min_price, max_price) now, counted row by row. */
async function recount(list: string, params: URLSearchParams): Promise<number> {
  const status = list === 'offers' ? `(CASE WHEN status = 'active' AND end_time <= now() THEN 'expired' ELSE status END)` : 'status';
  const { rows } = await explainer.query(
    `SELECT count(*)::int AS n FROM ${list} WHERE ($1::text IS NULL OR ${status} = $1) AND ($2::numeric IS NULL OR price >= $2) AND ($3::numeric IS NULL OR price <= $3)`,
    [params.get('status'), params.get('min_price'), params.get('max_price')],
  );
  return rows[0].n;
}

const DIRECTIONS = ['asc', 'desc'];
/** A collection of the market with 600 offers and 200 orders. */
const someCollection = '4d3a21d8-c684-c09c-19b9-3be911827fd5';
/** A taker of some 70 offers and the buyer of 100 orders ('taker1'), and someCollection's contract. */
const someTaker = '0xaa4163554af2608e29aab2fb38219022f1290186';
const someContract = '0xed09621118dfcb077caa43e62e0f371f2436f23b';

/** The problems of a REST list over each sort and direction, with each filter; `counted`: filters whose count is kept (bounded). */
async function listProblems(path: string, sorts: string[], counted: string[], others: string[]): Promise<Record<string, string[]>> {
  const found: Record<string, string[]> = {};
  for (const orderBy of sorts)
    for (const direction of DIRECTIONS)
      for (const [filters, counts] of [
        [counted, 'bounded'],
        [others, 'scanned'],
      ] as const)
        for (const filter of filters) Object.assign(found, await restProblems(`${path}?order_by=${orderBy}&direction=${direction}&limit=20${filter && `&${filter}`}`, counts));
  return found;
}

onPostgres('statement shapes of the documented lists on a market the planner indexes', () => {
  test('when GET /v1/offers is sorted by each documented key in each direction, with each filter, then no statement scans or sorts the offers table, and counts by status, kind, chain and currency read a bounded part of it', async () => {
    const counted = [
      '',
      'status=active',
      'status=expired',
      'status=cancelled',
      'status=accepted',
      'kind=collection',
      'kind=trait',
      'chain_id=1',
      'currency=ETH',
      'status=active&kind=item&chain_id=1',
      'min_price=1&max_price=2',
      'status=expired&kind=item&min_price=1.234',
    ];
    const others = [`collection_id=${someCollection}`, 'token_id=3', `owner_id=${someTaker}`];
    expect(await listProblems('/v1/offers', ['created_at', 'price', 'end_time'], counted, others)).toEqual({});
  }, 300_000);

  test('when GET /v1/orders is sorted by each documented key in each direction, with each filter, then no statement scans or sorts the orders table, and counts by status, chain and currency read a bounded part of it', async () => {
    const counted = ['', 'status=completed', 'status=failed', 'chain_id=1', 'currency=ETH', 'min_price=1&max_price=2'];
    const others = [`collection_id=${someCollection}`, 'token_id=3', `token_address=${someContract}`, `owner_id=${someTaker}`];
    expect(await listProblems('/v1/orders', ['created_at', 'price'], counted, others)).toEqual({});
  }, 300_000);

  test('when GET /v1/collections is sorted by each documented key in each direction, then no page scans or sorts the collections table', async () => {
    const found: Record<string, string[]> = {};
    for (const orderBy of ['created_at', 'name', 'total_supply'])
      for (const direction of DIRECTIONS) Object.assign(found, await restProblems(`/v1/collections?order_by=${orderBy}&direction=${direction}&limit=20`, 'ignored'));
    expect(found).toEqual({});
  }, 300_000);

  test('when GET /v1/collections is filtered by chain or status, then its remaining reads the kept counts, not the collections', async () => {
    const found: Record<string, string[]> = {};
    for (const filter of ['', 'status=verified', 'status=unverified', 'chain_id=1', 'chain_id=1&status=verified'])
      for (const orderBy of ['created_at', 'name'])
        Object.assign(found, await restProblems(`/v1/collections?order_by=${orderBy}&limit=20${filter && `&${filter}`}`, 'bounded'));
    expect(found).toEqual({});
  }, 300_000);

  test('when GraphQL asks offers and orders with totalCount, and a collection, an asset and an account their offers and orders, then no statement scans or sorts those tables', async () => {
    const token = (await explainer.query(`SELECT token_address FROM assets WHERE collection_id = $1 LIMIT 1`, [someCollection])).rows[0].token_address as string;
    const taker = (await explainer.query(`SELECT taker FROM offers LIMIT 1`)).rows[0].taker as string;
    const found: Record<string, string[]> = {};
    const check = async (query: string, variables: Record<string, unknown>, counts: Counts) => {
      let after: string | undefined;
      const request = async () => {
        const res = await server.gql(query, variables);
        expect(res.body.errors).toBeUndefined();
        after = res.body.data.list?.edges.at(-1)?.cursor;
        return res;
      };
      for (const s of await explained(request, counts)) if (s.problems.length) found[`${JSON.stringify(variables)} ${s.sql}`] = s.problems;
      if (!after) return;
      variables = { ...variables, after };
      for (const s of await explained(request, counts)) if (s.problems.length) found[`${JSON.stringify(variables)} ${s.sql}`] = s.problems;
    };
    for (const direction of ['ASC', 'DESC']) {
      for (const orderBy of ['CREATED_AT', 'PRICE', 'END_TIME'])
        for (const status of [null, 'ACTIVE', 'EXPIRED']) {
          await check(OFFERS_CONNECTION, { orderBy, direction, status }, 'bounded');
          await check(NESTED_OFFERS, { orderBy, direction, status, collection: someCollection, token, taker }, 'scanned');
        }
      for (const orderBy of ['CREATED_AT', 'PRICE'])
        for (const status of [null, 'COMPLETED']) {
          await check(ORDERS_CONNECTION, { orderBy, direction, status }, 'bounded');
          await check(NESTED_ORDERS, { orderBy, direction, status, collection: someCollection, taker }, 'scanned');
        }
    }
    expect(found).toEqual({});
  }, 300_000);

  test('when offers and orders are counted within a price range, then the count is exact and reads the kept counts by price bucket and at most the rows of the two edge buckets, none for bounds at bucket starts', async () => {
    // Bounds at bucket starts (round prices: whole buckets only) and inside buckets (2.345: the rows at 2.34 below it; 6.789: none between it and 6.79).
    const ranges: [string, 'whole' | 'edges'][] = [
      ['max_price=0.05', 'whole'],
      ['min_price=0.05', 'whole'],
      ['min_price=2&max_price=8', 'whole'],
      ['min_price=0.5&max_price=6', 'whole'],
      ['status=active&min_price=0.05', 'whole'],
      ['status=active&min_price=2&max_price=6', 'whole'],
      ['status=expired&min_price=1&max_price=1.5', 'whole'],
      ['min_price=2.345&max_price=6.789', 'edges'],
      ['status=active&min_price=2.345', 'edges'],
      ['status=expired&min_price=0.123&max_price=9.8765', 'edges'],
    ];
    for (const list of ['offers', 'orders']) {
      const { rows } = await explainer.query(`SELECT max(n)::int AS n FROM (SELECT count(*) AS n FROM ${list} GROUP BY price_bucket(price)) b`);
      const bucketRows: number = rows[0].n;
      for (const [range, reads] of ranges) {
        const path = `/v1/${list}?${list === 'orders' ? range.replace(/status=(active|expired)/, 'status=completed') : range}&limit=20`;
        const res = await server.rest('GET', path);
        const expected = await recount(list, new URLSearchParams(path.split('?')[1]));
        expect({ path, count: res.body.remaining + res.body.result.length }).toEqual({ path, count: expected });
        const counts = (await planned(() => server.rest('GET', path))).flatMap((s) => aggregates(s.plan));
        const scans = counts.flatMap(scansOf);
        // Besides the edges, only the offers that ended and the sweeper has not marked yet (those ending while this runs).
        const read = scans.reduce((sum, scan) => sum + rowsOf(scan), 0);
        expect({ path, read: read <= (reads === 'whole' ? 0 : 2 * bucketRows) + 50 }).toEqual({ path, read: true });
        expect({ path, seqScans: scans.filter((scan) => scan['Node Type'] === 'Seq Scan').length }).toEqual({ path, seqScans: 0 });
      }
    }
  }, 120_000);
});

// Last in the file: it gives every offer and order one creation time.
onPostgres('statement shapes when the rows were made in one transaction', () => {
  test('when every offer and order shares its created_at (an import, a backfill), then a later page of one contract, collection, taker or token walks that filter\'s index, not the whole created_at index', async () => {
    // The planner then guesses the rows past any cursor to be none, and once walked ix_offers_created through
    // every offer, filtering by the contract (2,500,000 at 10,000,000 assets: a 503 after 10 s).
    await explainer.query(`UPDATE offers SET created_at = '2026-01-01T00:00:00Z'`);
    await explainer.query(`UPDATE orders SET created_at = '2026-01-01T00:00:00Z'`);
    await explainer.query('ANALYZE offers, orders');
    const found: Record<string, string[]> = {};
    for (const direction of DIRECTIONS) {
      for (const filter of [`token_address=${someContract}`, `collection_id=${someCollection}`, `owner_id=${someTaker}`, 'token_id=3'])
        Object.assign(found, await restProblems(`/v1/offers?direction=${direction}&limit=20&${filter}`, 'scanned'));
      for (const filter of [`token_address=${someContract}`, `collection_id=${someCollection}`, 'token_id=3'])
        Object.assign(found, await restProblems(`/v1/orders?direction=${direction}&limit=20&${filter}`, 'scanned'));
    }
    expect(found).toEqual({});
  }, 300_000);
});

const OFFERS_CONNECTION = `query ($orderBy: OfferOrderBy, $direction: SortDirection, $status: OfferStatus, $after: String) {
  list: offers(orderBy: $orderBy, direction: $direction, status: $status, first: 20, after: $after) { totalCount edges { cursor node { id price } } } }`;
const ORDERS_CONNECTION = `query ($orderBy: OrderOrderBy, $direction: SortDirection, $status: OrderStatus, $after: String) {
  list: orders(orderBy: $orderBy, direction: $direction, status: $status, first: 20, after: $after) { totalCount edges { cursor node { id price } } } }`;
const NESTED_OFFERS = `query ($orderBy: OfferOrderBy, $direction: SortDirection, $status: OfferStatus, $collection: String!, $token: Address!, $taker: Address!) {
  collection(id: $collection) { offers(orderBy: $orderBy, direction: $direction, status: $status) { remaining result { id } } }
  asset(tokenAddress: $token, tokenId: "5") { offers(orderBy: $orderBy, direction: $direction, status: $status) { remaining result { id } } }
  account(address: $taker) { offers(orderBy: $orderBy, direction: $direction, status: $status) { remaining result { id } } } }`;
const NESTED_ORDERS = `query ($orderBy: OrderOrderBy, $direction: SortDirection, $status: OrderStatus, $collection: String!, $taker: Address!) {
  collection(id: $collection) { orders(orderBy: $orderBy, direction: $direction, status: $status) { remaining result { id } } }
  account(address: $taker) { orders(orderBy: $orderBy, direction: $direction, status: $status) { remaining result { id } } } }`;
