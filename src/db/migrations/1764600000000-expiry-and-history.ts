import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The expiry sweeper and history from the event log.
 * - `expiry_swept` marks a listing or offer whose expiry event has been written (by the sweeper, or by
 *   a write that found it expired). It is set in the transaction that appends the event, by an UPDATE
 *   that requires it unset: however many sweepers race, each expiry is written once. The API never
 *   reads it (expiry is computed from the clock), so sweeping changes nothing a client sees.
 * - The partial indexes hold only what may still expire: the next due expiry is the first entry, and a
 *   sweep when nothing is due reads one index page.
 * - `events.subject_id`: the id of the listing, offer or order an event is about, indexed with the
 *   position, so a listing's or an offer's history is an index range. Asset events are found by
 *   asset_id (already indexed) and leave it null: an import of 100,000 assets writes one index fewer
 *   per event.
 */
export class ExpiryAndHistory1764600000000 implements MigrationInterface {
  name = 'ExpiryAndHistory1764600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "listings" ADD COLUMN "expiry_swept" boolean NOT NULL DEFAULT false`);
    await q.query(`ALTER TABLE "offers" ADD COLUMN "expiry_swept" boolean NOT NULL DEFAULT false`);
    // What the writes already marked expired had its event written with it.
    await q.query(`UPDATE "listings" SET "expiry_swept" = true WHERE "status" = 'expired'`);
    await q.query(
      `CREATE INDEX "ix_listings_expiry_due" ON "listings" ("closing_date") WHERE "status" = 'active' AND NOT "expiry_swept" AND "closing_date" IS NOT NULL`,
    );
    await q.query(`CREATE INDEX "ix_offers_expiry_due" ON "offers" ("end_time") WHERE "status" = 'active' AND NOT "expiry_swept"`);
    await q.query(`ALTER TABLE "events" ADD COLUMN "subject_id" uuid`);
    await q.query(`UPDATE "events" SET "subject_id" = ("data"->>'id')::uuid WHERE split_part("type", '.', 1) IN ('listing', 'offer', 'order')`);
    await q.query(`CREATE INDEX "ix_events_subject" ON "events" ("subject_id", "position") WHERE "subject_id" IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "ix_events_subject"`);
    await q.query(`ALTER TABLE "events" DROP COLUMN "subject_id"`);
    await q.query(`DROP INDEX "ix_offers_expiry_due"`);
    await q.query(`DROP INDEX "ix_listings_expiry_due"`);
    await q.query(`ALTER TABLE "offers" DROP COLUMN "expiry_swept"`);
    await q.query(`ALTER TABLE "listings" DROP COLUMN "expiry_swept"`);
  }
}
