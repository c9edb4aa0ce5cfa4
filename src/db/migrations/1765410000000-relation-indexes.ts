import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue #29: the listings of an asset, a collection and a seller, of every status (Asset.listings,
 * Collection.listings, Account.listings), each page an index range in its default order. Before, only
 * active listings were indexed by asset and by collection, and none by seller: every other page read the
 * whole table.
 */
export class RelationIndexes1765410000000 implements MigrationInterface {
  name = 'RelationIndexes1765410000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX "ix_listings_asset_created" ON "listings" ("asset_id", "created_at", "id")`);
    await q.query(`CREATE INDEX "ix_listings_collection_created" ON "listings" ("collection_id", "created_at", "id")`);
    await q.query(`CREATE INDEX "ix_listings_seller_created" ON "listings" ("seller", "created_at", "id")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "ix_listings_seller_created"`);
    await q.query(`DROP INDEX "ix_listings_collection_created"`);
    await q.query(`DROP INDEX "ix_listings_asset_created"`);
  }
}
