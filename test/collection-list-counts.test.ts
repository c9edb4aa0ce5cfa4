import { randomAddress, startServer, TestServer } from './setup/server';

/**
 * The collections list's `remaining` and `totalCount` by chain, category and status come from counts the
 * writes keep (`collection_counts`, migration 1765840000000), not from counting the collections: after
 * creates (some racing), category and status changes and deletes, every combination of the counted filters
 * answers exactly what counting the rows answers, through both doors, on the first page and after a cursor;
 * and the kept rows equal a recount from scratch. The market is a chain of this file's own.
 */
const CHAIN = '990074';
const CATEGORIES = [null, 'art', 'gaming'] as const;
const STATUSES = [null, 'verified', 'unverified'] as const;

let server: TestServer;
let owner: { key: string; address: string };
let admin: { key: string; address: string };

beforeAll(async () => {
  server = await startServer();
  await server.ds.query(`INSERT INTO chains (id, name, symbol) VALUES ($1, 'Collection counts test chain', 'ETH') ON CONFLICT DO NOTHING`, [CHAIN]);
  owner = await server.key();
  admin = await server.key({ admin: true });
});
afterAll(async () => {
  await server.close();
});

async function create(category: string | null): Promise<{ id: string; contract_address: string }> {
  const body = { contract_address: randomAddress(), chain_id: CHAIN, name: `Counted ${Math.random().toString(36).slice(2, 8)}`, ...(category && { category_id: category }) };
  const res = await server.rest('POST', '/v1/collections', body, owner.key);
  if (res.status !== 200) throw new Error(`POST /v1/collections: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** The collections of the chain matching the filters, counted row by row. */
async function counted(category: string | null, status: string | null): Promise<number> {
  const rows: { n: number }[] = await server.ds.query(
    `SELECT count(*)::int AS n FROM collections WHERE chain_id = $1 AND ($2::text IS NULL OR category_id = $2) AND ($3::text IS NULL OR status = $3)`,
    [CHAIN, category, status],
  );
  return rows[0].n;
}

const COLLECTIONS = `query ($chainId: String, $categoryId: String, $status: CollectionStatus, $after: String, $orderBy: CollectionOrderBy! = CREATED_AT, $direction: SortDirection) {
  collections(chainId: $chainId, categoryId: $categoryId, status: $status, first: 4, after: $after, orderBy: $orderBy, direction: $direction) { totalCount edges { cursor } } }`;

/** The sorts a later page's counts are checked under: total_supply is null for some collections (a nullable sort). */
const SORTS: { rest: Record<string, string>; gql: Record<string, string> }[] = [
  { rest: {}, gql: {} },
  { rest: { order_by: 'total_supply', direction: 'asc' }, gql: { orderBy: 'TOTAL_SUPPLY', direction: 'ASC' } },
  { rest: { order_by: 'total_supply', direction: 'desc' }, gql: { orderBy: 'TOTAL_SUPPLY', direction: 'DESC' } },
  { rest: { order_by: 'name' }, gql: { orderBy: 'NAME' } },
];

async function expectCountsExact(): Promise<void> {
  for (const category of CATEGORIES)
    for (const status of STATUSES)
      for (const sort of SORTS) {
      const expected = await counted(category, status);
      const filters = new URLSearchParams({ chain_id: CHAIN, limit: '4', ...(category && { category_id: category }), ...(status && { status }), ...sort.rest });
      const first = await server.rest('GET', `/v1/collections?${filters}`);
      expect(first.status).toBe(200);
      const shown = { category, status, total: first.body.remaining + first.body.result.length };
      expect({ ...shown, sort }).toEqual({ category, status, total: expected, sort });
      if (first.body.cursor) {
        const next = await server.rest('GET', `/v1/collections?${filters}&page=${encodeURIComponent(first.body.cursor)}`);
        expect(next.status).toBe(200);
        expect({ category, status, sort, total: first.body.result.length + next.body.result.length + next.body.remaining }).toEqual({ category, status, sort, total: expected });
      }
      const variables = { chainId: CHAIN, categoryId: category, status: status?.toUpperCase() ?? null, ...sort.gql };
      const gql = await server.gql(COLLECTIONS, variables);
      expect(gql.body.errors).toBeUndefined();
      expect({ category, status, totalCount: gql.body.data.collections.totalCount }).toEqual({ category, status, totalCount: expected });
      const cursor = gql.body.data.collections.edges.at(-1)?.cursor;
      if (cursor) {
        const later = await server.gql(COLLECTIONS, { ...variables, after: cursor });
        expect(later.body.errors).toBeUndefined();
        expect({ category, status, sort, totalCount: later.body.data.collections.totalCount }).toEqual({ category, status, sort, totalCount: expected });
      }
    }
  // The kept rows are a recount from scratch (groups of none left may stay at 0).
  const kept: unknown[] = await server.ds.query(
    `SELECT category_id, status, collections::int AS n FROM collection_counts WHERE chain_id = $1 AND collections <> 0 ORDER BY 1 NULLS FIRST, 2`,
    [CHAIN],
  );
  const recount: unknown[] = await server.ds.query(
    `SELECT category_id, status, count(*)::int AS n FROM collections WHERE chain_id = $1 GROUP BY 1, 2 ORDER BY 1 NULLS FIRST, 2`,
    [CHAIN],
  );
  expect(kept).toEqual(recount);
}

test('when collections are created (some at once), re-categorised, verified and deleted, then the list counts every combination of chain, category and status exactly, on both doors, before and after a cursor', async () => {
  const made = [];
  for (let i = 0; i < 9; i++) made.push(await create(CATEGORIES[i % 3]));
  // Racing creates: each statement's trigger adds to the same groups.
  made.push(...(await Promise.all(Array.from({ length: 12 }, (_, i) => create(CATEGORIES[i % 3])))));
  // Some with a total supply, the others none: a later page of a sort by it starts among nulls or values.
  await server.ds.query(`UPDATE collections SET total_supply = 10 + (random() * 5)::int WHERE id = ANY($1::uuid[])`, [made.filter((_, i) => i % 2).map((c) => c.id)]);
  await expectCountsExact();

  // Verified by an admin (REST), moved to another category (SQL, as an operator would), deleted.
  for (const c of made.slice(0, 7)) expect((await server.rest('PUT', `/v1/collections/${c.contract_address}`, { status: 'verified' }, admin.key)).status).toBe(200);
  await server.ds.query(`UPDATE collections SET category_id = 'gaming' WHERE id = ANY($1::uuid[])`, [made.slice(3, 6).map((c) => c.id)]);
  await server.ds.query(`UPDATE collections SET category_id = NULL, status = 'unverified' WHERE id = $1`, [made[7].id]);
  await server.ds.query(`DELETE FROM collections WHERE id = ANY($1::uuid[])`, [made.slice(15, 18).map((c) => c.id)]);
  await expectCountsExact();
}, 120_000);
