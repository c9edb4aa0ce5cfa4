import { clock } from '../src/common/clock';
import { startServer, TestServer } from './setup/server';
import { CollectionRow, saveAsset, saveCollection } from './factories/marketplace';
import { saveAcceptedOffer } from './factories/market';
import { saveOrderAt } from './factories/market-history';

/**
 * Charts (docs/api.md, Charts): Collection.series and GET /v1/collections/{address}/history give one
 * bucket per UTC hour or day, empty ones included, from the hourly sales rollups.
 */
let server: TestServer;

const HOUR = 3600 * 1000;
const DAY = 24 * HOUR;
/** The server's clock in these tests: not on the hour. */
const NOW = new Date('2036-05-10T12:34:56.789Z');
const at = (iso: string) => new Date(iso);

beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());
beforeEach(() => clock.set(NOW));
afterEach(() => clock.reset());

const SERIES = /* GraphQL */ `
  query ($address: Address!, $interval: SeriesInterval, $from: DateTimeISO, $to: DateTimeISO) {
    collection(address: $address, chainId: "1") {
      series(interval: $interval, from: $from, to: $to) {
        interval from to
        buckets { startTime volume volumeDecimal sales averagePrice averagePriceDecimal floorPrice floorPriceDecimal }
      }
    }
  }`;

// The range written in the document: given by variables, each chart would count at its most (2,000 buckets)
// while the document is validated, and 100 of them are past the cost limit (docs/graphql-protections.md).
const COLLECTIONS_SERIES = /* GraphQL */ `
  query ($owner: Address!) {
    collections(ownerAddress: $owner, limit: 100) {
      result { id series(interval: HOUR, from: "2036-05-10T00:00:00Z", to: "2036-05-11T00:00:00Z") { from to buckets { startTime volumeDecimal sales } } }
    }
  }`;

interface Bucket {
  startTime: string;
  volume: number;
  volumeDecimal: string;
  sales: number;
  averagePrice: number | null;
  averagePriceDecimal: string | null;
  floorPrice: number | null;
  floorPriceDecimal: string | null;
}

async function series(collection: CollectionRow, variables: Record<string, unknown> = {}) {
  const res = await server.gql(SERIES, { address: collection.contractAddress, ...variables });
  if (res.body.errors) throw new Error(JSON.stringify(res.body.errors));
  return res.body.data.collection.series as { interval: string; from: string; to: string; buckets: Bucket[] };
}

/** A collection with one asset of a fresh owner. */
async function collectionWithAsset() {
  const owner = await server.key();
  const collection = await saveCollection(server, owner.key);
  const asset = await saveAsset(server, owner.key, collection, owner.address);
  return { owner, collection, asset };
}

/** The collection's counted sales (completed, seller is not the buyer) with created_at in [from, to), from orders. */
async function ordersBetween(collectionId: string, from: string, to: string) {
  const [row] = await server.ds.query(
    `SELECT COALESCE(sum(price), 0)::text AS volume, count(*)::int AS sales FROM orders
     WHERE collection_id = $1 AND status = 'completed' AND seller <> buyer AND created_at >= $2 AND created_at < $3`,
    [collectionId, from, to],
  );
  return row as { volume: string; sales: number };
}

/** Every bucket start is one interval after the one before it. */
function expectGapFree(buckets: Bucket[], step: number) {
  for (let i = 1; i < buckets.length; i += 1) {
    expect(Date.parse(buckets[i].startTime) - Date.parse(buckets[i - 1].startTime)).toBe(step);
  }
}

const EMPTY = { volume: 0, volumeDecimal: '0', sales: 0, averagePrice: null, averagePriceDecimal: null, floorPrice: null, floorPriceDecimal: null };

