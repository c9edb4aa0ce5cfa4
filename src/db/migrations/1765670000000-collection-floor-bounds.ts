import { MigrationInterface, QueryRunner } from 'typeorm';

/** The listings a collection's floor is chosen from, whatever the clock: active, native, with a price (issue #38). */
export const FLOOR_LISTING = `status = 'active' AND currency = '0x0000000000000000000000000000000000000000' AND price_low IS NOT NULL`;
export const floorListing = (l: string) =>
  `${l}.status = 'active' AND ${l}.currency = '0x0000000000000000000000000000000000000000' AND ${l}.price_low IS NOT NULL`;
/** The floor listing whose highest price bounds the floor: not yet marked closed by the sweeper, the least bound, the latest closing. */
export const HIGH_ORDER = (l: string) => `${l}.expiry_swept, ${l}.price_high, ${l}.closing_date DESC NULLS FIRST`;
/**
 * The recount of a collection's floor bounds (floor_low and floor_until); with `high`, also its upper bound
 * (floor_high and floor_high_until, migration 1765710000000-collection-floor-high, chosen in `HIGH_ORDER`).
 */
export function recountFunction(high: boolean): string {
  const probes = high
    ? `,
              h.price_high AS high, CASE WHEN h.price_high IS NOT NULL THEN COALESCE(h.closing_date, 'infinity') END AS high_until`
    : '';
  const probeJoin = high
    ? `
            LEFT JOIN LATERAL (SELECT l.price_high, l.closing_date FROM listings l WHERE l.collection_id = c.id AND ${floorListing('l')}
              ORDER BY ${HIGH_ORDER('l')} LIMIT 1) h ON true`
    : '';
  const set = high ? `, floor_high = b.high, floor_high_until = b.high_until` : '';
  const compare = high ? `(f.floor_low, f.floor_until, f.floor_high, f.floor_high_until) IS DISTINCT FROM (b.low, b.until, b.high, b.high_until)` : `(f.floor_low, f.floor_until) IS DISTINCT FROM (b.low, b.until)`;
  const bulkHigh = high
    ? `
            LEFT JOIN (SELECT DISTINCT ON (l.collection_id) l.collection_id, l.price_high AS high, COALESCE(l.closing_date, 'infinity') AS high_until FROM listings l
              WHERE l.collection_id IN (SELECT unnest(touched)) AND ${floorListing('l')} ORDER BY l.collection_id, ${HIGH_ORDER('l')}) h ON h.collection_id = c.id`
    : '';
  return `CREATE OR REPLACE FUNCTION "collection_floor_recount"(touched uuid[]) RETURNS void LANGUAGE plpgsql AS $$
      BEGIN
        -- A join, not = ANY: a bulk insert (the bench's loader) touches every collection at once.
        PERFORM 1 FROM collection_figures f WHERE f.collection_id IN (SELECT unnest(touched)) ORDER BY f.collection_id FOR UPDATE;
        -- A statement of its own after the lock: it sees the listings committed by the lock's previous holder.
        -- A few collections: index probes each. Many (a bulk load, whose loader may set the listings'
        -- indexes aside until its rows are in): one pass over their listings.
        IF cardinality(touched) <= 64 THEN
          UPDATE collection_figures f SET floor_low = b.low, floor_until = b.until${set}
          FROM (SELECT c.id,
              (SELECT l.price_low FROM listings l WHERE l.collection_id = c.id AND ${floorListing('l')} ORDER BY l.price_low LIMIT 1) AS low,
              (SELECT COALESCE(l.closing_date, 'infinity') FROM listings l WHERE l.collection_id = c.id AND ${floorListing('l')}
                ORDER BY l.closing_date DESC NULLS FIRST LIMIT 1) AS until${probes}
            FROM (SELECT DISTINCT unnest(touched) AS id) c${probeJoin}) b
          WHERE f.collection_id = b.id AND ${compare};
        ELSE
          UPDATE collection_figures f SET floor_low = b.low, floor_until = b.until${set}
          FROM (SELECT c.id, x.low, x.until${high ? ', h.high, h.high_until' : ''} FROM (SELECT DISTINCT unnest(touched) AS id) c
            LEFT JOIN (SELECT l.collection_id, min(l.price_low) AS low, max(COALESCE(l.closing_date, 'infinity')) AS until FROM listings l
              WHERE l.collection_id IN (SELECT unnest(touched)) AND ${floorListing('l')} GROUP BY l.collection_id) x ON x.collection_id = c.id${bulkHigh}) b
          WHERE f.collection_id = b.id AND ${compare};
        END IF;
      END $$`;
}

/** The listings' statement trigger function; with `high`, a change of a listing's upper bound or of its sweeper's mark counts too. */
export function changedFunction(high: boolean): string {
  const columns = high
    ? ['status', 'currency', 'price_low', 'closing_date', 'collection_id', 'price_high', 'expiry_swept']
    : ['status', 'currency', 'price_low', 'closing_date', 'collection_id'];
  const of = (t: string) => `(${columns.map((c) => `${t}.${c}`).join(', ')})`;
  return `CREATE OR REPLACE FUNCTION "collection_floor_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        touched uuid[];
      BEGIN
        IF TG_OP = 'INSERT' THEN
          SELECT array_agg(DISTINCT n.collection_id) INTO touched FROM new_listings n WHERE ${floorListing('n')};
        ELSIF TG_OP = 'UPDATE' THEN
          SELECT array_agg(DISTINCT x.collection_id) INTO touched FROM new_listings n JOIN old_listings o ON o.id = n.id
            CROSS JOIN LATERAL (VALUES (n.collection_id), (o.collection_id)) x(collection_id)
          WHERE ((${floorListing('n')}) OR (${floorListing('o')}))
            AND ${of('n')} IS DISTINCT FROM ${of('o')};
        ELSE
          SELECT array_agg(DISTINCT o.collection_id) INTO touched FROM old_listings o WHERE ${floorListing('o')};
        END IF;
        IF touched IS NOT NULL THEN
          PERFORM collection_floor_recount(touched);
        END IF;
        RETURN NULL;
      END $$`;
}

