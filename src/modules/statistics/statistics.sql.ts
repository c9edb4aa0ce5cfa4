import { Params } from '../../common/sql';
import { isNativeSql } from '../currency/currency.entity';
import { PERIODS, Period } from './statistics.types';
import { floorJoin } from './statistics.floor';

const DAY_SECONDS = 24 * 3600;
export const HOUR_MS = 3600 * 1000;
export const floorHour = (t: Date) => new Date(Math.floor(t.getTime() / HOUR_MS) * HOUR_MS);

/** A condition on a collection id column (`r.collection_id`, `o.collection_id`): which collections a statement reads. */
export type OfCollection = (column: string) => string;

/** The collections `ids` (a parameter). */
export const ofIds = (p: Params, ids: readonly string[]): OfCollection => {
  const idsP = p.add(ids);
  return (column) => `${column} = ANY(${idsP}::uuid[])`;
};

/** The windows of a period at `now`: the period itself (start null: everything before now), its trend window and the one before. */
export function windows(period: Period, now: Date): { start: Date | null; trendStart: Date; previousStart: Date } {
  const seconds = PERIODS[period];
  const trendMs = (seconds ?? DAY_SECONDS) * 1000;
  return {
    start: seconds === null ? null : new Date(now.getTime() - seconds * 1000),
    trendStart: new Date(now.getTime() - trendMs),
    previousStart: new Date(now.getTime() - 2 * trendMs),
  };
}

/**
 * The hours of `collection_sales_hourly` salesTable reads for `period` at `now` (from null: every hour
 * before): a collection without a rollup in them has no sale in any of the record's windows.
 */
export function salesHours(period: Period, now: Date): { from: Date | null; to: Date } {
  return { from: PERIODS[period] === null ? null : floorHour(windows(period, now).previousStart), to: floorHour(now) };
}

/**
 * The sales figures of the windows a record reports, from the hourly rollups plus the orders of the
 * partial hours at the windows' edges. Every window is half-open, [start, end), and they tile: the
 * period is [now - length, now) (all: everything before now), the trend window is the period (all:
 * [now - 24 h, now)), and the previous window is [trend start - length, trend start). A whole UTC hour
 * that holds no window edge lies wholly inside or wholly outside each window, so it is read from
 * `collection_sales_hourly`; an hour that holds an edge (when now is not on the hour: at most three) is
 * read from `orders` by its (created_at) index, so the figures are exact at the millisecond and a sale at
 * an edge counts in exactly one window. The cost depends on the collections and the hours in the windows,
 * not on how many orders there are. `of`: only these collections (null: every one with sales in the hours).
 */
export function salesTable(p: Params, period: Period, now: Date, of: OfCollection | null): string {
  const end = now;
  const { start, trendStart, previousStart } = windows(period, now);
  const rows = salesRows(p, start === null ? null : previousStart, end, [previousStart, trendStart], of);
  const endP = p.add(end);
  const startP = start ? p.add(start) : null;
  const trendP = p.add(trendStart);
  const previousP = p.add(previousStart);
  const inPeriod = `s.at < ${endP}::timestamptz${startP ? ` AND s.at >= ${startP}::timestamptz` : ''}`;
  const inTrend = `s.at >= ${trendP}::timestamptz AND s.at < ${endP}::timestamptz`;
  const inPrevious = `s.at >= ${previousP}::timestamptz AND s.at < ${trendP}::timestamptz`;
  return `(SELECT s.collection_id,
        sum(s.volume) FILTER (WHERE ${inPeriod}) AS volume,
        sum(s.sales) FILTER (WHERE ${inPeriod}) AS transactions,
        sum(s.volume) FILTER (WHERE ${inTrend}) AS trend,
        sum(s.volume) FILTER (WHERE ${inPrevious}) AS previous
      FROM ${rows}
      GROUP BY s.collection_id)`;
}

/** The hours given, each once, in their first order. */
export const distinctHours = (hours: Date[]): Date[] => hours.filter((h, i) => hours.findIndex((o) => o.getTime() === h.getTime()) === i);

/**
 * The sales before `end` from the hour of `from` on (null: every hour), as `s(collection_id, at, volume,
 * sales)`: the rollups of the whole hours, and the orders of the hours that hold `end` or one of `edges` (a
 * window's edge) when it is not on the hour, so a window edged by them is summed exactly from these rows.
 */
function salesRows(p: Params, from: Date | null, end: Date, edges: Date[], of: OfCollection | null): string {
  // Each hour once: its orders are read by one select (two edges in one hour would count them twice).
  const edgeHours = distinctHours([...edges, end].filter((t) => t.getTime() % HOUR_MS !== 0).map((t) => floorHour(t)));
  const edgesP = p.add(edgeHours.map((t) => t.toISOString()));
  const rollupFrom = from === null ? '' : `r.hour >= ${p.add(floorHour(from))}::timestamptz AND `;
  const ofRollup = of ? `${of('r.collection_id')} AND ` : '';
  const ofOrder = of ? ` AND ${of('o.collection_id')}` : '';
  // A select per edge hour, each an index range: of every collection, index-only on the counted sales'
  // (ix_orders_counted_created, migration 1765880000000; one bitmap of the ranges read a heap page per sale).
  const endP = edgeHours.length ? p.add(end) : '';
  const orderEdges = edgeHours
    .map((hour) => `UNION ALL
      SELECT o.collection_id, o.created_at, o.price, 1
      FROM orders o
      WHERE o.created_at >= ${p.add(hour)}::timestamptz AND o.created_at < ${p.add(new Date(hour.getTime() + HOUR_MS))}::timestamptz
        AND ${countedSaleSql('o')} AND o.created_at < ${endP}::timestamptz${ofOrder}`)
    .join('\n');
  return `(
        SELECT r.collection_id, r.hour AS at, r.volume, r.sales
        FROM collection_sales_hourly r
        WHERE ${ofRollup}${rollupFrom}r.hour < ${p.add(floorHour(end))}::timestamptz AND r.hour <> ALL(${edgesP}::timestamptz[])
        ${orderEdges}
      ) s(collection_id, at, volume, sales)`;
}