describe('collection series by the hour', () => {
  test('when sales are made in known hours, then each hour of the last 48 has its volume, sales, average and lowest price, and the other hours are empty', async () => {
    const { owner, collection, asset } = await collectionWithAsset();
    await saveOrderAt(server.ds, asset.id, '1', at('2036-05-10T10:05:00.000Z'));
    await saveOrderAt(server.ds, asset.id, '2', at('2036-05-10T10:59:59.999Z'));
    await saveOrderAt(server.ds, asset.id, '4', at('2036-05-10T11:00:00.000Z'));
    // Not a sale: a pending order.
    await saveOrderAt(server.ds, asset.id, '100', at('2036-05-10T11:30:00.000Z'), { status: 'pending' });
    // Before the last 48 hours.
    await saveOrderAt(server.ds, asset.id, '1000', at('2036-05-08T12:59:59.999Z'));
    // A sale through the API, stamped with the server's clock.
    clock.set(at('2036-05-10T12:30:00.000Z'));
    await saveAcceptedOffer(server, { owner, collection, asset }, await server.key(), 0.5);
    clock.set(NOW);

    const s = await series(collection, { interval: 'HOUR' });
    expect(s).toMatchObject({ interval: 'HOUR', from: '2036-05-08T13:00:00.000Z', to: '2036-05-10T13:00:00.000Z' });
    expect(s.buckets).toHaveLength(48);
    expect(s.buckets[0].startTime).toBe('2036-05-08T13:00:00.000Z');
    expect(s.buckets[47].startTime).toBe('2036-05-10T12:00:00.000Z');
    expectGapFree(s.buckets, HOUR);
    const byStart = new Map(s.buckets.map((b) => [b.startTime, b]));
    expect(byStart.get('2036-05-10T10:00:00.000Z')).toEqual({
      startTime: '2036-05-10T10:00:00.000Z', volume: 3, volumeDecimal: '3', sales: 2,
      averagePrice: 1.5, averagePriceDecimal: '1.5', floorPrice: 1, floorPriceDecimal: '1',
    });
    expect(byStart.get('2036-05-10T11:00:00.000Z')).toMatchObject({ volumeDecimal: '4', sales: 1, averagePriceDecimal: '4', floorPriceDecimal: '4' });
    expect(byStart.get('2036-05-10T12:00:00.000Z')).toMatchObject({ volumeDecimal: '0.5', sales: 1, averagePriceDecimal: '0.5', floorPriceDecimal: '0.5' });
    const others = s.buckets.filter((b) => !['2036-05-10T10:00:00.000Z', '2036-05-10T11:00:00.000Z', '2036-05-10T12:00:00.000Z'].includes(b.startTime));
    expect(others).toHaveLength(45);
    for (const b of others) expect(b).toEqual({ startTime: b.startTime, ...EMPTY });

    const fromOrders = await ordersBetween(collection.id, s.from, s.to);
    expect(fromOrders).toEqual({ volume: '7.500000000000000000', sales: 4 });
    expect(s.buckets.reduce((sum, b) => sum + b.sales, 0)).toBe(fromOrders.sales);
    expect(s.buckets.reduce((sum, b) => sum + b.volume, 0)).toBe(Number(fromOrders.volume));
  });

  test('when prices have 18 decimals, then volume and average are exact (the average rounded to 18 decimals)', async () => {
    const { collection, asset } = await collectionWithAsset();
    await saveOrderAt(server.ds, asset.id, '1.000000000000000001', at('2036-05-10T09:10:00.000Z'));
    await saveOrderAt(server.ds, asset.id, '2', at('2036-05-10T09:20:00.000Z'));
    await saveOrderAt(server.ds, asset.id, '12345678901234567890.123456789012345678', at('2036-05-10T08:00:00.000Z'));
    const s = await series(collection, { interval: 'HOUR', from: '2036-05-10T08:00:00.000Z', to: '2036-05-10T10:00:00.000Z' });
    expect(s.buckets.map((b) => [b.startTime, b.volumeDecimal, b.averagePriceDecimal, b.floorPriceDecimal])).toEqual([
      ['2036-05-10T08:00:00.000Z', '12345678901234567890.123456789012345678', '12345678901234567890.123456789012345678', '12345678901234567890.123456789012345678'],
      // 3.000000000000000001 / 2 = 1.5000000000000000005, rounded half away from zero.
      ['2036-05-10T09:00:00.000Z', '3.000000000000000001', '1.500000000000000001', '1.000000000000000001'],
    ]);
  });

  test('when from and to are given, then the buckets are those that meet [from, to): from the one holding from to the one holding the moment before to', async () => {
    const { collection, asset } = await collectionWithAsset();
    await saveOrderAt(server.ds, asset.id, '1', at('2036-05-10T09:59:59.999Z'));
    await saveOrderAt(server.ds, asset.id, '2', at('2036-05-10T10:30:00.000Z'));
    await saveOrderAt(server.ds, asset.id, '3', at('2036-05-10T12:00:00.000Z'));

    const inner = await series(collection, { interval: 'HOUR', from: '2036-05-10T10:30:00.000Z', to: '2036-05-10T12:00:00.000Z' });
    expect(inner).toMatchObject({ from: '2036-05-10T10:00:00.000Z', to: '2036-05-10T12:00:00.000Z' });
    expect(inner.buckets.map((b) => [b.startTime, b.sales])).toEqual([
      ['2036-05-10T10:00:00.000Z', 1],
      ['2036-05-10T11:00:00.000Z', 0],
    ]);

    const oneMore = await series(collection, { interval: 'HOUR', from: '2036-05-10T09:59:59.999Z', to: '2036-05-10T12:00:00.001Z' });
    expect(oneMore).toMatchObject({ from: '2036-05-10T09:00:00.000Z', to: '2036-05-10T13:00:00.000Z' });
    expect(oneMore.buckets.map((b) => b.sales)).toEqual([1, 1, 0, 1]);

    // Only to: the 48 hours before it.
    const before = await series(collection, { interval: 'HOUR', to: '2036-05-10T11:00:00.000Z' });
    expect(before).toMatchObject({ from: '2036-05-08T11:00:00.000Z', to: '2036-05-10T11:00:00.000Z' });
    expect(before.buckets).toHaveLength(48);
    expect(before.buckets.slice(-2).map((b) => b.sales)).toEqual([1, 1]);
  });
});

