import { SortDirection } from '../../common/pagination';
import type { ListQuery } from '../../common/list-query';
import { Params } from '../../common/sql';
import { floorRanking } from './statistics.floor';
import { salesWalk } from './statistics.sales-walk';
import {
  countedSaleSql,
  floorHour,
  HOUR_MS,
  NO_TREND_COLUMNS,
  salesHours,
  salesTable,
  trendingColumns,
  trendingSql,
  windows,
} from './statistics.sql';
import { LOWS_MIN_SECONDS } from './sales-bounds';
import { KeptTrend, keptTrend } from './statistics.trend';
import { Period, PERIODS, StatisticsOrderBy } from './statistics.types';

/**
 * Which collections come first in a statistics list, and the figures they are sorted and filtered by:
 * sources of rows aliased `t` (fetchPage merges them), each of which an index serves, so a page reads
 * about its own rows whatever the number of collections (issue #38):
 *
 * - holders, and the volume and sales of all time, are kept by the writes in `collection_figures`
 *   (migration 1765630000000): an index walk. All time means before now: the few collections with a sale
 *   at or after now (a clock set back; sales of the current hour ahead of a frozen clock) are a source
 *   of their own, their figures less those sales.
 * - the volume and sales of a sliding window change with time, not only with writes. Highest first, the
 *   collections' upper bounds of them kept by the writes and the sweeper (migration 1765760000000) are
 *   walked and only candidates are summed (statistics.sales-walk.ts); lowest first, for periods of 6 hours
 *   or more, their lower bounds (migration 1765800000000). Of the last hour lowest first, and trending only, the
 *   collections with a rollup in the window's hours (bounded by the trades of the window, not by the
 *   market) are computed and sorted, and every other collection has 0 and comes in the order of its id.
 * - the floor: the collections' floor bounds kept by the writes (migration 1765670000000) are walked and
 *   only candidates are priced (statistics.floor.ts).
 *
 * With `isTrending`, for trend windows of 6 hours or more (and all's, 24 hours), each row's trend figures are
 * its collection's kept sums corrected by a few hours' sales (statistics.trend.ts, a lookup each), and
 * trending ones by a sliding period's volume (the trend window's) walk the kept sums' own index; for the last
 * hour, each row's trend figures are computed by its collection's rollups (LATERAL). Asked for trending ones
 * only by any other sort, only collections with a rollup in the trend window's hours are candidates. Asked
 * for the others, the sorts walk as unfiltered (a sliding window's volume and sales its bounds) and drop the
 * trending collections as they go (statistics.sales-walk.ts): most collections are not trending. When few are
 * not (a market trending as a whole), the sorts by holders, all-time figures and floor read those few instead
 * (the kept sums' partial index of them), chosen as the statement runs.
 *
 * `count`: how many collections the list holds, without reading them: the kept count of collections
 * (migration 1765800000100); by trend, the trending ones are counted from the kept sums' index and corrected
 * by the few hours' sales (for the last hour, from the sales of the trend window and the one before: bounded
 * by the trades of the windows, not by the market), and the others are the rest.
 */
export interface Ranking {
  /** The page's rows (unless `pageFrom`) and its counts (unless `countFrom`). */
  sources?: string[];
  /** The record's fields the sources give: the page keeps them as its ranking saw them. */
  fields: string[];
  /** Where the page's rows are read from, when not from `sources` (which the counts still read): ListQuery.pageFrom. */
  pageFrom?: ListQuery['pageFrom'];
  countFrom?: ListQuery['countFrom'];
  /** ListQuery.count: written only when the page counts. */
  count: () => string;
  /** ListQuery.with: the statement's common table expressions (the kept trend's differences, statistics.trend.ts). */
  with?: string[];
}

interface RankingArgs {
  period: Period;
  now: Date;
  orderBy: StatisticsOrderBy;
  /** The chain filter on a column (`f.chain_id`), or null. */
  chain: ((column: string) => string) | null;
  isTrending: number | null | undefined;
  /** The page's direction (the one given, else the sort's). */
  direction: SortDirection;
}