/**
 * The volume and the number of sales of the collection `id` (an SQL expression) in a sliding `period` at
 * `now`, `(volume, transactions)`, 0 without sales: salesTable's `volume` and `transactions`, from the rows
 * of the period alone (an index range of the collection's rollups, and of its orders in the edge hours).
 */
export function periodSalesSql(p: Params, period: Period, now: Date, id: string): string {
  const { start } = windows(period, now);
  if (start === null) throw new Error('periodSalesSql: a sliding period');
  const rows = salesRows(p, start, now, [start], (column) => `${column} = ${id}`);
  return `(SELECT COALESCE(sum(s.volume), 0) AS volume, COALESCE(sum(s.sales), 0)::int AS transactions
      FROM ${rows} WHERE s.at >= ${p.add(start)}::timestamptz)`;
}

/** An order that counts as a sale in the statistics (and in `collection_sales_hourly`): completed, native, not to its seller. */
export const countedSaleSql = (o: string) => `${o}.status = 'completed' AND ${o}.seller <> ${o}.buyer AND ${isNativeSql(o)}`;

/**
 * The trend figures of a record from `v`, a row of salesTable (nulls: no sales). The trending score is
 * trend / (trend + previous) (0 when both are 0), and a collection is trending when trend > 0 and
 * trend >= 1.5 x previous, i.e. score >= 0.6 (compared exactly).
 */
export function trendingColumns(v: string): string {
  const trend = `COALESCE(${v}.trend, 0)`;
  const previous = `COALESCE(${v}.previous, 0)`;
  return `${trend}::text AS "trendVolume", ${previous}::text AS "previousVolume",
      CASE WHEN ${trendingSql(v)} THEN 1 ELSE 0 END AS "isTrending",
      CASE WHEN ${trend} + ${previous} > 0 THEN (${trend} / (${trend} + ${previous}))::float8 ELSE 0 END AS "trendingScore"`;
}

/**
 * The rule of trending, once for every reader: a trend volume `trend` > 0 and at least 1.5 x the previous
 * window's `previous` (SQL expressions, never null). Written as the kept sums' partial indexes hold it
 * (migration 1765850000000: `trend_volume > 0 AND trend_volume >= 1.5 * previous_volume`), so the planner
 * matches a read of the kept columns to them.
 */
export const trendingRule = (trend: string, previous: string): string => `(${trend} > 0 AND ${trend} >= 1.5 * ${previous})`;

/** Whether the record of `v`, a row of salesTable (nulls: no sales), is trending: never null. */
export function trendingSql(v: string): string {
  return trendingRule(`COALESCE(${v}.trend, 0)`, `COALESCE(${v}.previous, 0)`);
}

/** The trend figures of no sales at all. */
export const NO_TREND_COLUMNS = `'0'::text AS "trendVolume", '0'::text AS "previousVolume", 0 AS "isTrending", 0::float8 AS "trendingScore"`;

/**
 * The figures of every collection matching `collectionFilter`, as a derived table `t` with the columns of
 * StatisticsRecord; the sales figures come from salesTable (`sales` false: 0), the holders from
 * `collection_figures` (kept by the writes). The floor is computed per collection (LATERAL, by index) and
 * only when asked for (`floor`).
 */
export function statisticsTable(
  p: Params,
  period: Period,
  now: Date,
  collectionFilter: string,
  figures: { floor: boolean; sales: boolean },
  of: OfCollection | null = null,
  collectionColumns = '',
): string {
  const sales = figures.sales
    ? salesTable(p, period, now, of)
    : '(SELECT NULL::uuid AS collection_id, NULL::numeric AS volume, NULL::bigint AS transactions, NULL::numeric AS trend, NULL::numeric AS previous)';
  const nowP = figures.floor ? p.add(now) : '';
  const floor = figures.floor
    ? floorJoin('c.id', nowP, 'f', 'fa')
    : `LEFT JOIN (SELECT NULL::numeric AS floor_price, NULL::uuid AS listing_id, NULL::uuid AS asset_id) f ON true
      LEFT JOIN (SELECT NULL::varchar AS token_address, NULL::numeric AS token_id) fa ON true`;
  return `(SELECT c.id, c.id AS "collectionId", c.chain_id AS "chainId",
      f.floor_price::text AS "floorPrice", f.listing_id AS "floorListingId", f.asset_id AS "floorAssetId",
      fa.token_address AS "floorTokenAddress", fa.token_id::text AS "floorTokenId",
      COALESCE(v.volume, 0)::text AS volume, COALESCE(v.transactions, 0)::int AS "totalTransactions",
      COALESCE(h.holders, 0)::int AS "totalHolders",
      ${trendingColumns('v')},
      COALESCE(v.volume, 0) AS volume_sort, f.floor_price AS floor_sort${collectionColumns ? `, ${collectionColumns}` : ''}
    FROM collections c${collectionColumns ? `
    LEFT JOIN chains ch ON ch.id = c.chain_id
    LEFT JOIN categories cat ON cat.id = c.category_id` : ''}
    LEFT JOIN collection_figures h ON h.collection_id = c.id
    LEFT JOIN ${sales} v ON v.collection_id = c.id
    ${floor}
    WHERE ${collectionFilter}) t`;
}
