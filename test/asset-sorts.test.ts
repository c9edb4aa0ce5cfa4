import { clock } from '../src/common/clock';
import { compactAssetCounts } from '../src/modules/asset/asset-counts';
import { currentPriceSql } from '../src/modules/listing/listing.sql';
import { Party } from './factories/market';
import { CollectionRow, saveAsset, saveCollection } from './factories/marketplace';
import { HttpResult, startServer, TestServer } from './setup/server';

/**
 * Issue #38: the assets list sorted by name, token id and last update (each an index of its own), and by
 * current price without a status (the listed walked by the price indexes, the unlisted after them by id),
 * pages through both doors, by cursor and by page number, in the order of sorting every asset from scratch;
 * `remaining` and `totalCount` of every asset and of a chain's read the kept counts (asset_counts, kept by
 * triggers in the writing transaction) and are exact, after writes too and under parallel writers while the
 * deltas are folded. The lists are of a chain of its own (a row of `chains`, no node behind it), so other
 * files' assets on the shared database do not move them.
 */
const CHAIN = '9900730';
const NATIVE = `0x${'0'.repeat(40)}`;

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
  await server.ds.query(`INSERT INTO chains (id, name, symbol) VALUES ($1, 'Asset sorts test chain', 'ETH') ON CONFLICT DO NOTHING`, [CHAIN]);
  await server.ds.query(`INSERT INTO currencies (chain_id, address, symbol, decimals) VALUES ($1, $2, 'ETH', 18) ON CONFLICT DO NOTHING`, [CHAIN, NATIVE]);
});
afterAll(async () => {
  clock.reset();
  await server.close();
});

const ORDER_SQL: Record<string, (dir: string) => string> = {
  name: (dir) => `a.name ${dir}, a.id ${dir}`,
  token_id: (dir) => `a.token_id ${dir}, a.id ${dir}`,
  updated_at: (dir) => `a.updated_at ${dir}, a.id ${dir}`,
  created_at: (dir) => `a.created_at ${dir}, a.id ${dir}`,
  // Unlisted assets (no price) last either way, by id.
  current_price: (dir) => `${currentPriceSql('l', '$2')} ${dir} NULLS LAST, a.id ${dir}`,
};

/** The chain's assets in `orderBy`, `direction`, sorted from scratch at the clock's moment. */
async function sortedFromScratch(orderBy: string, direction: string): Promise<string[]> {
  const rows: { id: string }[] = await server.ds.query(
    `SELECT a.id FROM assets a LEFT JOIN listings l ON l.asset_id = a.id AND l.status = 'active' AND (l.closing_date IS NULL OR l.closing_date > $2)
     WHERE a.chain_id = $1 ORDER BY ${ORDER_SQL[orderBy](direction.toUpperCase())}`,
    [CHAIN, clock.now()],
  );
  return rows.map((r) => r.id);
}

/** The chain's assets as GET /v1/assets pages them by cursor, `limit` a page, with each page's `remaining`. */
async function restPages(orderBy: string, direction: string, limit: number): Promise<{ ids: string[]; remaining: number[] }> {
  const ids: string[] = [];
  const remaining: number[] = [];
  let cursor: string | null = null;
  do {
    const res: HttpResult = await server.rest(
      'GET',
      `/v1/assets?chain_id=${CHAIN}&order_by=${orderBy}&direction=${direction}&limit=${limit}${cursor ? `&page=${encodeURIComponent(cursor)}` : ''}`,
    );
    expect(res.status).toBe(200);
    ids.push(...res.body.result.map((a: { id: string }) => a.id));
    remaining.push(res.body.remaining);
    cursor = res.body.cursor;
  } while (cursor);
  return { ids, remaining };
}

/** The chain's assets as GraphQL's connection pages them (`first`, `after`), with each page's totalCount. */
async function connectionPages(orderBy: string, direction: string, first: number): Promise<{ ids: string[]; totals: number[] }> {
  const ids: string[] = [];
  const totals: number[] = [];
  let after: string | null = null;
  do {
    const res: HttpResult = await server.gql(
      `query ($chainId: String, $orderBy: AssetOrderBy, $direction: SortDirection, $after: String) {
        assets(chainId: $chainId, orderBy: $orderBy, direction: $direction, first: ${first}, after: $after) {
          totalCount edges { node { id } } pageInfo { hasNextPage endCursor } } }`,
      { chainId: CHAIN, orderBy: orderBy.toUpperCase(), direction: direction.toUpperCase(), after },
    );
    expect(res.body.errors).toBeUndefined();
    const page = res.body.data.assets;
    ids.push(...page.edges.map((e: { node: { id: string } }) => e.node.id));
    totals.push(page.totalCount);
    after = page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null;
  } while (after);
  return { ids, totals };
}

/** The kept counts of every chain and a recount from scratch, in one snapshot. */
async function keptAndRecounted(): Promise<{ kept: unknown; recount: unknown }> {
  const [row] = await server.ds.query(`SELECT
    (SELECT COALESCE(jsonb_object_agg(chain_id, n), '{}') FROM (SELECT chain_id, sum(n) n FROM asset_counts GROUP BY 1 HAVING sum(n) <> 0) k) AS kept,
    (SELECT COALESCE(jsonb_object_agg(chain_id, n), '{}') FROM (SELECT chain_id, count(*) n FROM assets GROUP BY 1) r) AS recount`);
  return row;
}

