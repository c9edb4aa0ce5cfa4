import { MigrationInterface, QueryRunner } from 'typeorm';

/** The collection id of the rows that count every collection's listings (the market's); no collection has it. */
const ALL_COLLECTIONS = '00000000-0000-0000-0000-000000000000';

/**
 * Issue #38: `remaining` and `totalCount` of listed assets (`status: LISTED`, `currency`), exact at a cost
 * that does not grow with the market. `listed_asset_counts` holds how many listings are stored `active` (at
 * most one per asset: ux_listings_one_active_per_asset), by collection (and for the whole market, under
 * ALL_COLLECTIONS), chain, currency and whether the expiry sweeper has marked them, as rows of deltas that
 * add up to the counts, as trade_list_counts does for offers (migration 1765620000001): triggers append the
 * change of each statement in the transaction that writes it, so writers never wait for each other.
 * `folded`: a row compactListedAssetCounts (modules/listing/listed-counts.ts, from the expiry sweeper's loop)
 * wrote, one per group; the deltas since are few (a partial index), so folding reads only the groups they
 * touched. A listing stored active is read as listed until its closing date: readers take the sweeper's
 * backlog off at read time (listedCountSql). Filled from the listings there. Also an index of a collection's
 * assets by id: pages of a collection's assets by current price read its unlisted ones by it.
 */
const DELTAS = (sources: { name: string; sign: number }[]) => `INSERT INTO listed_asset_counts (collection_id, chain_id, currency, swept, n)
  SELECT g.collection_id, c.chain_id, d.currency, d.swept, sum(d.n)
  FROM (${sources.map((s) => `SELECT collection_id, currency, expiry_swept, ${s.sign} FROM ${s.name} WHERE status = 'active'`).join(' UNION ALL ')}) d(collection_id, currency, swept, n)
  JOIN collections c ON c.id = d.collection_id
  CROSS JOIN LATERAL (VALUES (d.collection_id), ('${ALL_COLLECTIONS}'::uuid)) g(collection_id)
  GROUP BY g.collection_id, c.chain_id, d.currency, d.swept HAVING sum(d.n) <> 0`;

const EVENTS = [
  { event: 'INSERT', referencing: 'NEW TABLE AS new_listings', sources: [{ name: 'new_listings', sign: 1 }] },
  { event: 'DELETE', referencing: 'OLD TABLE AS old_listings', sources: [{ name: 'old_listings', sign: -1 }] },
  {
    event: 'UPDATE',
    referencing: 'OLD TABLE AS old_listings NEW TABLE AS new_listings',
    sources: [
      { name: 'new_listings', sign: 1 },
      { name: 'old_listings', sign: -1 },
    ],
  },
];

export class ListedAssetCounts1765680000000 implements MigrationInterface {
  name = 'ListedAssetCounts1765680000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "listed_asset_counts" (
      "collection_id" uuid NOT NULL,
      "chain_id" varchar(20) NOT NULL,
      "currency" varchar(42) NOT NULL,
      "swept" boolean NOT NULL,
      "n" bigint NOT NULL,
      "folded" boolean NOT NULL DEFAULT false)`);
    await q.query(`CREATE INDEX "ix_listed_asset_counts_group" ON "listed_asset_counts" ("collection_id", "chain_id", "currency", "swept")`);
    await q.query(`CREATE INDEX "ix_listed_asset_counts_deltas" ON "listed_asset_counts" ("collection_id") WHERE NOT "folded"`);
    for (const { event, referencing, sources } of EVENTS) {
      const name = `listings_listed_counts_${event.toLowerCase()}`;
      await q.query(`CREATE FUNCTION "${name}"() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          ${DELTAS(sources)};
          RETURN NULL;
        END $$`);
      await q.query(`CREATE TRIGGER "${name}" AFTER ${event} ON "listings" REFERENCING ${referencing} FOR EACH STATEMENT EXECUTE FUNCTION "${name}"()`);
    }
    await q.query(`INSERT INTO listed_asset_counts (collection_id, chain_id, currency, swept, n, folded)
      SELECT g.collection_id, c.chain_id, l.currency, l.expiry_swept, count(*), true FROM listings l JOIN collections c ON c.id = l.collection_id
      CROSS JOIN LATERAL (VALUES (l.collection_id), ('${ALL_COLLECTIONS}'::uuid)) g(collection_id)
      WHERE l.status = 'active' GROUP BY 1, 2, 3, 4`);
    // The listings the sweeper marked that close after the reader's now (none, unless clocks disagree): the
    // listed count adds them back from this index (ix_listings_expiry_due finds the unmarked closed ones).
    await q.query(`CREATE INDEX "ix_listings_swept_closing" ON "listings" ("closing_date") WHERE "status" = 'active' AND "expiry_swept"`);
    // A collection's assets by current price: its unlisted ones come after the listed by id (listing.sql.ts unlistedSql).
    await q.query(`CREATE INDEX "ix_assets_collection_id" ON "assets" ("collection_id", "id")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "ix_assets_collection_id"`);
    await q.query(`DROP INDEX "ix_listings_swept_closing"`);
    for (const { event } of EVENTS) {
      const name = `listings_listed_counts_${event.toLowerCase()}`;
      await q.query(`DROP TRIGGER "${name}" ON "listings"`);
      await q.query(`DROP FUNCTION "${name}"()`);
    }
    await q.query(`DROP TABLE "listed_asset_counts"`);
  }
}
