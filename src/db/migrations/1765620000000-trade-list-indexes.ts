import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue #38: every documented sort of the lists of offers, orders and collections is an index walk, with
 * its equality filters a composite index's prefix: a page reads its 20 rows (and the rows before its
 * cursor), not the whole table, however big the market. Each index ends with the id, the tie-breaker of
 * every list's ORDER BY and cursor (common/pagination.ts), so neither a first page nor a later one sorts.
 * - Offers by created_at (ix_offers_created already), price and end_time; each with `status` first
 *   (an offer's status filter, offer.read.ts, is `status = X` on the stored column: `active` also
 *   requires end_time after now, read from the same range when sorted by end_time), with `kind` first,
 *   and with `collection_id` first (offers(collectionId), Collection.offers). An asset's, a token's and
 *   a taker's offers are few and found by their own indexes.
 * - Orders by created_at (ix_orders_created already) and price; each with `status` first and with
 *   `collection_id` first (the old (collection_id, created_at) lacked the id, so a page sorted again).
 * - Collections by name and total_supply, which is nullable and sorts nulls last both ways: one index
 *   per direction.
 */
const INDEXES: [name: string, table: string, columns: string][] = [
  ['ix_offers_price', 'offers', '"price", "id"'],
  ['ix_offers_end_time', 'offers', '"end_time", "id"'],
  ['ix_offers_status_created', 'offers', '"status", "created_at", "id"'],
  ['ix_offers_status_price', 'offers', '"status", "price", "id"'],
  ['ix_offers_status_end_time', 'offers', '"status", "end_time", "id"'],
  ['ix_offers_kind_created', 'offers', '"kind", "created_at", "id"'],
  ['ix_offers_kind_price', 'offers', '"kind", "price", "id"'],
  ['ix_offers_kind_end_time', 'offers', '"kind", "end_time", "id"'],
  ['ix_offers_collection_created', 'offers', '"collection_id", "created_at", "id"'],
  ['ix_offers_collection_price', 'offers', '"collection_id", "price", "id"'],
  ['ix_offers_collection_end_time', 'offers', '"collection_id", "end_time", "id"'],
  ['ix_orders_price', 'orders', '"price", "id"'],
  ['ix_orders_status_created', 'orders', '"status", "created_at", "id"'],
  ['ix_orders_status_price', 'orders', '"status", "price", "id"'],
  ['ix_orders_collection_created_id', 'orders', '"collection_id", "created_at", "id"'],
  ['ix_orders_collection_price', 'orders', '"collection_id", "price", "id"'],
  ['ix_collections_name', 'collections', '"name", "id"'],
  // ORDER BY total_supply ASC NULLS LAST, id ASC: a forward walk of this one.
  ['ix_collections_total_supply', 'collections', '"total_supply" ASC NULLS LAST, "id"'],
  // ORDER BY total_supply DESC NULLS LAST, id DESC: a backward walk of this one.
  ['ix_collections_total_supply_desc', 'collections', '"total_supply" ASC NULLS FIRST, "id"'],
];

export class TradeListIndexes1765620000000 implements MigrationInterface {
  name = 'TradeListIndexes1765620000000';

  async up(q: QueryRunner): Promise<void> {
    for (const [name, table, columns] of INDEXES) await q.query(`CREATE INDEX "${name}" ON "${table}" (${columns})`);
    // Its columns lead ix_orders_collection_created_id's.
    await q.query(`DROP INDEX "ix_orders_collection_created"`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX "ix_orders_collection_created" ON "orders" ("collection_id", "created_at")`);
    for (const [name] of [...INDEXES].reverse()) await q.query(`DROP INDEX "${name}"`);
  }
}