/** How many assets of the chain GET /v1/assets and GraphQL's totalCount say there are (all, or unlisted). */
async function counted(status?: 'unlisted'): Promise<{ rest: number; totalCount: number }> {
  const res = await server.rest('GET', `/v1/assets?chain_id=${CHAIN}&limit=1${status ? `&status=${status}` : ''}`);
  expect(res.status).toBe(200);
  const gql = await server.gql(`query ($status: AssetStatus) { assets(chainId: "${CHAIN}", status: $status, first: 1) { totalCount } }`, {
    status: status?.toUpperCase() ?? null,
  });
  expect(gql.body.errors).toBeUndefined();
  return { rest: res.body.remaining + res.body.result.length, totalCount: gql.body.data.assets.totalCount };
}

async function recounted(status?: 'unlisted'): Promise<number> {
  const [{ n }] = await server.ds.query(
    `SELECT count(*)::int AS n FROM assets a WHERE a.chain_id = $1
       AND ($3::boolean IS NOT TRUE OR NOT EXISTS (SELECT 1 FROM listings l WHERE l.asset_id = a.id AND l.status = 'active' AND (l.closing_date IS NULL OR l.closing_date > $2)))`,
    [CHAIN, clock.now(), status === 'unlisted'],
  );
  return n;
}

describe('assets by name, token id, last update and current price', () => {
  let owners: Party[];
  let collections: CollectionRow[];

  beforeAll(async () => {
    owners = await Promise.all([server.key(), server.key()]);
    collections = await Promise.all(owners.map((owner) => saveCollection(server, owner.key, { chainId: CHAIN })));
    // Names that tie (broken by id), token ids that tie across the two collections, some assets listed at
    // prices that tie, the others unlisted.
    const names = ['Bravo', 'alpha', 'Bravo', 'Charlie', 'bravo', 'Alpha', 'Bravo'];
    const assets: { id: string; owner: Party }[] = [];
    for (const [o, owner] of owners.entries()) for (const name of names) assets.push({ ...(await saveAsset(server, owner.key, collections[o], owner.address, { name })), owner });
    for (const [i, asset] of assets.entries()) {
      if (i % 3 === 2) continue;
      const res = await server.rest('POST', '/v1/assets/listing', { asset_id: asset.id, start_price: String(1 + (i % 4) / 2), currency: 'ETH' }, asset.owner.key);
      expect(res.status).toBe(200);
    }
  }, 120_000);

  test.each([
    ['name', 'asc'],
    ['name', 'desc'],
    ['token_id', 'asc'],
    ['token_id', 'desc'],
    ['updated_at', 'asc'],
    ['updated_at', 'desc'],
    ['current_price', 'asc'],
    ['current_price', 'desc'],
  ])('when the chain\'s assets are paged by %s %s through both doors, then they come in the order of sorting them all from scratch, with exact counts', async (orderBy, direction) => {
    const expected = await sortedFromScratch(orderBy, direction);
    expect(expected.length).toBe(14);
    const rest = await restPages(orderBy, direction, 3);
    expect(rest).toEqual({ ids: expected, remaining: rest.remaining.map((_, i) => Math.max(0, expected.length - 3 * (i + 1))) });
    const connection = await connectionPages(orderBy, direction, 4);
    expect(connection).toEqual({ ids: expected, totals: connection.totals.map(() => expected.length) });
    // Page 2 and the last page by number.
    for (const page of [2, 5]) {
      const res = await server.rest('GET', `/v1/assets?chain_id=${CHAIN}&order_by=${orderBy}&direction=${direction}&limit=3&page=${page}`);
      expect({ page, ids: res.body.result.map((a: { id: string }) => a.id), remaining: res.body.remaining }).toEqual({
        page,
        ids: expected.slice(3 * (page - 1), 3 * page),
        remaining: Math.max(0, expected.length - 3 * page),
      });
    }
  }, 120_000);

  test('when assets are created and listed after a first count, then every count of the chain, all and unlisted, is still a recount', async () => {
    const before = await counted();
    expect(before).toEqual({ rest: await recounted(), totalCount: await recounted() });
    const owner = owners[0];
    const made = [await saveAsset(server, owner.key, collections[0], owner.address), await saveAsset(server, owner.key, collections[0], owner.address)];
    expect((await server.rest('POST', '/v1/assets/listing', { asset_id: made[0].id, start_price: '0.5', currency: 'ETH' }, owner.key)).status).toBe(200);
    const all = await recounted();
    expect(all).toBe(before.rest + 2);
    expect(await counted()).toEqual({ rest: all, totalCount: all });
    const unlisted = await recounted('unlisted');
    expect(await counted('unlisted')).toEqual({ rest: unlisted, totalCount: unlisted });
    // The cheapest now comes first, remaining counted from the kept count.
    const first = await server.rest('GET', `/v1/assets?chain_id=${CHAIN}&order_by=current_price&direction=asc&limit=1`);
    expect({ id: first.body.result[0].id, remaining: first.body.remaining }).toEqual({ id: made[0].id, remaining: all - 1 });
  }, 120_000);
});

describe('kept counts of assets', () => {
  test('when assets are created in parallel in several collections while the counts are folded, then the kept counts equal a recount from scratch and the chain counts exactly', async () => {
    const owners = await Promise.all(Array.from({ length: 3 }, () => server.key()));
    const collections = await Promise.all(owners.map((owner) => saveCollection(server, owner.key, { chainId: CHAIN })));
    let folding = true;
    const folder = (async () => {
      while (folding) await compactAssetCounts(server.ds, 0);
    })();
    try {
      await Promise.all(owners.flatMap((owner, o) => Array.from({ length: 6 }, () => saveAsset(server, owner.key, collections[o], owner.address))));
    } finally {
      folding = false;
      await folder;
    }
    const { kept, recount } = await keptAndRecounted();
    expect(kept).toEqual(recount);
    const n = await recounted();
    expect(await counted()).toEqual({ rest: n, totalCount: n });
    expect(n).toBeGreaterThanOrEqual(18);
  }, 120_000);
});
