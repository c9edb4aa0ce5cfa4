import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue #38: expired offers (stored `expired`, or stored `active` and ended) read as index walks. An offer stored active is, at a request's moment, on one side
 * of its end; the expiry sweeper marks the ended ones (`expiry_swept`) and leaves them active, so the
 * stored active offers are two sets, each nearly all on one side of now: the marked ones, nearly all ended,
 * and the unmarked ones, nearly all live. A list reads each set by an index of its own in its order
 * (offer.read.ts offerStatusSources), and the few on the other side of now by their end:
 * - the marked ones by created_at, price and end_time (the last was (end_time) alone: with the id it also
 *   gives the list's order and finds the marked ones that end after now, a clock behind the sweeper's);
 * - the unmarked ones by end_time with the id (ix_offers_expiry_due, which finds the ended ones the sweeper
 *   has not reached yet, by its index alone).
 * Before, the list walked ix_offers_active_* (or ix_offers_status_*) and filtered by the end, through every
 * live offer.
 */
const SWEPT = `"status" = 'active' AND "expiry_swept"`;
const LIVE = `"status" = 'active' AND NOT "expiry_swept"`;
const INDEXES: [name: string, columns: string, where: string][] = [
  ['ix_offers_swept_created', '"created_at", "id"', SWEPT],
  ['ix_offers_swept_price', '"price", "id"', SWEPT],
];
/** Indexes given the id after their end_time: [name, where]. */
const WITH_ID: [name: string, where: string][] = [
  ['ix_offers_swept_end', SWEPT],
  ['ix_offers_expiry_due', LIVE],
];

export class OfferExpiryWalks1765810000000 implements MigrationInterface {
  name = 'OfferExpiryWalks1765810000000';

  async up(q: QueryRunner): Promise<void> {
    for (const [name, columns, where] of INDEXES) await q.query(`CREATE INDEX "${name}" ON "offers" (${columns}) WHERE ${where}`);
    for (const [name, where] of WITH_ID) {
      await q.query(`DROP INDEX "${name}"`);
      await q.query(`CREATE INDEX "${name}" ON "offers" ("end_time", "id") WHERE ${where}`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const [name, where] of [...WITH_ID].reverse()) {
      await q.query(`DROP INDEX "${name}"`);
      await q.query(`CREATE INDEX "${name}" ON "offers" ("end_time") WHERE ${where}`);
    }
    for (const [name] of [...INDEXES].reverse()) await q.query(`DROP INDEX "${name}"`);
  }
}
