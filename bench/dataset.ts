import { DataSource, QueryRunner } from 'typeorm';
import { fillTradePriceCounts } from '../src/db/migrations/1765830000000-trade-price-counts';

export interface Scale {
  collections: number;
  assetsPerCollection: number;
  offers: number;
  orders: number;
}

export const DEFAULT_SCALE: Scale = { collections: 1000, assetsPerCollection: 100, offers: 50_000, orders: 10_000 };

/** A deterministic address from a label: the same data set on every run and both databases. */
const address = (label: string) => `'0x' || substr(md5(${label}) || md5('x' || ${label}), 1, 40)`;

/** The accounts that own the assets (holder0 to holder4999), each a share of every collection range. */
export const HOLDERS = 5000;

/** Rows per INSERT: each statement stays well inside the loader's query timeout at any scale. */
const BATCH_ROWS = 500_000;

/** The data set's size, kept in the database once it is whole, so --reuse-db never takes a half-loaded one. */
const MARKER = 'bench_dataset';

/** The tables of the data set's rows (their indexes, keys and foreign keys are set aside while they fill). */
const MARKET = ['assets', 'listings', 'offers', 'orders'];

/**
 * The tables the AFTER triggers of the market's tables keep (src/db/migrations), which the fast load fills
 * from the rows once they are in (fillDerived), and the triggers it turns off meanwhile. A trigger added to
 * these tables must be added here and to fillDerived: test/bench-dataset.test.ts compares both loads.
 */
export const DERIVED = [
  'collection_figures',
  'collection_holdings',
  'collection_sales_hourly',
  'collection_sales_bounds',
  'collection_sales_lows',
  'collection_trending_counts',
  'collection_counts',
  'collection_asset_counts',
  'asset_counts',
  'listed_asset_counts',
  'trade_list_counts',
  'trade_price_counts',
];
export const TRIGGERED = ['collections', ...MARKET, 'collection_sales_hourly'];

/**
 * The BEFORE triggers of the loaded tables that the fast load turns off too, as it writes their columns itself: a
 * listing's asset name (migration 1765870000000), which its trigger reads from the asset by the assets' key, set
 * aside while the rows go in (a scan of the assets per listing). With every trigger on the key stays (KEPT_KEYS).
 */
export const WRITTEN_BY_LOADER = ['listings_asset_name'];
/** The keys the load with every trigger on keeps while the rows go in: the triggers of WRITTEN_BY_LOADER read by them. */
const KEPT_KEYS = ['assets_pkey'];

export interface LoadOptions {
  /**
   * true: every trigger on, so the derived tables are kept row by row as the application's writes keep them
   * (the slow reference). false (the default): the AFTER triggers off while the rows go in, the derived
   * tables filled after in a few set-based statements (BEFORE triggers, which shape the row itself, stay on).
   */
  triggers?: boolean;
  /** The moment of the data set (every row's times are relative to it): the same moment, the same rows. */
  at?: Date;
}

/**
 * Loads the benchmark's data set with set-based statements (no API calls): collections, their assets
 * with listings on a third of them, active offers, and completed orders spread over 30 days. Rows go in
 * by batches of about BATCH_ROWS (at 10,000,000 assets one INSERT ran past any sane timeout) into tables
 * whose indexes, keys and foreign keys are put back once the rows are in (withoutIndexes): keeping them row
 * by row (each foreign key check locks the row it finds) was most of the time.
 *
 * The derived tables (DERIVED: counts, holdings, rollups, the collections' figures, floor and sales bounds)
 * end as the application's writes would have left them. With `triggers` the triggers keep them as the rows
 * go in: at --scale 10 that took 508 s (under a load average of about 20), most of it the orders' row-level
 * sales rollups (each updating its collection's figures and sales bounds) and the assets' holdings upserts.
 * Without (the bench's way) those triggers are off during the inserts and the tables are filled afterwards
 * from the rows, one statement each, on two connections: 136-179 s under the same load. Putting the indexes
 * back is then most of the time. test/bench-dataset.test.ts loads a small data set both ways and compares
 * every table. Timings per scale: docs/benchmark.md.
 */
