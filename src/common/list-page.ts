import { DataSource } from 'typeorm';
import { cursorValueSql, decodePosition, encodeCursor, Page, Position } from './pagination';
import { unionOfRanges } from './sql';
import { countColumn, counting, Directed, directed, keysetCondition, ListQuery, orderClause, rowsFrom, totalColumns, totalCounts, whereClause } from './list-query';

/**
 * The statements of a list's pages, written of a ListQuery (list-query.ts): one page (fetchPage), the same
 * page for many parents at once (fetchPagesByParent), and the Page their rows make.
 */

/**
 * The page of a list's rows. With `countRemaining: 'total'` (totalColumns) the rows come with the counts
 * even when the page is empty: then as one row of counts alone, without `__in`.
 */
function toPage<T>(rows: Record<string, unknown>[], position: Position, q: Directed): Page<T> {
  const counts = rows[0];
  if (q.args.countRemaining === 'total' && counts && !counts.__in) rows = [];
  let remaining: number;
  let total: number | undefined;
  if (q.args.countRemaining === false) {
    // One row past the page was read to tell whether more follow; `remaining` is not selected, so 1 stands
    // for "some" and is never shown.
    remaining = rows.length > q.args.limit ? 1 : 0;
    if (remaining) rows.length = q.args.limit;
  } else {
    const fromPosition = counts ? Number(counts.__total) : 0;
    remaining = Math.max(0, fromPosition - position.offset - rows.length);
    if (q.args.countRemaining === 'total') total = position.after ? Number(counts.__all) : fromPosition;
  }
  const cursorAt = connectionCursors(rows, q);
  const cursor = remaining > 0 && rows.length ? cursorAt(rows.length - 1) : null;
  // The helper columns (__sort, __total, __parent) stay on the rows: no field reads them, and deleting
  // them would turn every row into a slow dictionary-mode object.
  return { cursor, remaining, result: rows as T[], connection: { cursorAt, hasPrevious: position.offset > 0 || position.after !== undefined, total } };
}

/**
 * The cursor of each row of a page: its sort value and id, so that `after` it the list goes on right
 * after that row. The ids are taken now: a list may drop `id` from its rows before they are returned
 * (statistics records have none).
 */
function connectionCursors(rows: Record<string, unknown>[], q: Directed): (index: number) => string {
  const ids = rows.map((row) => String(row.id));
  return (index) => encodeCursor(q.orderBy, q.args.direction, rows[index].__sort, ids[index]);
}

/** The sort value of each row, for the next cursor. */
const sortColumn = (q: ListQuery): string => `${cursorValueSql(q.sort)} AS "__sort"`;

/** LIMIT of a page: one row more when that row stands in for the count. */
function pageLimit(q: ListQuery): string {
  return q.params.add(q.args.limit + (q.args.countRemaining === false ? 1 : 0));
}

/** The WHERE of a page: the list's filters, and after a cursor, the rows past it; and the filters alone (for `__all`). */
function pageWhere(q: Directed, filters: string[], position: Position): { whereSql: string; filterSql?: string } {
  const filterSql = whereClause(filters);
  if (!position.after) return { whereSql: filterSql };
  return { whereSql: whereClause([...filters, keysetCondition(q, position.after)]), filterSql };
}

/**
 * One page of a list in one statement: the rows, the sort value of each (for the next cursor) and the
 * count of all matching rows from which `remaining` follows (when the request selects it).
 */
export async function fetchPage<T>(ds: DataSource, query: ListQuery): Promise<Page<T>> {
  const q = directed(query);
  const position = decodePosition(q.args, q.orderBy, q.sort, q.idType);
  const c = counting(q, position);
  const { whereSql, filterSql } = pageWhere(q, q.where, position);
  const select = `SELECT ${q.columns}, ${sortColumn(q)}`;
  const limit = pageLimit(q);
  const offset = q.params.add(position.offset);
  const from = q.pageFrom
    ? `${q.pageFrom(q.where, { after: position.after, rows: position.offset + q.args.limit + 1, direction: q.args.direction })}${whereSql}`
    : rowsFrom(q, whereSql, { rows: `${limit}::int + ${offset}::int`, direction: q.args.direction });
  const rest = ` FROM ${from} ORDER BY ${orderClause(q)} LIMIT ${limit} OFFSET ${offset}`;
  const sql =
    q.args.countRemaining === 'total'
      ? `SELECT x.*, n.* FROM (${totalCounts(c, whereSql, filterSql, position)}) n LEFT JOIN LATERAL (${select}, true AS "__in"${rest}) x ON true`
      : `${select}${countColumn(c, whereSql, position, q.countAllRead)}${rest}`;
  const rows: Record<string, unknown>[] = await ds.query(q.with?.length ? `WITH ${q.with.join(', ')} ${sql}` : sql, q.params.values);
  return toPage<T>(rows, position, q);
}

