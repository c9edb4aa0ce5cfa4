import { clock } from '../src/common/clock';
import { compactListedAssetCounts } from '../src/modules/listing/listed-counts';
import { currentPriceSql } from '../src/modules/listing/listing.sql';
import { Party } from './factories/market';
import { CollectionRow, saveAsset, saveCollection } from './factories/marketplace';
import { HttpResult, startServer, TestServer } from './setup/server';
import { HOUR, later, SECOND } from './setup/time';

/**
 * Issue #38: the counts of listed assets that `remaining` and `totalCount` read (listed_asset_counts, kept by
 * triggers in the writing transaction) equal a count from scratch: on random markets read at moments when
 * listings have closed, before and after the sweeper marks them, with the clock moved back behind its marks;
 * on pages after a cursor (by current price and by date); and under parallel writers while the deltas are
 * folded. A collection's assets by current price (walked by the price indexes, its unlisted ones after, by
 * id) are in the order of pricing every asset from scratch, on /v1 and in Collection.assets. The lists here are of a chain of its own (a row of `chains`, no node behind it), so other files'
 * listings on the shared database do not move them.
 */
const CHAIN = '9900381';
const NATIVE = `0x${'0'.repeat(40)}`;
/** A second currency of the chain. */
const TOKEN = `0x${'c0'.repeat(20)}`;

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
  await server.ds.query(`INSERT INTO chains (id, name, symbol) VALUES ($1, 'Listed counts test chain', 'ETH') ON CONFLICT DO NOTHING`, [CHAIN]);
  await server.ds.query(
    `INSERT INTO currencies (chain_id, address, symbol, decimals) VALUES ($1, $2, 'ETH', 18), ($1, $3, 'CNTS', 18) ON CONFLICT DO NOTHING`,
    [CHAIN, NATIVE, TOKEN],
  );
});
afterAll(async () => {
  clock.reset();
  await server.close();
});

/** A random number generator of a seed (mulberry32): a failing market is made again from its seed. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The kept counts and a recount from scratch of every listing stored active by group, in one snapshot. */
async function keptAndRecounted(): Promise<{ kept: unknown; recount: unknown }> {
  const [row] = await server.ds.query(`SELECT
    (SELECT COALESCE(jsonb_object_agg(g, n), '{}') FROM (SELECT concat_ws('/', collection_id, chain_id, currency, swept) g, sum(n) n
       FROM listed_asset_counts GROUP BY 1 HAVING sum(n) <> 0) k) AS kept,
    (SELECT COALESCE(jsonb_object_agg(g, n), '{}') FROM (
       SELECT concat_ws('/', x.collection_id, c.chain_id, l.currency, l.expiry_swept) g, count(*) n FROM listings l JOIN collections c ON c.id = l.collection_id
       CROSS JOIN LATERAL (VALUES (l.collection_id), ('00000000-0000-0000-0000-000000000000'::uuid)) x(collection_id)
       WHERE l.status = 'active' GROUP BY 1) r) AS recount`);
  return row;
}

/** A list of the chain's assets, by the filters of /v1/assets. */
interface AssetList {
  status?: 'listed' | 'unlisted';
  collection?: string;
  currency?: string;
  /** Without the chain's filter (a collection is of one chain). */
  anyChain?: boolean;
}

const query = (list: AssetList) =>
  [list.anyChain ? '' : `chain_id=${CHAIN}`, list.status && `status=${list.status}`, list.collection && `collection_id=${list.collection}`, list.currency && `currency=${list.currency}`]
    .filter(Boolean)
    .join('&');

/** How many assets the list holds at the clock's moment, counted row by row. */
async function recounted(list: AssetList): Promise<number> {
  const where = [`a.chain_id = $1`];
  const params: unknown[] = [CHAIN, clock.now()];
  if (list.collection) where.push(`a.collection_id = $${params.push(list.collection)}`);
  if (list.currency) where.push(`l.currency IN (SELECT address FROM currencies WHERE chain_id = $1 AND symbol = $${params.push(list.currency)})`);
  if (list.status === 'unlisted') where.push('l.id IS NULL');
  else if (list.status === 'listed' || list.currency) where.push('l.id IS NOT NULL');
  const [{ n }] = await server.ds.query(
    `SELECT count(*)::int AS n FROM assets a LEFT JOIN listings l ON l.asset_id = a.id AND l.status = 'active' AND (l.closing_date IS NULL OR l.closing_date > $2)
     WHERE ${where.join(' AND ')}`,
    params,
  );
  return n;
}

