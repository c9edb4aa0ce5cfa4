import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Listings, offers and orders. The asset's chain, contract, token id and collection are copied onto
 * offers and orders (they never change) so lists filter without joins. Constraints, not only code:
 * at most one active listing per asset, at most one order per offer.
 */
export class Marketplace1763900000000 implements MigrationInterface {
  name = 'Marketplace1763900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "listings" (
      "id" uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      "asset_id" uuid NOT NULL REFERENCES "assets"("id"),
      "collection_id" uuid NOT NULL REFERENCES "collections"("id"),
      "seller" varchar(42) NOT NULL,
      "order_type" varchar(20) NOT NULL CHECK ("order_type" IN ('fixed_price', 'dutch_auction', 'english_auction')),
      "start_price" numeric(38,18) NOT NULL CHECK ("start_price" > 0),
      "accept_price" numeric(38,18) CHECK ("accept_price" > 0),
      "listing_time" timestamp(3) with time zone NOT NULL,
      "closing_date" timestamp(3) with time zone,
      "maker_fees" jsonb NOT NULL DEFAULT '[]'::jsonb,
      "signature" text,
      "status" varchar(20) NOT NULL DEFAULT 'active' CHECK ("status" IN ('active', 'sold', 'cancelled', 'expired')),
      "created_at" timestamp(3) with time zone NOT NULL DEFAULT now(),
      "updated_at" timestamp(3) with time zone NOT NULL DEFAULT now(),
      CHECK ("closing_date" IS NULL OR "closing_date" > "listing_time"))`);
    await q.query(`CREATE UNIQUE INDEX "ux_listings_one_active_per_asset" ON "listings" ("asset_id") WHERE "status" = 'active'`);
    await q.query(`CREATE INDEX "ix_listings_collection_active" ON "listings" ("collection_id") WHERE "status" = 'active'`);

    await q.query(`CREATE TABLE "offers" (
      "id" uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      "asset_id" uuid NOT NULL REFERENCES "assets"("id"),
      "collection_id" uuid NOT NULL REFERENCES "collections"("id"),
      "chain_id" varchar(20) NOT NULL,
      "token_address" varchar(42) NOT NULL,
      "token_id" numeric(78,0) NOT NULL,
      "taker" varchar(42) NOT NULL,
      "price" numeric(38,18) NOT NULL CHECK ("price" > 0),
      "start_time" timestamp(3) with time zone NOT NULL,
      "end_time" timestamp(3) with time zone NOT NULL,
      "status" varchar(20) NOT NULL DEFAULT 'active' CHECK ("status" IN ('active', 'accepted', 'cancelled', 'expired')),
      "created_at" timestamp(3) with time zone NOT NULL DEFAULT now(),
      "updated_at" timestamp(3) with time zone NOT NULL DEFAULT now(),
      CHECK ("end_time" > "start_time"))`);
    await q.query(`CREATE INDEX "ix_offers_asset" ON "offers" ("asset_id", "status")`);
    await q.query(`CREATE INDEX "ix_offers_created" ON "offers" ("created_at", "id")`);
    await q.query(`CREATE INDEX "ix_offers_taker" ON "offers" ("taker")`);
    await q.query(`CREATE INDEX "ix_offers_token" ON "offers" ("token_address", "token_id")`);

    await q.query(`CREATE TABLE "orders" (
      "id" uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      "offer_id" uuid NOT NULL REFERENCES "offers"("id"),
      "listing_id" uuid REFERENCES "listings"("id"),
      "asset_id" uuid NOT NULL REFERENCES "assets"("id"),
      "collection_id" uuid NOT NULL REFERENCES "collections"("id"),
      "chain_id" varchar(20) NOT NULL,
      "token_address" varchar(42) NOT NULL,
      "token_id" numeric(78,0) NOT NULL,
      "price" numeric(38,18) NOT NULL CHECK ("price" > 0),
      "seller" varchar(42) NOT NULL,
      "buyer" varchar(42) NOT NULL,
      "status" varchar(20) NOT NULL DEFAULT 'completed' CHECK ("status" IN ('pending', 'completed', 'failed')),
      "created_at" timestamp(3) with time zone NOT NULL DEFAULT now(),
      "updated_at" timestamp(3) with time zone NOT NULL DEFAULT now(),
      CONSTRAINT "uq_orders_offer" UNIQUE ("offer_id"))`);
    await q.query(`CREATE INDEX "ix_orders_created" ON "orders" ("created_at", "id")`);
    await q.query(`CREATE INDEX "ix_orders_collection_created" ON "orders" ("collection_id", "created_at")`);
    await q.query(`CREATE INDEX "ix_orders_asset" ON "orders" ("asset_id")`);
    await q.query(`CREATE INDEX "ix_orders_seller" ON "orders" ("seller")`);
    await q.query(`CREATE INDEX "ix_orders_buyer" ON "orders" ("buyer")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "orders"`);
    await q.query(`DROP TABLE "offers"`);
    await q.query(`DROP TABLE "listings"`);
  }
}
