import { DataSource } from 'typeorm';

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

/**
 * Loads the benchmark's data set with set-based statements (no API calls): collections, their assets
 * with listings on a third of them, active offers, and completed orders spread over 30 days. Rows go in
 * by batches of about BATCH_ROWS into tables whose indexes, keys and foreign keys are put back once the
 * rows are in (withoutIndexes): at 10,000,000 assets one INSERT ran past any sane timeout, and keeping
 * nine indexes and three foreign keys row by row (each check locks the row it finds) was most of the
 * time. The triggers stay on, so the counts, rollups and listings' price bounds (price_low, price_high:
 * the cheapest-first walk of listed assets reads them) they keep are what the application's writes would
 * have left.
 */
export async function loadDataset(ds: DataSource, scale: Scale, log: (line: string) => void): Promise<void> {
  const started = Date.now();
  const step = async (what: string, sql: string, params: unknown[] = []) => {
    const t = Date.now();
    await ds.query(sql, params);
    log(`  ${what} (${((Date.now() - t) / 1000).toFixed(1)} s)`);
  };
  /** `each(lo, hi)` over 1..total in ranges of `size`, with progress. */
  const batches = async (what: string, total: number, size: number, each: (lo: number, hi: number) => Promise<void>) => {
    const t = Date.now();
    for (let lo = 1; lo <= total; lo += size) {
      const hi = Math.min(total, lo + size - 1);
      await each(lo, hi);
      if (total > size) log(`  ${what}: ${hi.toLocaleString('en-US')} of ${total.toLocaleString('en-US')} (${((Date.now() - t) / 1000).toFixed(0)} s)`);
    }
    log(`  ${what} (${((Date.now() - t) / 1000).toFixed(1)} s)`);
  };

  await ds.query(`DROP TABLE IF EXISTS ${MARKER}`);
  const restoreMarket = await withoutIndexes(ds, ['assets', 'listings', 'offers'], log);
  await step(
    `${scale.collections} collections`,
    `INSERT INTO collections (id, chain_id, contract_address, owner, category_id, name, slug, fees, created_at, updated_at)
     SELECT md5('c' || i)::uuid, (ARRAY['1','137','8453','10'])[1 + i % 4], ${address("'contract' || i")},
       ${address("'owner' || (i % 50)")}, (ARRAY['art','gaming','pfps','music'])[1 + i % 4], 'Collection ' || i, 'collection-' || i,
       '[{"address":"0x1111111111111111111111111111111111111111","basisPoints":250}]'::jsonb,
       now() - make_interval(mins => i), now()
     FROM generate_series(1, $1::int) i`,
    [scale.collections],
  );
  const collectionsPerBatch = Math.max(1, Math.floor(BATCH_ROWS / scale.assetsPerCollection));
  await batches(`${(scale.collections * scale.assetsPerCollection).toLocaleString('en-US')} assets, listings on a third`, scale.collections, collectionsPerBatch, (lo, hi) =>
    ds.query(
      `WITH inserted AS (
         INSERT INTO assets (id, collection_id, chain_id, token_address, token_id, name, description, image_url, metadata, owner, status, created_at, updated_at)
         SELECT md5('a' || c.i || '-' || t)::uuid, md5('c' || c.i)::uuid, (ARRAY['1','137','8453','10'])[1 + c.i % 4],
           ${address("'contract' || c.i")}, t, 'Asset ' || c.i || '/' || t, 'Token ' || t || ' of collection ' || c.i,
           'https://img.example/' || c.i || '/' || t || '.png', jsonb_build_object('rarity', t % 7),
           ${address(`'holder' || ((c.i * 31 + t) % ${HOLDERS})`)}, CASE WHEN t % 3 = 0 THEN 'listed' ELSE 'unlisted' END,
           now() - make_interval(secs => c.i * 100 + t), now()
         FROM generate_series($1::int, $2::int) c(i) CROSS JOIN generate_series(1, $3::int) t
         RETURNING id, collection_id, owner, token_id)
       INSERT INTO listings (asset_id, collection_id, seller, order_type, start_price, accept_price, listing_time)
       SELECT a.id, a.collection_id, a.owner, 'fixed_price', (a.token_id % 50 + 1) / 10.0, (a.token_id % 50 + 1) / 10.0, now() - interval '1 day'
       FROM inserted a WHERE a.token_id % 3 = 0`,
      [lo, hi, scale.assetsPerCollection],
    ),
  );
  // The first `orders` offers were accepted: the orders below are their sales.
  await batches(`${scale.offers.toLocaleString('en-US')} offers`, scale.offers, BATCH_ROWS, (lo, hi) =>
    ds.query(
      `INSERT INTO offers (id, asset_id, collection_id, chain_id, token_address, token_id, taker, price, start_time, end_time, status)
       SELECT md5('o' || k)::uuid, a.id, a.collection_id, a.chain_id, a.token_address, a.token_id, ${address("'taker' || (k % 1000)")},
         (k % 40 + 1) / 20.0, now() - interval '1 day', now() + interval '30 days', CASE WHEN k <= $5::int THEN 'accepted' ELSE 'active' END
       FROM generate_series($1::int, $2::int) k
       JOIN assets a ON a.id = md5('a' || (1 + k % $3::int) || '-' || (1 + (k / $3::int) % $4::int))::uuid`,
      [lo, hi, scale.collections, scale.assetsPerCollection, scale.orders],
    ),
  );
  await restoreMarket();
  const restoreOrders = await withoutIndexes(ds, ['orders'], log);
  await batches(`${scale.orders.toLocaleString('en-US')} completed orders`, scale.orders, BATCH_ROWS, (lo, hi) =>
    ds.query(
      `INSERT INTO orders (offer_id, asset_id, collection_id, chain_id, token_address, token_id, price, seller, buyer, created_at, updated_at)
       SELECT s.id, s.asset_id, s.collection_id, s.chain_id, s.token_address, s.token_id, s.price,
         ${address("'seller' || s.token_id")}, s.taker, now() - make_interval(hours => (abs(hashtext(s.id::text)) % 720)),
         now()
       FROM offers s WHERE s.id IN (SELECT md5('o' || k)::uuid FROM generate_series($1::int, $2::int) k)`,
      [lo, hi],
    ),
  );
  await restoreOrders();
  // A settled database: index-only scans need the visibility map, which autovacuum (off on these servers)
  // would set within minutes of a load; VACUUM sets it now, and ANALYZE gives the planner its statistics.
  await step('VACUUM ANALYZE', 'VACUUM ANALYZE');
  await ds.query(`CREATE TABLE ${MARKER} AS SELECT $1::jsonb AS scale, now() AS loaded_at`, [JSON.stringify(scale)]);
  log(`  loaded in ${((Date.now() - started) / 1000).toFixed(1)} s`);
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
 * answers the function that puts them all back, as they were: keys first, then the other indexes, then
 * the foreign keys, each validated in one pass over the loaded rows.
 */
async function withoutIndexes(ds: DataSource, tables: string[], log: (line: string) => void): Promise<() => Promise<void>> {
  const constraints: { tab: string; name: string; type: string; definition: string }[] = await ds.query(
    `SELECT c.conrelid::regclass::text AS tab, c.conname AS name, c.contype AS type, pg_get_constraintdef(c.oid) AS definition
     FROM pg_constraint c
     WHERE (c.conrelid::regclass::text = ANY($1) AND c.contype IN ('p', 'u', 'f'))
        OR (c.confrelid::regclass::text = ANY($1) AND c.contype = 'f')`,
    [tables],
  );
  const indexes: { name: string; definition: string }[] = await ds.query(
    `SELECT i.indexname AS name, i.indexdef AS definition FROM pg_indexes i
     WHERE i.schemaname = current_schema() AND i.tablename = ANY($1)
       AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = (quote_ident(i.schemaname) || '.' || quote_ident(i.indexname))::regclass)`,
    [tables],
  );
  const foreign = constraints.filter((c) => c.type === 'f');
  const keys = constraints.filter((c) => c.type !== 'f');
  for (const c of [...foreign, ...keys]) await ds.query(`ALTER TABLE ${quoteIdent(c.tab)} DROP CONSTRAINT ${quoteIdent(c.name)}`);
  for (const index of indexes) await ds.query(`DROP INDEX ${quoteIdent(index.name)}`);
  log(`  ${tables.join(', ')}: ${keys.length} keys, ${indexes.length} indexes and ${foreign.length} foreign keys set aside until the rows are in`);
  return async () => {
    const started = Date.now();
    await ds.query(`SET maintenance_work_mem = '256MB'`);
    const timed = async (what: string, sql: string) => {
      const t = Date.now();
      await ds.query(sql);
      if (Date.now() - t >= 2000) log(`  ${what} (${((Date.now() - t) / 1000).toFixed(1)} s)`);
    };
    for (const c of keys) await timed(`key ${c.name}`, `ALTER TABLE ${quoteIdent(c.tab)} ADD CONSTRAINT ${quoteIdent(c.name)} ${c.definition}`);
    for (const index of indexes) await timed(`index ${index.name}`, index.definition);
    for (const c of foreign) await timed(`foreign key ${c.name}`, `ALTER TABLE ${quoteIdent(c.tab)} ADD CONSTRAINT ${quoteIdent(c.name)} ${c.definition}`);
    await ds.query('RESET maintenance_work_mem');
    log(`  ${tables.join(', ')}: keys, indexes and foreign keys back (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  };
}