/** How many assets GET /v1/assets and GraphQL's totalCount say the list holds. */
async function counted(list: AssetList): Promise<{ rest: number; totalCount: number }> {
  const res = await server.rest('GET', `/v1/assets?limit=1&${query(list)}`);
  expect(res.status).toBe(200);
  const gql = await server.gql(
    `query ($chainId: String, $status: AssetStatus, $collectionId: String, $currency: String) {
      assets(chainId: $chainId, status: $status, collectionId: $collectionId, currency: $currency, first: 1) { totalCount } }`,
    { chainId: list.anyChain ? null : CHAIN, status: list.status?.toUpperCase() ?? null, collectionId: list.collection ?? null, currency: list.currency ?? null },
  );
  expect(gql.body.errors).toBeUndefined();
  return { rest: res.body.remaining + res.body.result.length, totalCount: gql.body.data.assets.totalCount };
}

/** Every page of the list in `order`, `limit` a page, by cursor: each page's `remaining` and the connection's totalCount after each cursor. */
async function pagedCounts(list: AssetList, order: string, limit: number): Promise<{ seen: number; remaining: number[]; totals: number[] }> {
  const remaining: number[] = [];
  const totals: number[] = [];
  let seen = 0;
  let cursor: string | null = null;
  const [orderBy, direction] = order.split(':');
  do {
    const res: HttpResult = await server.rest('GET', `/v1/assets?${query(list)}&order_by=${orderBy}&direction=${direction}&limit=${limit}${cursor ? `&page=${encodeURIComponent(cursor)}` : ''}`);
    expect(res.status).toBe(200);
    seen += res.body.result.length;
    remaining.push(res.body.remaining);
    cursor = res.body.cursor;
    if (cursor) {
      const gql = await server.gql(
        `query ($after: String, $orderBy: AssetOrderBy, $direction: SortDirection, $status: AssetStatus, $collectionId: String, $currency: String) {
          assets(chainId: "${CHAIN}", status: $status, collectionId: $collectionId, currency: $currency, orderBy: $orderBy, direction: $direction, first: ${limit}, after: $after) { totalCount } }`,
        { after: cursor, orderBy: orderBy.toUpperCase(), direction: direction.toUpperCase(), status: list.status?.toUpperCase() ?? null, collectionId: list.collection ?? null, currency: list.currency ?? null },
      );
      expect(gql.body.errors).toBeUndefined();
      totals.push(gql.body.data.assets.totalCount);
    }
  } while (cursor);
  return { seen, remaining, totals };
}

/** The collection's assets by current price at the clock's moment, priced from scratch (unlisted last, by id). */
async function pricedFromScratch(collectionId: string, direction: string): Promise<string[]> {
  const dir = direction === 'asc' ? 'ASC' : 'DESC';
  const rows: { id: string }[] = await server.ds.query(
    `SELECT a.id FROM assets a LEFT JOIN listings l ON l.asset_id = a.id AND l.status = 'active' AND (l.closing_date IS NULL OR l.closing_date > $2)
     WHERE a.collection_id = $1 ORDER BY ${currentPriceSql('l', '$2')} ${dir} NULLS LAST, a.id ${dir}`,
    [collectionId, clock.now()],
  );
  return rows.map((r) => r.id);
}

/** The collection's assets by current price as /v1/assets pages them and as Collection.assets does (by cursor, `limit` a page). */
async function pricedPages(collection: CollectionRow, direction: string, limit: number): Promise<{ rest: string[]; nested: string[] }> {
  const rest: string[] = [];
  let cursor: string | null = null;
  do {
    const res: HttpResult = await server.rest('GET', `/v1/assets?collection_id=${collection.id}&order_by=current_price&direction=${direction}&limit=${limit}${cursor ? `&page=${encodeURIComponent(cursor)}` : ''}`);
    expect(res.status).toBe(200);
    rest.push(...res.body.result.map((a: { id: string }) => a.id));
    cursor = res.body.cursor;
  } while (cursor);
  const nested: string[] = [];
  let after: string | null = null;
  do {
    const res: HttpResult = await server.gql(
      `query ($address: Address, $chainId: String, $direction: SortDirection, $after: String) { collection(address: $address, chainId: $chainId) {
        assets(orderBy: CURRENT_PRICE, direction: $direction, first: ${limit}, after: $after) { edges { node { id } } pageInfo { hasNextPage endCursor } } } }`,
      { address: collection.contractAddress, chainId: CHAIN, direction: direction.toUpperCase(), after },
    );
    expect(res.body.errors).toBeUndefined();
    const page = res.body.data.collection.assets;
    nested.push(...page.edges.map((e: { node: { id: string } }) => e.node.id));
    after = page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null;
  } while (after);
  return { rest, nested };
}

