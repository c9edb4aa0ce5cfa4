import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue #38: the statistics read the sales of a few hours from `orders` (the hours that hold a window's edge, and
 * now's), every collection's at once: for the lists filtered by trend (statistics.trend.ts, the edge hours of the
 * trend windows) and the sliding periods' figures (statistics.sql.ts salesRows). By `ix_orders_created` each such
 * sale was a heap page of its own (4,336 sales of three hours at 10,000,000 assets: 4,109 pages, 13 ms warm and
 * 48-75 ms cold). The sales the statistics count (statistics.sql.ts countedSaleSql) keyed by their time, with the
 * collection and the price in the index: an index-only range per hour (about 40 pages, 4 ms).
 */
export class OrdersCountedSales1765880000000 implements MigrationInterface {
  name = 'OrdersCountedSales1765880000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX "ix_orders_counted_created" ON "orders" ("created_at") INCLUDE ("collection_id", "price")
      WHERE "status" = 'completed' AND "seller" <> "buyer" AND "currency" = '0x0000000000000000000000000000000000000000'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "ix_orders_counted_created"`);
  }
}