export async function loadDataset(ds: DataSource, scale: Scale, log: (line: string) => void, options: LoadOptions = {}): Promise<void> {
  const started = Date.now();
  const at = (options.at ?? new Date()).toISOString();
  const lanes = [ds.createQueryRunner(), ds.createQueryRunner()];
  const seconds = (t: number) => ((Date.now() - t) / 1000).toFixed(1);
  try {
    for (const lane of lanes) await lane.query(`SET maintenance_work_mem = '256MB'`);
    const [one] = lanes;
    const step = async (what: string, sql: string, params: unknown[] = [], lane = one) => {
      const t = Date.now();
      await lane.query(sql, params);
      log(`  ${what} (${seconds(t)} s)`);
    };
    /** The statements of `sql` over 1..total in ranges of `size` ($1, $2 and `params`), to run in any order, with progress. */
    const batches = (what: string, total: number, size: number, sql: string, params: unknown[]) => {
      let t = 0;
      let done = 0;
      const ranges: [number, number][] = [];
      for (let lo = 1; lo <= total; lo += size) ranges.push([lo, Math.min(total, lo + size - 1)]);
      return ranges.map(([lo, hi]) => async (lane: QueryRunner) => {
        t ||= Date.now();
        await lane.query(sql, [lo, hi, ...params]);
        done += hi - lo + 1;
        if (ranges.length > 1) log(`  ${what}: ${done.toLocaleString('en-US')} of ${total.toLocaleString('en-US')} (${seconds(t)} s)`);
        if (done === total) log(`  ${what} (${seconds(t)} s)`);
      });
    };
    const rows = inserts(at);

    await one.query(`DROP TABLE IF EXISTS ${MARKER}`);
    const restore = await withoutIndexes(one, options.triggers ? MARKET : [...MARKET, ...DERIVED], log, options.triggers ? KEPT_KEYS : []);
    const afterTriggers: { tab: string; name: string }[] = options.triggers
      ? []
      : await one.query(
          `SELECT t.tgrelid::regclass::text AS tab, t.tgname AS name FROM pg_trigger t
           WHERE NOT t.tgisinternal AND t.tgrelid::regclass::text = ANY($1) AND (t.tgtype & 2 = 0 OR t.tgname = ANY($2)) ORDER BY 1, 2`,
          [TRIGGERED, WRITTEN_BY_LOADER],
        );
    for (const t of afterTriggers) await one.query(`ALTER TABLE ${quoteIdent(t.tab)} DISABLE TRIGGER ${quoteIdent(t.name)}`);
    try {
      await step(`${scale.collections} collections`, rows.collections, [scale.collections]);
      const collectionsPerBatch = Math.max(1, Math.floor(BATCH_ROWS / scale.assetsPerCollection));
      const assets = batches(`${(scale.collections * scale.assetsPerCollection).toLocaleString('en-US')} assets, listings on a third`, scale.collections, collectionsPerBatch, rows.assets, [
        scale.assetsPerCollection,
      ]);
      // The offers and orders are made from the same numbers as the assets, not read from them: with the
      // triggers off (they read the assets) every batch can go in beside any other. The first `orders`
      // offers were accepted: the orders are their sales.
      const offers = batches(`${scale.offers.toLocaleString('en-US')} offers`, scale.offers, BATCH_ROWS, rows.offers, [scale.collections, scale.assetsPerCollection, scale.orders]);
      const orders = batches(`${scale.orders.toLocaleString('en-US')} completed orders`, scale.orders, BATCH_ROWS, rows.orders, [scale.collections, scale.assetsPerCollection]);
      if (options.triggers) {
        await inLanes([one], [...assets, ...offers, ...orders]);
      } else {
        // Interleaved, so that both connections stay busy to the end.
        const trades = [...offers, ...orders];
        await inLanes(lanes, assets.flatMap((task, i) => [task, ...trades.slice(i * Math.ceil(trades.length / assets.length), (i + 1) * Math.ceil(trades.length / assets.length))]));
      }
    } finally {
      for (const t of afterTriggers) await one.query(`ALTER TABLE ${quoteIdent(t.tab)} ENABLE TRIGGER ${quoteIdent(t.name)}`);
    }
    if (!options.triggers) await fillDerived(lanes, log);
    await restore(lanes);
    // A settled database: index-only scans need the visibility map, which autovacuum (off on these servers)
    // would set within minutes of a load; VACUUM sets it now, and ANALYZE gives the planner its statistics.
    const t = Date.now();
    const tables: { name: string }[] = await one.query(`SELECT c.relname AS name FROM pg_class c WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace ORDER BY pg_relation_size(c.oid) DESC`);
    await inLanes(lanes, tables.map(({ name }) => (lane) => lane.query(`VACUUM ANALYZE ${quoteIdent(name)}`)));
    log(`  VACUUM ANALYZE (${seconds(t)} s)`);
    await one.query(`CREATE TABLE ${MARKER} AS SELECT $1::jsonb AS scale, now() AS loaded_at`, [JSON.stringify(scale)]);
  } finally {
    for (const lane of lanes) {
      await lane.query('RESET maintenance_work_mem').catch(() => undefined);
      await lane.release();
    }
  }
  log(`  loaded in ${seconds(started)} s`);
}

