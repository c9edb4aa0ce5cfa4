import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Fillability (docs/chain.md "Approvals"): the ERC721 approval logs the follower applied, once each (their
 * unique key): `ApprovalForAll` of the chain's operator (token_id null) and every `Approval` of a token
 * (`operator` is the approved address), and, for a token with such rows, each transfer of it (which clears
 * its approval: `operator` the zero address). A seller's approval is the newest of them, so a reorg that deletes
 * the logs above its fork restores the one before. The chain's operator is kept with its sync state, for the
 * processes that do not follow the chain (a listing is refused while its seller's approval is revoked).
 */
export class ListingApprovals1765660000000 implements MigrationInterface {
  name = 'ListingApprovals1765660000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "chain_approvals" (
      "chain_id" varchar(20) NOT NULL REFERENCES "chains"("id"),
      "block_number" bigint NOT NULL,
      "tx_hash" varchar(66) NOT NULL,
      "log_index" integer NOT NULL,
      "token_address" varchar(42) NOT NULL,
      "owner" varchar(42) NOT NULL,
      "token_id" numeric(78,0),
      "operator" varchar(42) NOT NULL,
      "approved" boolean NOT NULL,
      CONSTRAINT "uq_chain_approvals_log" UNIQUE ("chain_id", "tx_hash", "log_index"))`);
    await q.query(`CREATE INDEX "ix_chain_approvals_owner" ON "chain_approvals" ("chain_id", "token_address", "owner", "block_number", "log_index") WHERE "token_id" IS NULL`);
    await q.query(`CREATE INDEX "ix_chain_approvals_token" ON "chain_approvals" ("chain_id", "token_address", "token_id", "block_number", "log_index") WHERE "token_id" IS NOT NULL`);
    await q.query(`CREATE INDEX "ix_chain_approvals_block" ON "chain_approvals" ("chain_id", "block_number")`);
    await q.query(`ALTER TABLE "chain_sync" ADD "operator" varchar(42)`);
  }

  async down(q: QueryRunner): Promise<void> {
    // Listings made inactive by a revoked approval stay so (`inactive_reason` is free text): they were not fillable.
    await q.query(`ALTER TABLE "chain_sync" DROP COLUMN "operator"`);
    await q.query(`DROP TABLE "chain_approvals"`);
  }
}
