import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue #38: counts of offers and orders within a price range (`min_price`, `max_price` with `remaining` and
 * `totalCount`), exact at a cost that does not grow with the market. `trade_price_counts` holds the counts
 * of trade_list_counts (migration 1765620000001: by list, chain, currency, kind, stored status and the
 * sweeper's mark) by price bucket as well: a price rounded down to 3 significant digits (price_bucket:
 * 1.234 -> 1.23, 0.0567 -> 0.0567, 12345 -> 12300), so the round prices users type are bucket starts and a
 * bucket holds a fraction of a percent of the rows. A count sums the whole buckets within the range from
 * one range of an index (list, bucket) and counts the rows of the edge buckets that fall outside it from the
 * price index (modules/trade/list-counts.ts priceRangeCount). Rows of deltas appended by statement triggers in
 * the writing transaction, as trade_list_counts; `folded`: a row the sweeper's loop wrote, one per group and
 * bucket; the deltas since are few (a partial index), so folding reads only the buckets they touched.
 * Filled from the rows there.
 */

/** Each list's group columns and price, as selected from a row of its table. */
const GROUPS = {
  offers: `'offers', chain_id, currency, kind, status, expiry_swept, price`,
  orders: `'orders', chain_id, currency, '', status, false, price`,
};

const COLUMNS = 'list, chain_id, currency, kind, status, swept, bucket';

/**
 * Deltas from `rows` (the group columns and price, and a count `n`): summed by exact price first, so an
 * update that moves no group nor price cancels out before any price is bucketed, and price_bucket runs once
 * per distinct price, not once per row.
 */
const bucketed = (rows: string) => `INSERT INTO trade_price_counts (${COLUMNS}, n)
  SELECT list, chain_id, currency, kind, status, swept, price_bucket(price), sum(n) FROM (
    SELECT list, chain_id, currency, kind, status, swept, price, sum(n) AS n FROM (${rows}) c(list, chain_id, currency, kind, status, swept, price, n)
    GROUP BY 1, 2, 3, 4, 5, 6, 7 HAVING sum(n) <> 0) p
  GROUP BY 1, 2, 3, 4, 5, 6, 7 HAVING sum(n) <> 0`;

/** The statement of a trigger function: the change of one statement, from its transition tables, as deltas. */
const deltas = (table: keyof typeof GROUPS, sources: { name: string; sign: number }[]) =>
  bucketed(sources.map((s) => `SELECT ${GROUPS[table]}, ${s.sign} FROM ${s.name}`).join(' UNION ALL '));

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

export class TradePriceCounts1765830000000 implements MigrationInterface {
  name = 'TradePriceCounts1765830000000';

  async up(q: QueryRunner): Promise<void> {
    // log's last digit may round across a power of ten: the exponent is checked against the price itself.
    await q.query(`CREATE FUNCTION price_bucket(price numeric) RETURNS numeric LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
      DECLARE
        e int;
      BEGIN
        IF price <= 0 THEN
          RETURN price;
        END IF;
        e := floor(log(price));
        IF price < power(10::numeric, e) THEN
          e := e - 1;
        ELSIF price >= power(10::numeric, e + 1) THEN
          e := e + 1;
        END IF;
        RETURN trunc(price, 2 - e);
      END $$`);
    await q.query(`CREATE TABLE "trade_price_counts" (
      "list" varchar(10) NOT NULL CHECK ("list" IN ('offers', 'orders')),
      "chain_id" varchar(20) NOT NULL,
      "currency" varchar(42) NOT NULL,
      "kind" varchar(20) NOT NULL,
      "status" varchar(20) NOT NULL,
      "swept" boolean NOT NULL,
      "bucket" numeric NOT NULL,
      "n" bigint NOT NULL,
      "folded" boolean NOT NULL DEFAULT false)`);
    // The sums: a range of buckets of one list, read from the index alone.
    await q.query(`CREATE INDEX "ix_trade_price_counts_sum" ON "trade_price_counts" ("list", "bucket") INCLUDE ("chain_id", "currency", "kind", "status", "swept", "n")`);
    // Folding: the buckets the deltas touched, and every row of those buckets.
    await q.query(`CREATE INDEX "ix_trade_price_counts_deltas" ON "trade_price_counts" ("bucket") WHERE NOT "folded"`);
    await q.query(`CREATE INDEX "ix_trade_price_counts_bucket" ON "trade_price_counts" ("bucket")`);
    for (const table of Object.keys(GROUPS) as (keyof typeof GROUPS)[]) {
      for (const { event, referencing, sources } of EVENTS) {
        const name = `${table}_price_counts_${event.toLowerCase()}`;
        await q.query(`CREATE FUNCTION "${name}"() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            ${deltas(table, sources(table))};
            RETURN NULL;
          END $$`);
        await q.query(`CREATE TRIGGER "${name}" AFTER ${event} ON "${table}" REFERENCING ${referencing(table)} FOR EACH STATEMENT EXECUTE FUNCTION "${name}"()`);
      }
    }
    await q.query(fillTradePriceCounts());
    // One row per group and bucket already: folded.
    await q.query(`UPDATE trade_price_counts SET folded = true`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of Object.keys(GROUPS)) {
      for (const { event } of EVENTS) {
        const name = `${table}_price_counts_${event.toLowerCase()}`;
        await q.query(`DROP TRIGGER "${name}" ON "${table}"`);
        await q.query(`DROP FUNCTION "${name}"()`);
      }
    }
    await q.query(`DROP TABLE "trade_price_counts"`);
    await q.query(`DROP FUNCTION price_bucket(numeric)`);
  }
}

/** trade_price_counts from the rows of offers and orders, one delta per group and bucket (this migration, and the bench's fast load). */
export function fillTradePriceCounts(): string {
  return bucketed((Object.keys(GROUPS) as (keyof typeof GROUPS)[]).map((table) => `SELECT ${GROUPS[table]}, count(*) FROM ${table} GROUP BY 1, 2, 3, 4, 5, 6, 7`).join(' UNION ALL '));
}
