import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sales rollups for statistics (docs/api.md, Statistics): one row per collection and UTC hour with the
 * exact volume, the number of sales and the lowest and highest price of the sales that count (completed,
 * seller is not the buyer). A trigger on orders keeps it in the transaction that writes each order,
 * whatever path writes it, with INSERT ... ON CONFLICT DO UPDATE SET x = x + EXCLUDED.x so parallel
 * sales into one collection-hour add up (each waits for the other's row lock, none is lost). Orders
 * are append-only (nothing updates or deletes them); a change that did would have to rebuild the
 * hours it touches. The table is filled from the orders already there.
 */
export class SalesRollups1764800000000 implements MigrationInterface {
  name = 'SalesRollups1764800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "collection_sales_hourly" (
      "collection_id" uuid NOT NULL REFERENCES "collections"("id"),
      "hour" timestamp with time zone NOT NULL,
      "volume" numeric NOT NULL,
      "sales" integer NOT NULL,
      "min_price" numeric(38,18) NOT NULL,
      "max_price" numeric(38,18) NOT NULL,
      "last_sale_at" timestamp(3) with time zone NOT NULL,
      PRIMARY KEY ("collection_id", "hour"),
      CHECK ("hour" = date_trunc('hour', "hour", 'UTC')))`);
    await q.query(`CREATE INDEX "ix_collection_sales_hourly_hour" ON "collection_sales_hourly" ("hour", "collection_id") INCLUDE ("volume", "sales")`);
    await q.query(`CREATE FUNCTION "collection_sales_hourly_add"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO collection_sales_hourly AS r (collection_id, hour, volume, sales, min_price, max_price, last_sale_at)
        VALUES (NEW.collection_id, date_trunc('hour', NEW.created_at, 'UTC'), NEW.price, 1, NEW.price, NEW.price, NEW.created_at)
        ON CONFLICT (collection_id, hour) DO UPDATE SET
          volume = r.volume + EXCLUDED.volume,
          sales = r.sales + EXCLUDED.sales,
          min_price = LEAST(r.min_price, EXCLUDED.min_price),
          max_price = GREATEST(r.max_price, EXCLUDED.max_price),
          last_sale_at = GREATEST(r.last_sale_at, EXCLUDED.last_sale_at);
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER "orders_sales_rollup" AFTER INSERT ON "orders" FOR EACH ROW
      WHEN (NEW.status = 'completed' AND NEW.seller <> NEW.buyer) EXECUTE FUNCTION "collection_sales_hourly_add"()`);
    await q.query(`INSERT INTO collection_sales_hourly (collection_id, hour, volume, sales, min_price, max_price, last_sale_at)
      SELECT collection_id, date_trunc('hour', created_at, 'UTC'), sum(price), count(*), min(price), max(price), max(created_at)
      FROM orders WHERE status = 'completed' AND seller <> buyer
      GROUP BY 1, 2`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER "orders_sales_rollup" ON "orders"`);
    await q.query(`DROP FUNCTION "collection_sales_hourly_add"()`);
    await q.query(`DROP TABLE "collection_sales_hourly"`);
  }
}
