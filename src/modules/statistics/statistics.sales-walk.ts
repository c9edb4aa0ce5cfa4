import type { ListQuery } from '../../common/pagination';
import { Params } from '../../common/sql';
import { periodSalesSql, windows } from './statistics.sql';
import type { Period } from './statistics.types';

/** What salesWalk needs: the period and moment, the figure sorted by, the chain filter and the path without bounds. */
export interface SalesWalkArgs {
  period: Period;
  now: Date;
  figure: 'volume' | 'sales';
  /** Conditions on `collection_sales_bounds b` (the chain filter). */
  conditions: string[];
  /**
   * The rows as they are read without bounds (FROM items aliased `t` with `id`, `volume`, `"totalTransactions"`
   * and `volume_sort`): read instead when the period's bounds do not hold at `now` (a clock behind the sweeper's).
   */
  unbounded: string[];
}

/** The record's fields a page by a period's volume or sales keeps as its ranking read them. */
const COLUMNS = 't.id, t.volume, t."totalTransactions", t.volume_sort';

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
 * `countFrom`: every collection's bound row (an index) for the counts; after a cursor (V, I), a collection
 * whose (bound, id) is below (V, I) is after it too, so only the others (those up to the cursor) are summed.
 */
export function salesWalk(p: Params, x: SalesWalkArgs): Required<Pick<ListQuery, 'pageFrom' | 'countFrom'>> {
  const { start } = windows(x.period, x.now);
  const high = x.figure === 'volume' ? 'volume_high' : 'sales_high';
  const sort = x.figure === 'volume' ? { column: 'volume_sort', type: 'numeric' } : { column: '"totalTransactions"', type: 'integer' };
  const periodP = p.add(x.period);
  const held = `((SELECT bw.since FROM collection_sales_bound_windows bw WHERE bw.period = ${periodP}) <= ${p.add(start)}::timestamptz) IS TRUE`;
  const ofPeriod = (conditions: string[]) => [`b.period = ${periodP}`, ...x.conditions, ...conditions].join(' AND ');
  const summed = (conditions: string[]) =>
    `(SELECT b.collection_id AS id, b.${high} AS high, v.volume::text AS volume, v.transactions AS "totalTransactions", v.volume AS volume_sort
      FROM collection_sales_bounds b CROSS JOIN LATERAL ${periodSalesSql(p, x.period, x.now, 'b.collection_id')} v
      WHERE ${ofPeriod(conditions)})`;

  const pageFrom: NonNullable<ListQuery['pageFrom']> = (filters, { after, rows: count }) => {
    // The walk reads rows in the order of their bounds, all of them after the cursor but those up to it:
    // a filter on the figures would make it read on past the rows it drops.
    if (filters.length) throw new Error('salesWalk: a list filtered by its chain alone');
    const rows = p.add(count);
    // Twice the rows: a few walked collections whose bound is far above their figure (sales that left the
    // period within the hour, or ahead of a clock set back) do not move the threshold.
    const walkRows = p.add(2 * count);
    const cursor = after ? `(${p.add(after.value)}::${sort.type}, ${p.add(after.id)}::uuid)` : undefined;
    // The bound rows walked, an index range each: every one up to the cursor (its figure says on which side
    // it is), then the first walkRows past it (below the cursor, as their figures are). Only these are summed.
    const walked = [
      `below AS MATERIALIZED (SELECT b.collection_id AS id, b.${high} AS high FROM collection_sales_bounds b
        WHERE ${ofPeriod([held, ...(cursor ? [`(b.${high}, b.collection_id) < ${cursor}`] : [])])}
        ORDER BY b.${high} DESC, b.collection_id DESC LIMIT ${walkRows}::int)`,
      ...(cursor ? [`upto AS MATERIALIZED (SELECT b.collection_id AS id, b.${high} AS high FROM collection_sales_bounds b WHERE ${ofPeriod([held, `(b.${high}, b.collection_id) >= ${cursor}`])})`] : []),
      `w AS MATERIALIZED (SELECT t.id, t.high, v.volume::text AS volume, v.transactions AS "totalTransactions", v.volume AS volume_sort
        FROM (SELECT * FROM below${cursor ? ' UNION ALL SELECT * FROM upto' : ''}) t CROSS JOIN LATERAL ${periodSalesSql(p, x.period, x.now, 't.id')} v)`,
    ];
    // Past the walk, when it did not read to the end: the collections whose (bound, id) is above the rows-th
    // walked row after the cursor in the page's order (P, I). The walk's rows past the cursor are at least
    // walkRows, so it has one.
    const last = (column: string) => `(SELECT below.${column} FROM below ORDER BY below.high ASC, below.id ASC LIMIT 1)`;
    const afterCursor = cursor ? ` WHERE (w.${sort.column}, w.id) < ${cursor}` : '';
    const kth = (column: string) => `(SELECT w.${column} FROM w${afterCursor} ORDER BY w.${sort.column} DESC, w.id DESC OFFSET ${rows}::int - 1 LIMIT 1)`;
    const reach = `SELECT ${COLUMNS} FROM ${summed([
      `(b.${high}, b.collection_id) < (${last('high')}, ${last('id')})`,
      `(b.${high}, b.collection_id) > (${kth(sort.column)}, ${kth('id')})`,
    ])} t WHERE (SELECT count(*) FROM below) >= ${walkRows}::int`;
    const unbounded = x.unbounded.map(
      (source) =>
        `(SELECT ${COLUMNS} FROM ${source} WHERE ${[`NOT ${held}`, ...(cursor ? [`(t.${sort.column}, t.id) < ${cursor}`] : [])].join(' AND ')}
          ORDER BY t.${sort.column} DESC, t.id DESC LIMIT ${rows}::int)`,
    );
    return `(WITH ${walked.join(', ')} ${[`SELECT ${COLUMNS} FROM w t`, reach, ...unbounded].join(' UNION ALL ')}) t`;
  };

  const countFrom: NonNullable<ListQuery['countFrom']> = ({ after }) => {
    const exact = () => `(SELECT v.${x.figure === 'volume' ? 'volume' : 'transactions'} FROM ${periodSalesSql(p, x.period, x.now, 'b.collection_id')} v)`;
    const value = after
      ? `CASE WHEN (b.${high}, b.collection_id) < (${p.add(after.value)}::${sort.type}, ${p.add(after.id)}::uuid) THEN b.${high} ELSE ${exact()} END`
      : `b.${high}`;
    const [transactions, volume] = x.figure === 'volume' ? ['NULL::int', value] : [value, 'NULL::numeric'];
    const sources = [
      `(SELECT b.collection_id AS id, NULL::text AS volume, ${transactions} AS "totalTransactions", ${volume} AS volume_sort FROM collection_sales_bounds b WHERE ${ofPeriod([held])}) t`,
      ...x.unbounded.map((source) => `(SELECT ${COLUMNS} FROM ${source} WHERE NOT ${held}) t`),
    ];
    return `(${sources.map((source) => `SELECT ${COLUMNS} FROM ${source}`).join(' UNION ALL ')}) t`;
  };
  return { pageFrom, countFrom };
}
