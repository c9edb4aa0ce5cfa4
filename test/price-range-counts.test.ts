import { clock } from '../src/common/clock';
import { logger } from '../src/common/logger';
import { fromUnits, toUnits } from '../src/common/decimal';
import { compactTradeListCounts, priceBucket } from '../src/modules/trade/list-counts';
import { ownDatabase } from './setup/own-database';
import { Random } from './setup/request-generator';
import { startServer, TestServer } from './setup/server';

/**
 * Issue #38: counts of offers and orders within a price range (`min_price`/`max_price` with `remaining`,
 * `totalCount`) read the kept counts by price bucket (trade_price_counts) and the edge buckets' rows. On a
 * seeded random market of its own (prices of every size, round ones among them; kinds, chains, currencies,
 * statuses, ended and swept offers), every combination of the counted filters with random ranges (bounds
 * at bucket starts, inside buckets, at rows' prices) equals count(*); and parallel writers, folded
 * meanwhile, leave the kept counts equal to a recount from scratch.
 */
const SEED = Number(process.env.PRICE_COUNTS_SEED ?? 38);
const OFFERS = 1500;
const ORDERS = 500;
const CHAINS = ['1', '137'];
const NATIVE = '0x0000000000000000000000000000000000000000';
const WETH: Record<string, string> = { '1': '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2', '137': '0x7ceb23fd6bc0add59e62ac25578270cff1b9f619' };
/** Round prices as users type them (bucket starts); a price is above 0, a range's bound may be 0. */
const ROUND_PRICES = ['0.05', '0.5', '1', '1.5', '2.25', '10', '100'];

let db: { url: string; drop: () => Promise<void> };
let server: TestServer;
const at = new Date(Math.floor(Date.now() / 1000) * 1000);

/** The shared seeded generator (test/setup/request-generator.ts Random), and a price: a round one, or 1 to 7 significant digits from 10^-10 to 10^9. */
function generator(seed: number) {
  const r = new Random(seed);
  const next = () => r.next();
  const int = (from: number, to: number) => r.int(from, to);
  const pick = <T>(of: readonly T[]): T => r.pick(of);
  const price = () => (next() < 0.25 ? pick(ROUND_PRICES) : fromUnits(BigInt(int(1, 10 ** int(1, 7))) * 10n ** BigInt(int(8, 20))));
  return { next, int, pick, price };
}
const random = generator(SEED);

beforeAll(async () => {
  db = await ownDatabase('gw_price_counts');
  server = await startServer({}, { url: db.url });
  clock.set(at);
  for (const chain of CHAINS) {
    await server.ds.query(
      `INSERT INTO collections (id, chain_id, contract_address, owner, name, slug, created_at)
       VALUES (md5('pc' || $1)::uuid, $1, '0x' || substr(md5('contract' || $1) || md5('x'), 1, 40), '0x' || substr(md5('owner') || md5('y'), 1, 40), 'Prices ' || $1, 'prices-' || $1, now())`,
      [chain],
    );
    await server.ds.query(
      `INSERT INTO assets (id, collection_id, chain_id, token_address, token_id, name, description, image_url, metadata, owner, created_at, updated_at)
       SELECT md5('pa' || $1 || '-' || t)::uuid, md5('pc' || $1)::uuid, $1, '0x' || substr(md5('contract' || $1) || md5('x'), 1, 40), t, 'Asset ' || t,
         'Token ' || t, 'https://img.example/' || t || '.png', '{}'::jsonb, '0x' || substr(md5('owner') || md5('y'), 1, 40), now(), now()
       FROM generate_series(1, 20) t`,
      [chain],
    );
  }
}, 120_000);
afterAll(async () => {
  clock.reset();
  await server?.close();
  await db?.drop();
});

interface OfferRow {
  id: string;
  kind: string;
  chain: string;
  currency: string;
  price: string;
  status: string;
  endTime: Date;
  swept: boolean;
}

