import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What issue #17 found, held by constraints as well as code:
 * - an order's seller is never its buyer. NOT VALID: new rows are checked, and a database that already
 *   holds such an order (from before the fix) still migrates; statistics leave those orders out.
 * - a fixed-price listing has one price: its accept price is its start price. Active listings that an
 *   update left with two prices take the start price, the one they showed as current price.
 */
export class MarketCorrectness1763950000000 implements MigrationInterface {
  name = 'MarketCorrectness1763950000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "orders" ADD CONSTRAINT "orders_seller_is_not_buyer" CHECK ("seller" <> "buyer") NOT VALID`);
    await q.query(
      `UPDATE "listings" SET "accept_price" = "start_price"
       WHERE "order_type" = 'fixed_price' AND ("accept_price" IS NULL OR "accept_price" <> "start_price")`,
    );
    await q.query(
      `ALTER TABLE "listings" ADD CONSTRAINT "listings_fixed_price_one_price"
       CHECK ("order_type" <> 'fixed_price' OR "accept_price" = "start_price")`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "listings" DROP CONSTRAINT "listings_fixed_price_one_price"`);
    await q.query(`ALTER TABLE "orders" DROP CONSTRAINT "orders_seller_is_not_buyer"`);
  }
}