/** What the expiry sweeper marks at `now`, for these collections only (the real sweep would mark other files' listings too). */
async function sweep(collections: string[], now: Date): Promise<void> {
  await server.ds.query(
    `UPDATE listings SET expiry_swept = true WHERE collection_id = ANY($1::uuid[]) AND status = 'active' AND NOT expiry_swept AND closing_date <= $2`,
    [collections, now],
  );
}

/** Lists the asset through /v1; the answer's status. */
async function list(owner: Party, assetId: string, terms: Record<string, unknown>): Promise<HttpResult> {
  return server.rest('POST', '/v1/assets/listing', { asset_id: assetId, ...terms }, owner.key);
}

/** Random terms: a fixed price (for good, or until a moment), a dutch or an english auction, in ETH or CNTS. */
function randomTerms(rand: () => number): Record<string, unknown> {
  const kind = ['fixed_price', 'fixed_price', 'dutch_auction', 'english_auction'][Math.floor(rand() * 4)];
  const duration = [600, 3600, 7200, 86400][Math.floor(rand() * 4)];
  const price = (1 + Math.floor(rand() * 50) / 10).toFixed(1);
  return {
    order_type: kind,
    start_price: price,
    ...(kind === 'dutch_auction' && { accept_price: (Number(price) / 2).toFixed(2) }),
    ...((kind !== 'fixed_price' || rand() < 0.5) && { expiration_time: { duration_seconds: duration } }),
    currency: rand() < 0.7 ? 'ETH' : 'CNTS',
  };
}