/** The statements of the data set's rows, every time relative to `at` ($-parameters: see loadDataset). */
function inserts(at: string) {
  const now = `'${at}'::timestamptz`;
  const chain = (i: string) => `(ARRAY['1','137','8453','10'])[1 + ${i} % 4]`;
  // An offer's number k names its asset: collection 1 + k % collections, token 1 + (k / collections) % assets per collection.
  const offerAsset = `CROSS JOIN LATERAL (SELECT 1 + k % $3::int AS c, 1 + (k / $3::int) % $4::int AS t) x`;
  return {
    collections: `INSERT INTO collections (id, chain_id, contract_address, owner, category_id, name, slug, fees, created_at, updated_at)
     SELECT md5('c' || i)::uuid, ${chain('i')}, ${address("'contract' || i")},
       ${address("'owner' || (i % 50)")}, (ARRAY['art','gaming','pfps','music'])[1 + i % 4], 'Collection ' || i, 'collection-' || i,
       '[{"address":"0x1111111111111111111111111111111111111111","basisPoints":250}]'::jsonb,
       ${now} - make_interval(mins => i), ${now}
     FROM generate_series(1, $1::int) i`,
    assets: `WITH inserted AS (
         INSERT INTO assets (id, collection_id, chain_id, token_address, token_id, name, description, image_url, metadata, owner, status, created_at, updated_at)
         SELECT md5('a' || c.i || '-' || t)::uuid, md5('c' || c.i)::uuid, ${chain('c.i')},
           ${address("'contract' || c.i")}, t, 'Asset ' || c.i || '/' || t, 'Token ' || t || ' of collection ' || c.i,
           'https://img.example/' || c.i || '/' || t || '.png', jsonb_build_object('rarity', t % 7),
           ${address(`'holder' || ((c.i * 31 + t) % ${HOLDERS})`)}, CASE WHEN t % 3 = 0 THEN 'listed' ELSE 'unlisted' END,
           ${now} - make_interval(secs => c.i * 100 + t), ${now}
         FROM generate_series($1::int, $2::int) c(i) CROSS JOIN generate_series(1, $3::int) t
         RETURNING id, collection_id, owner, token_id, name)
       INSERT INTO listings (id, asset_id, collection_id, seller, order_type, start_price, accept_price, listing_time, created_at, updated_at, asset_name)
       SELECT md5('l' || a.id)::uuid, a.id, a.collection_id, a.owner, 'fixed_price', (a.token_id % 50 + 1) / 10.0, (a.token_id % 50 + 1) / 10.0,
         ${now} - interval '1 day', ${now}, ${now}, a.name
       FROM inserted a WHERE a.token_id % 3 = 0`,
    offers: `INSERT INTO offers (id, asset_id, collection_id, chain_id, token_address, token_id, taker, price, start_time, end_time, status, created_at, updated_at)
       SELECT md5('o' || k)::uuid, md5('a' || x.c || '-' || x.t)::uuid, md5('c' || x.c)::uuid, ${chain('x.c')}, ${address("'contract' || x.c")}, x.t,
         ${address("'taker' || (k % 1000)")}, (k % 40 + 1) / 20.0, ${now} - interval '1 day', ${now} + interval '30 days',
         CASE WHEN k <= $5::int THEN 'accepted' ELSE 'active' END, ${now}, ${now}
       FROM generate_series($1::int, $2::int) k ${offerAsset}`,
    orders: `INSERT INTO orders (id, offer_id, asset_id, collection_id, chain_id, token_address, token_id, price, seller, buyer, created_at, updated_at)
       SELECT md5('s' || k)::uuid, md5('o' || k)::uuid, md5('a' || x.c || '-' || x.t)::uuid, md5('c' || x.c)::uuid, ${chain('x.c')},
         ${address("'contract' || x.c")}, x.t, (k % 40 + 1) / 20.0, ${address("'seller' || x.t")}, ${address("'taker' || (k % 1000)")},
         ${now} - make_interval(hours => (abs(hashtext(md5('o' || k)::uuid::text)) % 720)), ${now}
       FROM generate_series($1::int, $2::int) k ${offerAsset}`,
  };
}

