import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Who may speak for a collection (docs/chain.md "Who may speak for a collection", issue #41 item 6): on a
 * followed chain the contract's ERC-173 `owner()` decides. A collection keeps how its claim was checked
 * (`owner_verification`: `verified`, `unverified`, `no_contract_owner`), the owner() it was checked against
 * (`contract_owner`) and when (`owner_checked_at`). Collections made before are `unverified`: first come.
 * `collection_claim_nonces` holds the nonces of the signed claims used, until their expiry, so that a
 * signature is good for one claim.
 */
export class CollectionOwnerVerification1765690000000 implements MigrationInterface {
  name = 'CollectionOwnerVerification1765690000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "collections"
      ADD "owner_verification" varchar(20) NOT NULL DEFAULT 'unverified',
      ADD "contract_owner" varchar(42),
      ADD "owner_checked_at" timestamptz(3)`);
    await q.query(`CREATE TABLE "collection_claim_nonces" (
      "chain_id" varchar(20) NOT NULL,
      "contract_address" varchar(42) NOT NULL,
      "nonce" varchar(100) NOT NULL,
      "expires_at" timestamptz(3) NOT NULL,
      PRIMARY KEY ("chain_id", "contract_address", "nonce"))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "collection_claim_nonces"`);
    await q.query(`ALTER TABLE "collections" DROP COLUMN "owner_checked_at", DROP COLUMN "contract_owner", DROP COLUMN "owner_verification"`);
  }
}
