import type { DataSource } from 'typeorm';
import { DeltaTable, foldDeltas } from '../../common/delta-counts';
import { Params } from '../../common/sql';
import { LOWS_MIN_SECONDS } from './sales-bounds';
import { countedSaleSql, distinctHours, floorHour, HOUR_MS, trendingRule, windows } from './statistics.sql';
import { PERIODS, Period } from './statistics.types';

/**
 * The trend of every collection at a moment, from sums kept per collection (issue #38), for the lists filtered
 * and counted by trend. `collection_sales_lows` keeps, exactly, each collection's rollups of the hours
 * [since + 1 h, since + length) (`trend_volume`) and [since - length + 1 h, since) (`previous_volume`), where
 * `since` is the period's in `collection_sales_bound_windows` (migration 1765850000000; the sweeper moves it
 * once an hour, sales-bounds.ts). With the sweeper on time they are every whole hour of the trend window
 * [now - length, now) and of the window before it; what differs at `now` is a few hours: the three hours that
 * hold a window's edge (read from `orders`, as salesTable does) and, with `since` behind or ahead of now's
 * hour, the hours between. The differences of each collection with a sale in those hours are summed once per
 * statement (`trend_d`, a CTE: bounded by the sales of a few hours, not by the market) and added to its kept
 * sums: every collection's trend figures, exact at the millisecond, as salesTable's.
 *
 * - the trending collections are counted as those whose kept sums are trending (kept counts per period and chain,
 *   migration 1765900000000) corrected by the collections of `trend_d`;
 * - sorted by the trend window's volume (a sliding period's volume), the trending ones are walked in the order
 *   of their kept trend volume (the partial index: the page's rows, not the market's), but those of `trend_d`,
 *   which are merged in with their corrected figures;
 * - any other list filtered by trend joins each walked collection's kept row and its difference (`tv`).
 *
 * Periods of 6 hours or more, and all (whose trend window is 24h's); the last hour has no kept sums.
 */
export interface KeptTrend {
  /**
   * The statement's CTEs: the collections whose figures differ from their kept sums, `trend_d(collection_id,
   * chain_id, trend, previous, kept_trending)`, their figures at the moment and whether their kept sums trend;
   * and `trend_m(m)`, the same figures as one jsonb object, `{ "<collection id>": [trend, previous] }` (numerics
   * keep their scale in jsonb), for lookups by key. ListQuery.with.
   */
  with: string;
  /** Joined to a row whose collection id is `id`: `tv(trend, previous)`, its trend figures at the moment (trendingColumns('tv')). */
  join: (id: string) => string;
  /** How many collections are trending (with `chain`, a condition on a chain column: of that chain). */
  count: (chain: ((column: string) => string) | null) => string;
  /**
   * The trending collections as sources of rows (ListQuery.sources) `t(id, volume, volume_sort, "isTrending")`,
   * sorted by the trend window's volume: those whose kept sums hold, in the order of the partial index, and
   * those of `trend_d`.
   */
  byTrendVolume: (chain: ((column: string) => string) | null) => string[];
  /**
   * The collections not trending at the moment, a subquery of their `collection_id`: those whose kept sums do not trend
   * (a partial index, migration 1765860000000), but those of `trend_d`, and those of `trend_d` whose figures do not.
   */
  notTrending: (chain: ((column: string) => string) | null) => string;
  /**
   * Whether fewer than `most` (SQL, an integer) collections' kept sums do not trend: the partial index read as far as
   * `most` entries.
   */
  fewNotTrending: (chain: ((column: string) => string) | null, most: string) => string;
}

/**
 * How many collections' kept sums trend, per period and chain (migration 1765900000000): deltas appended by the
 * statements that change the kept sums, folded into one row per period and chain by the expiry sweeper's loop.
 */
const TRENDING_COUNT_DELTAS: DeltaTable = { table: 'collection_trending_counts', groups: ['period', 'chain_id'], marksFolded: true };

