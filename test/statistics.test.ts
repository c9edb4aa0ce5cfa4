import { clock } from '../src/common/clock';
import { HttpResult, randomAddress, startServer, TestServer } from './setup/server';
import { CollectionRow, saveAsset, saveCollection } from './factories/marketplace';
import { saveListing } from './factories/market';
import { saveOrderAt, setAssetOwner } from './factories/market-history';

let server: TestServer;

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** The frozen present of every test: the market below is laid out around it. */
const NOW = new Date('2035-06-15T12:00:00.000Z');
const ago = (ms: number) => new Date(NOW.getTime() - ms);

const PERIODS = ['1h', '6h', '24h', '7d', '30d', 'all'] as const;
type Period = (typeof PERIODS)[number];
const PERIOD_MS: Record<Period, number | null> = { '1h': HOUR, '6h': 6 * HOUR, '24h': DAY, '7d': 7 * DAY, '30d': 30 * DAY, all: null };

type Name = 'main' | 'dutch' | 'trending' | 'almost' | 'quiet' | 'empty';

interface Market {
  owner: { key: string; address: string };
  collections: Record<Name, CollectionRow>;
  /** The listing and asset that set each collection's floor at NOW. */
  floor: Partial<Record<Name, { listingId: string; assetId: string }>>;
  dutch: { listingId: string; assetId: string };
  /** main's listing at 1 that closes one second before NOW. */
  expiring: { listingId: string; assetId: string };
}

let market: Market;

/** Per period: [volume, total_transactions, is_trending, trend_volume, previous_volume]. */
type Figures = [number, number, 0 | 1, number, number];
const ZERO: Figures = [0, 0, 0, 0, 0];

/**
 * main:     sales 2.5 at now-24h (the boundary), 1 at now-30min, 4 at now-3d, 8 at now-40d, 0.5 at now-24h-1s;
 *           a failed order of 100 and a sale after now are ignored. Listings: 3 (the floor), 1 expired a
 *           second ago, 0.5 cancelled. Two holders.
 * dutch:    no sales; a fixed listing at 5 and a dutch auction 10 -> 2 from now-1h to now+1h (6 at now).
 * trending: 3 at now-1h and 2 at now-30h: 3 = 1.5 x 2 in 24h, trending.
 * almost:   2.99 at now-2h and 2 at now-25h: just under 1.5 x in 24h, not trending.
 * quiet:    one asset, nothing listed, nothing sold. empty: no assets at all.
 */
const EXPECTED: Record<Name, { holders: number; floor: number | null; figures: Record<Period, Figures> }> = {
  main: {
    holders: 2,
    floor: 3,
    figures: {
      '1h': [1, 1, 1, 1, 0],
      '6h': [1, 1, 1, 1, 0],
      '24h': [3.5, 2, 1, 3.5, 0.5],
      '7d': [8, 4, 1, 8, 0],
      '30d': [8, 4, 0, 8, 8],
      all: [16, 5, 1, 3.5, 0.5],
    },
  },
  dutch: { holders: 1, floor: 5, figures: { '1h': ZERO, '6h': ZERO, '24h': ZERO, '7d': ZERO, '30d': ZERO, all: ZERO } },
  trending: {
    holders: 1,
    floor: null,
    figures: {
      '1h': [3, 1, 1, 3, 0],
      '6h': [3, 1, 1, 3, 0],
      '24h': [3, 1, 1, 3, 2],
      '7d': [5, 2, 1, 5, 0],
      '30d': [5, 2, 1, 5, 0],
      all: [5, 2, 1, 3, 2],
    },
  },
  almost: {
    holders: 1,
    floor: null,
    figures: {
      '1h': [0, 0, 0, 0, 2.99],
      '6h': [2.99, 1, 1, 2.99, 0],
      '24h': [2.99, 1, 0, 2.99, 2],
      '7d': [4.99, 2, 1, 4.99, 0],
      '30d': [4.99, 2, 1, 4.99, 0],
      all: [4.99, 2, 0, 2.99, 2],
    },
  },
  quiet: { holders: 1, floor: null, figures: { '1h': ZERO, '6h': ZERO, '24h': ZERO, '7d': ZERO, '30d': ZERO, all: ZERO } },
  empty: { holders: 0, floor: null, figures: { '1h': ZERO, '6h': ZERO, '24h': ZERO, '7d': ZERO, '30d': ZERO, all: ZERO } },
};

const NAMES = Object.keys(EXPECTED) as Name[];