describe('collection series by the day', () => {
  test('when sales are on either side of UTC midnight, then they fall in their own UTC days, and the last 30 days end with today', async () => {
    const { collection, asset } = await collectionWithAsset();
    await saveOrderAt(server.ds, asset.id, '1', at('2036-05-08T23:59:59.999Z'));
    await saveOrderAt(server.ds, asset.id, '2', at('2036-05-09T00:00:00.000Z'));
    await saveOrderAt(server.ds, asset.id, '3', at('2036-05-09T13:00:00.000Z'));
    await saveOrderAt(server.ds, asset.id, '5', at('2036-05-10T12:34:56.000Z'));
    await saveOrderAt(server.ds, asset.id, '7', at('2036-04-10T23:00:00.000Z'));

    const s = await series(collection);
    expect(s).toMatchObject({ interval: 'DAY', from: '2036-04-11T00:00:00.000Z', to: '2036-05-11T00:00:00.000Z' });
    expect(s.buckets).toHaveLength(30);
    expectGapFree(s.buckets, DAY);
    expect(s.buckets.slice(-3)).toEqual([
      { startTime: '2036-05-08T00:00:00.000Z', volume: 1, volumeDecimal: '1', sales: 1, averagePrice: 1, averagePriceDecimal: '1', floorPrice: 1, floorPriceDecimal: '1' },
      { startTime: '2036-05-09T00:00:00.000Z', volume: 5, volumeDecimal: '5', sales: 2, averagePrice: 2.5, averagePriceDecimal: '2.5', floorPrice: 2, floorPriceDecimal: '2' },
      { startTime: '2036-05-10T00:00:00.000Z', volume: 5, volumeDecimal: '5', sales: 1, averagePrice: 5, averagePriceDecimal: '5', floorPrice: 5, floorPriceDecimal: '5' },
    ]);
    for (const b of s.buckets.slice(0, -3)) expect(b).toEqual({ startTime: b.startTime, ...EMPTY });
    expect(await ordersBetween(collection.id, s.from, s.to)).toEqual({ volume: '11.000000000000000000', sales: 4 });

    const wider = await series(collection, { from: '2036-04-10T12:00:00.000Z', to: '2036-04-12T00:00:00.000Z' });
    expect(wider.buckets.map((b) => [b.startTime, b.volumeDecimal])).toEqual([
      ['2036-04-10T00:00:00.000Z', '7'],
      ['2036-04-11T00:00:00.000Z', '0'],
    ]);
  });
});