export const compactTrendingCounts = (ds: DataSource, past?: number): Promise<void> => foldDeltas(ds, TRENDING_COUNT_DELTAS, past);

const ceilHour = (t: Date) => (t.getTime() % HOUR_MS === 0 ? t : new Date(floorHour(t).getTime() + HOUR_MS));

/** The kept trend of `period` at `now`, or null when its trend window has no kept sums (1h). */
export function keptTrend(p: Params, period: Period, now: Date): KeptTrend | null {
  const trendPeriod: Period = period === 'all' ? '24h' : period;
  const seconds = PERIODS[trendPeriod];
  if (seconds === null || seconds < LOWS_MIN_SECONDS) return null;
  const { trendStart, previousStart } = windows(trendPeriod, now);
  const periodP = p.add(trendPeriod);
  const at = (t: Date) => `${p.add(t)}::timestamptz`;
  const length = `interval '${seconds} seconds'`;
  const since = `(SELECT bw.since FROM collection_sales_bound_windows bw WHERE bw.period = ${periodP})`;
  // The whole hours of each window at now, and the kept hours.
  const whole = { previous: [at(ceilHour(previousStart)), at(floorHour(trendStart))], trend: [at(ceilHour(trendStart)), at(floorHour(now))] };
  const kept = { previous: [`${since} - ${length} + interval '1 hour'`, since], trend: [`${since} + interval '1 hour'`, `${since} + ${length}`] };
  const inHours = (column: string, [from, to]: string[]) => `(${column} >= ${from} AND ${column} < ${to})::int`;
  // The hours where the whole hours and the kept ones differ, each range between a window's edge and its kept edge.
  const differing = [
    [whole.previous[0], kept.previous[0]],
    [whole.previous[1], kept.previous[1]],
    [whole.trend[0], kept.trend[0]],
    [whole.trend[1], kept.trend[1]],
  ].map(([a, b]) => `(r.hour >= LEAST(${a}, ${b}) AND r.hour < GREATEST(${a}, ${b}))`);
  // The hours that hold an edge of a window (not on the hour): their sales are read from orders, each window
  // taking those of its own part (whole hours of neither window).
  const edges = distinctHours([previousStart, trendStart, now].filter((t) => t.getTime() % HOUR_MS !== 0).map(floorHour));
  // A select per hour: each an index-only range of the counted sales (ix_orders_counted_created, migration 1765880000000).
  const [trendAt, previousAt, nowAt] = edges.length ? [at(trendStart), at(previousStart), at(now)] : [];
  const edgeOrders = edges
    .map((hour) => `UNION ALL
       SELECT o.collection_id,
         CASE WHEN o.created_at >= ${trendAt} THEN o.price ELSE 0 END,
         CASE WHEN o.created_at >= ${previousAt} AND o.created_at < ${trendAt} THEN o.price ELSE 0 END
       FROM orders o
       WHERE o.created_at >= ${at(hour)} AND o.created_at < ${at(new Date(hour.getTime() + HOUR_MS))}
         AND o.created_at < ${nowAt} AND ${countedSaleSql('o')}`)
    .join('\n');
  // Each such collection's figures, with its kept row's (read once: the count and the page both read them).
  const cte = `trend_d AS MATERIALIZED (SELECT d.collection_id, l.chain_id, l.trend_volume + d.dt AS trend, l.previous_volume + d.dp AS previous,
       ${trendingRule('l.trend_volume', 'l.previous_volume')} AS kept_trending
     FROM (SELECT x.collection_id, sum(x.dt) AS dt, sum(x.dp) AS dp FROM (
       SELECT r.collection_id,
         r.volume * (${inHours('r.hour', whole.trend)} - ${inHours('r.hour', kept.trend)}),
         r.volume * (${inHours('r.hour', whole.previous)} - ${inHours('r.hour', kept.previous)})
       FROM collection_sales_hourly r WHERE ${differing.join(' OR ')}
       ${edgeOrders}) x(collection_id, dt, dp)
     GROUP BY x.collection_id) d
     JOIN collection_sales_lows l ON l.collection_id = d.collection_id AND l.period = ${periodP}),
    trend_m AS MATERIALIZED (SELECT COALESCE(jsonb_object_agg(d.collection_id::text, jsonb_build_array(d.trend, d.previous)), '{}'::jsonb) AS m FROM trend_d d)`;
  const keptRow = (l: string) => `${l}.period = ${periodP}`;
  const keptTrending = (l: string) => trendingRule(`${l}.trend_volume`, `${l}.previous_volume`);
  const corrected = trendingRule('d.trend', 'd.previous');
  const ofChain = (chain: ((column: string) => string) | null, l: string) => (chain ? ` AND ${chain(`${l}.chain_id`)}` : '');
  return {
    with: cte,
    join: (id) =>
      // The kept row found by its key (OFFSET 0: never a hash of every collection's row to join them); the
      // difference looked up in trend_m, trend_d as one jsonb object by collection id (built once per statement):
      // a lateral read of the CTE scanned all of it for each walked collection in it (0.17 ms for each of the
      // 4,229 rows of a day's edge hours at 10,000,000 assets; 1.9 s for a page that walked 1,859 rows when it
      // was joined to every one).
      ` CROSS JOIN LATERAL (SELECT tl.trend_volume, tl.previous_volume FROM collection_sales_lows tl WHERE tl.collection_id = ${id} AND ${keptRow('tl')} OFFSET 0) tl
        CROSS JOIN LATERAL (SELECT (SELECT tm.m FROM trend_m tm) -> ${id}::text AS e) td
        CROSS JOIN LATERAL (SELECT COALESCE((td.e ->> 0)::numeric, tl.trend_volume) AS trend, COALESCE((td.e ->> 1)::numeric, tl.previous_volume) AS previous) tv`,
    // The kept count (collection_trending_counts: a few rows per period and chain, whatever the market's size).
    count: (chain) =>
      `((SELECT COALESCE(sum(k.n), 0)::bigint FROM collection_trending_counts k WHERE k.period = ${periodP}${ofChain(chain, 'k')})
        + (SELECT COALESCE(sum(CASE WHEN ${corrected} THEN 1 ELSE 0 END - CASE WHEN d.kept_trending THEN 1 ELSE 0 END), 0)
           FROM trend_d d${chain ? ` WHERE ${chain('d.chain_id')}` : ''}))`,
    notTrending: (chain) =>
      `(SELECT l.collection_id FROM collection_sales_lows l
        WHERE ${keptRow('l')} AND NOT ${keptTrending('l')}${ofChain(chain, 'l')} AND l.collection_id NOT IN (SELECT d.collection_id FROM trend_d d)
        UNION ALL SELECT d.collection_id FROM trend_d d WHERE NOT ${corrected}${ofChain(chain, 'd')})`,
    fewNotTrending: (chain, most) =>
      `((SELECT count(*) FROM (SELECT FROM collection_sales_lows l WHERE ${keptRow('l')} AND NOT ${keptTrending('l')}${ofChain(chain, 'l')} LIMIT ${most}) x) < ${most})`,
    byTrendVolume: (chain) => [
      `(SELECT l.collection_id AS id, l.trend_volume::text AS volume, l.trend_volume AS volume_sort, 1 AS "isTrending"
        FROM collection_sales_lows l
        WHERE ${keptRow('l')} AND ${keptTrending('l')}${ofChain(chain, 'l')} AND l.collection_id NOT IN (SELECT d.collection_id FROM trend_d d)) t`,
      `(SELECT d.collection_id AS id, d.trend::text AS volume, d.trend AS volume_sort, 1 AS "isTrending"
        FROM trend_d d WHERE ${corrected}${ofChain(chain, 'd')}) t`,
    ],
  };
}