/** A random offer: ended or not at `at`, marked by the sweeper or not (some marked ones end after `at`: a clock behind the sweeper's). */
function randomOffer(i: number, r = random): OfferRow {
  const ends = new Date(at.getTime() + r.int(-3600, 3600) * 1000);
  const status = r.pick(['active', 'active', 'active', 'accepted', 'cancelled', 'expired']);
  const swept = status === 'active' && (ends <= at ? r.next() < 0.6 : r.next() < 0.05);
  const chain = r.pick(CHAINS);
  return { id: `${i}`, kind: r.pick(['item', 'item', 'collection', 'trait']), chain, currency: r.next() < 0.7 ? NATIVE : WETH[chain], price: r.price(), status, endTime: ends, swept };
}

async function insertOffers(rows: OfferRow[], tag: string): Promise<void> {
  await server.ds.query(
    `INSERT INTO offers (id, kind, asset_id, token_id, traits, collection_id, chain_id, token_address, taker, price, currency, start_time, end_time, status, expiry_swept, created_at, updated_at)
     SELECT md5($1 || t.i)::uuid, t.kind, CASE WHEN t.kind = 'item' THEN a.id END, CASE WHEN t.kind = 'item' THEN a.token_id END,
       CASE WHEN t.kind = 'trait' THEN '[{"trait_type":"Background","value":"Blue"}]'::jsonb END,
       a.collection_id, t.chain, a.token_address, '0x' || substr(md5('taker' || t.i) || md5('w'), 1, 40), t.price, t.currency,
       t.ends - interval '2 hours', t.ends, t.status, t.swept, now(), now()
     FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::numeric[], $7::text[], $8::timestamptz[], $9::boolean[]) t(i, kind, chain, currency, price, status, ends, swept)
     JOIN assets a ON a.id = md5('pa' || t.chain || '-' || (1 + t.i::bigint % 20))::uuid`,
    [
      tag,
      rows.map((o) => o.id),
      rows.map((o) => o.kind),
      rows.map((o) => o.chain),
      rows.map((o) => o.currency),
      rows.map((o) => o.price),
      rows.map((o) => o.status),
      rows.map((o) => o.endTime.toISOString()),
      rows.map((o) => o.swept),
    ],
  );
}

/** Orders of the offers `ids` (tag `tag`), at their offers' chain and currency, at a price of their own, completed or failed (an asset has one pending order at most). */
async function insertOrders(tag: string, ids: string[], r = random): Promise<void> {
  await server.ds.query(
    `INSERT INTO orders (offer_id, asset_id, collection_id, chain_id, token_address, token_id, price, currency, seller, buyer, status, created_at, updated_at)
     SELECT o.id, a.id, a.collection_id, o.chain_id, a.token_address, a.token_id, t.price, o.currency,
       '0x' || substr(md5('seller' || t.i) || md5('v'), 1, 40), o.taker, t.status, now(), now()
     FROM unnest($2::text[], $3::numeric[], $4::text[]) t(i, price, status) JOIN offers o ON o.id = md5($1 || t.i)::uuid
     JOIN assets a ON a.id = md5('pa' || o.chain_id || '-' || (1 + t.i::bigint % 20))::uuid`,
    [tag, ids, ids.map(() => r.price()), ids.map(() => r.pick(['completed', 'completed', 'failed']))],
  );
}

/** The kept counts by group and bucket, and a recount from scratch, in one snapshot. */
async function keptAndRecounted(): Promise<{ kept: unknown; recount: unknown }> {
  const [row] = await server.ds.query(`SELECT
    (SELECT COALESCE(jsonb_object_agg(g, n), '{}') FROM (SELECT concat_ws('/', list, chain_id, currency, kind, status, swept, trim_scale(bucket)) g, sum(n) n
       FROM trade_price_counts GROUP BY list, chain_id, currency, kind, status, swept, bucket HAVING sum(n) <> 0) k) AS kept,
    (SELECT COALESCE(jsonb_object_agg(g, n), '{}') FROM (
       SELECT concat_ws('/', 'offers', chain_id, currency, kind, status, expiry_swept, trim_scale(price_bucket(price))) g, count(*) n FROM offers GROUP BY chain_id, currency, kind, status, expiry_swept, price_bucket(price)
       UNION ALL SELECT concat_ws('/', 'orders', chain_id, currency, '', status, false, trim_scale(price_bucket(price))), count(*) FROM orders GROUP BY chain_id, currency, status, price_bucket(price)) r) AS recount`);
  return row;
}

