import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue #14: collection and trait offers, and traits.
 * - An offer has a `kind`: `item` (one asset, as before), `collection` (any asset of its collection) or
 *   `trait` (any asset of its collection carrying its `traits`), a `quantity` and how many units are
 *   `filled`. Only item offers name an asset. One order per unit: (offer_id, unit) is unique, where an
 *   order's `unit` is the offer's fill count that it made (1 for item offers).
 * - `asset_traits` holds each asset's `metadata.attributes` as rows (the filter's index), and
 *   `collection_traits` how many assets of a collection carry each trait (counts and rarity), both kept
 *   in the transaction that writes the assets. Existing assets are indexed here.
 * Down removes collection and trait offers with their orders (they cannot exist without this schema).
 */
export class CollectionOffersTraits1764700000000 implements MigrationInterface {
  name = 'CollectionOffersTraits1764700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "offers"
      ADD COLUMN "kind" varchar(20) NOT NULL DEFAULT 'item' CHECK ("kind" IN ('item', 'collection', 'trait')),
      ADD COLUMN "quantity" integer NOT NULL DEFAULT 1 CHECK ("quantity" >= 1),
      ADD COLUMN "filled" integer NOT NULL DEFAULT 0,
      ADD COLUMN "traits" jsonb`);
    await q.query(`UPDATE "offers" SET "filled" = 1 WHERE "status" = 'accepted'`);
    await q.query(`ALTER TABLE "offers" ALTER COLUMN "asset_id" DROP NOT NULL, ALTER COLUMN "token_id" DROP NOT NULL`);
    await q.query(`ALTER TABLE "offers"
      ADD CONSTRAINT "offers_filled_within_quantity" CHECK ("filled" >= 0 AND "filled" <= "quantity"),
      ADD CONSTRAINT "offers_kind_target" CHECK (
        CASE "kind" WHEN 'item' THEN "asset_id" IS NOT NULL AND "token_id" IS NOT NULL AND "quantity" = 1 AND "traits" IS NULL
                    WHEN 'collection' THEN "asset_id" IS NULL AND "token_id" IS NULL AND "traits" IS NULL
                    ELSE "asset_id" IS NULL AND "token_id" IS NULL AND jsonb_typeof("traits") = 'array' END)`);
    await q.query(`CREATE INDEX "ix_offers_collection" ON "offers" ("collection_id", "kind", "status")`);

    await q.query(`ALTER TABLE "orders" ADD COLUMN "unit" integer NOT NULL DEFAULT 1 CHECK ("unit" >= 1)`);
    await q.query(`ALTER TABLE "orders" DROP CONSTRAINT "uq_orders_offer"`);
    await q.query(`ALTER TABLE "orders" ADD CONSTRAINT "uq_orders_offer_unit" UNIQUE ("offer_id", "unit")`);

    await q.query(`CREATE TABLE "asset_traits" (
      "asset_id" uuid NOT NULL REFERENCES "assets"("id") ON DELETE CASCADE,
      "collection_id" uuid NOT NULL REFERENCES "collections"("id"),
      "trait_type" varchar(200) NOT NULL,
      "value" varchar(200) NOT NULL,
      PRIMARY KEY ("asset_id", "trait_type", "value"))`);
    await q.query(`CREATE INDEX "ix_asset_traits_trait" ON "asset_traits" ("trait_type", "value", "asset_id")`);
    await q.query(`CREATE TABLE "collection_traits" (
      "collection_id" uuid NOT NULL REFERENCES "collections"("id"),
      "trait_type" varchar(200) NOT NULL,
      "value" varchar(200) NOT NULL,
      "asset_count" integer NOT NULL CHECK ("asset_count" >= 0),
      PRIMARY KEY ("collection_id", "trait_type", "value"))`);
    // The rule of src/modules/asset/asset.traits.ts, as it stands today, over every existing asset.
    await q.query(`INSERT INTO "asset_traits" ("asset_id", "collection_id", "trait_type", "value")
      SELECT DISTINCT a.id, a.collection_id, attr->>'trait_type', attr->>'value'
      FROM assets a
      CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(a.metadata->'attributes') = 'array' THEN a.metadata->'attributes' ELSE '[]'::jsonb END) attr
      WHERE jsonb_typeof(attr) = 'object' AND jsonb_typeof(attr->'trait_type') = 'string'
        AND jsonb_typeof(attr->'value') IN ('string', 'number', 'boolean')
        AND length(attr->>'trait_type') BETWEEN 1 AND 200 AND length(attr->>'value') BETWEEN 1 AND 200`);
    await q.query(
      `INSERT INTO "collection_traits" ("collection_id", "trait_type", "value", "asset_count")
       SELECT "collection_id", "trait_type", "value", count(*) FROM "asset_traits" GROUP BY 1, 2, 3`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "collection_traits"`);
    await q.query(`DROP TABLE "asset_traits"`);
    await q.query(`DELETE FROM "orders" WHERE "offer_id" IN (SELECT "id" FROM "offers" WHERE "kind" <> 'item')`);
    await q.query(`DELETE FROM "offers" WHERE "kind" <> 'item'`);
    await q.query(`ALTER TABLE "orders" DROP CONSTRAINT "uq_orders_offer_unit"`);
    await q.query(`ALTER TABLE "orders" ADD CONSTRAINT "uq_orders_offer" UNIQUE ("offer_id")`);
    await q.query(`ALTER TABLE "orders" DROP COLUMN "unit"`);
    await q.query(`DROP INDEX "ix_offers_collection"`);
    await q.query(`ALTER TABLE "offers" DROP CONSTRAINT "offers_kind_target", DROP CONSTRAINT "offers_filled_within_quantity"`);
    await q.query(`ALTER TABLE "offers" ALTER COLUMN "asset_id" SET NOT NULL, ALTER COLUMN "token_id" SET NOT NULL`);
    await q.query(`ALTER TABLE "offers" DROP COLUMN "traits", DROP COLUMN "filled", DROP COLUMN "quantity", DROP COLUMN "kind"`);
  }
}
