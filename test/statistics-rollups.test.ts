import { clock } from '../src/common/clock';
import { startServer, TestServer } from './setup/server';
import { CollectionRow, saveAsset, saveCollection } from './factories/marketplace';
import { ACCEPT_OFFER, CREATE_OFFER, openWindow, saveListing, saveOffer } from './factories/market';
import { saveOrderAt } from './factories/market-history';

/**
 * Statistics come from the hourly sales rollups (collection_sales_hourly) plus the orders of the partial
 * hours at the windows' edges. Here: the rollup stays equal to a recomputation from orders under parallel
 * sales through both sale paths, and the half-open periods put a sale at an edge in exactly one window.
 * Orders' timestamps have millisecond precision (timestamp(3)), so "just before/after" is 1 ms.
 */
let server: TestServer;

const MS = 1;
const HOUR = 3600 * 1000;
const DAY = 24 * HOUR;

beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());
afterEach(() => clock.reset());

const STATISTICS = /* GraphQL */ `
  query ($address: Address!, $period: StatisticsPeriod!) {
    collection(address: $address, chainId: "1") {
      statistics(period: $period) {
        volume volumeDecimal totalTransactions trendVolumeDecimal previousVolumeDecimal isTrending trendingScore
        periodStart periodEnd asOf
      }
    }
  }`;

async function graphqlFigures(collection: CollectionRow, period: string) {
  const res = await server.gql(STATISTICS, { address: collection.contractAddress, period });
  if (res.body.errors) throw new Error(JSON.stringify(res.body.errors));
  return res.body.data.collection.statistics;
}

/** My collection's record from GET /v1/statistics (paged through), or undefined. */
async function restRecord(collection: CollectionRow, period: string) {
  let page: string | null = null;
  do {
    const params: URLSearchParams = new URLSearchParams({ period, limit: '100', chain_id: '1', ...(page ? { page } : {}) });
    const res = await server.rest('GET', `/v1/statistics?${params}`);
    expect(res.status).toBe(200);
    const found = res.body.result.find((r: any) => r.collection.id === collection.id);
    if (found) return found;
    page = res.body.cursor;
  } while (page);
  return undefined;
}

/** The rollup rows of a collection and the same figures recomputed from its orders, as text. */
async function rollupAgainstOrders(collectionId: string) {
  const rollup = await server.ds.query(
    `SELECT hour, volume::text, sales, min_price::text, max_price::text, last_sale_at
     FROM collection_sales_hourly WHERE collection_id = $1 ORDER BY hour`,
    [collectionId],
  );
  const recomputed = await server.ds.query(
    `SELECT date_trunc('hour', created_at, 'UTC') AS hour, sum(price)::text AS volume, count(*)::int AS sales,
       min(price)::text AS min_price, max(price)::text AS max_price, max(created_at) AS last_sale_at
     FROM orders WHERE collection_id = $1 AND status = 'completed' AND seller <> buyer GROUP BY 1 ORDER BY 1`,
    [collectionId],
  );
  return { rollup, recomputed };
}