/** The native currency, whose listings make the floors and whose sales the rollups. */
const NATIVE = `'0x0000000000000000000000000000000000000000'`;

/**
 * The derived tables (DERIVED) from the rows of the market, as its triggers would have kept them: each the
 * statement of its trigger over the whole table instead of a statement's transition table (the counts as one
 * row per group, folded, as the sweeper's loop leaves them and the migrations write them: loaded as unfolded
 * deltas, the first fold rewrote every collection's rows, whose dead versions and statistics of unfolded rows
 * then stayed on a server without autovacuum), the collections' floors by the triggers' own
 * collection_floor_recount. Independent tables on both connections at once.
 */
async function fillDerived(lanes: QueryRunner[], log: (line: string) => void): Promise<void> {
  const t = Date.now();
  const timed = (what: string, ...statements: string[]) => async (lane: QueryRunner) => {
    const started = Date.now();
    for (const sql of statements) await lane.query(sql);
    log(`  ${what} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  };
  await inLanes(lanes, [
    timed('collection_counts', `INSERT INTO collection_counts (chain_id, category_id, status, collections) SELECT chain_id, category_id, status, count(*) FROM collections GROUP BY 1, 2, 3`),
    timed(
      'collection_holdings',
      `INSERT INTO collection_holdings (collection_id, owner, assets) SELECT collection_id, owner, count(*) FROM assets GROUP BY 1, 2`,
    ),
    timed(
      'collection_sales_hourly',
      `INSERT INTO collection_sales_hourly (collection_id, hour, volume, sales, min_price, max_price, last_sale_at)
       SELECT collection_id, date_trunc('hour', created_at, 'UTC'), sum(price), count(*), min(price), max(price), max(created_at)
       FROM orders WHERE status = 'completed' AND seller <> buyer AND currency = ${NATIVE} GROUP BY 1, 2`,
    ),
    timed(
      'collection_asset_counts, asset_counts',
      `WITH g AS (SELECT collection_id, chain_id, count(*) AS n FROM assets GROUP BY 1, 2),
       c AS (INSERT INTO collection_asset_counts (collection_id, assets) SELECT collection_id, sum(n) FROM g GROUP BY 1)
       INSERT INTO asset_counts (chain_id, n, folded) SELECT chain_id, sum(n), true FROM g GROUP BY 1`,
    ),
    timed(
      'listed_asset_counts',
      `INSERT INTO listed_asset_counts (collection_id, chain_id, currency, swept, n, folded)
       SELECT g.collection_id, c.chain_id, d.currency, d.swept, sum(d.n), true
       FROM (SELECT collection_id, currency, expiry_swept, count(*) FROM listings WHERE status = 'active' GROUP BY 1, 2, 3) d(collection_id, currency, swept, n)
       JOIN collections c ON c.id = d.collection_id
       CROSS JOIN LATERAL (VALUES (d.collection_id), ('00000000-0000-0000-0000-000000000000'::uuid)) g(collection_id)
       GROUP BY g.collection_id, c.chain_id, d.currency, d.swept HAVING sum(d.n) <> 0`,
    ),
    timed(
      'trade_list_counts',
      `INSERT INTO trade_list_counts (list, chain_id, currency, kind, status, swept, n)
       SELECT 'offers', chain_id, currency, kind, status, expiry_swept, count(*) FROM offers GROUP BY 2, 3, 4, 5, 6
       UNION ALL
       SELECT 'orders', chain_id, currency, '', status, false, count(*) FROM orders GROUP BY 2, 3, 5`,
    ),
    timed('trade_price_counts', fillTradePriceCounts(), 'UPDATE trade_price_counts SET folded = true'),
    // An english auction's bound is its best bid's (listing_bids_changed, on the offers' insert).
    timed(
      'english auctions\' best bids',
      `UPDATE listings l SET price_high = b.bound
       FROM (SELECT l2.id, listing_best_bid_bound(l2.asset_id, l2.currency, l2.start_price) AS bound FROM listings l2
             WHERE l2.order_type = 'english_auction' AND l2.status = 'active') b
       WHERE l.id = b.id AND l.price_high IS DISTINCT FROM b.bound`,
    ),
  ]);
  await inLanes(lanes, [
    timed(
      'collection_figures',
      `INSERT INTO collection_figures (collection_id, chain_id, holders, volume, sales)
       SELECT c.id, c.chain_id, COALESCE(h.holders, 0), COALESCE(s.volume, 0), COALESCE(s.sales, 0)
       FROM collections c
       LEFT JOIN (SELECT collection_id, count(*) AS holders FROM collection_holdings GROUP BY 1) h ON h.collection_id = c.id
       LEFT JOIN (SELECT collection_id, sum(volume) AS volume, sum(sales) AS sales FROM collection_sales_hourly GROUP BY 1) s ON s.collection_id = c.id`,
    ),
    timed(
      'collection_sales_bounds',
      `INSERT INTO collection_sales_bounds (collection_id, period, chain_id, volume_high, sales_high)
       SELECT c.id, w.period, c.chain_id, COALESCE(x.volume, 0), COALESCE(x.sales, 0)
       FROM collections c CROSS JOIN collection_sales_bound_windows w
       LEFT JOIN (SELECT r.collection_id, w.period, sum(r.volume) AS volume, sum(r.sales) AS sales
                  FROM collection_sales_hourly r JOIN collection_sales_bound_windows w ON r.hour >= w.since
                  GROUP BY 1, 2) x ON x.collection_id = c.id AND x.period = w.period`,
    ),
    timed(
      'collection_sales_lows',
      `INSERT INTO collection_sales_lows (collection_id, period, chain_id, volume_low, sales_low, trend_volume, previous_volume)
       SELECT c.id, w.period, c.chain_id, COALESCE(x.volume, 0), COALESCE(x.sales, 0), COALESCE(x.trend, 0), COALESCE(x.previous, 0)
       FROM collections c CROSS JOIN collection_sales_bound_windows w
       LEFT JOIN (SELECT r.collection_id, w.period,
                    sum(r.volume) FILTER (WHERE r.hour >= w.since + interval '2 hours' AND r.hour < w.since + make_interval(secs => w.seconds) - interval '1 hour') AS volume,
                    sum(r.sales) FILTER (WHERE r.hour >= w.since + interval '2 hours' AND r.hour < w.since + make_interval(secs => w.seconds) - interval '1 hour') AS sales,
                    sum(r.volume) FILTER (WHERE r.hour >= w.since + interval '1 hour' AND r.hour < w.since + make_interval(secs => w.seconds)) AS trend,
                    sum(r.volume) FILTER (WHERE r.hour >= w.since + interval '1 hour' - make_interval(secs => w.seconds) AND r.hour < w.since) AS previous
                  FROM collection_sales_hourly r JOIN collection_sales_bound_windows w
                    ON r.hour >= w.since + interval '1 hour' - make_interval(secs => w.seconds) AND r.hour < w.since + make_interval(secs => w.seconds)
                  GROUP BY 1, 2) x ON x.collection_id = c.id AND x.period = w.period
       WHERE w.seconds >= 6 * 3600`,
      // Its triggers counted the trending ones in one statement: one row per period and chain, as folded.
      'UPDATE collection_trending_counts SET folded = true',
    ),
  ]);
  await timed(
    'collection floors',
    `SELECT collection_floor_recount(array_agg(DISTINCT collection_id)) FROM listings
     WHERE status = 'active' AND currency = ${NATIVE} AND price_low IS NOT NULL HAVING count(*) > 0`,
  )(lanes[0]);
  log(`  derived tables filled (${((Date.now() - t) / 1000).toFixed(1)} s)`);
}

/** Runs `tasks` on the lanes, each lane taking the next task when it is free. */
async function inLanes(lanes: QueryRunner[], tasks: ((lane: QueryRunner) => Promise<unknown>)[]): Promise<void> {
  let next = 0;
  await Promise.all(
    lanes.map(async (lane) => {
      while (next < tasks.length) await tasks[next++](lane);
    }),
  );
}

/** Whether the database holds this scale's whole data set (its marker is written last). */
export async function holdsDataset(query: (sql: string) => Promise<{ rows: { scale: Record<string, unknown> }[] }>, scale: Scale): Promise<boolean> {
  try {
    const { rows } = await query(`SELECT scale FROM ${MARKER}`);
    return rows.length === 1 && (Object.keys(scale) as (keyof Scale)[]).every((key) => rows[0].scale[key] === scale[key]);
  } catch {
    return false;
  }
}

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Drops the indexes, keys and foreign keys of `tables` (and the foreign keys that point at them) and
 * answers the function that puts them all back, as they were, on the lanes at once: keys first, then the
 * other indexes, then the foreign keys, each validated in one pass over the loaded rows. The keys named in
 * `keep` stay (the foreign keys that point at them go all the same).
 */
async function withoutIndexes(q: QueryRunner, tables: string[], log: (line: string) => void, keep: string[] = []): Promise<(lanes: QueryRunner[]) => Promise<void>> {
  const constraints: { tab: string; name: string; type: string; definition: string }[] = await q.query(
    `SELECT c.conrelid::regclass::text AS tab, c.conname AS name, c.contype AS type, pg_get_constraintdef(c.oid) AS definition
     FROM pg_constraint c
     WHERE ((c.conrelid::regclass::text = ANY($1) AND c.contype IN ('p', 'u', 'f'))
        OR (c.confrelid::regclass::text = ANY($1) AND c.contype = 'f')) AND c.conname <> ALL($2)`,
    [tables, keep],
  );
  const indexes: { name: string; definition: string }[] = await q.query(
    `SELECT i.indexname AS name, i.indexdef AS definition FROM pg_indexes i
     WHERE i.schemaname = current_schema() AND i.tablename = ANY($1)
       AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = (quote_ident(i.schemaname) || '.' || quote_ident(i.indexname))::regclass)`,
    [tables],
  );
  const foreign = constraints.filter((c) => c.type === 'f');
  const keys = constraints.filter((c) => c.type !== 'f');
  for (const c of [...foreign, ...keys]) await q.query(`ALTER TABLE ${quoteIdent(c.tab)} DROP CONSTRAINT ${quoteIdent(c.name)}`);
  for (const index of indexes) await q.query(`DROP INDEX ${quoteIdent(index.name)}`);
  log(`  ${tables.join(', ')}: ${keys.length} keys, ${indexes.length} indexes and ${foreign.length} foreign keys set aside until the rows are in`);
  return async (lanes) => {
    const started = Date.now();
    const timed = (what: string, sql: string) => async (lane: QueryRunner) => {
      const t = Date.now();
      await lane.query(sql);
      if (Date.now() - t >= 2000) log(`  ${what} (${((Date.now() - t) / 1000).toFixed(1)} s)`);
    };
    // The biggest tables' first, so that the lanes end together.
    const sizes = new Map<string, number>(
      ((await lanes[0].query(`SELECT relname AS name, pg_relation_size(oid) AS bytes FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relkind = 'r'`)) as { name: string; bytes: string }[]).map(
        (r) => [r.name, Number(r.bytes)],
      ),
    );
    const tableOf = (definition: string) => /\bON (?:ONLY )?(?:\w+\.)?"?(\w+)"?/.exec(definition)?.[1] ?? '';
    const bySize = <T>(items: T[], table: (item: T) => string) => [...items].sort((a, b) => (sizes.get(table(b)) ?? 0) - (sizes.get(table(a)) ?? 0));
    // ALTER TABLE locks its table against another ALTER TABLE of it: a table's keys one after the other, on one lane.
    const perTable = <T>(items: T[], table: (item: T) => string, task: (item: T) => (lane: QueryRunner) => Promise<void>) => {
      const chains = new Map<string, T[]>();
      for (const item of bySize(items, table)) chains.set(table(item), [...(chains.get(table(item)) ?? []), item]);
      return [...chains.values()].map((chain) => async (lane: QueryRunner) => {
        for (const item of chain) await task(item)(lane);
      });
    };
    await inLanes(lanes, perTable(keys, (c) => c.tab, (c) => timed(`key ${c.name}`, `ALTER TABLE ${quoteIdent(c.tab)} ADD CONSTRAINT ${quoteIdent(c.name)} ${c.definition}`)));
    await inLanes(lanes, bySize(indexes, (i) => tableOf(i.definition)).map((index) => timed(`index ${index.name}`, index.definition)));
    // A foreign key added NOT VALID, then validated: the validation locks neither table against another's
    // (adding it valid at once locks the table it points at: every key pointing at the assets in turn).
    for (const c of foreign) await lanes[0].query(`ALTER TABLE ${quoteIdent(c.tab)} ADD CONSTRAINT ${quoteIdent(c.name)} ${c.definition}${/NOT VALID$/.test(c.definition) ? '' : ' NOT VALID'}`);
    await inLanes(
      lanes,
      perTable(
        foreign.filter((c) => !/NOT VALID$/.test(c.definition)),
        (c) => c.tab,
        (c) => timed(`foreign key ${c.name}`, `ALTER TABLE ${quoteIdent(c.tab)} VALIDATE CONSTRAINT ${quoteIdent(c.name)}`),
      ),
    );
    log(`  ${tables.join(', ')}: keys, indexes and foreign keys back (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  };
}
