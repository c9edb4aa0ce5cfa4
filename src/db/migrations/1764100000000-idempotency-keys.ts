import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Idempotency-Key records: one per (API key digest, Idempotency-Key). The primary key is what makes
 * concurrent first attempts safe: exactly one INSERT wins. `status` is null while the first attempt runs.
 */
export class IdempotencyKeys1764100000000 implements MigrationInterface {
  name = 'IdempotencyKeys1764100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "idempotency_keys" (
      "scope" char(64) NOT NULL,
      "key" varchar(255) NOT NULL,
      "request_hash" char(64) NOT NULL,
      "status" smallint,
      "headers" jsonb,
      "body" text,
      "locked_at" timestamp(3) with time zone NOT NULL,
      "expires_at" timestamp(3) with time zone NOT NULL,
      PRIMARY KEY ("scope", "key"))`);
    await q.query(`CREATE INDEX "ix_idempotency_keys_expires_at" ON "idempotency_keys" ("expires_at")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "idempotency_keys"`);
  }
}