const SALES_FIELDS = ['volume', 'totalTransactions'];
const TREND_FIELDS = ['trendVolume', 'previousVolume', 'isTrending', 'trendingScore'];

export function ranking(p: Params, args: RankingArgs): Ranking {
  // Filtered by trend, each collection's trend is read from its kept sums (statistics.trend.ts), but in the last hour's.
  const kept = args.isTrending != null ? keptTrend(p, args.period, args.now) : null;
  const ranked = rankingOf(p, args, kept);
  return kept ? { ...ranked, with: [kept.with] } : ranked;
}

function rankingOf(p: Params, args: RankingArgs, kept: KeptTrend | null): Ranking {
  const { period, now, orderBy, isTrending } = args;
  const filtered = isTrending != null;
  const where = (conditions: string[] = []) => {
    const all = args.chain ? [...conditions, args.chain('f.chain_id')] : conditions;
    return all.length ? ` WHERE ${all.join(' AND ')}` : '';
  };
  const collections = () => `(SELECT COALESCE(sum(k.collections), 0) FROM collection_counts k${args.chain ? ` WHERE ${args.chain('k.chain_id')}` : ''})`;
  // The collections the sorts by holders, all-time figures and floor walk, each `FROM` items giving `collection_figures
  // f` read when `guard` holds. Trending ones only: those with a sale in the trend window's hours (walked in the
  // list's order as unfiltered, a list whose filter keeps few read every collection). The others: every collection,
  // walked as unfiltered, dropping the trending ones, unless those not trending are few (a market trending as a whole:
  // walking to them read on through every trending one, 2-2.5 s by holders at 10,000,000 assets); then those alone,
  // from the kept sums' partial index of them (statistics.trend.ts notTrending).
  const walks = (): Array<{ from: string; guard: string[] }> => {
    if (isTrending === 1) return [{ from: figuresOf(rollupIds(p, trendHours(period, now))), guard: [] }];
    if (isTrending !== 0 || !kept) return [{ from: figuresOf(null), guard: [] }];
    const few = kept.fewNotTrending(args.chain, fewOthers(p, collections()));
    return [
      { from: figuresOf(null), guard: [`NOT ${few}`] },
      { from: figuresOf(kept.notTrending(args.chain)), guard: [few] },
    ];
  };
  // The trend figures of the walked collection, when the list is filtered by them: from its kept sums, or its rollups.
  const trendOf = () =>
    !filtered ? '' : kept ? kept.join('f.collection_id') : ` LEFT JOIN LATERAL ${salesTable(p, trendPeriod(period), now, (column) => `${column} = f.collection_id`)} tv ON true`;
  const trend = filtered ? `, ${trendingColumns('tv')}` : '';
  // From kept sums, the trend's figures but `isTrending` are the page's own (figuresFor: their text and score as
  // every record's; a sum kept through sales that left has more decimals).
  const fields = (more: string[]) => [...more, ...(filtered ? (kept ? ['isTrending'] : TREND_FIELDS) : [])];
  // The trending collections: the sales of the trend windows summed in one pass over their hours (a figure
  // computed per collection that sold, each from its own rollups and edge-hour orders, took 0.5-1.2 s for the
  // 2,900 of a day at 1,000,000 assets).
  const trendingCount = () =>
    kept
      ? kept.count(args.chain)
      : `(SELECT count(*) FROM ${salesTable(p, trendPeriod(period), now, null)} tv${
      args.chain ? ' CROSS JOIN LATERAL (SELECT f.chain_id FROM collection_figures f WHERE f.collection_id = tv.collection_id OFFSET 0) f' : ''
    }${where([trendingSql('tv')])})`;
  const count = () => (isTrending == null ? collections() : isTrending === 1 ? trendingCount() : `(${collections()} - ${trendingCount()})`);

  if (orderBy === StatisticsOrderBy.FLOOR_PRICE) {
    const trend = filtered ? { join: trendOf(), columns: trendingColumns('tv') } : null;
    const nowP = p.add(now);
    // Each walk's rows read only when its guard holds (a one-time filter: the other is never read).
    const [first, ...others] = walks().map(({ from, guard }) => ({
      guard,
      walk: floorRanking(p, { now: nowP, from: { sql: from, bounded: isTrending === 1 }, conditions: args.chain ? [args.chain('f.chain_id')] : [], trend }),
    }));
    const guarded = (rows: (w: typeof first) => string) =>
      others.length ? `(${[first, ...others].map((w) => `SELECT t.* FROM ${rows(w)} WHERE ${w.guard.join(' AND ')}`).join(' UNION ALL ')}) t` : rows(first);
    return {
      pageFrom: (filters, position) => guarded((w) => w.walk.pageFrom(filters, position)),
      countFrom: (position) => guarded((w) => w.walk.countFrom(position)!),
      fields: fields(['floorPrice', 'floorListingId', 'floorAssetId', 'floorTokenAddress', 'floorTokenId']),
      count,
    };
  }

  if (orderBy === StatisticsOrderBy.TOTAL_HOLDERS) {
    return {
      sources: walks().map(({ from, guard }) => `(SELECT f.collection_id AS id, f.holders AS "totalHolders"${trend} FROM ${from}${trendOf()}${where(guard)}) t`),
      fields: fields(['totalHolders']),
      count,
    };
  }
  if (kept && isTrending === 1 && orderBy === StatisticsOrderBy.VOLUME && period !== 'all') {
    // The period is the trend window: its volume is the trend volume, whose kept sums the trending ones walk.
    return { sources: kept.byTrendVolume(args.chain), fields: ['volume', 'isTrending'], count };
  }
  if (period === 'all') {
    // Sales at or after now: the rollups of the hours after now's, and the orders of now's hour from now on.
    const onTheHour = now.getTime() % HOUR_MS === 0;
    const nextHour = onTheHour ? now : new Date(floorHour(now).getTime() + HOUR_MS);
    const ahead = { from: floorHour(now), to: null };
    const fromOrders = onTheHour
      ? ''
      : `UNION ALL SELECT o.collection_id, o.price, 1 FROM orders o
           WHERE o.created_at >= ${p.add(now)}::timestamptz AND o.created_at < ${p.add(nextHour)}::timestamptz AND ${countedSaleSql('o')}`;
    const future = `(SELECT x.collection_id, sum(x.volume) AS volume, sum(x.sales) AS sales FROM (
        SELECT r.collection_id, r.volume, r.sales FROM collection_sales_hourly r WHERE r.hour >= ${p.add(nextHour)}::timestamptz
        ${fromOrders}) x GROUP BY x.collection_id)`;
    const columns = (volume: string, sales: string) =>
      `f.collection_id AS id, (${volume})::text AS volume, (${sales})::int AS "totalTransactions", ${volume} AS volume_sort${trend}`;
    return {
      sources: [
        `(SELECT ${columns('f.volume - COALESCE(fu.volume, 0)', 'f.sales - COALESCE(fu.sales, 0)')}
          FROM ${figuresOf(rollupIds(p, ahead), (id) => ` LEFT JOIN ${future} fu ON fu.collection_id = ${id}`)}${trendOf()}${where()}) t`,
        ...walks().map(
          ({ from, guard }) => `(SELECT ${columns('f.volume', 'f.sales')} FROM ${from}${trendOf()}${where([`NOT EXISTS (${rollupOf(p, 'f.collection_id', ahead)})`, ...guard])}) t`,
        ),
      ],
      fields: fields(SALES_FIELDS),
      count,
    };
  }
  // A sliding window: the collections with a rollup in its hours, and the others (no sale: 0, by id).
  const hours = salesHours(period, now);
  // `trend`: with the trend figures (of the rollups read anyway).
  const sliding = (trend: boolean) => [
    `(SELECT f.collection_id AS id, COALESCE(v.volume, 0)::text AS volume, COALESCE(v.transactions, 0)::int AS "totalTransactions",
        COALESCE(v.volume, 0) AS volume_sort${trend ? `, ${trendingColumns('v')}` : ''}
      FROM ${figuresOf(rollupIds(p, hours), (id) => ` LEFT JOIN ${salesTable(p, period, now, null)} v ON v.collection_id = ${id}`)}${where()}) t`,
    `(SELECT f.collection_id AS id, '0'::text AS volume, 0 AS "totalTransactions", 0::numeric AS volume_sort${trend ? `, ${NO_TREND_COLUMNS}` : ''}
      FROM collection_figures f${where([`NOT EXISTS (${rollupOf(p, 'f.collection_id', hours)})`])}) t`,
  ];
  const lowest = args.direction === SortDirection.ASC;
  // Trending collections are walked to only among those that sold in the window (below): walking the bounds
  // to them would read every collection before them.
  if (isTrending !== 1 && (!lowest || (PERIODS[period] ?? 0) >= LOWS_MIN_SECONDS)) {
    const figure = orderBy === StatisticsOrderBy.VOLUME ? 'volume' : 'sales';
    const trending = isTrending === 0 ? 0 : undefined;
    const conditions = args.chain ? [args.chain('b.chain_id')] : [];
    return {
      ...salesWalk(p, { period, now, figure, lowest, trending, trendOf: kept?.join, conditions, unbounded: sliding(filtered) }),
      fields: fields(SALES_FIELDS),
      count,
    };
  }
  return {
    sources: sliding(true),
    fields: [...SALES_FIELDS, ...TREND_FIELDS],
    count,
  };
}