/** The listings' statement triggers, each with the transition tables it reads. */
const TRIGGERS = [
  ['INSERT', 'NEW TABLE AS new_listings'],
  ['UPDATE', 'OLD TABLE AS old_listings NEW TABLE AS new_listings'],
  ['DELETE', 'OLD TABLE AS old_listings'],
] as const;

/**
 * Issue #38: a collection's floor as stored, indexed bounds, so that statistics sorted by floor price walk
 * collections in the order of a bound and price a page's candidates only (statistics.floor.ts), instead
 * of computing every collection's floor.
 *
 * Over the collection's listings that are active (status), native and priced (a stored `price_low`,
 * migration 1765640000000: every listing but a dutch auction without an accept price or a closing date,
 * whose price reads as null), whatever their closing date says at the moment of reading:
 * - `collection_figures.floor_low`: the least `price_low`. The floor at any moment is at least it (a
 *   listing's price never goes below its lower bound; a listing that expires by the clock only raises it).
 * - `collection_figures.floor_until`: the latest closing date ('infinity' for a listing without one). The
 *   floor at moment t is a price (not null) exactly when t < floor_until: every such listing has a price,
 *   and one of them is still open.
 * Both null without such a listing.
 *
 * Kept by statement triggers on listings in the writing transaction, whatever path writes (the services,
 * bulk writes, the expiry sweeper, the chain follower, imports, the bench's loader): each touched
 * collection's figures are recomputed from two indexes of its floor listings (a minimum and a maximum,
 * one index probe each), so a floor listing leaving is as cheap as one coming. Concurrent writers: the
 * touched collections' rows of `collection_figures` are locked first, in key order, and recomputed in a
 * statement of its own, which in READ COMMITTED sees what the lock's previous holder committed.
 */
export class CollectionFloorBounds1765670000000 implements MigrationInterface {
  name = 'CollectionFloorBounds1765670000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "collection_figures" ADD "floor_low" numeric(38,18), ADD "floor_until" timestamptz`);
    await q.query(`CREATE INDEX "ix_listings_floor_low" ON "listings" ("collection_id", "price_low") WHERE ${FLOOR_LISTING}`);
    await q.query(`CREATE INDEX "ix_listings_floor_until" ON "listings" ("collection_id", "closing_date") WHERE ${FLOOR_LISTING}`);
    await q.query(recountFunction(false));
    await q.query(changedFunction(false));
    // Transition tables need one trigger per event.
    for (const [event, tables] of TRIGGERS) {
      await q.query(`CREATE TRIGGER "listings_floor_${event.toLowerCase()}" AFTER ${event} ON "listings" REFERENCING ${tables}
        FOR EACH STATEMENT EXECUTE FUNCTION "collection_floor_changed"()`);
    }

    await q.query(`UPDATE collection_figures f SET floor_low = x.low, floor_until = x.until
      FROM (SELECT collection_id, min(price_low) AS low, max(COALESCE(closing_date, 'infinity')) AS until FROM listings WHERE ${FLOOR_LISTING} GROUP BY collection_id) x
      WHERE f.collection_id = x.collection_id`);
    // Cheapest first (and a chain's); the collections without a floor listing by id; those whose floor listings have all closed.
    await q.query(`CREATE INDEX "ix_collection_figures_floor" ON "collection_figures" ("floor_low", "collection_id") WHERE "floor_low" IS NOT NULL`);
    await q.query(`CREATE INDEX "ix_collection_figures_chain_floor" ON "collection_figures" ("chain_id", "floor_low", "collection_id") WHERE "floor_low" IS NOT NULL`);
    await q.query(`CREATE INDEX "ix_collection_figures_no_floor" ON "collection_figures" ("collection_id") WHERE "floor_low" IS NULL`);
    await q.query(`CREATE INDEX "ix_collection_figures_chain_no_floor" ON "collection_figures" ("chain_id", "collection_id") WHERE "floor_low" IS NULL`);
    await q.query(`CREATE INDEX "ix_collection_figures_floor_until" ON "collection_figures" ("floor_until") WHERE "floor_low" IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const index of ['floor', 'chain_floor', 'no_floor', 'chain_no_floor', 'floor_until']) {
      await q.query(`DROP INDEX "ix_collection_figures_${index}"`);
    }
    for (const [event] of TRIGGERS) await q.query(`DROP TRIGGER "listings_floor_${event.toLowerCase()}" ON "listings"`);
    await q.query(`DROP FUNCTION "collection_floor_changed"()`);
    await q.query(`DROP FUNCTION "collection_floor_recount"(uuid[])`);
    await q.query(`DROP INDEX "ix_listings_floor_until"`);
    await q.query(`DROP INDEX "ix_listings_floor_low"`);
    await q.query(`ALTER TABLE "collection_figures" DROP COLUMN "floor_until", DROP COLUMN "floor_low"`);
  }
}
