import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tokens minted on chain whose `tokenURI` the follower has not read yet (docs/chain.md): a step of the
 * follower creates their assets with a placeholder and lists them here; the follower reads their URIs apart
 * from the steps (a backfill of 100,000 mints is not held up by 100,000 calls) and takes them off the list.
 */
export class ChainTokenUris1765470000000 implements MigrationInterface {
  name = 'ChainTokenUris1765470000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "chain_token_uris_pending" (
      "asset_id" uuid PRIMARY KEY REFERENCES "assets"("id") ON DELETE CASCADE,
      "chain_id" varchar(20) NOT NULL REFERENCES "chains"("id"))`);
    await q.query(`CREATE INDEX "ix_chain_token_uris_pending_chain" ON "chain_token_uris_pending" ("chain_id")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "chain_token_uris_pending"`);
  }
}
