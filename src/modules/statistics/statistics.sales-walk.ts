import type { ListQuery } from '../../common/list-query';
import { Params } from '../../common/sql';
import { LOWS_MIN_SECONDS } from './sales-bounds';
import { periodSalesSql, salesTable, trendingColumns, trendingSql, windows } from './statistics.sql';
import { PERIODS, Period } from './statistics.types';

/** What salesWalk needs: the period and moment, the figure sorted by, the chain filter and the path without bounds. */
export interface SalesWalkArgs {
  period: Period;
  now: Date;
  figure: 'volume' | 'sales';
  /** Lowest first (the lows of `collection_sales_lows`, periods of 6 hours or more); else highest first. */
  lowest?: boolean;
  /** Conditions on `collection_sales_bounds b` (the chain filter). */
  conditions: string[];
  /**
   * Only the trending collections (1) or only the others (0), the list's filter (`t."isTrending"`): each walked
   * collection's trend figures are computed with its sales (the period is its own trend window) and the walk
   * keeps only those the filter keeps; the rows have the trend columns (statistics.sql.ts trendingColumns).
   */
  trending?: 0 | 1;
  /**
   * With `trending`, joined to the bound row of the collection `id` to give its trend figures `tv(trend, previous)`
   * (statistics.trend.ts, kept sums): the walk sums the period's sales alone. Without it, each walked
   * collection's trend figures are summed from its rollups with its sales.
   */
  trendOf?: (id: string) => string;
  /**
   * The rows as they are read without bounds (FROM items aliased `t` with `id`, `volume`, `"totalTransactions"`
   * and `volume_sort`, and the trend columns with `trending`): read instead when the period's bounds do not
   * hold at `now` (a clock behind the sweeper's).
   */
  unbounded: string[];
}

/** The record's fields a page by a period's volume or sales keeps as its ranking read them. */
const SALES_COLUMNS = 't.id, t.volume, t."totalTransactions", t.volume_sort';
const TREND_COLUMNS = 't."trendVolume", t."previousVolume", t."isTrending", t."trendingScore"';

/**
 * Statistics sorted by a sliding period's volume or sales, highest first (issue #38): the page's rows are read
 * from the collections' upper bounds of that figure in the period, kept by the writes and the sweeper
 * (`collection_sales_bounds`, migration 1765760000000-collection-sales-bounds, statistics.sales-bounds.ts):
 * only candidates have their figure summed (exactly, at the moment of reading, from their rollups and the
 * orders of the edge hours, as every other read), and the list's statement filters, orders and cuts them as
 * it would every collection, so the answer is the same.
 *
 * - The bounds hold for the period at `now` when its `since` is at or before the period's start: then no
 *   collection's figure is above its bound. They always do for a clock at or after the sweeper's; a page read
 *   with a clock behind it reads the rows without bounds (`unbounded`), as it did before the bounds.
 * - The collections are walked in the order of their bound (descending, then id): after a cursor (V, I), every
 *   one whose (bound, id) is not below it (its figure tells on which side it is), then twice `rows` of those
 *   below it, which are all past the cursor (their figures are at most their bounds). The bound rows are read
 *   first (index ranges: no plan sums the rows it skips) and only those are summed. The `rows`-th walked
 *   collection past the cursor in the page's order, (P, I) in (figure, id), is at or after the page's last
 *   row. A collection not walked can come before it only if its figure is above P, or P with an id after I;
 *   its bound is then too: the only other candidates are the collections whose (bound, id) is above (P, I),
 *   an index range past the walk. A bound of 0 is exact: past the sellers the walk reads the others by id,
 *   as the page orders them.
 *
 * Filtered by trend (`trending`), the walk reads on past the collections the filter drops: the rows it keeps
 * are walked as above, and the others are in no page. Walking the others costs their trend each: a lookup of
 * its kept sums (`trendOf`, periods of 6 hours or more), else a sum of its rollups, cheap only when the filter
 * keeps most collections (not trending).
 *
 * `countFrom`: every collection's bound row (an index) for the counts; after a cursor (V, I), a collection
 * whose (bound, id) is below (V, I) is after it too, so only the others (those up to the cursor) are summed.
 * With a kept count of the list's collections, the rows up to the cursor alone.
 */
