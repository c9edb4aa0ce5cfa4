import { MigrationInterface, QueryRunner } from 'typeorm';

/** An offer keeps its maker's EIP-712 signature, as a listing does (docs/signatures.md). */
export class OfferSignature1764900000000 implements MigrationInterface {
  name = 'OfferSignature1764900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "offers" ADD COLUMN "signature" text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "offers" DROP COLUMN "signature"`);
  }
}
