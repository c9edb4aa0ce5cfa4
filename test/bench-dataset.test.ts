import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { createDataSource } from '../src/db/data-source';
import { ownDatabase } from './setup/own-database';
import { DERIVED, loadDataset, Scale, TRIGGERED, WRITTEN_BY_LOADER } from '../bench/dataset';
import { compactTradeListCounts } from '../src/modules/trade/list-counts';
import { compactListedAssetCounts } from '../src/modules/listing/listed-counts';
import { compactAssetCounts } from '../src/modules/asset/asset-counts';
import { compactTrendingCounts } from '../src/modules/statistics/statistics.trend';

/**
 * The bench's loader (bench/dataset.ts) fills the derived tables (counts, holdings, rollups, the collections'
 * figures, floor and sales bounds) after the rows, with the triggers that keep them off meanwhile. The same
 * small data set (more than 64 collections: the floors' bulk recount), loaded from the same moment once with
 * every trigger on and once the fast way, leaves every table of the database equal row for row: the derived
 * ones, and the rows themselves (the listings' price bounds come from their BEFORE trigger, on both ways; their
 * asset names from theirs with every trigger on, from the fast loader itself).
 * The deltas of the delta-counted tables are folded on both first (as the expiry sweeper folds them): one
 * row per group whatever the number of statements that wrote them.
 */

/** Orders enough that a collection sells more than once in some hours (about 40 each over 720 hours). */
const SCALE: Scale = { collections: 80, assetsPerCollection: 12, offers: 4000, orders: 3200 };

/** The AFTER triggers of the loaded tables, which the fast load turns off and replaces (bench/dataset.ts fillDerived). */
const COVERED_TRIGGERS = [
  'assets.asset_counts_delete',
  'assets.asset_counts_insert',
  'assets.asset_counts_move',
  'assets.assets_count_delete',
  'assets.assets_count_insert',
  'assets.assets_count_move',
  'assets.assets_holdings_delete',
  'assets.assets_holdings_insert',
  'assets.assets_holdings_update',
  // Renames an asset's listings: the load renames nothing (its listings' names are the loader's, WRITTEN_BY_LOADER).
  'assets.assets_listings_name',
  'collection_sales_hourly.collection_sales_hourly_bounds_insert',
  'collection_sales_hourly.collection_sales_hourly_bounds_update',
  'collection_sales_hourly.collection_sales_hourly_figures',
  'collection_sales_hourly.collection_sales_hourly_lows',
  'collections.collections_counts_delete',
  'collections.collections_counts_group',
  'collections.collections_counts_insert',
  'collections.collections_figures_chain',
  'collections.collections_figures_insert',
  'collections.collections_sales_bounds_chain',
  'collections.collections_sales_bounds_insert',
  'collections.collections_sales_lows_chain',
  'collections.collections_sales_lows_insert',
  'listings.listings_floor_delete',
  'listings.listings_floor_insert',
  'listings.listings_floor_update',
  'listings.listings_listed_counts_delete',
  'listings.listings_listed_counts_insert',
  'listings.listings_listed_counts_update',
  'offers.offers_bids_delete',
  'offers.offers_bids_insert',
  'offers.offers_bids_update',
  'offers.offers_list_counts_delete',
  'offers.offers_list_counts_insert',
  'offers.offers_list_counts_update',
  'offers.offers_price_counts_delete',
  'offers.offers_price_counts_insert',
  'offers.offers_price_counts_update',
  'orders.orders_list_counts_delete',
  'orders.orders_list_counts_insert',
  'orders.orders_list_counts_update',
  'orders.orders_price_counts_delete',
  'orders.orders_price_counts_insert',
  'orders.orders_price_counts_update',
  'orders.orders_sales_rollup',
  'orders.orders_sales_rollup_completed',
  'orders.orders_sales_rollup_uncompleted',
];

let db: { url: string; drop: () => Promise<void> } | undefined;
let ds: DataSource | undefined;

afterAll(async () => {
  await ds?.destroy();
  await db?.drop();
});

/** The data set loaded from `at`, its deltas folded: every table's rows (contents). */
async function loaded(q: DataSource, triggers: boolean, at: Date): Promise<Record<string, string[]>> {
  await loadDataset(q, SCALE, () => undefined, { triggers, at });
  await compactTradeListCounts(q, 0);
  await compactListedAssetCounts(q, 0);
  await compactAssetCounts(q, 0);
  await compactTrendingCounts(q, 0);
  return contents(q);
}

/** The indexes, keys and foreign keys of the database, as their definitions, and whether each is validated. */
const catalog = async (q: DataSource): Promise<string[]> =>
  (
    (await q.query(
      `SELECT conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(oid) || ' ' || convalidated AS d FROM pg_constraint WHERE connamespace = current_schema()::regnamespace
       UNION ALL SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename <> 'bench_dataset' ORDER BY 1`,
    )) as { d: string }[]
  ).map((r) => r.d);