describe('statistics from rollups', () => {
  test('when 30 sales into one collection-hour run in parallel (offer accepts and buys at the accept price), then no increment is lost', async () => {
    const T = new Date('2036-02-03T04:05:06.789Z');
    clock.set(T);
    const owner = await server.key();
    const collection = await saveCollection(server, owner.key);
    const assets: { id: string }[] = [];
    for (let i = 0; i < 30; i += 1) assets.push(await saveAsset(server, owner.key, collection, owner.address));
    const price = (i: number) => `${i + 1}.000000000000000001`;
    // Half are sold by the owner accepting an offer, half are bought with an offer at the listing's accept price.
    const offers: string[] = [];
    for (let i = 0; i < 15; i += 1) {
      const buyer = await server.key();
      offers.push((await saveOffer(server, buyer.key, assets[i].id, { price: price(i) })).id);
    }
    const buyers = [];
    for (let i = 15; i < 30; i += 1) {
      await saveListing(server, owner.key, assets[i].id, { startPrice: price(i), acceptPrice: price(i) });
      buyers.push(await server.key());
    }
    const results = await Promise.all([
      ...offers.map((offerId) => server.gql(ACCEPT_OFFER, { offerId }, owner.key)),
      ...buyers.map((buyer, j) =>
        server.gql(CREATE_OFFER, { input: { assetId: assets[15 + j].id, price: price(15 + j), ...openWindow(T) } }, buyer.key),
      ),
    ]);
    for (const r of results) expect(r.body.errors).toBeUndefined();

    const { rollup, recomputed } = await rollupAgainstOrders(collection.id);
    expect(recomputed).toHaveLength(1);
    expect(recomputed[0].sales).toBe(30);
    expect(rollup).toEqual(recomputed);
    // 1 + 2 + ... + 30, plus 30 x 10^-18: exact.
    expect(rollup[0].volume).toBe('465.000000000000000030');
    expect(rollup[0]).toMatchObject({ min_price: '1.000000000000000001', max_price: '30.000000000000000001' });

    // The sales are at T: a period is [start, end), so they count from T + 1 ms, not at T itself.
    expect(await graphqlFigures(collection, 'H1')).toMatchObject({ volume: 0, totalTransactions: 0, asOf: T.toISOString() });
    clock.set(new Date(T.getTime() + MS));
    expect(await graphqlFigures(collection, 'H1')).toMatchObject({ volumeDecimal: '465.00000000000000003', totalTransactions: 30 });
    expect(await restRecord(collection, 'all')).toMatchObject({ volume_decimal: '465.00000000000000003', total_transactions: 30 });
  });

  describe('at the edges of the periods', () => {
    /** Not on the hour, so every window edge falls inside an hour and is read from orders. */
    const NOW = new Date('2036-03-10T10:17:23.456Z');
    const at = (ms: number) => new Date(NOW.getTime() + ms);
    let collection: CollectionRow;
    /** Every sale of the collection: when, and an integer price that tells it apart. */
    const sales: { at: Date; price: number }[] = [
      { at: at(-DAY), price: 1 }, // the 24 h period's start
      { at: at(-DAY - MS), price: 2 },
      { at: at(-DAY + MS), price: 4 },
      { at: at(-MS), price: 8 },
      { at: at(0), price: 16 }, // the end: the next period's
      { at: at(MS), price: 32 },
      { at: at(-2 * DAY), price: 64 }, // the previous window's start
      { at: at(-2 * DAY - MS), price: 128 },
      { at: at(-12 * HOUR), price: 256 }, // whole hours: from the rollup
      { at: at(-36 * HOUR), price: 512 },
      { at: at(-HOUR), price: 1024 }, // the 1 h period's start
      { at: at(-HOUR - MS), price: 2048 },
      { at: new Date('2036-03-10T10:00:00.000Z'), price: 4096 }, // on the hour
      { at: new Date('2036-03-10T09:59:59.999Z'), price: 8192 },
    ];

    beforeAll(async () => {
      const owner = await server.key();
      collection = await saveCollection(server, owner.key);
      const asset = await saveAsset(server, owner.key, collection, owner.address);
      for (const s of sales) await saveOrderAt(server.ds, asset.id, String(s.price), s.at);
      await saveOrderAt(server.ds, asset.id, '100000', at(-MS), { status: 'failed' });
    });

    /** The definition: [start, end) windows over the sales list, what the rollups must agree with. */
    function reference(asOf: Date, periodMs: number | null) {
      const end = asOf.getTime();
      const trendMs = periodMs ?? DAY;
      const sum = (from: number, to: number) => sales.filter((s) => s.at.getTime() >= from && s.at.getTime() < to);
      const inPeriod = sum(periodMs === null ? -Infinity : end - periodMs, end);
      const trend = sum(end - trendMs, end).reduce((n, s) => n + s.price, 0);
      const previous = sum(end - 2 * trendMs, end - trendMs).reduce((n, s) => n + s.price, 0);
      return {
        volumeDecimal: String(inPeriod.reduce((n, s) => n + s.price, 0)),
        totalTransactions: inPeriod.length,
        trendVolumeDecimal: String(trend),
        previousVolumeDecimal: String(previous),
        isTrending: trend > 0 && trend >= 1.5 * previous ? 1 : 0,
        trendingScore: trend + previous > 0 ? trend / (trend + previous) : 0,
      };
    }

    test('when read at NOW, then a sale at a period start counts, one 1 ms before does not, and one at NOW belongs to the next period', async () => {
      clock.set(NOW);
      // 24 h: [NOW - 24 h, NOW) holds 1, 4, 8, 256, 1024, 2048, 4096, 8192; previous [NOW - 48 h, NOW - 24 h): 2, 64, 512.
      expect(await graphqlFigures(collection, 'H24')).toMatchObject({
        volumeDecimal: '15629',
        totalTransactions: 8,
        previousVolumeDecimal: '578',
        isTrending: 1,
        periodStart: at(-DAY).toISOString(),
        periodEnd: NOW.toISOString(),
        asOf: NOW.toISOString(),
      });
      // 1 h: [NOW - 1 h, NOW) holds 8, 1024, 4096, 8192; 2048 is 1 ms too early, 16 is at the end.
      expect(await graphqlFigures(collection, 'H1')).toMatchObject({ volumeDecimal: '13320', totalTransactions: 4 });
      expect(await restRecord(collection, '1h')).toMatchObject({ volume: 13320, total_transactions: 4, as_of: NOW.toISOString() });
    });

    test.each([
      ['NOW', 0],
      ['NOW - 1 ms', -MS],
      ['NOW + 1 ms', MS],
      ['NOW + 2 ms', 2 * MS],
      ['the hour before NOW', Date.parse('2036-03-10T10:00:00.000Z') - NOW.getTime()],
      ['1 ms past that hour', Date.parse('2036-03-10T10:00:00.001Z') - NOW.getTime()],
      ['a day and 1 ms later', DAY + MS],
    ])('when read at %s, then every period matches the definition on both doors', async (_label, offset) => {
      const asOf = at(offset);
      clock.set(asOf);
      const periods = [
        ['H1', '1h', HOUR],
        ['H6', '6h', 6 * HOUR],
        ['H24', '24h', DAY],
        ['D7', '7d', 7 * DAY],
        ['ALL', 'all', null],
      ] as const;
      for (const [graphqlPeriod, restPeriod, ms] of periods) {
        const expected = reference(asOf, ms);
        expect({ period: restPeriod, ...(await graphqlFigures(collection, graphqlPeriod)) }).toMatchObject({ period: restPeriod, ...expected });
        const rest = await restRecord(collection, restPeriod);
        expect({ period: restPeriod, ...rest }).toMatchObject({
          period: restPeriod,
          volume_decimal: expected.volumeDecimal,
          total_transactions: expected.totalTransactions,
          trend_volume_decimal: expected.trendVolumeDecimal,
          previous_volume_decimal: expected.previousVolumeDecimal,
          is_trending: expected.isTrending,
          trending_score: expected.trendingScore,
          as_of: asOf.toISOString(),
        });
      }
    });

    test('when the rollup is compared with its orders, then every hour agrees', async () => {
      const { rollup, recomputed } = await rollupAgainstOrders(collection.id);
      expect(rollup.length).toBeGreaterThan(5);
      expect(rollup).toEqual(recomputed);
    });
  });

  test('when a collection has an active listing, then floor_listing names it with its price and asset on both doors', async () => {
    const owner = await server.key();
    const collection = await saveCollection(server, owner.key);
    const cheap = await saveAsset(server, owner.key, collection, owner.address);
    const dear = await saveAsset(server, owner.key, collection, owner.address);
    await saveListing(server, owner.key, dear.id, { startPrice: 7 });
    const listing = await saveListing(server, owner.key, cheap.id, { startPrice: 2.5 });
    const rest = await restRecord(collection, '24h');
    expect(rest.floor_listing).toEqual({
      id: listing.id,
      price: 2.5,
      price_decimal: '2.5',
      asset_id: cheap.id,
      token_address: collection.contractAddress,
      token_id: cheap.tokenId,
    });
    const res = await server.gql(
      `query ($a: Address!) { collection(address: $a, chainId: "1") { statistics(period: H24) { floorListing { id price priceDecimal assetId tokenId asset { id tokenId } } } } }`,
      { a: collection.contractAddress },
    );
    expect(res.body.data.collection.statistics.floorListing).toEqual({
      id: listing.id,
      price: 2.5,
      priceDecimal: '2.5',
      assetId: cheap.id,
      tokenId: cheap.tokenId,
      asset: { id: cheap.id, tokenId: cheap.tokenId },
    });
    const other = await saveCollection(server, owner.key);
    expect((await restRecord(other, '24h')).floor_listing).toBeNull();
  });
});
