import { MigrationInterface, QueryRunner } from 'typeorm';

const NATIVE = `'0x0000000000000000000000000000000000000000'`;

/** The hour's lowest and highest prices read again from its completed orders (of `currencyFilter`), after a sale is taken out. */
const removeFunction = (currencyFilter: string) => `CREATE OR REPLACE FUNCTION "collection_sales_hourly_remove"() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    UPDATE collection_sales_hourly r SET volume = r.volume - OLD.price, sales = r.sales - 1,
      min_price = COALESCE(x.low, r.min_price), max_price = COALESCE(x.high, r.max_price)
    FROM (SELECT min(o.price) AS low, max(o.price) AS high FROM orders o
          WHERE o.collection_id = OLD.collection_id AND o.status = 'completed' AND o.seller <> o.buyer${currencyFilter}
            AND o.created_at >= date_trunc('hour', OLD.created_at, 'UTC') AND o.created_at < date_trunc('hour', OLD.created_at, 'UTC') + interval '1 hour') x
    WHERE r.collection_id = OLD.collection_id AND r.hour = date_trunc('hour', OLD.created_at, 'UTC');
    DELETE FROM collection_sales_hourly WHERE collection_id = OLD.collection_id AND hour = date_trunc('hour', OLD.created_at, 'UTC') AND sales <= 0;
    RETURN NULL;
  END $$`;

/**
 * Statistics are native only (Currencies1765490000000): the rollup triggers of sales settled on chain
 * (SettlementOnChain1765460000000, an order that becomes completed or stops being so) count native sales
 * only too, as the insert trigger does.
 */
export class NativeSettledRollups1765495000000 implements MigrationInterface {
  name = 'NativeSettledRollups1765495000000';

  async up(q: QueryRunner): Promise<void> {
    await this.triggers(q, ` AND NEW.currency = ${NATIVE}`, ` AND OLD.currency = ${NATIVE}`, ` AND o.currency = ${NATIVE}`);
  }

  async down(q: QueryRunner): Promise<void> {
    await this.triggers(q, '', '', '');
  }

  private async triggers(q: QueryRunner, newFilter: string, oldFilter: string, orderFilter: string): Promise<void> {
    await q.query(removeFunction(orderFilter));
    await q.query(`DROP TRIGGER "orders_sales_rollup_completed" ON "orders"`);
    await q.query(`DROP TRIGGER "orders_sales_rollup_uncompleted" ON "orders"`);
    await q.query(`CREATE TRIGGER "orders_sales_rollup_completed" AFTER UPDATE OF "status" ON "orders" FOR EACH ROW
      WHEN (NEW.status = 'completed' AND OLD.status <> 'completed' AND NEW.seller <> NEW.buyer${newFilter}) EXECUTE FUNCTION "collection_sales_hourly_add"()`);
    await q.query(`CREATE TRIGGER "orders_sales_rollup_uncompleted" AFTER UPDATE OF "status" ON "orders" FOR EACH ROW
      WHEN (OLD.status = 'completed' AND NEW.status <> 'completed' AND OLD.seller <> OLD.buyer${oldFilter}) EXECUTE FUNCTION "collection_sales_hourly_remove"()`);
  }
}