/** The trend window of a period is the period, but for all: the last 24 hours, the trend window of 24h. */
const trendPeriod = (period: Period): Period => (period === 'all' ? '24h' : period);

type Hours = { from: Date | null; to: Date | null };

/** The hours of the trend window of `period` at `now`: a collection without a rollup in them has no trend volume, so is not trending. */
const trendHours = (period: Period, now: Date): Hours => ({ from: floorHour(windows(trendPeriod(period), now).trendStart), to: floorHour(now) });

function hoursCondition(p: Params, hours: Hours): string {
  const from = hours.from ? [`r.hour >= ${p.add(hours.from)}::timestamptz`] : [];
  const to = hours.to ? [`r.hour <= ${p.add(hours.to)}::timestamptz`] : [];
  return [...from, ...to].join(' AND ') || 'true';
}

/** The collections with a rollup in `hours` (an index range scan by hour, bounded by the sales in them), a subquery of their `collection_id`. */
const rollupIds = (p: Params, hours: Hours) => `(SELECT DISTINCT r.collection_id FROM collection_sales_hourly r WHERE ${hoursCondition(p, hours)})`;

/**
 * `collection_figures f` of every collection (`ids` null), or of those `ids` (a subquery of their
 * `collection_id`), each found by its key: `OFFSET 0` keeps the planner from hashing every collection's row
 * to join them. `joins`: joined on the collection's id column before.
 */
function figuresOf(ids: string | null, joins: (id: string) => string = () => ''): string {
  if (!ids) return `collection_figures f${joins('f.collection_id')}`;
  return `${ids} s${joins('s.collection_id')}
    CROSS JOIN LATERAL (SELECT * FROM collection_figures f WHERE f.collection_id = s.collection_id OFFSET 0) f`;
}

/**
 * Fewer collections not trending than this, of `collections` (SQL, the kept count), are read whole rather than
 * walked to: walking the holders' (or any) index to them reads about a page's rows times collections / others,
 * reading them reads the others, so the two cost alike at the square root of a page's rows (OTHERS_PAGE) times
 * the collections: 3,162 of 100,000.
 */
const OTHERS_PAGE = 100;
const fewOthers = (p: Params, collections: string) => `(SELECT ceil(sqrt(${p.add(OTHERS_PAGE)}::int * ${collections}))::int)`;

/** A rollup of the collection `collectionId` in `hours` (its primary key). */
const rollupOf = (p: Params, collectionId: string, hours: Hours) =>
  `SELECT 1 FROM collection_sales_hourly r WHERE r.collection_id = ${collectionId} AND ${hoursCondition(p, hours)}`;
