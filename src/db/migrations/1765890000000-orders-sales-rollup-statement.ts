import { MigrationInterface, QueryRunner } from 'typeorm';

const NATIVE = `'0x0000000000000000000000000000000000000000'`;

/**
 * The hourly sales rollups (migration 1764800000000) take a statement's new orders at once, one row per
 * collection and hour, in the order of (collection, hour).
 *
 * The row trigger added each order's sale to its collection-hour in the order the statement wrote the
 * orders: two statements writing sales of the same two collections in opposite orders each held one
 * collection-hour and waited for the other's (`deadlock detected while inserting index tuple in
 * collection_sales_hourly`; six writers of ten orders over two collections lost one statement in three
 * runs even after four tries). Summed by collection and hour and written in that order, every statement
 * takes the collection-hours it touches in one order: one waits for the other, none deadlocks. The sums
 * are those the row trigger made (volume and count added, lowest and highest price and last sale kept),
 * one upsert per collection-hour instead of one per order.
 *
 * A status change of one order (settlement on chain, migration 1765495000000) stays a row trigger.
 */
export class OrdersSalesRollupStatement1765890000000 implements MigrationInterface {
  name = 'OrdersSalesRollupStatement1765890000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE FUNCTION "orders_sales_rollup_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO collection_sales_hourly AS r (collection_id, hour, volume, sales, min_price, max_price, last_sale_at)
        SELECT collection_id, date_trunc('hour', created_at, 'UTC'), sum(price), count(*), min(price), max(price), max(created_at)
        FROM new_orders WHERE status = 'completed' AND seller <> buyer AND currency = ${NATIVE}
        GROUP BY 1, 2 ORDER BY 1, 2
        ON CONFLICT (collection_id, hour) DO UPDATE SET
          volume = r.volume + EXCLUDED.volume,
          sales = r.sales + EXCLUDED.sales,
          min_price = LEAST(r.min_price, EXCLUDED.min_price),
          max_price = GREATEST(r.max_price, EXCLUDED.max_price),
          last_sale_at = GREATEST(r.last_sale_at, EXCLUDED.last_sale_at);
        RETURN NULL;
      END $$`);
    await q.query(`DROP TRIGGER "orders_sales_rollup" ON "orders"`);
    await q.query(`CREATE TRIGGER "orders_sales_rollup" AFTER INSERT ON "orders" REFERENCING NEW TABLE AS new_orders
      FOR EACH STATEMENT EXECUTE FUNCTION "orders_sales_rollup_insert"()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER "orders_sales_rollup" ON "orders"`);
    await q.query(`CREATE TRIGGER "orders_sales_rollup" AFTER INSERT ON "orders" FOR EACH ROW
      WHEN (NEW.status = 'completed' AND NEW.seller <> NEW.buyer AND NEW.currency = ${NATIVE}) EXECUTE FUNCTION "collection_sales_hourly_add"()`);
    await q.query(`DROP FUNCTION "orders_sales_rollup_insert"()`);
  }
}