describe('GET /v1/collections/{address}/history', () => {
  test('when a collection has sales, then the REST answer has the documented names, exact twins and interval spelled 1h', async () => {
    const { collection, asset } = await collectionWithAsset();
    await saveOrderAt(server.ds, asset.id, '1.25', at('2036-05-10T11:15:00.000Z'));
    const params = new URLSearchParams({ interval: '1h', from: '2036-05-10T10:00:00Z', to: '2036-05-10T12:00:00Z', chain_id: '1' });
    const res = await server.rest('GET', `/v1/collections/${collection.contractAddress}/history?${params}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: collection.id, contract_address: collection.contractAddress, chain: { id: '1' } });
    expect(res.body.series).toEqual({
      interval: '1h',
      from: '2036-05-10T10:00:00.000Z',
      to: '2036-05-10T12:00:00.000Z',
      buckets: [
        { start_time: '2036-05-10T10:00:00.000Z', volume: 0, volume_decimal: '0', sales: 0, average_price: null, average_price_decimal: null, floor_price: null, floor_price_decimal: null },
        { start_time: '2036-05-10T11:00:00.000Z', volume: 1.25, volume_decimal: '1.25', sales: 1, average_price: 1.25, average_price_decimal: '1.25', floor_price: 1.25, floor_price_decimal: '1.25' },
      ],
    });

    const daily = await server.rest('GET', `/v1/collections/${collection.contractAddress}/history?interval=1d`);
    expect(daily.status).toBe(200);
    expect(daily.body.series.interval).toBe('1d');
    expect(daily.body.series.buckets).toHaveLength(30);
    expect(daily.body.series.buckets[29]).toMatchObject({ start_time: '2036-05-10T00:00:00.000Z', volume_decimal: '1.25', sales: 1 });
  });

  test('when the collection does not exist, then 404', async () => {
    const res = await server.rest('GET', '/v1/collections/0x000000000000000000000000000000000000dead/history');
    expect(res.status).toBe(404);
  });

  test('when from is not before to, the interval is unknown, a date is not a date or the range holds more than 2000 buckets, then 400 naming it', async () => {
    const { collection } = await collectionWithAsset();
    const path = (query: Record<string, string>) => `/v1/collections/${collection.contractAddress}/history?${new URLSearchParams(query)}`;

    const backwards = await server.rest('GET', path({ from: '2036-05-10T12:00:00Z', to: '2036-05-10T11:00:00Z' }));
    expect(backwards.status).toBe(400);
    expect(JSON.stringify(backwards.body)).toContain('from must be before to');
    const equal = await server.rest('GET', path({ from: '2036-05-10T12:00:00Z', to: '2036-05-10T12:00:00Z' }));
    expect(equal.status).toBe(400);
    const future = await server.rest('GET', path({ interval: '1h', from: '2036-05-11T00:00:00Z' }));
    expect(future.status).toBe(400);

    const interval = await server.rest('GET', path({ interval: '5m' }));
    expect(interval.status).toBe(400);
    expect(JSON.stringify(interval.body)).toContain('1h, 1d');

    const date = await server.rest('GET', path({ from: 'yesterday' }));
    expect(date.status).toBe(400);

    const tooMany = await server.rest('GET', path({ interval: '1h', from: '2036-01-01T00:00:00Z', to: '2036-05-10T00:00:00Z' }));
    expect(tooMany.status).toBe(400);
    const message = JSON.stringify(tooMany.body);
    expect(message).toContain('from 2036-01-01T00:00:00.000Z to 2036-05-10T00:00:00.000Z at interval 1h is 3120 buckets; at most 2000');
    // Exactly 2000 is allowed.
    const most = await server.rest('GET', path({ interval: '1h', from: '2036-01-01T00:00:00Z', to: new Date(Date.parse('2036-01-01T00:00:00Z') + 2000 * HOUR).toISOString() }));
    expect(most.status).toBe(200);
    expect(most.body.series.buckets).toHaveLength(2000);

    const gql = await server.gql(SERIES, { address: collection.contractAddress, interval: 'DAY', from: '2030-01-01T00:00:00Z', to: '2036-01-01T00:00:00Z' });
    expect(gql.body.errors?.[0].extensions.code).toBe('BAD_REQUEST');
    expect(gql.body.errors?.[0].message).toContain('2191 buckets; at most 2000');
  });
});

describe('collections { series } is batched', () => {
  test('when 1 or 20 collections each read their series, then the request takes the same number of statements, and each has its own sales', async () => {
    const one = await server.key();
    const single = await saveCollection(server, one.key);
    const many = await server.key();
    const collections: CollectionRow[] = [];
    for (let i = 0; i < 20; i += 1) collections.push(await saveCollection(server, many.key));
    const asset = await saveAsset(server, many.key, collections[7], many.address);
    await saveOrderAt(server.ds, asset.id, '9', at('2036-05-10T11:45:00.000Z'));
    const a = await server.gql(COLLECTIONS_SERIES, { owner: one.address });
    const b = await server.gql(COLLECTIONS_SERIES, { owner: many.address });
    expect(a.body.errors).toBeUndefined();
    expect(b.body.errors).toBeUndefined();
    expect(a.body.data.collections.result.map((c: { id: string }) => c.id)).toEqual([single.id]);
    expect(b.body.data.collections.result).toHaveLength(20);
    expect(b.sql).toBe(a.sql);
    for (const c of b.body.data.collections.result) {
      expect(c.series.buckets).toHaveLength(24);
      const sold = c.series.buckets.filter((bucket: Bucket) => bucket.sales > 0);
      expect(sold).toEqual(c.id === collections[7].id ? [{ startTime: '2036-05-10T11:00:00.000Z', volumeDecimal: '9', sales: 1 }] : []);
    }
  });
});
