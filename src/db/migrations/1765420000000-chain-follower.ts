import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Following the chain (docs/chain.md): per followed chain its sync state, the hashes of the blocks it has
 * applied (to see a reorg), and every ERC721 transfer applied, once (its unique key), with what it changed
 * (the owner before it, the listings it made inactive) so that a reorg can undo it. A collection may say
 * from which block its contract is read (`start_block`; from block 0 without one). A listing whose seller
 * no longer holds its token on chain becomes `inactive`.
 */
export class ChainFollower1765420000000 implements MigrationInterface {
  name = 'ChainFollower1765420000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "chain_sync" (
      "chain_id" varchar(20) PRIMARY KEY REFERENCES "chains"("id"),
      "head_block" bigint,
      "last_block" bigint,
      "last_hash" varchar(66),
      "confirmations" integer NOT NULL DEFAULT 0,
      "updated_at" timestamp(3) with time zone NOT NULL DEFAULT now(),
      "last_error" text,
      "last_error_at" timestamp(3) with time zone)`);
    await q.query(`CREATE TABLE "chain_blocks" (
      "chain_id" varchar(20) NOT NULL REFERENCES "chains"("id"),
      "number" bigint NOT NULL,
      "hash" varchar(66) NOT NULL,
      PRIMARY KEY ("chain_id", "number"))`);
    await q.query(`CREATE TABLE "chain_transfers" (
      "chain_id" varchar(20) NOT NULL REFERENCES "chains"("id"),
      "block_number" bigint NOT NULL,
      "block_hash" varchar(66) NOT NULL,
      "tx_hash" varchar(66) NOT NULL,
      "log_index" integer NOT NULL,
      "token_address" varchar(42) NOT NULL,
      "token_id" numeric(78,0) NOT NULL,
      "from_address" varchar(42) NOT NULL,
      "to_address" varchar(42) NOT NULL,
      "asset_id" uuid REFERENCES "assets"("id"),
      "previous_owner" varchar(42),
      "inactivated_listings" uuid[] NOT NULL DEFAULT '{}',
      "applied_at" timestamp(3) with time zone NOT NULL DEFAULT now(),
      CONSTRAINT "uq_chain_transfers_log" UNIQUE ("chain_id", "tx_hash", "log_index"))`);
    await q.query(`CREATE INDEX "ix_chain_transfers_block" ON "chain_transfers" ("chain_id", "block_number")`);
    // Where each collection's contract has been read up to (a collection added later is backfilled alone).
    await q.query(`CREATE TABLE "chain_collection_sync" (
      "collection_id" uuid PRIMARY KEY REFERENCES "collections"("id"),
      "synced_block" bigint NOT NULL)`);
    await q.query(`ALTER TABLE "collections" ADD "start_block" bigint CHECK ("start_block" >= 0)`);
    await q.query(`ALTER TABLE "listings" DROP CONSTRAINT "listings_status_check"`);
    await q.query(`ALTER TABLE "listings" ADD CONSTRAINT "listings_status_check" CHECK ("status" IN ('active', 'sold', 'cancelled', 'expired', 'inactive'))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE "listings" SET "status" = 'cancelled' WHERE "status" = 'inactive'`);
    await q.query(`ALTER TABLE "listings" DROP CONSTRAINT "listings_status_check"`);
    await q.query(`ALTER TABLE "listings" ADD CONSTRAINT "listings_status_check" CHECK ("status" IN ('active', 'sold', 'cancelled', 'expired'))`);
    await q.query(`ALTER TABLE "collections" DROP COLUMN "start_block"`);
    await q.query(`DROP TABLE "chain_collection_sync"`);
    await q.query(`DROP TABLE "chain_transfers"`);
    await q.query(`DROP TABLE "chain_blocks"`);
    await q.query(`DROP TABLE "chain_sync"`);
  }
}
