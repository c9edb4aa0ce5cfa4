import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue #38: the offers and orders of one contract (`token_address`), of a token id across contracts
 * (`token_id` alone) and one taker's offers (`owner_id`), each page an index range in the default order
 * (created_at, id), and each count (`remaining`, and after a cursor the rows up to it) an index range
 * bounded by the filter. Before, a token id alone was the second column of ix_offers_token (every entry
 * read: a timeout at 10,000,000 assets); a contract's orders were a parallel seq scan for the count and a
 * walk of ix_orders_created for the page; and the rows up to a cursor of a contract's offers, whose
 * `(created_at, id) < cursor` the planner guessed to match almost none, a walk of ix_offers_created
 * through every newer offer (3 s at 1,000,000 assets).
 */
const INDEXES: [name: string, table: string, columns: string][] = [
  ['ix_offers_token_address_created', 'offers', '"token_address", "created_at", "id"'],
  ['ix_offers_token_id_created', 'offers', '"token_id", "created_at", "id"'],
  ['ix_offers_token_id_price', 'offers', '"token_id", "price", "id"'],
  ['ix_offers_token_id_end_time', 'offers', '"token_id", "end_time", "id"'],
  ['ix_offers_taker_created', 'offers', '"taker", "created_at", "id"'],
  ['ix_orders_token_address_created', 'orders', '"token_address", "created_at", "id"'],
  ['ix_orders_token_id_created', 'orders', '"token_id", "created_at", "id"'],
];

/**
 * Active offers in each documented order, the active ones alone. With `status` first (ix_offers_status_*), the
 * planner preferred walking the order's own index and filtering by status whenever that index follows the
 * table's physical order (its correlation makes the walk look sequential): through every accepted offer that
 * ends (or was made) before the first active one, a million of them at 10,000,000 assets (1.8 s). An index
 * of the active offers alone has that correlation too and nothing to filter out.
 */
const ACTIVE_INDEXES: [name: string, columns: string][] = [
  ['ix_offers_active_created', '"created_at", "id"'],
  ['ix_offers_active_price', '"price", "id"'],
  ['ix_offers_active_end_time', '"end_time", "id"'],
];

export class TokenOwnerTradeIndexes1765720000000 implements MigrationInterface {
  name = 'TokenOwnerTradeIndexes1765720000000';

  async up(q: QueryRunner): Promise<void> {
    for (const [name, table, columns] of INDEXES) await q.query(`CREATE INDEX "${name}" ON "${table}" (${columns})`);
    for (const [name, columns] of ACTIVE_INDEXES) await q.query(`CREATE INDEX "${name}" ON "offers" (${columns}) WHERE "status" = 'active'`);
    // Its column leads ix_offers_taker_created's.
    await q.query(`DROP INDEX "ix_offers_taker"`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX "ix_offers_taker" ON "offers" ("taker")`);
    for (const [name] of [...ACTIVE_INDEXES].reverse()) await q.query(`DROP INDEX "${name}"`);
    for (const [name] of [...INDEXES].reverse()) await q.query(`DROP INDEX "${name}"`);
  }
}