/** A range's bound near `price`: the price itself, its bucket's start, inside its bucket, or its bucket's last unit. */
function boundNear(price: string, r = random): string {
  const bucket = priceBucket(price);
  const step = bucket.endUnits - bucket.startUnits;
  switch (r.int(0, 3)) {
    case 0:
      return price;
    case 1:
      return bucket.start;
    case 2:
      return fromUnits(bucket.startUnits + (step > 1n ? BigInt(Math.floor(r.next() * Number(step))) : 0n));
    default:
      return fromUnits(bucket.endUnits - 1n);
  }
}

/** A random range: a minimum, a maximum or both, near the rows' prices or round ones. */
function randomRange(prices: string[], r = random): { min?: string; max?: string } {
  const near = () => boundNear(r.next() < 0.3 ? r.pick(['0', ...ROUND_PRICES]) : r.pick(prices), r);
  const [a, b] = [near(), near()].sort((x, y) => (toUnits(x) < toUnits(y) ? -1 : toUnits(x) > toUnits(y) ? 1 : 0));
  const shape = r.int(0, 3);
  return shape === 0 ? { min: a } : shape === 1 ? { max: b } : { min: a, max: b };
}

const query = (params: Record<string, string | undefined>) =>
  Object.entries(params)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${encodeURIComponent(v!)}`)
    .join('&');

/** The rows of `list` matching the filters at `at`, counted row by row. */
async function recount(list: 'offers' | 'orders', f: { status?: string; kind?: string; chain?: string; currency?: string; min?: string; max?: string }): Promise<number> {
  const params: unknown[] = [];
  const add = (value: unknown) => `$${params.push(value)}`;
  const where = [
    ...(f.status ? [`${list === 'offers' ? `(CASE WHEN x.status = 'active' AND x.end_time <= ${add(at)} THEN 'expired' ELSE x.status END)` : 'x.status'} = ${add(f.status)}`] : []),
    ...(f.kind ? [`x.kind = ${add(f.kind)}`] : []),
    ...(f.chain ? [`x.chain_id = ${add(f.chain)}`] : []),
    ...(f.currency ? [`x.currency IN (SELECT c.address FROM currencies c WHERE c.chain_id = x.chain_id AND upper(c.symbol) = upper(${add(f.currency)}))`] : []),
    ...(f.min ? [`x.price >= ${add(f.min)}::numeric`] : []),
    ...(f.max ? [`x.price <= ${add(f.max)}::numeric`] : []),
  ];
  const [{ n }] = await server.ds.query(`SELECT count(*)::int AS n FROM ${list} x WHERE ${['true', ...where].join(' AND ')}`, params);
  return n;
}

describe('counts within a price range', () => {
  test('when prices are bucketed, then the database and the gateway put every price in the same bucket: 3 significant digits, rounded down', async () => {
    expect(['1.234', '0.0567', '12345', '0.5', '1', '2.25', '0', '0.000000000000000001', '99999999999999999999.999999999999999999'].map((p) => priceBucket(p).start)).toEqual([
      '1.23',
      '0.0567',
      '12300',
      '0.5',
      '1',
      '2.25',
      '0',
      '0.000000000000000001',
      '99900000000000000000',
    ]);
    const prices = ['0', ...ROUND_PRICES, ...Array.from({ length: 500 }, () => random.price()), '999.999999999999999999', '0.000999999999999999', '1000', '0.001'];
    const rows: { price: string; bucket: string }[] = await server.ds.query(`SELECT p::text AS price, price_bucket(p::numeric(38,18))::text AS bucket FROM unnest($1::text[]) p`, [prices]);
    expect(rows.filter((row) => toUnits(row.bucket) !== priceBucket(row.price).startUnits)).toEqual([]);
  });

  test('when a seeded random market is counted with every combination of the counted filters and random price ranges, on both doors, then every count equals count(*)', async () => {
    const offers = Array.from({ length: OFFERS }, (_, i) => randomOffer(i));
    // In three statements, folded between: folded rows and deltas both count.
    await insertOffers(offers.slice(0, 600), 'po');
    await compactTradeListCounts(server.ds, 0);
    await insertOffers(offers.slice(600), 'po');
    await insertOrders('po', offers.slice(0, ORDERS).map((o) => o.id));
    // Some prices and statuses move, some rows go.
    await server.ds.query(`UPDATE offers SET price = price * 3 + 0.001 WHERE id IN (SELECT md5('po' || i)::uuid FROM generate_series(0, 1499, 17) i)`);
    await server.ds.query(`UPDATE offers SET status = 'cancelled' WHERE id IN (SELECT md5('po' || i)::uuid FROM generate_series(5, 1499, 23) i) AND status = 'active'`);
    await server.ds.query(`UPDATE orders SET price = price / 7 WHERE offer_id IN (SELECT md5('po' || i)::uuid FROM generate_series(0, 499, 11) i)`);
    await server.ds.query(`DELETE FROM orders WHERE offer_id IN (SELECT md5('po' || i)::uuid FROM generate_series(3, 499, 13) i)`);
    const prices: string[] = (await server.ds.query(`SELECT price::text AS p FROM offers UNION SELECT price::text FROM orders`)).map((r: { p: string }) => r.p);

    const wrong: unknown[] = [];
    let checked = 0;
    for (const status of [undefined, 'active', 'expired', 'accepted', 'cancelled'])
      for (const kind of [undefined, 'item', 'collection', 'trait'])
        for (const chain of [undefined, ...CHAINS])
          for (const currency of [undefined, 'ETH', 'WETH']) {
            for (let i = 0; i < 3; i += 1) {
              const range = randomRange(prices);
              const filters = { status, kind, chain, currency, ...range };
              const expected = await recount('offers', filters);
              if (i < 2) {
                const res = await server.rest('GET', `/v1/offers?${query({ status, kind, chain_id: chain, currency, min_price: range.min, max_price: range.max, limit: '1' })}`);
                const got = res.status === 200 ? res.body.remaining + res.body.result.length : res.body;
                if (got !== expected) wrong.push({ door: 'rest', filters, expected, got });
              } else {
                const res = await server.gql(OFFERS_COUNT, { status: status?.toUpperCase(), kind: kind?.toUpperCase(), chainId: chain, currency, minPrice: range.min, maxPrice: range.max });
                const got = res.body.data?.offers.totalCount ?? res.body.errors;
                if (got !== expected) wrong.push({ door: 'graphql', filters, expected, got });
              }
              checked += 1;
            }
          }
    for (const status of [undefined, 'completed', 'failed', 'pending'])
      for (const chain of [undefined, ...CHAINS])
        for (const currency of [undefined, 'ETH', 'WETH'])
          for (let i = 0; i < 4; i += 1) {
            const range = randomRange(prices);
            const filters = { status, chain, currency, ...range };
            const expected = await recount('orders', filters);
            if (i < 3) {
              const res = await server.rest('GET', `/v1/orders?${query({ status, chain_id: chain, currency, min_price: range.min, max_price: range.max, limit: '1' })}`);
              const got = res.status === 200 ? res.body.remaining + res.body.result.length : res.body;
              if (got !== expected) wrong.push({ door: 'rest', list: 'orders', filters, expected, got });
            } else {
              const res = await server.gql(ORDERS_COUNT, { status: status?.toUpperCase(), chainId: chain, currency, minPrice: range.min, maxPrice: range.max });
              const got = res.body.data?.orders.totalCount ?? res.body.errors;
              if (got !== expected) wrong.push({ door: 'graphql', list: 'orders', filters, expected, got });
            }
            checked += 1;
          }
    expect({ seed: SEED, wrong: wrong.slice(0, 5), of: checked }).toEqual({ seed: SEED, wrong: [], of: 5 * 4 * 3 * 3 * 3 + 4 * 3 * 3 * 4 });
    const counts = await keptAndRecounted();
    expect(counts.kept).toEqual(counts.recount);
  }, 300_000);

  test('when writers insert offers and orders and move their prices and statuses in parallel while the counts are folded, then the kept counts by bucket equal a recount from scratch', async () => {
    // Each writer's orders are sales of both collections in its own order: no statement may lose a deadlock
    // (the hourly sales rollups take a statement's collection-hours in one order, migration 1765890000000).
    await server.ds.query(`DROP TABLE IF EXISTS rollups_before_race; CREATE TABLE rollups_before_race AS SELECT collection_id, hour, volume, sales FROM collection_sales_hourly`);
    const warn = jest.spyOn(logger, 'warn');
    let lostRaces: unknown[] = [];
    let done = false;
    const folding = (async () => {
      while (!done) await compactTradeListCounts(server.ds, 0);
    })();
    try {
      await Promise.all(
        Array.from({ length: 6 }, async (_, w) => {
          const r = generator(SEED * 100 + w);
          for (let round = 0; round < 8; round += 1) {
            const tag = `race${w}-${round}-`;
            const rows = Array.from({ length: 10 }, (_, i) => randomOffer(i, r));
            await insertOffers(rows, tag);
            await insertOrders(tag, rows.slice(0, 4).map((o) => o.id), r);
            await server.ds.query(`UPDATE offers SET price = $2::numeric WHERE id IN (SELECT md5($1 || i)::uuid FROM generate_series(4, 9) i)`, [tag, r.price()]);
            await server.ds.query(`UPDATE offers SET status = 'accepted', price = price + 1 WHERE id = md5($1 || '5')::uuid`, [tag]);
            await server.ds.query(`UPDATE orders SET price = price * 2, status = 'failed' WHERE offer_id = md5($1 || '0')::uuid`, [tag]);
            if (round % 2) await server.ds.query(`DELETE FROM offers WHERE id = md5($1 || '9')::uuid`, [tag]);
          }
        }),
      );
    } finally {
      done = true;
      await folding;
      lostRaces = warn.mock.calls.filter(([message]) => /deadlock/.test(String(message)));
      warn.mockRestore();
    }
    expect(lostRaces).toEqual([]);
    // The racing statements' counted sales (native, completed, seller not the buyer, less those made failed)
    // added to the hourly rollups exactly: the rollups' change by collection and hour equals their recount.
    const [rollups] = await server.ds.query(`WITH raced AS (
        SELECT collection_id, date_trunc('hour', created_at, 'UTC') AS hour, sum(price) AS volume, count(*)::int AS sales FROM orders
        WHERE offer_id IN (SELECT md5('race' || w || '-' || r || '-' || i)::uuid FROM generate_series(0, 5) w, generate_series(0, 7) r, generate_series(0, 3) i)
          AND status = 'completed' AND seller <> buyer AND currency = $1 GROUP BY 1, 2),
      changed AS (
        SELECT collection_id, hour, COALESCE(a.volume, 0) - COALESCE(b.volume, 0) AS volume, COALESCE(a.sales, 0) - COALESCE(b.sales, 0) AS sales
        FROM collection_sales_hourly a FULL JOIN rollups_before_race b USING (collection_id, hour))
      SELECT (SELECT count(*)::int FROM raced) AS hours, (SELECT COALESCE(sum(sales), 0)::int FROM raced) AS sales,
        (SELECT COALESCE(jsonb_agg(x), '[]') FROM (SELECT * FROM raced FULL JOIN changed c USING (collection_id, hour)
           WHERE raced.volume IS DISTINCT FROM NULLIF(c.volume, 0) OR raced.sales IS DISTINCT FROM NULLIF(c.sales, 0)) x) AS wrong`, [NATIVE]);
    expect(rollups.sales).toBeGreaterThan(40);
    expect(rollups.wrong).toEqual([]);
    const { kept, recount } = await keptAndRecounted();
    expect(kept).toEqual(recount);
    await compactTradeListCounts(server.ds, 0);
    const folded = await keptAndRecounted();
    expect(folded.kept).toEqual(folded.recount);
    // Folded: one row per group and bucket.
    const [{ extra }] = await server.ds.query(`SELECT count(*) - count(DISTINCT (list, chain_id, currency, kind, status, swept, bucket))::int AS extra FROM trade_price_counts`);
    expect(Number(extra)).toBe(0);
  }, 300_000);
});

const OFFERS_COUNT = `query ($status: OfferStatus, $kind: OfferKind, $chainId: String, $currency: String, $minPrice: Price, $maxPrice: Price) {
  offers(status: $status, kind: $kind, chainId: $chainId, currency: $currency, minPrice: $minPrice, maxPrice: $maxPrice, first: 1) { totalCount } }`;
const ORDERS_COUNT = `query ($status: OrderStatus, $chainId: String, $currency: String, $minPrice: Price, $maxPrice: Price) {
  orders(status: $status, chainId: $chainId, currency: $currency, minPrice: $minPrice, maxPrice: $maxPrice, first: 1) { totalCount } }`;
