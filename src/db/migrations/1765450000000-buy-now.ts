import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Buy now (issue #31): a buyer takes a listing at its current price without an offer, so an order names
 * its offer or its listing: `offer_id` may be null when `listing_id` is set. A listing is bought at most
 * once: orders without an offer are unique by listing (a sale through an offer is held by
 * `(offer_id, unit)`). Down removes the orders of buys (they cannot exist without this schema).
 */
export class BuyNow1765450000000 implements MigrationInterface {
  name = 'BuyNow1765450000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "orders" ALTER COLUMN "offer_id" DROP NOT NULL`);
    await q.query(`ALTER TABLE "orders" ADD CONSTRAINT "orders_offer_or_listing" CHECK ("offer_id" IS NOT NULL OR "listing_id" IS NOT NULL)`);
    await q.query(`CREATE UNIQUE INDEX "uq_orders_bought_listing" ON "orders" ("listing_id") WHERE "offer_id" IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "uq_orders_bought_listing"`);
    await q.query(`DELETE FROM "orders" WHERE "offer_id" IS NULL`);
    await q.query(`ALTER TABLE "orders" DROP CONSTRAINT "orders_offer_or_listing"`);
    await q.query(`ALTER TABLE "orders" ALTER COLUMN "offer_id" SET NOT NULL`);
  }
}