export type PageParent = { column: string } | { belongs: (p: string) => string | readonly string[]; row: string };

/**
 * What the pages of fetchPagesByParent read for the parent `p`: `from` (the list's, of the row `row`) and how
 * a row belongs to `p`; by disjoint ranges (an order held by its seller, then by its buyer, the later ranges
 * leaving out the rows an earlier one holds), their union (common/sql.ts unionOfRanges), each row once. An OR
 * of the columns was one walk of the list's index (ix_orders_created) filtered by them.
 */
function ofParent(parent: PageParent, from: string): { from: string; condition?: string } {
  if ('column' in parent) return { from, condition: `${parent.column} = p.id` };
  const held = parent.belongs('p');
  return typeof held === 'string' ? { from, condition: held } : { from: `${unionOfRanges(from, parent.row, held)} ${parent.row}` };
}

/**
 * The same page for many parents at once (e.g. the first 20 assets of each of 20 collections), in one
 * statement: a LATERAL subquery per parent id, so each parent gets its own limit, order and count. The
 * counts are made first, once per parent, in a materialized CTE: a count in a lateral join of its own
 * could be planned again per row of the pages, as fetchPage's could. `parent.column`: the column that
 * holds the parent's id. Or `parent.belongs`: how a row `row` belongs to the parent's row `p`, whose key is
 * `p.id` (a read model's `pagesOf`: a condition, or disjoint ranges, as an order belongs to its seller and
 * its buyer).
 */
export async function fetchPagesByParent<T>(
  ds: DataSource,
  query: ListQuery,
  parent: PageParent & { ids: readonly string[]; sqlType: 'uuid' | 'text' },
): Promise<Map<string, Page<T>>> {
  const directedQuery = directed(query);
  const belonging = ofParent(parent, directedQuery.from);
  const q = { ...directedQuery, from: belonging.from };
  const position = decodePosition(q.args, q.orderBy, q.sort, q.idType);
  const ids = q.params.add(parent.ids);
  const filters = belonging.condition ? [belonging.condition, ...q.where] : q.where;
  const { whereSql, filterSql } = pageWhere(q, filters, position);
  if (q.sources || q.with) throw new Error('fetchPagesByParent reads one source, without common table expressions');
  if (q.pageFrom && !belonging.condition) throw new Error('fetchPagesByParent reads a page from pageFrom for a parent of one condition');
  const c = counting(q, position);
  const parents = `unnest(${ids}::${parent.sqlType}[]) AS p(id)`;
  const limit = pageLimit(q);
  const offset = q.params.add(position.offset);
  // pageFrom is written inside each parent's page: its relation may read the parent's id (`p.id`).
  const from = q.pageFrom ? q.pageFrom(filters, { after: position.after, rows: position.offset + q.args.limit + 1, direction: q.args.direction }) : q.from;
  const page = (head: string) => `(SELECT ${q.columns}, ${head}${sortColumn(q)} FROM ${from}${whereSql} ORDER BY ${orderClause(q)} LIMIT ${limit} OFFSET ${offset}) x`;
  let sql: string;
  if (q.args.countRemaining === 'total') {
    sql =
      `WITH p AS MATERIALIZED (SELECT p.id, ${totalColumns(c, whereSql, filterSql, position)} FROM ${parents}) ` +
      `SELECT x.*, p.id AS "__parent", p."__total"${filterSql === undefined ? '' : ', p."__all"'} FROM p ` +
      `LEFT JOIN LATERAL ${page('true AS "__in", ')} ON true`;
  } else {
    sql =
      (q.args.countRemaining === false
        ? `SELECT x.* FROM ${parents}`
        : `WITH p AS MATERIALIZED (SELECT p.id${countColumn(c, whereSql, position)} FROM ${parents}) SELECT x.*, p."__total" FROM p`) +
      ` CROSS JOIN LATERAL ${page('p.id AS "__parent", ')}`;
  }
  const rows: Record<string, unknown>[] = await ds.query(sql, q.params.values);
  const grouped = new Map<string, Record<string, unknown>[]>();
  for (const row of rows) {
    const key = String(row.__parent);
    let list = grouped.get(key);
    if (!list) grouped.set(key, (list = []));
    list.push(row);
  }
  const pages = new Map<string, Page<T>>();
  for (const id of parent.ids) pages.set(id, toPage<T>(grouped.get(id) ?? [], position, q));
  return pages;
}
