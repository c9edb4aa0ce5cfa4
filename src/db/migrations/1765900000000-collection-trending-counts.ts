import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue #38: how many collections' kept trend sums trend, per period and chain, kept as they change, so the
 * statistics filtered by trend (`is_trending`, both values: the count of those not trending subtracts these)
 * read their `remaining` and `totalCount` from a few rows instead of counting the partial index of the trending
 * kept sums (migration 1765850000000): 21,600 entries by 24 hours at 10,000,000 assets, each a heap fetch until
 * the table is vacuumed after the sweeper's hourly move (24-76 ms of every such page).
 *
 * `collection_trending_counts` holds rows of deltas, as asset_counts (migration 1765730000000): statement
 * triggers on `collection_sales_lows` append each statement's change (its rows whose kept sums trend, less
 * those that did) in the transaction that writes it, so the sweeper's move, a back-dated sale's change and a
 * collection's move to another chain never wait for each other; `folded`: a row the sweeper's loop wrote, one
 * per period and chain (modules/statistics/statistics.trend.ts compactTrendingCounts). A read sums the rows of its period (and chain).
 * Filled from the kept sums there.
 */
const TRENDING = (t: string) => `${t}.trend_volume > 0 AND ${t}.trend_volume >= 1.5 * ${t}.previous_volume`;

const EVENTS = [
  { event: 'INSERT', referencing: 'NEW TABLE AS new_lows', sources: [{ table: 'new_lows', sign: 1 }] },
  { event: 'DELETE', referencing: 'OLD TABLE AS old_lows', sources: [{ table: 'old_lows', sign: -1 }] },
  {
    event: 'UPDATE',
    referencing: 'OLD TABLE AS old_lows NEW TABLE AS new_lows',
    sources: [
      { table: 'new_lows', sign: 1 },
      { table: 'old_lows', sign: -1 },
    ],
  },
];

export class CollectionTrendingCounts1765900000000 implements MigrationInterface {
  name = 'CollectionTrendingCounts1765900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "collection_trending_counts" (
      "period" varchar(3) NOT NULL,
      "chain_id" varchar NOT NULL,
      "n" bigint NOT NULL,
      "folded" boolean NOT NULL DEFAULT false)`);
    await q.query(`CREATE INDEX "ix_collection_trending_counts_period" ON "collection_trending_counts" ("period", "chain_id") INCLUDE ("n")`);
    for (const { event, referencing, sources } of EVENTS) {
      const name = `collection_sales_lows_trending_${event.toLowerCase()}`;
      const rows = sources.map((s) => `SELECT t.period, t.chain_id, ${s.sign} AS n FROM ${s.table} t WHERE ${TRENDING('t')}`).join(' UNION ALL ');
      await q.query(`CREATE FUNCTION "${name}"() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          INSERT INTO collection_trending_counts (period, chain_id, n)
          SELECT x.period, x.chain_id, sum(x.n) FROM (${rows}) x GROUP BY 1, 2 HAVING sum(x.n) <> 0;
          RETURN NULL;
        END $$`);
      await q.query(`CREATE TRIGGER "${name}" AFTER ${event} ON "collection_sales_lows" REFERENCING ${referencing} FOR EACH STATEMENT EXECUTE FUNCTION "${name}"()`);
    }
    await q.query(`INSERT INTO collection_trending_counts (period, chain_id, n, folded)
      SELECT l.period, l.chain_id, count(*), true FROM collection_sales_lows l WHERE ${TRENDING('l')} GROUP BY 1, 2`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const { event } of EVENTS) {
      const name = `collection_sales_lows_trending_${event.toLowerCase()}`;
      await q.query(`DROP TRIGGER "${name}" ON "collection_sales_lows"`);
      await q.query(`DROP FUNCTION "${name}"()`);
    }
    await q.query(`DROP TABLE "collection_trending_counts"`);
  }
}