export function salesWalk(p: Params, x: SalesWalkArgs): Required<Pick<ListQuery, 'pageFrom' | 'countFrom'>> {
  const { start } = windows(x.period, x.now);
  const w = x.lowest ? LOWEST : HIGHEST;
  const bound = `${x.figure}_${w.suffix}`;
  const sort = x.figure === 'volume' ? { column: 'volume_sort', type: 'numeric' } : { column: '"totalTransactions"', type: 'integer' };
  const periodP = p.add(x.period);
  const held = w.held(periodP, () => p.add(start), () => p.add(x.now));
  const ofPeriod = (conditions: string[]) => [`b.period = ${periodP}`, ...x.conditions, ...conditions].join(' AND ');
  // The other bound of the walked row's collection (lowest first the upper, highest first the lower one, where
  // the period keeps it), when it holds and is up to `cursor` too: then so is the figure, which lies between them.
  const other = x.lowest ? HIGHEST : (PERIODS[x.period] ?? 0) >= LOWS_MIN_SECONDS ? LOWEST : undefined;
  const otherUpTo = (cursor: string) =>
    other &&
    `(SELECT o.${x.figure}_${other.suffix} FROM ${other.table} o WHERE o.collection_id = b.collection_id AND o.period = b.period
        AND ${other.held(periodP, () => p.add(start), () => p.add(x.now))} AND (o.${x.figure}_${other.suffix}, o.collection_id) ${w.upTo} ${cursor})`;
  // A bound row up to the cursor, but one whose other bound says it is up to it: only these can be past it.
  const maybePast = (cursor: string) => {
    const told = otherUpTo(cursor);
    return told ? [`${told} IS NULL`] : [];
  };
  const trended = x.trending !== undefined;
  const COLUMNS = trended ? `${SALES_COLUMNS}, ${TREND_COLUMNS}` : SALES_COLUMNS;
  // The bound rows `b` matching `conditions` with their figures, exact at `now` (`v`): the period's sales
  // alone, or with the trend windows' (`trended`). `tail`: the select's ORDER BY and LIMIT.
  const summed = (conditions: string[], tail = '') =>
    trended && x.trendOf
      ? `(SELECT b.collection_id AS id, b.${bound} AS bound, v.volume::text AS volume, v.transactions AS "totalTransactions", v.volume AS volume_sort,
            ${trendingColumns('tv')}
          FROM ${w.table} b${x.trendOf('b.collection_id')} CROSS JOIN LATERAL ${periodSalesSql(p, x.period, x.now, 'b.collection_id')} v
          WHERE ${ofPeriod(conditions)}${tail})`
      : trended
      ? `(SELECT b.collection_id AS id, b.${bound} AS bound, COALESCE(v.volume, 0)::text AS volume, COALESCE(v.transactions, 0)::int AS "totalTransactions",
            COALESCE(v.volume, 0) AS volume_sort, ${trendingColumns('v')}
          FROM ${w.table} b LEFT JOIN LATERAL ${salesTable(p, x.period, x.now, (column) => `${column} = b.collection_id`)} v ON true
          WHERE ${ofPeriod(conditions)}${tail})`
      : `(SELECT b.collection_id AS id, b.${bound} AS bound, v.volume::text AS volume, v.transactions AS "totalTransactions", v.volume AS volume_sort
          FROM ${w.table} b CROSS JOIN LATERAL ${periodSalesSql(p, x.period, x.now, 'b.collection_id')} v
          WHERE ${ofPeriod(conditions)}${tail})`;
  // The trend filter as the walk reads it, not `t."isTrending" = 0`: the planner guesses that an equality on a
  // computed column keeps one row in 200, and would sum every collection rather than walk the bounds.
  const trendAlias = x.trendOf ? 'tv' : 'v';
  const keptByTrend = !trended ? [] : [x.trending === 1 ? trendingSql(trendAlias) : `NOT ${trendingSql(trendAlias)}`];

  const pageFrom: NonNullable<ListQuery['pageFrom']> = (filters, { after, rows: count }) => {
    // The walk reads rows in the order of their bounds, all of them after the cursor but those up to it:
    // a filter on the figures (but the trend's, which the walk applies as it reads) would make it read on
    // past the rows it drops.
    if (filters.length && !trended) throw new Error('salesWalk: a list filtered by its chain alone');
    const rows = p.add(count);
    // Twice the rows: a few walked collections whose bound is far from their figure (sales that left the
    // period within the hour, or ahead of a clock set back) do not move the threshold.
    const walkRows = p.add(2 * count);
    const cursor = after ? `(${p.add(after.value)}::${sort.type}, ${p.add(after.id)}::uuid)` : undefined;
    // The bound rows walked, an index range each: every one up to the cursor (its figure says on which side
    // it is) but those whose other bound is up to it too, then the first walkRows past it (past the cursor, as
    // their figures are). Only these are summed: page 10 after its cursor summed the 180 rows before it.
    const pastCursor = cursor ? [`(b.${bound}, b.collection_id) ${w.past} ${cursor}`] : [];
    const upToCursor = () => [`(b.${bound}, b.collection_id) ${w.upTo} ${cursor}`, ...maybePast(cursor!)].join(' AND ');
    const ordered = ` ORDER BY b.${bound} ${w.order}, b.collection_id ${w.order} LIMIT ${walkRows}::int`;
    // Filtered by trend, every walked row's figures are read as it is walked (to filter it), and `past` holds
    // the first walkRows rows the filter keeps.
    const walked = trended
      ? [
          `past AS MATERIALIZED ${summed([held, ...pastCursor, ...keptByTrend], ordered)}`,
          ...(cursor ? [`upto AS MATERIALIZED ${summed([held, upToCursor(), ...keptByTrend])}`] : []),
          `w AS MATERIALIZED (SELECT * FROM past${cursor ? ' UNION ALL SELECT * FROM upto' : ''})`,
        ]
      : [
          `past AS MATERIALIZED (SELECT b.collection_id AS id, b.${bound} AS bound FROM ${w.table} b WHERE ${ofPeriod([held, ...pastCursor])}${ordered})`,
          ...(cursor ? [`upto AS MATERIALIZED (SELECT b.collection_id AS id, b.${bound} AS bound FROM ${w.table} b WHERE ${ofPeriod([held, upToCursor()])})`] : []),
          `w AS MATERIALIZED (SELECT t.id, t.bound, v.volume::text AS volume, v.transactions AS "totalTransactions", v.volume AS volume_sort
            FROM (SELECT * FROM past${cursor ? ' UNION ALL SELECT * FROM upto' : ''}) t CROSS JOIN LATERAL ${periodSalesSql(p, x.period, x.now, 't.id')} v)`,
        ];
    // Past the walk, when it did not read to the end: the collections whose (bound, id) is before the
    // rows-th walked row after the cursor in the page's order (P, I). The walk's rows past the cursor are
    // at least walkRows, so it has one.
    const last = (column: string) => `(SELECT past.${column} FROM past ORDER BY past.bound ${w.back}, past.id ${w.back} LIMIT 1)`;
    const afterCursor = cursor ? ` WHERE (w.${sort.column}, w.id) ${w.past} ${cursor}` : '';
    const kth = (column: string) => `(SELECT w.${column} FROM w${afterCursor} ORDER BY w.${sort.column} ${w.order}, w.id ${w.order} OFFSET ${rows}::int - 1 LIMIT 1)`;
    // Filtered by trend, the rows the filter drops are dropped before their sales are summed (the list drops them
    // anyway): by a day's volume not trending at 10,000,000 assets, 1,951 of the 2,275 rows between the two.
    const reach = `SELECT ${COLUMNS} FROM ${summed([
      `(b.${bound}, b.collection_id) ${w.past} (${last('bound')}, ${last('id')})`,
      `(b.${bound}, b.collection_id) ${w.before} (${kth(sort.column)}, ${kth('id')})`,
      ...keptByTrend,
    ])} t WHERE (SELECT count(*) FROM past) >= ${walkRows}::int`;
    const unbounded = x.unbounded.map(
      (source) =>
        `(SELECT ${COLUMNS} FROM ${source} WHERE ${[`NOT ${held}`, ...filters, ...(cursor ? [`(t.${sort.column}, t.id) ${w.past} ${cursor}`] : [])].join(' AND ')}
          ORDER BY t.${sort.column} ${w.order}, t.id ${w.order} LIMIT ${rows}::int)`,
    );
    return `(WITH ${walked.join(', ')} ${[`SELECT ${COLUMNS} FROM w t`, reach, ...unbounded].join(' UNION ALL ')}) t`;
  };

  const countFrom: NonNullable<ListQuery['countFrom']> = ({ after, kept }) => {
    const cursorOf = () => after && `(${p.add(after.value)}::${sort.type}, ${p.add(after.id)}::uuid)`;
    if (trended) {
      // Every counted row's figures, its trend's with them: with a kept count, of the rows up to the cursor alone.
      const cursor = kept ? cursorOf() : undefined;
      const upTo = cursor ? [`(b.${bound}, b.collection_id) ${w.upTo} ${cursor}`] : [];
      const sources = [`${summed([held, ...upTo])} t`, ...x.unbounded.map((source) => `(SELECT ${COLUMNS} FROM ${source} WHERE NOT ${held}) t`)];
      return `(${sources.map((source) => `SELECT ${COLUMNS} FROM ${source}`).join(' UNION ALL ')}) t`;
    }
    const exact = () => `(SELECT v.${x.figure === 'volume' ? 'volume' : 'transactions'} FROM ${periodSalesSql(p, x.period, x.now, 'b.collection_id')} v)`;
    const cursor = cursorOf();
    // With a kept count, the rows up to the cursor: only those whose bound is not past it can be, summed.
    const upTo = kept && cursor ? [`(b.${bound}, b.collection_id) ${w.upTo} ${cursor}`] : [];
    // Up to the cursor by the other bound too: up to it whatever the figure, counted as that bound.
    const told = upTo.length ? otherUpTo(cursor!) : undefined;
    const value = upTo.length ? (told ? `COALESCE(${told}, ${exact()})` : exact()) : cursor ? `CASE WHEN (b.${bound}, b.collection_id) ${w.past} ${cursor} THEN b.${bound} ELSE ${exact()} END` : `b.${bound}`;
    const [transactions, volume] = x.figure === 'volume' ? ['NULL::int', value] : [value, 'NULL::numeric'];
    const sources = [
      `(SELECT b.collection_id AS id, NULL::text AS volume, ${transactions} AS "totalTransactions", ${volume} AS volume_sort FROM ${w.table} b WHERE ${ofPeriod([held, ...upTo])}) t`,
      ...x.unbounded.map((source) => `(SELECT ${COLUMNS} FROM ${source} WHERE NOT ${held}) t`),
    ];
    return `(${sources.map((source) => `SELECT ${COLUMNS} FROM ${source}`).join(' UNION ALL ')}) t`;
  };
  return { pageFrom, countFrom };
}

