import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue #38: statistics sorted by a sliding period's volume or sales, lowest first, walk a lower bound of
 * each collection's figure in that period (statistics.sales-walk.ts), as highest first walks the upper
 * bounds of `collection_sales_bounds` (migration 1765760000000).
 *
 * `collection_sales_lows`, per collection and period of 6 hours or more: `volume_low` and `sales_low`, exactly
 * the collection's rollups (`collection_sales_hourly`) of the hours [since + 2 h, since + length - 1 h), where
 * `since` is the period's in `collection_sales_bound_windows`. While `since + 2 h >= now - length` and
 * `since + length - 1 h <= now`, those whole hours lie inside the period [now - length, now), so no figure is
 * below its low: the sweeper moves `since` once an hour (60 s past it), which keeps both true for about an
 * hour's lateness.
 *
 * A sale of now is in no low's hours (they end an hour before the sweeper's hour): the sales a marketplace
 * makes write nothing here. The move brings the hours that enter (the hour before last) and takes those that
 * leave, and a rollup changed in a low's hours (a sale dated back, an order no longer completed) changes the
 * lows at once (a trigger on `collection_sales_hourly`, any change either way). The two are kept apart by an
 * advisory lock (the sales shared, the move exclusive): a move never counts a change it did not see, nor
 * misses one the trigger made before `since` moved.
 *
 * Rows of every collection (a trigger on collections adds them, one on its chain follows it), indexed by
 * period, low and id, and by period, chain, low and id. Filled from the rollups already there.
 */
const SALES_LOWS_LOCK = 'hashtext(\'nftgw:collection-sales-lows\')';

/** What a change of a rollup does to the lows: `changed_id`'s in the periods whose hours hold `changed_hour`. */
export const LOWS_UPDATE = `UPDATE collection_sales_lows l SET volume_low = l.volume_low + volume_change, sales_low = l.sales_low + sales_change
        FROM collection_sales_bound_windows w
        WHERE l.collection_id = changed_id AND l.period = w.period
          AND changed_hour >= w.since + interval '2 hours' AND changed_hour < w.since + make_interval(secs => w.seconds) - interval '1 hour'`;

/**
 * The trigger function on the rollups that applies `update` (a statement on the changed rollup's
 * `changed_id`, `changed_hour`, `volume_change` and `sales_change`) after the shared lock, `CREATE` or `CREATE OR REPLACE`.
 */
export function salesLowsChangeFunction(create: 'CREATE' | 'CREATE OR REPLACE', update: string): string {
  return `${create} FUNCTION "collection_sales_lows_change"() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        changed_id uuid;
        changed_hour timestamptz;
        volume_change numeric;
        sales_change integer;
      BEGIN
        IF TG_OP = 'INSERT' THEN
          changed_id := NEW.collection_id; changed_hour := NEW.hour; volume_change := NEW.volume; sales_change := NEW.sales;
        ELSIF TG_OP = 'DELETE' THEN
          changed_id := OLD.collection_id; changed_hour := OLD.hour; volume_change := -OLD.volume; sales_change := -OLD.sales;
        ELSE
          changed_id := NEW.collection_id; changed_hour := NEW.hour; volume_change := NEW.volume - OLD.volume; sales_change := NEW.sales - OLD.sales;
        END IF;
        IF volume_change = 0 AND sales_change = 0 THEN RETURN NULL; END IF;
        PERFORM pg_advisory_xact_lock_shared(${SALES_LOWS_LOCK});
        ${update};
        RETURN NULL;
      END $$`;
}

export class CollectionSalesLows1765800000000 implements MigrationInterface {
  name = 'CollectionSalesLows1765800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "collection_sales_lows" (
      "collection_id" uuid NOT NULL REFERENCES "collections"("id") ON DELETE CASCADE,
      "period" varchar(3) NOT NULL REFERENCES "collection_sales_bound_windows"("period"),
      "chain_id" varchar NOT NULL,
      "volume_low" numeric NOT NULL DEFAULT 0,
      "sales_low" integer NOT NULL DEFAULT 0,
      PRIMARY KEY ("collection_id", "period"))`);
    await q.query(`INSERT INTO collection_sales_lows (collection_id, period, chain_id, volume_low, sales_low)
      SELECT c.id, w.period, c.chain_id, COALESCE(x.volume, 0), COALESCE(x.sales, 0)
      FROM collections c CROSS JOIN collection_sales_bound_windows w
      LEFT JOIN (SELECT r.collection_id, w.period, sum(r.volume) AS volume, sum(r.sales) AS sales
                 FROM collection_sales_hourly r JOIN collection_sales_bound_windows w
                   ON r.hour >= w.since + interval '2 hours' AND r.hour < w.since + make_interval(secs => w.seconds) - interval '1 hour'
                 GROUP BY 1, 2) x ON x.collection_id = c.id AND x.period = w.period
      WHERE w.seconds >= 6 * 3600`);
    for (const figure of ['volume', 'sales']) {
      await q.query(`CREATE INDEX "ix_collection_sales_lows_${figure}" ON "collection_sales_lows" ("period", "${figure}_low", "collection_id")`);
      await q.query(`CREATE INDEX "ix_collection_sales_lows_chain_${figure}" ON "collection_sales_lows" ("period", "chain_id", "${figure}_low", "collection_id")`);
    }
    await q.query(`CREATE FUNCTION "collection_sales_lows_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO collection_sales_lows (collection_id, period, chain_id)
        SELECT c.id, w.period, c.chain_id FROM inserted_collections c CROSS JOIN collection_sales_bound_windows w
        WHERE w.seconds >= 6 * 3600 ORDER BY 1, 2;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER "collections_sales_lows_insert" AFTER INSERT ON "collections" REFERENCING NEW TABLE AS inserted_collections
      FOR EACH STATEMENT EXECUTE FUNCTION "collection_sales_lows_insert"()`);
    await q.query(`CREATE FUNCTION "collection_sales_lows_chain"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE collection_sales_lows SET chain_id = NEW.chain_id WHERE collection_id = NEW.id;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER "collections_sales_lows_chain" AFTER UPDATE OF "chain_id" ON "collections" FOR EACH ROW
      WHEN (OLD.chain_id IS DISTINCT FROM NEW.chain_id) EXECUTE FUNCTION "collection_sales_lows_chain"()`);
    // Any change of a rollup, after the shared lock (so `since` is read after any move that holds it): the
    // lows whose hours hold the rollup's hour take the difference.
    await q.query(salesLowsChangeFunction('CREATE', LOWS_UPDATE));
    await q.query(`CREATE TRIGGER "collection_sales_hourly_lows" AFTER INSERT OR UPDATE OR DELETE ON "collection_sales_hourly"
      FOR EACH ROW EXECUTE FUNCTION "collection_sales_lows_change"()`);
    await q.query(`ANALYZE "collection_sales_lows"`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER "collection_sales_hourly_lows" ON "collection_sales_hourly"`);
    await q.query(`DROP TRIGGER "collections_sales_lows_chain" ON "collections"`);
    await q.query(`DROP TRIGGER "collections_sales_lows_insert" ON "collections"`);
    await q.query(`DROP FUNCTION "collection_sales_lows_change"()`);
    await q.query(`DROP FUNCTION "collection_sales_lows_chain"()`);
    await q.query(`DROP FUNCTION "collection_sales_lows_insert"()`);
    await q.query(`DROP TABLE "collection_sales_lows"`);
  }
}
