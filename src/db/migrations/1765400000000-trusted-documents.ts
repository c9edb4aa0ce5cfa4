import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Trusted documents (docs/trusted-documents.md): the operations of persisted-query manifests registered by
 * `npm run documents -- register`, by their id (the SHA-256 of `body` in hex). Every gateway process reads
 * them from here, so a registration made anywhere is found by all.
 */
export class TrustedDocuments1765400000000 implements MigrationInterface {
  name = 'TrustedDocuments1765400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "trusted_documents" (
      "id" text PRIMARY KEY,
      "name" text NOT NULL,
      "type" text NOT NULL CHECK ("type" IN ('query', 'mutation', 'subscription')),
      "body" text NOT NULL,
      "registered_at" timestamp(3) with time zone NOT NULL DEFAULT now())`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "trusted_documents"`);
  }
}
