import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue #38: an account's orders, which were two ranges walked through one index with a filter, read each
 * range by an index of its own (read-model.ts `ranges`, a UNION ALL of the two), so a page reads the
 * account's orders, not the market's.
 * - An account's orders (`owner_id`, seller or buyer; `Account.orders`): by seller and by buyer, each in
 *   both of the list's orders. Before, (seller) and (buyer) alone, or a walk of ix_orders_created filtered
 *   by either (an account's first page read the orders newer than its own).
 */
const INDEXES: [name: string, table: string, columns: string][] = [
  ['ix_orders_seller_created', 'orders', '"seller", "created_at", "id"'],
  ['ix_orders_seller_price', 'orders', '"seller", "price", "id"'],
  ['ix_orders_buyer_created', 'orders', '"buyer", "created_at", "id"'],
  ['ix_orders_buyer_price', 'orders', '"buyer", "price", "id"'],
];

export class TradeRangeIndexes1765760000300 implements MigrationInterface {
  name = 'TradeRangeIndexes1765760000300';

  async up(q: QueryRunner): Promise<void> {
    for (const [name, table, columns] of INDEXES) await q.query(`CREATE INDEX "${name}" ON "${table}" (${columns})`);
    // Their columns lead ix_orders_seller_created's and ix_orders_buyer_created's.
    await q.query(`DROP INDEX "ix_orders_seller"`);
    await q.query(`DROP INDEX "ix_orders_buyer"`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX "ix_orders_buyer" ON "orders" ("buyer")`);
    await q.query(`CREATE INDEX "ix_orders_seller" ON "orders" ("seller")`);
    for (const [name] of [...INDEXES].reverse()) await q.query(`DROP INDEX "${name}"`);
  }
}
