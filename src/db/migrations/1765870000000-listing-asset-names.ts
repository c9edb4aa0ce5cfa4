import { MigrationInterface, QueryRunner } from 'typeorm';
import { logger } from '../../common/logger';

/**
 * Issue #38: a search among listed assets (`status: LISTED`, or a `currency`) whose cost does not grow with
 * the market. Its candidates are the first 1,000 names that start with the query in the order of a pattern
 * index (common/name-search.ts); walked over every asset's name, each name's active listing was looked up
 * to keep the listed ones (at 1,000,000 and 10,000,000 assets alike some 3,000 names for 1,000, 4,000 in ETH:
 * 13,000-21,500 buffers, 47-82 ms). Each listing now keeps its asset's name (`asset_name`), and the active
 * listings' names have a pattern index of their own, by currency: the walk reads as many listings as it
 * keeps candidates (modules/listing/listing.sql.ts, listedByNameSql).
 *
 * Kept by triggers in the writing transaction, whatever path writes: a listing takes its asset's name when
 * it is written (and whenever a statement sets its asset or its kept name, which it reads again from the
 * asset, so that no writer can store another), and an asset's new name goes to its listings. The listing's
 * trigger reads the asset FOR SHARE: a rename racing a new listing either commits first (the listing then
 * reads the new name) or waits for the listing's transaction and then finds the listing to rename.
 *
 * Online, on a market of any size: the column and the triggers come first, in a short transaction (from then on
 * every listing written carries its name), then the listings written before are filled in batches of
 * FILL_BATCH by id, each its own short transaction (at 10,000,000 assets one UPDATE of the 3,300,000 listings ran
 * past 14 minutes, holding the lock of ALTER TABLE that stops every read of listings, and past the client's
 * statement bound, DB_QUERY_TIMEOUT_MS). A batch fills only the names still null: a listing renamed meanwhile (the
 * assets' trigger) keeps its new name. The fill tells the listings' trigger, by a setting of its transaction, that
 * it writes the name it read with the asset. The index is built CONCURRENTLY after the fill (writes go on).
 * Run again after a stop midway, it goes on where it stopped.
 */
const FILL_BATCH = 20000;
const FILLING = 'nftgw.filling_asset_names';

export class ListingAssetNames1765870000000 implements MigrationInterface {
  name = 'ListingAssetNames1765870000000';
  /** Its own transactions: the batches (and CREATE INDEX CONCURRENTLY) must not be one. */
  transaction = false as const;

  async up(q: QueryRunner): Promise<void> {
    await inTransaction(q, async () => {
      await q.query(`ALTER TABLE "listings" ADD COLUMN IF NOT EXISTS "asset_name" varchar(500)`);
      await q.query(`CREATE OR REPLACE FUNCTION "listing_asset_name"() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF current_setting('${FILLING}', true) = 'on' THEN RETURN NEW; END IF;
          SELECT a.name INTO NEW.asset_name FROM assets a WHERE a.id = NEW.asset_id FOR SHARE;
          RETURN NEW;
        END $$`);
      await q.query(`DROP TRIGGER IF EXISTS "listings_asset_name" ON "listings"`);
      await q.query(`CREATE TRIGGER "listings_asset_name" BEFORE INSERT OR UPDATE OF "asset_id", "asset_name" ON "listings"
        FOR EACH ROW EXECUTE FUNCTION "listing_asset_name"()`);
      await q.query(`CREATE OR REPLACE FUNCTION "asset_name_to_listings"() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          UPDATE listings SET asset_name = NEW.name WHERE asset_id = NEW.id;
          RETURN NULL;
        END $$`);
      await q.query(`DROP TRIGGER IF EXISTS "assets_listings_name" ON "assets"`);
      await q.query(`CREATE TRIGGER "assets_listings_name" AFTER UPDATE OF "name" ON "assets"
        FOR EACH ROW WHEN (OLD."name" IS DISTINCT FROM NEW."name") EXECUTE FUNCTION "asset_name_to_listings"()`);
    });
    const started = Date.now();
    let reported = started;
    // What the progress lines count towards: the planner's estimate of the listings (no count of them all).
    const [{ about }] = (await q.query(`SELECT GREATEST(reltuples, 0)::bigint::text AS about FROM pg_class WHERE oid = 'listings'::regclass`)) as { about: string }[];
    let filled = 0;
    for (let after = '00000000-0000-0000-0000-000000000000'; ; ) {
      const [batch] = await inTransaction(q, async () => {
        await q.query(`SELECT set_config('${FILLING}', 'on', true)`);
        return q.query(
          `WITH batch AS (SELECT l.id FROM listings l WHERE l.id > $1::uuid ORDER BY l.id LIMIT ${FILL_BATCH}),
             filled AS (UPDATE listings l SET asset_name = a.name FROM assets a
               WHERE l.id IN (SELECT b.id FROM batch b) AND a.id = l.asset_id AND l.asset_name IS NULL RETURNING 1)
           SELECT (SELECT b.id FROM batch b ORDER BY b.id DESC LIMIT 1)::text AS last, (SELECT count(*) FROM filled)::int AS n`,
          [after],
        ) as Promise<{ last: string | null; n: number }[]>;
      });
      if (!batch.last) break;
      after = batch.last;
      filled += batch.n;
      if (Date.now() - reported >= 10_000) {
        reported = Date.now();
        logger.info('migration: filling listings.asset_name', { filled, of: Number(about), seconds: Math.round((reported - started) / 1000) });
      }
    }
    if (filled >= FILL_BATCH) logger.info('migration: listings.asset_name filled', { filled, seconds: Math.round((Date.now() - started) / 1000) });
    // A build stopped midway leaves an invalid index behind: built again.
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS "ix_listings_currency_name_prefix_building"`);
    const [built] = (await q.query(`SELECT 1 FROM pg_indexes WHERE indexname = 'ix_listings_currency_name_prefix'`)) as unknown[];
    if (!built) {
      await q.query(`CREATE INDEX CONCURRENTLY "ix_listings_currency_name_prefix_building" ON "listings" ("currency", lower("asset_name") text_pattern_ops, "asset_id") WHERE "status" = 'active'`);
      await q.query(`ALTER INDEX "ix_listings_currency_name_prefix_building" RENAME TO "ix_listings_currency_name_prefix"`);
    }
    await q.query(`CREATE STATISTICS IF NOT EXISTS "st_listings_asset_name" ON (lower("asset_name")) FROM "listings"`);
    await q.query(`ANALYZE "listings"`);
  }

  async down(q: QueryRunner): Promise<void> {
    await inTransaction(q, async () => {
      await q.query(`DROP STATISTICS IF EXISTS "st_listings_asset_name"`);
      await q.query(`DROP INDEX IF EXISTS "ix_listings_currency_name_prefix"`);
      await q.query(`DROP TRIGGER IF EXISTS "assets_listings_name" ON "assets"`);
      await q.query(`DROP FUNCTION IF EXISTS "asset_name_to_listings"()`);
      await q.query(`DROP TRIGGER IF EXISTS "listings_asset_name" ON "listings"`);
      await q.query(`DROP FUNCTION IF EXISTS "listing_asset_name"()`);
      await q.query(`ALTER TABLE "listings" DROP COLUMN IF EXISTS "asset_name"`);
    });
  }
}

/** `work` in a transaction of its own on the migration's connection. */
async function inTransaction<T>(q: QueryRunner, work: () => Promise<T>): Promise<T> {
  await q.startTransaction();
  try {
    const result = await work();
    await q.commitTransaction();
    return result;
  } catch (err) {
    await q.rollbackTransaction();
    throw err;
  }
}
