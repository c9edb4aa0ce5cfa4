import { MigrationInterface, QueryRunner } from 'typeorm';

/** Chains, categories, tags, collections, assets and API keys; reference data of decisions.md. */
export class InitialSchema1763800000000 implements MigrationInterface {
  name = 'InitialSchema1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "chains" (
      "id" varchar(20) PRIMARY KEY,
      "name" varchar(100) NOT NULL,
      "symbol" varchar(20) NOT NULL)`);
    await q.query(`CREATE TABLE "categories" (
      "id" varchar(64) PRIMARY KEY,
      "name" varchar(100) NOT NULL,
      "created_at" timestamp(3) with time zone NOT NULL DEFAULT now())`);
    await q.query(`CREATE TABLE "tags" (
      "id" varchar(64) PRIMARY KEY,
      "name" varchar(100) NOT NULL,
      "created_at" timestamp(3) with time zone NOT NULL DEFAULT now())`);
    await q.query(`CREATE TABLE "collections" (
      "id" uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      "chain_id" varchar(20) NOT NULL REFERENCES "chains"("id"),
      "contract_address" varchar(42) NOT NULL,
      "owner" varchar(42) NOT NULL,
      "total_supply" integer CHECK ("total_supply" >= 0),
      "category_id" varchar(64) REFERENCES "categories"("id"),
      "name" varchar(200) NOT NULL,
      "slug" varchar(220) NOT NULL,
      "description" jsonb,
      "image_url" varchar(2048),
      "discord_url" varchar(2048),
      "telegram_url" varchar(2048),
      "external_url" varchar(2048),
      "twitter_username" varchar(100),
      "instagram_username" varchar(100),
      "fees" jsonb NOT NULL DEFAULT '[]'::jsonb,
      "status" varchar(20) NOT NULL DEFAULT 'unverified' CHECK ("status" IN ('unverified', 'verified')),
      "created_at" timestamp(3) with time zone NOT NULL DEFAULT now(),
      "updated_at" timestamp(3) with time zone NOT NULL DEFAULT now(),
      CONSTRAINT "uq_collections_chain_address" UNIQUE ("chain_id", "contract_address"),
      CONSTRAINT "uq_collections_slug" UNIQUE ("slug"))`);
    await q.query(`CREATE INDEX "ix_collections_owner" ON "collections" ("owner")`);
    await q.query(`CREATE INDEX "ix_collections_created" ON "collections" ("created_at", "id")`);
    await q.query(`CREATE INDEX "ix_collections_contract" ON "collections" ("contract_address")`);
    await q.query(`CREATE TABLE "assets" (
      "id" uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      "collection_id" uuid NOT NULL REFERENCES "collections"("id"),
      "chain_id" varchar(20) NOT NULL REFERENCES "chains"("id"),
      "token_address" varchar(42) NOT NULL,
      "token_id" numeric(78,0) NOT NULL CHECK ("token_id" >= 0),
      "name" varchar(500) NOT NULL,
      "description" text NOT NULL,
      "image_url" varchar(2048) NOT NULL,
      "animation_url" varchar(2048),
      "external_link" varchar(2048),
      "metadata" jsonb NOT NULL,
      "owner" varchar(42) NOT NULL,
      "status" varchar(20) NOT NULL DEFAULT 'unlisted' CHECK ("status" IN ('unlisted', 'listed')),
      "created_at" timestamp(3) with time zone NOT NULL DEFAULT now(),
      "updated_at" timestamp(3) with time zone NOT NULL DEFAULT now(),
      CONSTRAINT "uq_assets_chain_token" UNIQUE ("chain_id", "token_address", "token_id"))`);
    await q.query(`CREATE INDEX "ix_assets_owner" ON "assets" ("owner")`);
    await q.query(`CREATE INDEX "ix_assets_created" ON "assets" ("created_at", "id")`);
    await q.query(`CREATE INDEX "ix_assets_collection_created" ON "assets" ("collection_id", "created_at", "id")`);
    await q.query(`CREATE INDEX "ix_assets_collection_token" ON "assets" ("collection_id", "token_id")`);
    await q.query(`CREATE INDEX "ix_assets_token_address" ON "assets" ("token_address", "token_id")`);
    await q.query(`CREATE TABLE "api_keys" (
      "id" uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      "key_hash" char(64) NOT NULL,
      "prefix" varchar(16) NOT NULL,
      "address" varchar(42) NOT NULL,
      "role" varchar(10) NOT NULL CHECK ("role" IN ('user', 'admin')),
      "label" varchar(200),
      "created_at" timestamp(3) with time zone NOT NULL DEFAULT now(),
      "revoked_at" timestamp(3) with time zone,
      CONSTRAINT "uq_api_keys_hash" UNIQUE ("key_hash"))`);

    await q.query(`INSERT INTO "chains" ("id", "name", "symbol") VALUES
      ('1', 'Ethereum', 'ETH'), ('137', 'Polygon', 'POL'), ('56', 'BNB Chain', 'BNB'),
      ('42161', 'Arbitrum One', 'ETH'), ('10', 'OP Mainnet', 'ETH'), ('8453', 'Base', 'ETH'),
      ('43114', 'Avalanche', 'AVAX'), ('11155111', 'Sepolia', 'ETH')`);
    await q.query(`INSERT INTO "categories" ("id", "name") VALUES
      ('art', 'Art'), ('collectibles', 'Collectibles'), ('domain-names', 'Domain Names'), ('gaming', 'Gaming'),
      ('memberships', 'Memberships'), ('music', 'Music'), ('photography', 'Photography'), ('pfps', 'PFPs'),
      ('sports', 'Sports'), ('virtual-worlds', 'Virtual Worlds')`);
    await q.query(`INSERT INTO "tags" ("id", "name") VALUES
      ('3d', '3D'), ('ai', 'AI'), ('animated', 'Animated'), ('generative', 'Generative'), ('metaverse', 'Metaverse'),
      ('on-chain', 'On-chain'), ('pixel-art', 'Pixel Art'), ('rare', 'Rare'), ('utility', 'Utility')`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['api_keys', 'assets', 'collections', 'tags', 'categories', 'chains']) {
      await q.query(`DROP TABLE "${table}"`);
    }
  }
}
