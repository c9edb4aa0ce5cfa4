import { MigrationInterface, QueryRunner } from 'typeorm';
import { eventDataAsApiSql, TIMESTAMPS } from './1765300000000-event-data-as-api';

/**
 * Settlement on chain (SETTLEMENT=chain, docs/chain.md "Settlement on chain"): a sale writes its order
 * `pending` with a deadline, holds its listing (`pending`) and reserves a unit of its offer (`reserved`);
 * the follower completes it with the transfer it saw (kept on the order, so a reorg can take it back) or
 * it fails. A failed order frees its offer's unit and its listing, so the uniqueness of units and of bought
 * listings counts the other orders only; an asset has at most one pending order. The sales rollups follow
 * an order that becomes completed, or stops being so (a reorg). A listing that is inactive says why.
 */
export class SettlementOnChain1765460000000 implements MigrationInterface {
  name = 'SettlementOnChain1765460000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "orders"
      ADD "settlement_deadline" timestamp(3) with time zone,
      ADD "settlement_tx_hash" varchar(66),
      ADD "settlement_block_number" bigint,
      ADD "settlement_log_index" integer`);
    await q.query(`CREATE INDEX "ix_orders_pending_deadline" ON "orders" ("settlement_deadline") WHERE "status" = 'pending'`);
    await q.query(`CREATE UNIQUE INDEX "uq_orders_pending_asset" ON "orders" ("asset_id") WHERE "status" = 'pending'`);
    await q.query(`CREATE INDEX "ix_orders_settlement_tx" ON "orders" ("chain_id", "settlement_tx_hash") WHERE "settlement_tx_hash" IS NOT NULL`);
    await q.query(`ALTER TABLE "orders" DROP CONSTRAINT "uq_orders_offer_unit"`);
    await q.query(`CREATE UNIQUE INDEX "uq_orders_offer_unit" ON "orders" ("offer_id", "unit") WHERE "status" <> 'failed'`);
    await q.query(`DROP INDEX "uq_orders_bought_listing"`);
    await q.query(`CREATE UNIQUE INDEX "uq_orders_bought_listing" ON "orders" ("listing_id") WHERE "offer_id" IS NULL AND "status" <> 'failed'`);
    await q.query(`ALTER TABLE "offers" ADD "reserved" integer NOT NULL DEFAULT 0 CHECK ("reserved" >= 0)`);
    await q.query(`ALTER TABLE "listings" DROP CONSTRAINT "listings_status_check"`);
    await q.query(`ALTER TABLE "listings" ADD CONSTRAINT "listings_status_check" CHECK ("status" IN ('active', 'pending', 'sold', 'cancelled', 'expired', 'inactive'))`);
    await q.query(`ALTER TABLE "listings" ADD "inactive_reason" varchar(40)`);
    await q.query(`UPDATE "listings" SET "inactive_reason" = 'owner_changed' WHERE "status" = 'inactive'`);
    await q.query(eventDataAsApiSql(`${TIMESTAMPS}, 'settlement_deadline'`));
    // An order completed by the chain counts then (at its created_at hour, as every sale); one a reorg takes
    // back is taken out of its hour, whose lowest and highest prices are read again from the orders.
    await q.query(`CREATE FUNCTION "collection_sales_hourly_remove"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE collection_sales_hourly r SET volume = r.volume - OLD.price, sales = r.sales - 1,
          min_price = COALESCE(x.low, r.min_price), max_price = COALESCE(x.high, r.max_price)
        FROM (SELECT min(o.price) AS low, max(o.price) AS high FROM orders o
              WHERE o.collection_id = OLD.collection_id AND o.status = 'completed' AND o.seller <> o.buyer
                AND o.created_at >= date_trunc('hour', OLD.created_at, 'UTC') AND o.created_at < date_trunc('hour', OLD.created_at, 'UTC') + interval '1 hour') x
        WHERE r.collection_id = OLD.collection_id AND r.hour = date_trunc('hour', OLD.created_at, 'UTC');
        DELETE FROM collection_sales_hourly WHERE collection_id = OLD.collection_id AND hour = date_trunc('hour', OLD.created_at, 'UTC') AND sales <= 0;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER "orders_sales_rollup_completed" AFTER UPDATE OF "status" ON "orders" FOR EACH ROW
      WHEN (NEW.status = 'completed' AND OLD.status <> 'completed' AND NEW.seller <> NEW.buyer) EXECUTE FUNCTION "collection_sales_hourly_add"()`);
    await q.query(`CREATE TRIGGER "orders_sales_rollup_uncompleted" AFTER UPDATE OF "status" ON "orders" FOR EACH ROW
      WHEN (OLD.status = 'completed' AND NEW.status <> 'completed' AND OLD.seller <> OLD.buyer) EXECUTE FUNCTION "collection_sales_hourly_remove"()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER "orders_sales_rollup_uncompleted" ON "orders"`);
    await q.query(`DROP TRIGGER "orders_sales_rollup_completed" ON "orders"`);
    await q.query(`DROP FUNCTION "collection_sales_hourly_remove"()`);
    await q.query(eventDataAsApiSql(TIMESTAMPS));
    await q.query(`ALTER TABLE "listings" DROP COLUMN "inactive_reason"`);
    // The sales that await the chain never happened for the older schema (their orders go below): each held
    // listing is for sale again, as a failed settlement leaves it: active when its seller owns the token and
    // the asset has no other active listing, inactive otherwise.
    await q.query(`WITH released AS (
        UPDATE "listings" l SET "status" = CASE
          WHEN l."seller" <> a."owner" OR EXISTS (SELECT 1 FROM "listings" o WHERE o."asset_id" = l."asset_id" AND o."status" = 'active') THEN 'inactive'
          ELSE 'active' END
        FROM "assets" a WHERE a."id" = l."asset_id" AND l."status" = 'pending' RETURNING l."asset_id", l."status")
      UPDATE "assets" a SET "status" = 'listed' FROM released r WHERE a."id" = r."asset_id" AND r."status" = 'active'`);
    await q.query(`ALTER TABLE "listings" DROP CONSTRAINT "listings_status_check"`);
    await q.query(`ALTER TABLE "listings" ADD CONSTRAINT "listings_status_check" CHECK ("status" IN ('active', 'sold', 'cancelled', 'expired', 'inactive'))`);
    await q.query(`ALTER TABLE "offers" DROP COLUMN "reserved"`);
    await q.query(`DELETE FROM "orders" WHERE "status" <> 'completed'`);
    await q.query(`DROP INDEX "uq_orders_bought_listing"`);
    await q.query(`CREATE UNIQUE INDEX "uq_orders_bought_listing" ON "orders" ("listing_id") WHERE "offer_id" IS NULL`);
    await q.query(`DROP INDEX "uq_orders_offer_unit"`);
    await q.query(`ALTER TABLE "orders" ADD CONSTRAINT "uq_orders_offer_unit" UNIQUE ("offer_id", "unit")`);
    await q.query(`DROP INDEX "ix_orders_settlement_tx"`);
    await q.query(`DROP INDEX "uq_orders_pending_asset"`);
    await q.query(`DROP INDEX "ix_orders_pending_deadline"`);
    await q.query(`ALTER TABLE "orders" DROP COLUMN "settlement_deadline", DROP COLUMN "settlement_tx_hash", DROP COLUMN "settlement_block_number", DROP COLUMN "settlement_log_index"`);
  }
}
