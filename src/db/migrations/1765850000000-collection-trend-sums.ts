import { MigrationInterface, QueryRunner } from 'typeorm';
import { LOWS_UPDATE, salesLowsChangeFunction } from './1765800000000-collection-sales-lows';

/**
 * Issue #38: statistics filtered by trend (`is_trending`) and counted by it read each collection's trend from
 * sums kept per collection and period, corrected by the sales of the few hours where the kept hours and the
 * windows at the moment of reading differ (statistics.trend.ts), not by summing every collection that sold in
 * the last two windows (590-915 ms at 10,000,000 assets for `is_trending=1`).
 *
 * `collection_sales_lows` (migration 1765800000000, periods of 6 hours or more) gains, exactly, the collection's
 * rollups (`collection_sales_hourly`) of the hours
 * - `trend_volume`: [since + 1 h, since + length): with the sweeper on time, every whole hour of the trend
 *   window [now - length, now) (the period; for all, 24h's);
 * - `previous_volume`: [since - length + 1 h, since): every whole hour of the window before it.
 * They are kept as the lows are, under the same advisory lock: the sweeper's move brings the hours that enter
 * and takes those that leave, and the trigger on the rollups applies any change of a rollup in those hours
 * (a sale of now is in none of them: the sales a marketplace makes write nothing here).
 *
 * A collection whose kept sums are trending (`trend_volume > 0 AND trend_volume >= 1.5 * previous_volume`, the
 * definition of statistics.sql.ts trendingSql) is in a partial index by period, trend volume and id, and by
 * period, chain, trend volume and id: the trending collections are counted from it and walked in the order of
 * their trend volume, but those the few hours' sales change.
 */
/** The kept sums' trending condition, as the partial indexes hold it and the reads write it. */
const KEPT_TRENDING = 'trend_volume > 0 AND trend_volume >= 1.5 * previous_volume';

/** An hour `h` within `[since + from, since + to)` of the window row `w` (intervals as SQL). */
const within = (h: string, from: string, to: string) => `${h} >= w.since + ${from} AND ${h} < w.since + ${to}`;
const LENGTH = 'make_interval(secs => w.seconds)';
const LOW_HOURS = [`interval '2 hours'`, `${LENGTH} - interval '1 hour'`] as const;
const TREND_HOURS = [`interval '1 hour'`, LENGTH] as const;
const PREVIOUS_HOURS = [`interval '1 hour' - ${LENGTH}`, `interval '0 hours'`] as const;

export class CollectionTrendSums1765850000000 implements MigrationInterface {
  name = 'CollectionTrendSums1765850000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "collection_sales_lows" ADD "trend_volume" numeric NOT NULL DEFAULT 0, ADD "previous_volume" numeric NOT NULL DEFAULT 0`);
    await q.query(`UPDATE collection_sales_lows l SET trend_volume = x.trend, previous_volume = x.previous
      FROM (SELECT r.collection_id, w.period,
              COALESCE(sum(r.volume) FILTER (WHERE ${within('r.hour', ...TREND_HOURS)}), 0) AS trend,
              COALESCE(sum(r.volume) FILTER (WHERE ${within('r.hour', ...PREVIOUS_HOURS)}), 0) AS previous
            FROM collection_sales_hourly r JOIN collection_sales_bound_windows w
              ON w.seconds >= 6 * 3600 AND r.hour >= w.since + ${PREVIOUS_HOURS[0]} AND r.hour < w.since + ${LENGTH}
            GROUP BY 1, 2) x
      WHERE l.collection_id = x.collection_id AND l.period = x.period`);
    for (const [name, columns] of [
      ['ix_collection_sales_lows_trending', '"period", "trend_volume", "collection_id"'],
      ['ix_collection_sales_lows_chain_trending', '"period", "chain_id", "trend_volume", "collection_id"'],
    ]) {
      await q.query(`CREATE INDEX "${name}" ON "collection_sales_lows" (${columns}) WHERE ${KEPT_TRENDING}`);
    }
    // Any change of a rollup (after the shared lock: `since` is read after any move that holds it): the rows
    // whose hours hold the rollup's hour take the difference, each sum for its own hours.
    await q.query(
      salesLowsChangeFunction(
        'CREATE OR REPLACE',
        `UPDATE collection_sales_lows l SET
          volume_low = l.volume_low + CASE WHEN ${within('changed_hour', ...LOW_HOURS)} THEN volume_change ELSE 0 END,
          sales_low = l.sales_low + CASE WHEN ${within('changed_hour', ...LOW_HOURS)} THEN sales_change ELSE 0 END,
          trend_volume = l.trend_volume + CASE WHEN ${within('changed_hour', ...TREND_HOURS)} THEN volume_change ELSE 0 END,
          previous_volume = l.previous_volume + CASE WHEN ${within('changed_hour', ...PREVIOUS_HOURS)} THEN volume_change ELSE 0 END
        FROM collection_sales_bound_windows w
        WHERE l.collection_id = changed_id AND l.period = w.period
          AND (${within('changed_hour', ...LOW_HOURS)} OR ${within('changed_hour', ...TREND_HOURS)} OR ${within('changed_hour', ...PREVIOUS_HOURS)})`,
      ),
    );
    await q.query(`ANALYZE "collection_sales_lows"`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(salesLowsChangeFunction('CREATE OR REPLACE', LOWS_UPDATE));
    await q.query(`DROP INDEX "ix_collection_sales_lows_chain_trending"`);
    await q.query(`DROP INDEX "ix_collection_sales_lows_trending"`);
    await q.query(`ALTER TABLE "collection_sales_lows" DROP COLUMN "previous_volume", DROP COLUMN "trend_volume"`);
  }
}