/** Every row of every table of the database (or of `only`), as text, in order (but the loader's marker, which says when it ended). */
async function contents(ds: DataSource, only?: string[]): Promise<Record<string, string[]>> {
  const tables: { name: string }[] = await ds.query(
    `SELECT relname AS name FROM pg_class WHERE relkind = 'r' AND relnamespace = current_schema()::regnamespace AND relname <> 'bench_dataset' ORDER BY 1`,
  );
  const all: Record<string, string[]> = {};
  for (const { name } of tables) {
    if (only && !only.includes(name)) continue;
    const rows: { row: string }[] = await ds.query(`SELECT t::text AS row FROM "${name}" t ORDER BY 1`);
    all[name] = rows.map((r) => r.row);
  }
  return all;
}

test('when the data set is loaded with the triggers off and the derived tables filled after, then every table equals the load with every trigger on', async () => {
  db = await ownDatabase('gw_dataset');
  ds = createDataSource({ url: db.url, poolSize: 2, queryTimeoutMs: 60_000, logMigrations: false });
  await ds.initialize();
  const at = new Date();
  // The periods' hours as of the load's moment (the migration set them at its own).
  await ds.query(`UPDATE collection_sales_bound_windows SET since = date_trunc('hour', $1::timestamptz - interval '1 minute', 'UTC') - make_interval(secs => seconds)`, [at.toISOString()]);
  const empty = await contents(ds);
  const schema = await catalog(ds);
  const expected = await loaded(ds, true, at);
  expect(await catalog(ds)).toEqual(schema);
  // Back to the empty market (each table the load wrote), then the same data set the fast way.
  await ds.query(`TRUNCATE ${[...TRIGGERED, ...DERIVED].join(', ')} CASCADE`);
  expect(await contents(ds)).toEqual(empty);
  const actual = await loaded(ds, false, at);
  // Every index, key and foreign key back as it was (the fast load sets aside those of the derived tables too).
  expect(await catalog(ds)).toEqual(schema);

  const triggers: { name: string }[] = await ds.query(
    `SELECT t.tgrelid::regclass::text || '.' || t.tgname AS name FROM pg_trigger t
     WHERE NOT t.tgisinternal AND t.tgrelid::regclass::text = ANY($1) AND t.tgtype & 2 = 0 ORDER BY 1`,
    [TRIGGERED],
  );
  // A trigger added to these tables: add what it keeps to fillDerived (bench/dataset.ts) and here.
  expect(triggers.map((t) => t.name)).toEqual(COVERED_TRIGGERS);
  // The BEFORE triggers whose columns the fast load writes itself (it turns them off by name) are there.
  const before: { name: string }[] = await ds.query(`SELECT tgname AS name FROM pg_trigger WHERE tgname = ANY($1) AND tgtype & 2 <> 0 ORDER BY 1`, [WRITTEN_BY_LOADER]);
  expect(before.map((t) => t.name)).toEqual([...WRITTEN_BY_LOADER].sort());
  // Every trigger is back on after the fast load.
  expect(await ds.query(`SELECT tgname FROM pg_trigger WHERE NOT tgisinternal AND tgenabled <> 'O'`)).toEqual([]);

  // Not a comparison of empty tables: the load wrote every derived table, and the periods hold sales.
  const changed = Object.keys(expected).filter((table) => JSON.stringify(expected[table]) !== JSON.stringify(empty[table]));
  expect(changed).toEqual(expect.arrayContaining([...TRIGGERED, ...DERIVED]));
  const rows = (table: string, column: number, satisfies: (value: string) => boolean) =>
    expected[table].filter((row) => satisfies(row.slice(1, -1).split(',')[column])).length;
  expect(rows('collection_sales_bounds', 4, (salesHigh) => Number(salesHigh) > 0)).toBeGreaterThan(SCALE.collections);
  // More than 64 collections with a floor: collection_floor_recount's bulk pass, as at the bench's scales.
  expect(rows('collection_figures', 5, (floorLow) => floorLow !== '')).toBeGreaterThan(64);
  expect(Object.keys(actual)).toEqual(Object.keys(expected));
  for (const table of Object.keys(expected)) {
    const [want, got] = [expected[table], actual[table]];
    // Table by table, the rows of one and not the other: a failure names them.
    expect({ table, missing: want.filter((r) => !got.includes(r)).slice(0, 5), extra: got.filter((r) => !want.includes(r)).slice(0, 5) }).toEqual({ table, missing: [], extra: [] });
    expect({ table, rows: got }).toEqual({ table, rows: want });
  }
}, 480_000);
