import { MigrationInterface, QueryRunner } from 'typeorm';

/** The sliding periods of the statistics and their lengths in seconds (statistics.types.ts PERIODS). */
const SLIDING: ReadonlyArray<[period: string, seconds: number]> = [
  ['1h', 3600],
  ['6h', 6 * 3600],
  ['24h', 24 * 3600],
  ['7d', 7 * 86400],
  ['30d', 30 * 86400],
];

/**
 * Issue #38: statistics sorted by a sliding period's volume or sales, highest first, walk an upper bound of
 * each collection's figure in that period that stays true as time passes (statistics.sales-bounds.ts), as
 * the dearest-first floor walks `floor_high`.
 *
 * - `collection_sales_bound_windows`: per period, `since` (on the hour).
 * - `collection_sales_bounds`: per collection and period, `volume_high` and `sales_high`: at least the
 *   volume and the number of sales of the collection's rollups from `since` on (`collection_sales_hourly`,
 *   every hour at or after it, those ahead of now too).
 * A period [now - length, now) lies inside [since, ...) while `since <= now - length`: then its figures are
 * at most the bounds, whatever the clock, because a sale only enters the period from the future side, and
 * every sale from `since` on is in them. A trigger on `collection_sales_hourly` raises the bounds of the
 * periods whose `since` is at or before the sale's hour (never lowers them: a sale taken back leaves slack),
 * and the expiry sweeper's loop moves `since` forward once an hour, taking the hours that leave from the
 * bounds of the collections that sold in them. Rows of every collection (a trigger on collections adds
 * them), indexed by period, bound and id, and by period, chain, bound and id.
 *
 * Filled from the rollups already there, `since` the hour of a minute ago less the period (as the sweeper
 * sets it: SALES_BOUND_MARGIN_MS).
 */
export class CollectionSalesBounds1765760000000 implements MigrationInterface {
  name = 'CollectionSalesBounds1765760000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "collection_sales_bound_windows" (
      "period" varchar(3) PRIMARY KEY,
      "seconds" integer NOT NULL,
      "since" timestamptz NOT NULL,
      CHECK ("since" = date_trunc('hour', "since", 'UTC')))`);
    const values = SLIDING.map(([period, seconds]) => `('${period}', ${seconds})`).join(', ');
    await q.query(`INSERT INTO collection_sales_bound_windows (period, seconds, since)
      SELECT v.period, v.seconds, date_trunc('hour', now() - interval '1 minute', 'UTC') - make_interval(secs => v.seconds)
      FROM (VALUES ${values}) v(period, seconds)`);
    await q.query(`CREATE TABLE "collection_sales_bounds" (
      "collection_id" uuid NOT NULL REFERENCES "collections"("id") ON DELETE CASCADE,
      "period" varchar(3) NOT NULL REFERENCES "collection_sales_bound_windows"("period"),
      "chain_id" varchar NOT NULL,
      "volume_high" numeric NOT NULL DEFAULT 0,
      "sales_high" integer NOT NULL DEFAULT 0,
      PRIMARY KEY ("collection_id", "period"))`);
    await q.query(`INSERT INTO collection_sales_bounds (collection_id, period, chain_id, volume_high, sales_high)
      SELECT c.id, w.period, c.chain_id, COALESCE(x.volume, 0), COALESCE(x.sales, 0)
      FROM collections c CROSS JOIN collection_sales_bound_windows w
      LEFT JOIN (SELECT r.collection_id, w.period, sum(r.volume) AS volume, sum(r.sales) AS sales
                 FROM collection_sales_hourly r JOIN collection_sales_bound_windows w ON r.hour >= w.since
                 GROUP BY 1, 2) x ON x.collection_id = c.id AND x.period = w.period`);
    for (const figure of ['volume', 'sales']) {
      await q.query(`CREATE INDEX "ix_collection_sales_bounds_${figure}" ON "collection_sales_bounds" ("period", "${figure}_high", "collection_id")`);
      await q.query(`CREATE INDEX "ix_collection_sales_bounds_chain_${figure}" ON "collection_sales_bounds" ("period", "chain_id", "${figure}_high", "collection_id")`);
    }

    await q.query(`CREATE FUNCTION "collection_sales_bounds_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO collection_sales_bounds (collection_id, period, chain_id)
        SELECT c.id, w.period, c.chain_id FROM inserted_collections c CROSS JOIN collection_sales_bound_windows w ORDER BY 1, 2;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER "collections_sales_bounds_insert" AFTER INSERT ON "collections" REFERENCING NEW TABLE AS inserted_collections
      FOR EACH STATEMENT EXECUTE FUNCTION "collection_sales_bounds_insert"()`);
    await q.query(`CREATE FUNCTION "collection_sales_bounds_chain"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE collection_sales_bounds SET chain_id = NEW.chain_id WHERE collection_id = NEW.id;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER "collections_sales_bounds_chain" AFTER UPDATE OF "chain_id" ON "collections" FOR EACH ROW
      WHEN (OLD.chain_id IS DISTINCT FROM NEW.chain_id) EXECUTE FUNCTION "collection_sales_bounds_chain"()`);
    // What a rollup gains raises the bounds of the periods whose since is at or before its hour. `since` is
    // read without a lock: the sweeper moving it takes from the bounds only what its snapshot saw, so a sale
    // racing it is at worst counted where it no longer needs to be (slack, never a bound too low).
    await q.query(`CREATE FUNCTION "collection_sales_bounds_raise"() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        gained_volume numeric := GREATEST(NEW.volume - CASE WHEN TG_OP = 'UPDATE' THEN OLD.volume ELSE 0 END, 0);
        gained_sales integer := GREATEST(NEW.sales - CASE WHEN TG_OP = 'UPDATE' THEN OLD.sales ELSE 0 END, 0);
      BEGIN
        IF gained_volume > 0 OR gained_sales > 0 THEN
          UPDATE collection_sales_bounds b SET volume_high = b.volume_high + gained_volume, sales_high = b.sales_high + gained_sales
          FROM collection_sales_bound_windows w
          WHERE b.collection_id = NEW.collection_id AND b.period = w.period AND NEW.hour >= w.since;
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER "collection_sales_hourly_bounds_insert" AFTER INSERT ON "collection_sales_hourly"
      FOR EACH ROW EXECUTE FUNCTION "collection_sales_bounds_raise"()`);
    await q.query(`CREATE TRIGGER "collection_sales_hourly_bounds_update" AFTER UPDATE ON "collection_sales_hourly"
      FOR EACH ROW WHEN (NEW.volume > OLD.volume OR NEW.sales > OLD.sales) EXECUTE FUNCTION "collection_sales_bounds_raise"()`);
    await q.query(`ANALYZE "collection_sales_bounds"`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER "collection_sales_hourly_bounds_update" ON "collection_sales_hourly"`);
    await q.query(`DROP TRIGGER "collection_sales_hourly_bounds_insert" ON "collection_sales_hourly"`);
    await q.query(`DROP TRIGGER "collections_sales_bounds_chain" ON "collections"`);
    await q.query(`DROP TRIGGER "collections_sales_bounds_insert" ON "collections"`);
    await q.query(`DROP FUNCTION "collection_sales_bounds_raise"()`);
    await q.query(`DROP FUNCTION "collection_sales_bounds_chain"()`);
    await q.query(`DROP FUNCTION "collection_sales_bounds_insert"()`);
    await q.query(`DROP TABLE "collection_sales_bounds"`);
    await q.query(`DROP TABLE "collection_sales_bound_windows"`);
  }
}
