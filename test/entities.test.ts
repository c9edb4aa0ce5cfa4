import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import { setLogLevel } from '../src/common/logger';
import { createDataSource } from '../src/db/data-source';

/**
 * The entities are the one list of the nouns' columns; the hand-written migrations build the tables. These tests
 * hold the two equal on the run's database (PGlite, or PostgreSQL with DATABASE_URL), migrated as the server
 * migrates it: a column added by a migration and not to its entity (or the reverse) fails here.
 */

/** Tables that have no entity, and why: the rest of the schema must each have one. */
const WITHOUT_ENTITY: Record<string, string> = {
  migrations: "TypeORM's own record of the migrations run",
  event_sequence: 'one row: the last event position (written by event.log.ts in the same statement as the events)',
  collection_asset_counts: 'derived: kept by triggers on assets, read by aggregates',
  trade_list_counts: 'derived: deltas of the counts of offers and orders, appended by triggers on them, read by sums',
  trade_price_counts: 'derived: deltas of the counts of offers and orders by price bucket, appended by triggers on them, read by sums',
  collection_sales_hourly: 'derived: kept by triggers on orders, read by aggregates',
  collection_figures: 'derived: holders, volume and sales kept by triggers on assets and collection_sales_hourly, read by statistics',
  collection_holdings: 'derived: assets per owner per collection, kept by triggers on assets',
  collection_sales_bounds: "derived: upper bounds of each collection's volume and sales per sliding period, raised by triggers on collection_sales_hourly and moved by the expiry sweeper",
  collection_sales_lows: "derived: lower bounds of each collection's volume and sales, and its trend windows' kept sums, per sliding period of 6 hours or more, moved by the expiry sweeper, changed by triggers on collection_sales_hourly",
  collection_trending_counts: 'derived: how many collections\' kept trend sums trend per period and chain, deltas appended by triggers on collection_sales_lows and folded by the expiry sweeper, read by sums',
  collection_counts: 'derived: the number of collections per chain, category and status, kept by triggers on collections, read by the collections list\'s and the statistics\' counts',
  collection_sales_bound_windows: 'derived: per sliding period, the hour from which collection_sales_bounds count sales',
  collection_traits: 'derived: trait counts kept by set-based writes with asset_traits, read by rarity',
  chain_blocks: "the chain follower's bookkeeping (docs/chain.md), written set-based per block range",
  chain_sync: "the chain follower's bookkeeping",
  chain_collection_sync: "the chain follower's bookkeeping",
  chain_transfers: "the chain follower's bookkeeping",
  chain_token_uris_pending: "the chain follower's bookkeeping",
  chain_metadata_update_ranges: "the chain follower's bookkeeping: ERC-4906 batches expanded a chunk at a time",
  chain_collection_royalties: "the chain follower's ERC-2981 reads; they show as the collection's fees",
  chain_approvals: "the chain follower's bookkeeping: the approval logs it applied (docs/chain.md \"Approvals\")",
  chain_ownership_transfers: "the chain follower's bookkeeping: the OwnershipTransferred logs it applied and the claims they replaced, for reorgs (docs/chain.md)",
  asset_metadata_queue: 'the tokenURI fetch queue (docs/metadata.md), claimed set-based with SKIP LOCKED; its state shows on assets',
  metadata_refreshes: "one key's last refresh per asset or collection: a rate limit's bookkeeping",
  asset_counts: "derived: every asset's and each chain's count, deltas kept by triggers on assets and folded by the expiry sweeper (the assets list's totals)",
  listed_asset_counts: 'derived: listed assets per collection, chain and currency, deltas kept by triggers on listings and folded by the expiry sweeper',
  collection_claim_nonces: "the nonces of signed collection claims (docs/chain.md), kept until they expire: a replay guard's bookkeeping",
  idempotency_keys: "the gateway's replay store for Idempotency-Key (app/http/idempotency.ts), not a noun",
  trusted_documents: "the gateway's list of trusted GraphQL documents, not a noun",
};

interface DbColumn {
  table_name: string;
  column_name: string;
  data_type: string;
  udt_name: string;
  is_nullable: 'YES' | 'NO';
  character_maximum_length: number | null;
  numeric_precision: number | null;
  numeric_scale: number | null;
  datetime_precision: number | null;
}