/** The record of a collection as GET /v1/statistics shows it. */
function expectedRecord(name: Name, period: Period) {
  const e = EXPECTED[name];
  const [volume, transactions, trending, trendVolume, previousVolume] = e.figures[period];
  const ms = PERIOD_MS[period];
  const floor = market.floor[name];
  return {
    collection: expect.objectContaining({ id: market.collections[name].id, name: market.collections[name].name }),
    chain: { id: '1', name: 'Ethereum', symbol: 'ETH' },
    floor_price: e.floor,
    floor_price_decimal: e.floor === null ? null : String(e.floor),
    floor_listing_id: floor?.listingId ?? null,
    floor_asset_id: floor?.assetId ?? null,
    floor_listing:
      floor && e.floor !== null
        ? {
            id: floor.listingId,
            price: e.floor,
            price_decimal: String(e.floor),
            asset_id: floor.assetId,
            token_address: market.collections[name].contractAddress,
            token_id: expect.any(String),
          }
        : null,
    as_of: NOW.toISOString(),
    trending_score: trendVolume + previousVolume > 0 ? trendVolume / (trendVolume + previousVolume) : 0,
    volume,
    volume_decimal: String(volume),
    total_holders: e.holders,
    total_transactions: transactions,
    period,
    is_trending: trending,
    period_start: ms === null ? null : ago(ms).toISOString(),
    period_end: NOW.toISOString(),
    trend_volume: trendVolume,
    trend_volume_decimal: String(trendVolume),
    previous_volume: previousVolume,
    previous_volume_decimal: String(previousVolume),
  };
}

async function buildMarket(): Promise<Market> {
  const owner = await server.key();
  const collections = {} as Record<Name, CollectionRow>;
  for (const name of NAMES) collections[name] = await saveCollection(server, owner.key, { name: `Stats ${name} ${Math.random().toString(36).slice(2, 8)}` });
  const asset = (name: Name) => saveAsset(server, owner.key, collections[name], owner.address);
  const floor: Market['floor'] = {};

  // Listings are made an hour before NOW, through the API, so their times are the server's.
  clock.set(ago(HOUR));
  const [m1, m2, m3, m4] = [await asset('main'), await asset('main'), await asset('main'), await asset('main')];
  const mainFloor = await saveListing(server, owner.key, m1.id, { startPrice: 3 });
  floor.main = { listingId: mainFloor.id, assetId: m1.id };
  const expiring = await saveListing(server, owner.key, m2.id, { startPrice: 1, expirationTime: { at: ago(SECOND).toISOString() } });
  await saveListing(server, owner.key, m3.id, { startPrice: 0.5 });
  const cancelled = await server.gql(CANCEL_LISTING, { tokenAddress: collections.main.contractAddress, tokenId: m3.tokenId }, owner.key);
  if (cancelled.body.errors) throw new Error(`cancelListing failed: ${JSON.stringify(cancelled.body.errors)}`);
  await setAssetOwner(server.ds, m4.id, randomAddress());

  const [d1, d2] = [await asset('dutch'), await asset('dutch')];
  const dutch = await saveListing(server, owner.key, d1.id, {
    orderType: 'DUTCH_AUCTION',
    startPrice: 10,
    acceptPrice: 2,
    expirationTime: { durationSeconds: 2 * 3600 },
  });
  const dutchFixed = await saveListing(server, owner.key, d2.id, { startPrice: 5 });
  floor.dutch = { listingId: dutchFixed.id, assetId: d2.id };
  clock.reset();

  await saveOrderAt(server.ds, m1.id, '2.5', ago(DAY));
  await saveOrderAt(server.ds, m2.id, '1', ago(30 * MINUTE));
  await saveOrderAt(server.ds, m3.id, '4', ago(3 * DAY));
  await saveOrderAt(server.ds, m4.id, '8', ago(40 * DAY));
  await saveOrderAt(server.ds, m1.id, '0.5', ago(DAY + SECOND));
  await saveOrderAt(server.ds, m2.id, '100', ago(10 * MINUTE), { status: 'failed' });
  await saveOrderAt(server.ds, m3.id, '50', new Date(NOW.getTime() + MINUTE));

  const t1 = await asset('trending');
  await saveOrderAt(server.ds, t1.id, '3', ago(HOUR));
  await saveOrderAt(server.ds, t1.id, '2', ago(30 * HOUR));
  const a1 = await asset('almost');
  await saveOrderAt(server.ds, a1.id, '2.99', ago(2 * HOUR));
  await saveOrderAt(server.ds, a1.id, '2', ago(25 * HOUR));
  await asset('quiet');

  return { owner, collections, floor, dutch: { listingId: dutch.id, assetId: d1.id }, expiring: { listingId: expiring.id, assetId: m2.id } };
}

