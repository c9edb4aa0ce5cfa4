import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue #38: `remaining` and `totalCount` of the lists of offers and orders, exact at a cost that does not
 * grow with the market. `trade_list_counts` holds how many offers (by chain, currency, kind, stored status
 * and whether the expiry sweeper has marked them) and orders (by chain, currency and status) there are, as
 * rows of deltas that add up to the counts: triggers on both tables append the change of each statement
 * in the transaction that writes it, so a count commits with the rows it counts, and writers never wait
 * for each other (an upsert of one row per group made every writer of a group queue on its lock, and two
 * transactions touching two groups in opposite orders could deadlock). compactTradeListCounts
 * (trade-list-counts.ts, from the expiry sweeper's loop) folds the deltas into one row per group in one
 * statement: a reader sees the rows before or after it, whose sums are equal. Filled from the rows there.
 */

/** Each list's group columns, as selected from a row of its table (list, chain_id, currency, kind, status, swept). */
const GROUPS = {
  offers: `'offers', chain_id, currency, kind, status, expiry_swept`,
  orders: `'orders', chain_id, currency, '', status, false`,
};

/** The statement of a trigger function: the change of one statement, from its transition tables, as deltas. */
function deltas(table: keyof typeof GROUPS, sources: { name: string; sign: number }[]): string {
  const rows = sources.map((s) => `SELECT ${GROUPS[table]}, ${s.sign} FROM ${s.name}`).join(' UNION ALL ');
  return `INSERT INTO trade_list_counts (list, chain_id, currency, kind, status, swept, n)
    SELECT list, chain_id, currency, kind, status, swept, sum(d) FROM (${rows}) c(list, chain_id, currency, kind, status, swept, d)
    GROUP BY list, chain_id, currency, kind, status, swept HAVING sum(d) <> 0`;
}

const EVENTS = [
  { event: 'INSERT', referencing: (t: string) => `NEW TABLE AS new_${t}`, sources: (t: string) => [{ name: `new_${t}`, sign: 1 }] },
  { event: 'DELETE', referencing: (t: string) => `OLD TABLE AS old_${t}`, sources: (t: string) => [{ name: `old_${t}`, sign: -1 }] },
  {
    event: 'UPDATE',
    referencing: (t: string) => `OLD TABLE AS old_${t} NEW TABLE AS new_${t}`,
    sources: (t: string) => [
      { name: `new_${t}`, sign: 1 },
      { name: `old_${t}`, sign: -1 },
    ],
  },
];

export class TradeListCounts1765620000001 implements MigrationInterface {
  name = 'TradeListCounts1765620000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "trade_list_counts" (
      "list" varchar(10) NOT NULL CHECK ("list" IN ('offers', 'orders')),
      "chain_id" varchar(20) NOT NULL,
      "currency" varchar(42) NOT NULL,
      "kind" varchar(20) NOT NULL,
      "status" varchar(20) NOT NULL,
      "swept" boolean NOT NULL,
      "n" bigint NOT NULL)`);
    for (const table of Object.keys(GROUPS) as (keyof typeof GROUPS)[]) {
      for (const { event, referencing, sources } of EVENTS) {
        const name = `${table}_list_counts_${event.toLowerCase()}`;
        await q.query(`CREATE FUNCTION "${name}"() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            ${deltas(table, sources(table))};
            RETURN NULL;
          END $$`);
        await q.query(`CREATE TRIGGER "${name}" AFTER ${event} ON "${table}" REFERENCING ${referencing(table)} FOR EACH STATEMENT EXECUTE FUNCTION "${name}"()`);
      }
      await q.query(`INSERT INTO trade_list_counts (list, chain_id, currency, kind, status, swept, n)
        SELECT ${GROUPS[table]}, count(*) FROM "${table}" GROUP BY 1, 2, 3, 4, 5, 6`);
    }
    // The offers the sweeper marked expired that end after the reader's now (none, unless clocks disagree):
    // the active count adds them back from this index (ix_offers_expiry_due finds the unmarked ended ones).
    await q.query(`CREATE INDEX "ix_offers_swept_end" ON "offers" ("end_time") WHERE "status" = 'active' AND "expiry_swept"`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "ix_offers_swept_end"`);
    for (const table of Object.keys(GROUPS)) {
      for (const { event } of EVENTS) {
        const name = `${table}_list_counts_${event.toLowerCase()}`;
        await q.query(`DROP TRIGGER "${name}" ON "${table}"`);
        await q.query(`DROP FUNCTION "${name}"()`);
      }
    }
    await q.query(`DROP TABLE "trade_list_counts"`);
  }
}