/** How a walk reads its bounds: which, in which order, and when they hold for a period's start and moment. */
interface Walk {
  table: string;
  /** The bound's columns are `<figure>_<suffix>`. */
  suffix: 'high' | 'low';
  /** The page's order, and back. */
  order: 'DESC' | 'ASC';
  back: 'ASC' | 'DESC';
  /** `a ${past} b`: a comes after b in the page's order. */
  past: '<' | '>';
  /** `a ${before} b`: a comes before b; `a ${upTo} b`: a is b or before it. */
  before: '<' | '>';
  upTo: '<=' | '>=';
  /** Whether the bounds hold at the page's moment; `start` and `now` add the period's start and the moment as parameters. */
  held: (period: string, start: () => string, now: () => string) => string;
}

const sinceOf = (period: string) => `(SELECT bw.since FROM collection_sales_bound_windows bw WHERE bw.period = ${period})`;

/** Highest first: the upper bounds hold while the period's start is at or after `since` (its hours are all counted). */
const HIGHEST: Walk = {
  table: 'collection_sales_bounds',
  suffix: 'high',
  order: 'DESC',
  back: 'ASC',
  past: '<',
  before: '>',
  upTo: '>=',
  held: (period, start) => `(${sinceOf(period)} <= ${start()}::timestamptz) IS TRUE`,
};

/**
 * Lowest first: the lows count the hours [since + 2 h, since + length - 1 h) (sales-bounds.ts lowHours),
 * which hold while they lie inside the period [start, now).
 */
const LOWEST: Walk = {
  table: 'collection_sales_lows',
  suffix: 'low',
  order: 'ASC',
  back: 'DESC',
  past: '>',
  before: '<',
  upTo: '<=',
  held: (period, start, now) =>
    `(SELECT bw.since + interval '2 hours' >= ${start()}::timestamptz AND bw.since + make_interval(secs => bw.seconds) - interval '1 hour' <= ${now()}::timestamptz
      FROM collection_sales_bound_windows bw WHERE bw.period = ${period}) IS TRUE`,
};