beforeAll(async () => {
  server = await startServer();
  market = await buildMarket();
});
afterAll(() => server.close());
afterEach(() => clock.reset());

/** Every record of GET /v1/statistics with these parameters, paging by cursor (limit 100 unless given). */
async function restPages(query: Record<string, string>): Promise<any[][]> {
  const pages: any[][] = [];
  let page: string | null = null;
  do {
    const params: URLSearchParams = new URLSearchParams({ limit: '100', ...query, ...(page ? { page } : {}) });
    const res: HttpResult = await server.rest('GET', `/v1/statistics?${params}`);
    if (res.status !== 200) throw new Error(`GET /v1/statistics?${params}: ${res.status} ${JSON.stringify(res.body)}`);
    pages.push(res.body.result);
    page = res.body.cursor;
  } while (page);
  return pages;
}

/** Every record of the GraphQL statistics list with these arguments, paging by cursor with limit 100. */
async function graphqlPages(variables: Record<string, unknown>): Promise<any[][]> {
  const pages: any[][] = [];
  let page: string | null = null;
  do {
    const res: HttpResult = await server.gql(STATISTICS_PAGE, { ...variables, limit: 100, page });
    if (res.body.errors) throw new Error(`statistics: ${JSON.stringify(res.body.errors)}`);
    pages.push(res.body.data.statistics.result);
    page = res.body.data.statistics.cursor;
  } while (page);
  return pages;
}

const mine = (records: any[], id: (r: any) => string) => {
  const ids = new Set(NAMES.map((n) => market.collections[n].id));
  return records.filter((r) => ids.has(id(r)));
};
const nameOf = (id: string) => NAMES.find((n) => market.collections[n].id === id)!;