describe('kept counts of listed assets', () => {
  test.each([1, 2, 3])('when a random market (seed %i) is read as its listings close, are swept, and the clock moves back and forth, then every list counts exactly what a recount finds, on every page', async (seed) => {
    const rand = random(seed);
    const start = new Date(Math.floor(Date.now() / SECOND) * SECOND);
    clock.set(start);
    const owners = await Promise.all([server.key(), server.key()]);
    const buyer = await server.key();
    const collections: CollectionRow[] = [];
    const assets: { id: string; owner: Party; tokenAddress: string; tokenId: string }[] = [];
    for (const owner of owners) {
      const collection = await saveCollection(server, owner.key, { chainId: CHAIN });
      collections.push(collection);
      for (let i = 0; i < 6; i += 1) assets.push({ ...(await saveAsset(server, owner.key, collection, owner.address)), owner });
    }
    const listingIds: string[] = [];
    for (const asset of assets) {
      if (rand() < 0.2) continue;
      const res = await list(asset.owner, asset.id, randomTerms(rand));
      expect(res.status).toBe(200);
      listingIds.push(res.body.id);
      // Some listings are cancelled, some bought (a fixed price only: the others are refused), some replaced.
      const fate = rand();
      if (fate < 0.15) expect((await server.rest('DELETE', `/v1/assets/listing/${asset.tokenAddress}/${asset.tokenId}?chain_id=${CHAIN}`, undefined, asset.owner.key)).status).toBe(200);
      else if (fate < 0.3) await server.rest('POST', `/v1/listings/${res.body.id}/buy`, {}, buyer.key);
    }
    const ids = collections.map((c) => c.id);
    const lists: AssetList[] = [
      { status: 'listed' },
      { status: 'listed', collection: ids[0] },
      { status: 'listed', collection: ids[1], currency: 'CNTS' },
      { currency: 'ETH' },
      { status: 'listed', currency: 'CNTS' },
      { status: 'listed', collection: ids[0], anyChain: true },
      { status: 'unlisted', collection: ids[1], anyChain: true },
    ];
    // Moments after some listings closed, swept or not, then behind the sweeper's marks.
    const moments: [number, boolean][] = [
      [0, false],
      [11 * 60 * SECOND, false],
      [11 * 60 * SECOND, true],
      [2 * HOUR + SECOND, true],
      [30 * 60 * SECOND, false],
      [25 * HOUR, false],
      [25 * HOUR, true],
      [5 * SECOND, false],
    ];
    for (const [offset, swept] of moments) {
      const now = later(start, offset);
      clock.set(now);
      if (swept) await sweep(ids, now);
      const { kept, recount } = await keptAndRecounted();
      expect(kept).toEqual(recount);
      for (const l of lists) {
        const n = await recounted(l);
        expect({ offset, swept, list: l, ...(await counted(l)) }).toEqual({ offset, swept, list: l, rest: n, totalCount: n });
      }
      // A collection's assets by current price (the listed walked by price, then the unlisted by id), both doors.
      for (const direction of ['asc', 'desc']) {
        const expected = await pricedFromScratch(ids[0], direction);
        expect({ direction, ...(await pricedPages(collections[0], direction, 2)) }).toEqual({ direction, rest: expected, nested: expected });
      }
      for (const order of ['current_price:asc', 'current_price:desc', 'created_at:desc']) {
        const l = lists[rand() < 0.5 ? 0 : 4];
        const n = await recounted(l);
        const paged = await pagedCounts(l, order, 2);
        expect({ order, list: l, seen: paged.seen, remaining: paged.remaining, totals: paged.totals }).toEqual({
          order,
          list: l,
          seen: n,
          remaining: paged.remaining.map((_, i) => Math.max(0, n - 2 * (i + 1))),
          totals: paged.totals.map(() => n),
        });
      }
    }
  }, 300_000);

  test('when sellers list, relist, cancel and buyers buy in parallel while the counts are folded, then the kept counts equal a recount from scratch and every list counts exactly', async () => {
    clock.reset();
    const owners = await Promise.all(Array.from({ length: 3 }, () => server.key()));
    const buyers = await Promise.all(Array.from({ length: 4 }, () => server.key()));
    const collections = await Promise.all(owners.map((owner) => saveCollection(server, owner.key, { chainId: CHAIN })));
    const assets = await Promise.all(
      owners.flatMap((owner, o) => Array.from({ length: 6 }, async () => ({ ...(await saveAsset(server, owner.key, collections[o], owner.address)), owner }))),
    );
    let folding = true;
    const folder = (async () => {
      while (folding) await compactListedAssetCounts(server.ds, 0);
    })();
    try {
      // One owner lists in bulk, the others asset by asset, all at once.
      const [bulk, ...single] = await Promise.all([
        server.rest('POST', '/v1/listings/bulk', { listings: assets.filter((a) => a.owner === owners[0]).map((a) => ({ asset_id: a.id, start_price: 2, currency: 'ETH' })) }, owners[0].key),
        ...assets
          .filter((a) => a.owner !== owners[0])
          .map((a, i) => list(a.owner, a.id, { start_price: 1 + i / 10, currency: i % 3 ? 'ETH' : 'CNTS', ...(i % 4 === 0 && { expiration_time: { duration_seconds: 3600 } }) })),
      ]);
      expect([bulk.status, ...single.map((r) => r.status)]).toEqual([201, ...single.map(() => 200)]);
      const listings: string[] = [...bulk.body.listings.map((l: { id: string }) => l.id), ...single.map((r) => r.body.id)];
      const others = assets.filter((a) => a.owner !== owners[0]);
      const written = await Promise.all([
        // Buyers race for the same listings (one each wins), a seller cancels every listing of theirs, others change prices.
        ...listings.slice(0, 4).flatMap((id) => buyers.slice(0, 2).map((b) => server.rest('POST', `/v1/listings/${id}/buy`, {}, b.key).then((r) => (r.status === 200 ? 'bought' : 'lost')))),
        server.rest('POST', '/v1/listings/cancel', { maker: owners[1].address }, owners[1].key).then((r) => r.status),
        ...others
          .filter((a) => a.owner === owners[2])
          .slice(0, 3)
          .map((a) => server.rest('PUT', `/v1/assets/listing/${a.tokenAddress}/${a.tokenId}?chain_id=${CHAIN}`, { start_price: 9 }, a.owner.key).then((r) => r.status)),
      ]);
      expect(written.filter((w) => w === 'bought')).toHaveLength(4);
      expect(written.slice(8)).toEqual([200, 200, 200, 200]);
    } finally {
      folding = false;
      await folder;
    }
    const { kept, recount } = await keptAndRecounted();
    expect(kept).toEqual(recount);
    const ids = collections.map((c) => c.id);
    for (const l of [{ status: 'listed' }, { currency: 'CNTS' }, ...ids.map((collection) => ({ status: 'listed', collection, anyChain: true }))] as AssetList[]) {
      const n = await recounted(l);
      expect({ list: l, ...(await counted(l)) }).toEqual({ list: l, rest: n, totalCount: n });
    }
    expect(await recounted({ status: 'listed' })).toBeGreaterThan(0);
  }, 120_000);
});
