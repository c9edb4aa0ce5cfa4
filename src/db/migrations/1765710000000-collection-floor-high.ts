import { MigrationInterface, QueryRunner } from 'typeorm';
import { changedFunction, FLOOR_LISTING, floorListing, HIGH_ORDER, recountFunction } from './1765670000000-collection-floor-bounds';

/**
 * Issue #38: statistics sorted by floor price, dearest first, walk an upper bound of each collection's floor
 * that survives the clock (statistics.floor.ts), as the cheapest first walk `floor_low`.
 *
 * - `collection_figures.floor_high`: the highest price (`price_high`, migration 1765640000000: its price for
 *   a fixed price, its start price for a dutch auction, its highest bid for an english auction) of one of
 *   the collection's floor listings (active, native, priced), chosen by the least, among those the expiry
 *   sweeper has not marked closed (`expiry_swept`) if any, the latest closing of equal ones.
 * - `collection_figures.floor_high_until`: that listing's closing date ('infinity' without one).
 * While that listing is open (any moment before `floor_high_until`: its stored status stays active until a
 * write), the floor is a price and at most `floor_high`; from `floor_high_until` on, the bound says nothing
 * and a read prices the collection. The sweeper marking the listing closed writes it, and the recount then
 * picks an open one: only collections whose bounding listing closed less than a sweep ago (or, read with a
 * clock ahead of the real one, later) are priced for want of a bound. Both null without a floor listing.
 *
 * Kept by the same statement triggers and recount as `floor_low` (one more index probe per touched collection).
 */
export class CollectionFloorHigh1765710000000 implements MigrationInterface {
  name = 'CollectionFloorHigh1765710000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "collection_figures" ADD "floor_high" numeric(38,18), ADD "floor_high_until" timestamptz`);
    await q.query(`CREATE INDEX "ix_listings_floor_high" ON "listings" ("collection_id", "expiry_swept", "price_high") WHERE ${FLOOR_LISTING}`);
    await q.query(recountFunction(true));
    await q.query(changedFunction(true));
    await q.query(`UPDATE collection_figures f SET floor_high = h.high, floor_high_until = h.high_until
      FROM (SELECT DISTINCT ON (l.collection_id) l.collection_id, l.price_high AS high, COALESCE(l.closing_date, 'infinity') AS high_until
        FROM listings l WHERE ${floorListing('l')} ORDER BY l.collection_id, ${HIGH_ORDER('l')}) h
      WHERE f.collection_id = h.collection_id`);
    // Dearest first (and a chain's); the collections whose bound has expired.
    await q.query(`CREATE INDEX "ix_collection_figures_floor_high" ON "collection_figures" ("floor_high", "collection_id") WHERE "floor_high" IS NOT NULL`);
    await q.query(`CREATE INDEX "ix_collection_figures_chain_floor_high" ON "collection_figures" ("chain_id", "floor_high", "collection_id") WHERE "floor_high" IS NOT NULL`);
    await q.query(`CREATE INDEX "ix_collection_figures_floor_high_until" ON "collection_figures" ("floor_high_until") WHERE "floor_high" IS NOT NULL`);
    // Every row was rewritten: without statistics of the new columns the planner may skip the walk's index
    // (at 10M, page 10 dearest first took 164-201 ms before an ANALYZE, 4-9 ms after).
    await q.query(`ANALYZE "collection_figures"`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const index of ['floor_high', 'chain_floor_high', 'floor_high_until']) await q.query(`DROP INDEX "ix_collection_figures_${index}"`);
    await q.query(changedFunction(false));
    await q.query(recountFunction(false));
    await q.query(`DROP INDEX "ix_listings_floor_high"`);
    await q.query(`ALTER TABLE "collection_figures" DROP COLUMN "floor_high_until", DROP COLUMN "floor_high"`);
  }
}