describe('statistics', () => {
  test.each(PERIODS)('when GET /v1/statistics?period=%s is paged through, then each of my collections has its exact figures', async (period) => {
    clock.set(NOW);
    const records = mine((await restPages({ period })).flat(), (r) => r.collection.id);
    expect(records).toHaveLength(NAMES.length);
    for (const record of records) expect(record).toEqual(expectedRecord(nameOf(record.collection.id), period));
  });

  test('when the GraphQL statistics list is paged through, then it shows the same figures in camelCase', async () => {
    clock.set(NOW);
    for (const period of ['24h', 'all'] as const) {
      const records = mine((await graphqlPages({ period: GRAPHQL_PERIOD[period] })).flat(), (r) => r.collectionId);
      expect(records).toHaveLength(NAMES.length);
      for (const r of records) {
        const e = expectedRecord(nameOf(r.collectionId), period);
        expect(r).toEqual({
          collectionId: market.collections[nameOf(r.collectionId)].id,
          floorPrice: e.floor_price,
          floorListingId: e.floor_listing_id,
          floorAssetId: e.floor_asset_id,
          volume: e.volume,
          totalHolders: e.total_holders,
          totalTransactions: e.total_transactions,
          period: GRAPHQL_PERIOD[period],
          isTrending: e.is_trending,
          periodStart: e.period_start,
          periodEnd: e.period_end,
          trendVolume: e.trend_volume,
          previousVolume: e.previous_volume,
          collection: { id: r.collectionId },
          chain: { chainId: '1' },
        });
      }
    }
  });

  test('when Collection.statistics is read for every period, then each collection has its exact figures', async () => {
    clock.set(NOW);
    const res = await server.gql(MY_COLLECTION_STATISTICS, { owner: market.owner.address });
    expect(res.body.errors).toBeUndefined();
    const collections = res.body.data.collections.result;
    expect(collections).toHaveLength(NAMES.length);
    for (const c of collections) {
      const name = nameOf(c.id);
      for (const period of PERIODS) {
        const e = expectedRecord(name, period);
        expect({ period, ...c[`p${period}`] }).toEqual({
          period,
          floorPrice: e.floor_price,
          floorListingId: e.floor_listing_id,
          floorAssetId: e.floor_asset_id,
          volume: e.volume,
          totalHolders: e.total_holders,
          totalTransactions: e.total_transactions,
          isTrending: e.is_trending,
          periodStart: e.period_start,
          periodEnd: e.period_end,
        });
      }
    }
  });

  test('when a dutch auction falls below the fixed listing, then it sets the floor', async () => {
    clock.set(NOW);
    const before = await collectionStatistics(market.collections.dutch.contractAddress);
    expect(before).toMatchObject({ floorPrice: 5, floorListingId: market.floor.dutch!.listingId });

    clock.set(new Date(NOW.getTime() + 30 * MINUTE)); // three quarters of the way from 10 to 2: 4
    const after = await collectionStatistics(market.collections.dutch.contractAddress);
    expect(after).toMatchObject({ floorPrice: 4, floorListingId: market.dutch.listingId, floorAssetId: market.dutch.assetId });
  });

  test('when the lowest listing reaches its closing date, then it no longer sets the floor', async () => {
    clock.set(ago(2 * SECOND));
    expect(await collectionStatistics(market.collections.main.contractAddress)).toMatchObject({
      floorPrice: 1,
      floorListingId: market.expiring.listingId,
      floorAssetId: market.expiring.assetId,
    });
    for (const moment of [ago(SECOND), NOW]) {
      clock.set(moment);
      expect(await collectionStatistics(market.collections.main.contractAddress)).toMatchObject({
        floorPrice: 3,
        floorListingId: market.floor.main!.listingId,
      });
    }
  });

  test.each([
    ['is_trending=1', '1', '1', ['main', 'trending']],
    ['is_trending=0', '0', '100', ['dutch', 'almost', 'quiet', 'empty']],
  ] as const)('when filtering by %s, then only those records come, over every page', async (_label, value, limit, expected) => {
    clock.set(NOW);
    const records = (await restPages({ period: '24h', is_trending: value, limit })).flat();
    for (const r of records) expect(r.is_trending).toBe(Number(value));
    // Other test files change their own collections' figures while this pages through (a live figure is
    // the sort key, so their rows may legitimately move between pages); mine are quiet and come once.
    const own = mine(records, (r) => r.collection.id);
    expect(new Set(own.map((r) => r.collection.id)).size).toBe(own.length);
    expect(own.map((r) => nameOf(r.collection.id)).sort()).toEqual([...expected].sort());
  });

  const SORTS = [
    ['volume', (n: Name) => EXPECTED[n].figures['24h'][0]],
    ['floor_price', (n: Name) => EXPECTED[n].floor],
    ['total_holders', (n: Name) => EXPECTED[n].holders],
    ['total_transactions', (n: Name) => EXPECTED[n].figures['24h'][1]],
  ] as const;
  const DIRECTIONS = ['asc', 'desc'] as const;

  test.each(SORTS.flatMap(([orderBy, figure]) => DIRECTIONS.map((direction) => [orderBy, direction, figure] as const)))(
    'when ordered by %s %s, then pages are sorted with ties by collection id and each collection comes once',
    async (orderBy, direction, figure) => {
      clock.set(NOW);
      const sign = direction === 'asc' ? 1 : -1;
      const compare = (a: { value: number | null; id: string }, b: { value: number | null; id: string }) => {
        if (a.value !== b.value) {
          if (a.value === null) return 1;
          if (b.value === null) return -1;
          return sign * (a.value - b.value);
        }
        return sign * (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
      };
      const pages = await restPages({ period: '24h', order_by: orderBy, direction });
      for (const page of pages) {
        // By value only: other files' figures are exact decimals (a dutch auction's current price) that two
        // JSON numbers may show alike, while the order is the exact one; ties by id are my collections' below.
        const values = page.map((r) => r[orderBy] as number | null);
        const byValue = (a: number | null, b: number | null) => compare({ value: a, id: '' }, { value: b, id: '' });
        expect([...values].sort(byValue)).toEqual(values);
      }
      // Each page is one snapshot, so it is sorted as a whole. Across pages only my collections are quiet:
      // other test files change their figures meanwhile, and a row whose sort key changes may move.
      const own = mine(pages.flat(), (r) => r.collection.id);
      expect(new Set(own.map((r) => r.collection.id)).size).toBe(own.length);
      const expectedOrder = NAMES.map((n) => ({ value: figure(n), id: market.collections[n].id })).sort(compare).map((k) => k.id);
      expect(own.map((r) => r.collection.id)).toEqual(expectedOrder);
    },
  );

  test('when statistics(limit: 20) is read with nested collection and chain, then it costs two statements however many collections, on both doors: the collections, chains and categories come with the figures', async () => {
    await server.gql(STATISTICS_NESTED);
    const first = await server.gql(STATISTICS_NESTED);
    expect(first.body.errors).toBeUndefined();
    expect(first.body.data.statistics.result.length).toBeGreaterThan(0);
    const owner = await server.key();
    for (let i = 0; i < 21; i += 1) await saveCollection(server, owner.key);
    const second = await server.gql(STATISTICS_NESTED);
    expect(second.body.data.statistics.result).toHaveLength(20);
    // The page, then the figures of its collections with their rows, chains and categories.
    expect(second.sql).toBe(2);
    expect(second.sql).toBe(first.sql);
    const rest = await server.rest('GET', '/v1/statistics?limit=20');
    expect(rest.body.result).toHaveLength(20);
    expect(rest.body.result.every((r: { collection: { chain: { id: string } } }) => typeof r.collection.chain.id === 'string')).toBe(true);
    expect(rest.sql).toBe(2);
  });

  test('when the period is unknown, then 400 lists the allowed periods, through both doors', async () => {
    const rest = await server.rest('GET', '/v1/statistics?period=2d');
    expect(rest.status).toBe(400);
    expect(rest.body.error.code).toBe('BAD_REQUEST');
    expect(rest.body.error.message).toContain('1h, 6h, 24h, 7d, 30d, all');
    const gql = await server.gql(STATISTICS_PAGE, { period: '2d', limit: 1, page: null });
    expect(gql.body.errors?.[0].extensions.code).toBe('BAD_REQUEST');
    expect(gql.body.errors?.[0].message).toContain('H1, H6, H24, D7, D30, ALL');
    const nested = await server.gql(`query ($a: Address!) { collection(address: $a) { statistics(period: Y1) { volume } } }`, {
      a: market.collections.main.contractAddress,
    });
    expect(nested.body.errors?.[0].extensions.code).toBe('BAD_REQUEST');
  });

  test('when no period is given, then the records are for the last 24 h', async () => {
    clock.set(NOW);
    const res = await server.rest('GET', '/v1/statistics?limit=1');
    expect(res.status).toBe(200);
    expect(res.body.result[0]).toMatchObject({ period: '24h', period_start: ago(DAY).toISOString(), period_end: NOW.toISOString() });
  });

  test('when is_trending is 2, then 400', async () => {
    const res = await server.rest('GET', '/v1/statistics?is_trending=2');
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('BAD_REQUEST');
  });

  test('when the chain is unknown, then 422', async () => {
    const res = await server.rest('GET', '/v1/statistics?chain_id=999999');
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('VALIDATION_FAILED');
    expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'chain_id' })]);
  });
});