let ds: DataSource;
let dbColumns: DbColumn[];
beforeAll(async () => {
  setLogLevel((process.env.TEST_LOG_LEVEL as 'error') ?? 'silent'); // the schema builder logs each drop it would propose
  ds = createDataSource({ url: process.env.TEST_DATABASE_URL!, poolSize: 2, queryTimeoutMs: 30000 });
  await ds.initialize();
  dbColumns = await ds.query(
    `SELECT table_name, column_name, data_type, udt_name, is_nullable, character_maximum_length, numeric_precision, numeric_scale, datetime_precision
       FROM information_schema.columns WHERE table_schema = 'public'`,
  );
});
afterAll(async () => {
  await ds?.destroy();
});

/** A column as the database describes it, in the terms of information_schema. */
function described(c: DbColumn) {
  const array = c.data_type === 'ARRAY';
  return {
    type: array ? c.udt_name.slice(1) : c.data_type,
    array,
    nullable: c.is_nullable === 'YES',
    length: c.character_maximum_length,
    precision: c.data_type === 'numeric' ? c.numeric_precision : null,
    scale: c.data_type === 'numeric' ? c.numeric_scale : null,
    datetimePrecision: c.data_type.startsWith('timestamp') ? c.datetime_precision : null,
  };
}

/** An entity's column, described the same way: what the migrations must have built for it. */
function declared(column: ColumnMetadata) {
  const type = ds.driver.normalizeType(column);
  const timestamp = type.startsWith('timestamp');
  return {
    type,
    array: column.isArray,
    nullable: column.isNullable,
    length: column.length ? Number(column.length) : null,
    precision: type === 'numeric' ? (column.precision ?? null) : null,
    scale: type === 'numeric' ? (column.scale ?? null) : null,
    // PostgreSQL's default precision of a timestamp is 6 (microseconds)
    datetimePrecision: timestamp ? (column.precision ?? 6) : null,
  };
}

test('when the server has migrated, then every column of every entity is in its table, with the same type, length, precision and nullability', () => {
  const mismatches: string[] = [];
  for (const entity of ds.entityMetadatas) {
    for (const column of entity.columns) {
      const inDb = dbColumns.find((c) => c.table_name === entity.tableName && c.column_name === column.databaseName);
      const want = declared(column);
      if (!inDb) mismatches.push(`${entity.tableName}.${column.databaseName}: in ${entity.name}, not in the table`);
      else if (JSON.stringify(described(inDb)) !== JSON.stringify(want)) {
        mismatches.push(`${entity.tableName}.${column.databaseName}: ${entity.name} says ${JSON.stringify(want)}, the table ${JSON.stringify(described(inDb))}`);
      }
    }
  }
  expect(mismatches).toEqual([]);
});

test('when the server has migrated, then every column of a table with an entity is in that entity', () => {
  const missing = ds.entityMetadatas.flatMap((entity) =>
    dbColumns
      .filter((c) => c.table_name === entity.tableName && !entity.columns.some((col) => col.databaseName === c.column_name))
      .map((c) => `${entity.tableName}.${c.column_name} (not in ${entity.name})`),
  );
  expect(missing).toEqual([]);
});

test('when the server has migrated, then every table has an entity or is listed here with the reason it has none', () => {
  const tables = [...new Set(dbColumns.map((c) => c.table_name))].sort();
  const withEntity = new Set(ds.entityMetadatas.map((e) => e.tableName));
  expect(tables.filter((t) => !withEntity.has(t) && !(t in WITHOUT_ENTITY))).toEqual([]);
  expect(Object.keys(WITHOUT_ENTITY).filter((t) => !tables.includes(t))).toEqual([]);
  expect([...withEntity].filter((t) => !tables.includes(t))).toEqual([]);
});

test("when TypeORM compares the entities with the migrated schema, then it would change no column, table or primary key (only drop what the migrations add and the entities leave to them)", async () => {
  const { upQueries } = await ds.driver.createSchemaBuilder().log();
  // Foreign keys, CHECK constraints and (partial) indexes are the migrations' alone (docs/development.md):
  // the schema builder proposes dropping them, and nothing else may appear.
  const leftToMigrations = /^(DROP INDEX "public"\."\w+"|ALTER TABLE "\w+" DROP CONSTRAINT "(?!\w+_pkey")\w+")$/;
  expect(upQueries.map((q) => q.query).filter((q) => !leftToMigrations.test(q))).toEqual([]);
});
