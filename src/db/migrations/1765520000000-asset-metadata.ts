import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Metadata ingestion (docs/metadata.md): the durable queue of tokenURI documents to fetch, one row per
 * asset (the last document fetched, when and from where, the attempts and their last error), the asset's
 * visible state of it, and the per-key minimum interval between refreshes.
 */
export class AssetMetadata1765520000000 implements MigrationInterface {
  name = 'AssetMetadata1765520000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "assets" ADD "metadata_status" varchar(10), ADD "metadata_error" text,
      ADD "metadata_fetched_at" timestamptz(3),
      ADD CONSTRAINT "ck_assets_metadata_status" CHECK ("metadata_status" IN ('pending', 'fetched', 'failed'))`);
    await q.query(`CREATE TABLE "asset_metadata_queue" (
      "asset_id" uuid PRIMARY KEY REFERENCES "assets"("id") ON DELETE CASCADE,
      "source_url" text NOT NULL,
      "host_key" varchar(300) NOT NULL,
      "state" varchar(10) NOT NULL DEFAULT 'pending' CHECK ("state" IN ('pending', 'fetched', 'failed')),
      "attempts" integer NOT NULL DEFAULT 0,
      "next_attempt_at" timestamptz(3) NOT NULL DEFAULT now(),
      "lease_token" uuid,
      "lease_until" timestamptz(3),
      "last_error" text,
      "requested_at" timestamptz(3) NOT NULL DEFAULT now(),
      "fetched_at" timestamptz(3),
      "fetched_from" text,
      "document" jsonb,
      "document_hash" text)`);
    await q.query(`CREATE INDEX "ix_asset_metadata_queue_due" ON "asset_metadata_queue" ("next_attempt_at") WHERE "state" = 'pending'`);
    await q.query(`CREATE TABLE "metadata_refreshes" (
      "api_key_id" uuid NOT NULL REFERENCES "api_keys"("id") ON DELETE CASCADE,
      "target_id" uuid NOT NULL,
      "requested_at" timestamptz(3) NOT NULL,
      PRIMARY KEY ("api_key_id", "target_id"))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "metadata_refreshes"`);
    await q.query(`DROP TABLE "asset_metadata_queue"`);
    await q.query(`ALTER TABLE "assets" DROP CONSTRAINT "ck_assets_metadata_status", DROP COLUMN "metadata_status",
      DROP COLUMN "metadata_error", DROP COLUMN "metadata_fetched_at"`);
  }
}