async function collectionStatistics(address: string) {
  const res = await server.gql(COLLECTION_STATISTICS, { address });
  if (res.body.errors) throw new Error(JSON.stringify(res.body.errors));
  return res.body.data.collection.statistics;
}

const CANCEL_LISTING = /* GraphQL */ `
  mutation ($tokenAddress: Address!, $tokenId: TokenId!) { cancelListing(tokenAddress: $tokenAddress, tokenId: $tokenId) { id status } }`;

const RECORD = `floorPrice floorListingId floorAssetId volume totalHolders totalTransactions isTrending periodStart periodEnd`;

/** GraphQL's names of the periods (an enum); REST spells them 1h ... all. */
const GRAPHQL_PERIOD: Record<Period, string> = { '1h': 'H1', '6h': 'H6', '24h': 'H24', '7d': 'D7', '30d': 'D30', all: 'ALL' };

const STATISTICS_PAGE = /* GraphQL */ `
  query ($period: StatisticsPeriod, $limit: Int, $page: String) {
    statistics(period: $period, limit: $limit, page: $page) {
      cursor remaining
      result { collectionId ${RECORD} period trendVolume previousVolume collection { id } chain { chainId } }
    }
  }`;

const COLLECTION_STATISTICS = /* GraphQL */ `
  query ($address: Address!) { collection(address: $address, chainId: "1") { statistics(period: H24) { ${RECORD} } } }`;

const MY_COLLECTION_STATISTICS = /* GraphQL */ `
  query ($owner: Address!) {
    collections(ownerAddress: $owner, limit: 20) {
      result {
        id
        p1h: statistics(period: H1) { ${RECORD} }
        p6h: statistics(period: H6) { ${RECORD} }
        p24h: statistics(period: H24) { ${RECORD} }
        p7d: statistics(period: D7) { ${RECORD} }
        p30d: statistics(period: D30) { ${RECORD} }
        pall: statistics(period: ALL) { ${RECORD} }
      }
    }
  }`;

const STATISTICS_NESTED = /* GraphQL */ `
  { statistics(limit: 20) { result { volume collection { name category { name } chain { name } } chain { name } } } }`;
