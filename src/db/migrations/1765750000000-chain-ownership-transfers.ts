import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The follower reads ERC-173 `OwnershipTransferred(previousOwner, newOwner)` (docs/chain.md "Who may speak for
 * a collection", issue #41): a collection's claim moves in the step that applies the log. `owner_checked_block`
 * is the block at which the collection's owner() was last known (read at the latest block by a write, or the
 * block of the log the follower applied): a log at or below it is already in that answer. Each applied log is
 * kept in `chain_ownership_transfers` with the claim it replaced (`claim_before`), so that a reorg puts it back.
 */
export class ChainOwnershipTransfers1765750000000 implements MigrationInterface {
  name = 'ChainOwnershipTransfers1765750000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "collections" ADD "owner_checked_block" bigint`);
    await q.query(`CREATE TABLE "chain_ownership_transfers" (
      "chain_id" varchar(20) NOT NULL REFERENCES "chains"("id"),
      "block_number" bigint NOT NULL,
      "tx_hash" varchar(66) NOT NULL,
      "log_index" integer NOT NULL,
      "collection_id" uuid NOT NULL REFERENCES "collections"("id") ON DELETE CASCADE,
      "previous_owner" varchar(42) NOT NULL,
      "new_owner" varchar(42) NOT NULL,
      "claim_before" jsonb NOT NULL,
      CONSTRAINT "uq_chain_ownership_transfers_log" UNIQUE ("chain_id", "tx_hash", "log_index"))`);
    await q.query(`CREATE INDEX "ix_chain_ownership_transfers_block" ON "chain_ownership_transfers" ("chain_id", "block_number")`);
    await q.query(`CREATE INDEX "ix_chain_ownership_transfers_collection" ON "chain_ownership_transfers" ("collection_id")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "chain_ownership_transfers"`);
    await q.query(`ALTER TABLE "collections" DROP COLUMN "owner_checked_block"`);
  }
}
