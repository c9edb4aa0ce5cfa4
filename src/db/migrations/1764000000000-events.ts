import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The event log: every state change appends its events in the transaction that makes the change.
 * Positions are handed out by the one row of event_sequence, locked by the last statement of each
 * writing transaction and held until its commit: positions follow commit order, so a reader that has
 * seen position N never later finds a lower one committed after it read.
 */
export class Events1764000000000 implements MigrationInterface {
  name = 'Events1764000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "event_sequence" ("id" boolean PRIMARY KEY DEFAULT true CHECK ("id"), "last" bigint NOT NULL)`);
    await q.query(`INSERT INTO "event_sequence" ("id", "last") VALUES (true, 0)`);
    await q.query(`CREATE TABLE "events" (
      "position" bigint PRIMARY KEY,
      "type" varchar(40) NOT NULL,
      "occurred_at" timestamptz NOT NULL DEFAULT now(),
      "chain_id" varchar(20),
      "collection_id" uuid,
      "asset_id" uuid,
      "data" jsonb NOT NULL
    )`);
    await q.query(`CREATE INDEX "ix_events_collection" ON "events" ("collection_id", "position")`);
    await q.query(`CREATE INDEX "ix_events_asset" ON "events" ("asset_id", "position")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "events"`);
    await q.query(`DROP TABLE "event_sequence"`);
  }
}
