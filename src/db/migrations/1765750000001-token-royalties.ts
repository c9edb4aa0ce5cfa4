import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Per-token ERC-2981 royalties (docs/chain.md "Royalties"): `royaltyInfo(tokenId, salePrice)` may answer
 * differently per token (OpenZeppelin's `_setTokenRoyalty`). An asset keeps its token's royalty as fees
 * (`royalty_fees`, the shape of collections.fees) only where it differs from the collection's; null: the
 * collection's. The partial index finds a collection's tokens with their own royalty when the collection's is
 * read again (those that now equal it go back to null).
 */
export class TokenRoyalties1765750000001 implements MigrationInterface {
  name = 'TokenRoyalties1765750000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "assets" ADD "royalty_fees" jsonb`);
    await q.query(`CREATE INDEX "ix_assets_own_royalty" ON "assets" ("collection_id") WHERE "royalty_fees" IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "ix_assets_own_royalty"`);
    await q.query(`ALTER TABLE "assets" DROP COLUMN "royalty_fees"`);
  }
}
