import { directionOf, SortDirection } from './pagination';
import type { IdType, PageArgs, Position, SortKey } from './pagination';
import type { Params } from './sql';

/**
 * A list query (ListQuery: its rows, filters, sort and counts) and the SQL its pages are written of: the
 * keyset after a cursor, the order, the rows from one FROM item or several sources, and the counts of
 * `remaining` and `totalCount`. The statements of a page are list-page.ts's; the SQL plans' first pages
 * (app/graphql/sql-plan/page.ts) are written of the same pieces.
 */

/** A list query whose direction is resolved (directionOf), and its kept count written when the request counts. */
export type Directed = ListQuery & { args: ListQuery['args'] & { direction: SortDirection }; count?: string };

export const directed = (q: ListQuery): Directed => ({
  ...q,
  args: { ...q.args, direction: directionOf(q.args.direction, q.sort) },
  count: q.args.countRemaining === false || typeof q.count !== 'function' ? (q.count as string | undefined) : q.count(),
});

export interface ListQuery {
  /** `FROM` clause with the main table aliased, e.g. `assets t`. */
  from: string;
  /**
   * Instead of `from` (fetchPage only): disjoint sources of the list's rows, each a `FROM` clause aliased as
   * the list's row (the alias of `idExpression`: `t.id`, `t`) with the same columns, each filtered, sorted and
   * cut to the page on its own (so each can walk an index of its own) before they are merged.
   */
  sources?: readonly string[];
  /** Select list of the item columns (see selectColumns). */
  columns: string;
  /** A column the list is filtered to one value of, leading an index ahead of the sort: a later page's keyset compares it first (ReadSort.ledBy). */
  keysetLead?: KeysetLead;
  /** Primary key expression used to break ties, e.g. `t.id`. */
  idExpression: string;
  /** Type of that key: uuid (default), text (categories, tags) or bigint (event positions). */
  idType?: IdType;
  where: string[];
  params: Params;
  sort: SortKey;
  orderBy: string;
  args: PageArgs;
  /**
   * fetchPage counts `remaining` by `count(*) OVER ()` on the page's own rows: a search reads all of its (at
   * most 1,000) matching rows to rank them anyway, and a count of its own would find them all a second time.
   */
  countAllRead?: boolean;
  /**
   * The count of every row matching `where` without reading them (counts the writes keep), when there is
   * one: `remaining` after a cursor is then that count less the rows up to the cursor, which a later page
   * reads by the sort's index as far as the cursor, not to the end of the list. A function: written only
   * when the request counts (its parameters are added then: PostgreSQL refuses a parameter left unused),
   * undefined when there is no kept count for the request's filters.
   */
  count?: string | (() => string | undefined);
  /**
   * Where the page's rows are read from instead of `from` (its counts still read `from`): `from` restricted
   * to a relation that holds at least the first `rows` rows after `after` in the list's order, found by an
   * index (listed assets by current price: listing.sql.ts listedByPriceSql). The page's statement then
   * filters, orders and limits those few as it would every row, so its answer is the same. For pages by
   * parent (fetchPagesByParent) it is written inside each parent's page, and may read the parent's id `p.id`.
   */
  pageFrom?: (where: string[], position: { after?: { value: unknown; id: string }; rows: number; direction: SortDirection }) => string;
  /**
   * Where the page's counts read the rows from instead of `from` (or `sources`), for the page's position:
   * written only when the page counts (its parameters are added then); undefined: `from`. A FROM item whose
   * rows are aliased as `from`'s, holding at least the rows counted, with the columns the list's conditions
   * read. `kept`: the list has a kept count (`count`), so after a cursor only the rows up to it are counted
   * (on a sort with nulls, after a null cursor, the later rows: all nulls): listed assets by current price
   * read them through the price indexes as the page does (listing.sql.ts listedUpToSql). Else every matching
   * row is counted (after the cursor, and all of them for `totalCount`): statistics by floor price price a
   * floor only where the cursor's condition reads it and no bound tells which side of the cursor it is on.
   */
  countFrom?: (position: { after?: { value: unknown; id: string }; direction: SortDirection; kept: boolean }) => string | undefined;
  /**
   * Common table expressions of the statement (fetchPage only), `name AS (...)`, which its sources, page and
   * counts may read: computed once for all of them (statistics by trend: the few hours' differences from
   * the kept trend sums, statistics.trend.ts).
   */
  with?: readonly string[];
}

/** A column `expression` equal to `value` on every row of a list (ListQuery.keysetLead). */
export interface KeysetLead {
  expression: string;
  value: unknown;
  cast?: string;
}

/**
 * `(sort, id) op (value, id)` of a keyset, led by the list's keysetLead when it has one (on a sort without
 * nulls): `(lead, sort, id) op (its value, value, id)`, which the lead's own index serves as a range.
 */
function keysetTuple(q: Directed, op: string, value: string, id: string): string {
  const lead = q.keysetLead && !q.sort.nullable ? q.keysetLead : undefined;
  if (!lead) return `(${q.sort.expression}, ${q.idExpression}) ${op} (${value}, ${id})`;
  return `(${lead.expression}, ${q.sort.expression}, ${q.idExpression}) ${op} (${q.params.add(lead.value)}${lead.cast ? `::${lead.cast}` : ''}, ${value}, ${id})`;
}

export function keysetCondition(q: Directed, after: NonNullable<Position['after']>): string {
  const op = q.args.direction === SortDirection.ASC ? '>' : '<';
  // Sorted by the key itself (event positions): one comparison, which an index on (parent, key) serves.
  if (q.sort.expression === q.idExpression) return `${q.idExpression} ${op} ${q.params.add(after.id)}::${q.idType ?? 'uuid'}`;
  const { expression, sqlType, nullable } = q.sort;
  const id = q.params.add(after.id);
  if (after.value === null) {
    // Nulls sort last: after a null, only later nulls remain.
    return `(${expression} IS NULL AND ${q.idExpression} ${op} ${id}::${q.idType ?? 'uuid'})`;
  }
  const tuple = keysetTuple(q, op, `${q.params.add(after.value)}::${sqlType}`, `${id}::${q.idType ?? 'uuid'}`);
  return nullable ? `(${tuple} OR ${expression} IS NULL)` : tuple;
}

/** The rows up to the cursor, it included: what keysetCondition leaves out (on a sort with nulls, of a cursor with a value: no null). */
function upToCursor(q: Directed, after: NonNullable<Position['after']>): string {
  const op = q.args.direction === SortDirection.ASC ? '<=' : '>=';
  const id = `${q.params.add(after.id)}::${q.idType ?? 'uuid'}`;
  if (q.sort.expression === q.idExpression) return `${q.idExpression} ${op} ${id}`;
  return keysetTuple(q, op, `${q.params.add(after.value)}::${q.sort.sqlType}`, id);
}

/** A list's ORDER BY: the sort key, then the id to break ties, both in the page's direction. */
export function orderBySql(sort: SortKey, idExpression: string, direction: SortDirection): string {
  const dir = direction === SortDirection.ASC ? 'ASC' : 'DESC';
  // NULLS LAST only where nulls can occur: on a NOT NULL key it would stop an index from giving the order.
  return `${sort.expression} ${dir}${sort.nullable ? ' NULLS LAST' : ''}, ${idExpression} ${dir}`;
}

export function orderClause(q: Directed): string {
  return orderBySql(q.sort, q.idExpression, q.args.direction);
}

/**
 * The count of all matching rows (when `remaining` is asked), as a query of its own beside the page's:
 * `count(*) OVER ()` on the page query made PostgreSQL read every matching row whole before the LIMIT
 * (370 ms for a page of a collection of 100,000 assets); a count alone reads only an index. Uncorrelated
 * in the select list, it is an InitPlan: computed once whatever the plan. Joined to the page instead
 * (`CROSS JOIN (SELECT count(*) ...)`), it was computed again for every row of the page's scan whenever
 * the planner expected one row there: a page of a collection whose 10,000 assets came after the last
 * ANALYZE ran past the client's 30 s timeout (by owner, or by current price), its count read per row.
 * `allRead` (ListQuery's countAllRead): the page reads every matching row anyway, so the window counts them.
 */
export function countColumn(q: Directed, whereSql: string, position: Position, allRead = false): string {
  if (q.args.countRemaining === false) return '';
  return `, ${rowsFromPosition(q, whereSql, position, q.count, allRead ? 'count(*) OVER ()' : undefined)} AS "__total"`;
}

/** Rows counted by a walk as far as this many; more, by a count of another kind. */
export const COUNT_WALK = 10_000;

/** The count of the rows `walk` selects (a SELECT, in the order to walk them) as far as `most` + 1 of them. */
export const walkOf = (walk: string, most = COUNT_WALK): string => `(SELECT count(*) FROM (${walk} LIMIT ${most + 1}) w)`;

/**
 * The count of the rows `walk` selects (a SELECT, in the order to walk them), exact either way: by the walk
 * itself when it reads at most COUNT_WALK rows, else `otherwise` (SQL of the same count, for when they are many).
 */
function walkedCount(walk: string, otherwise: string): string {
  // The walk read once (a CASE naming it twice read it twice).
  return `(SELECT CASE WHEN w.n <= ${COUNT_WALK} THEN w.n ELSE ${otherwise} END FROM (SELECT ${walkOf(walk)} AS n OFFSET 0) w)`;
}

/**
 * The count of the list's rows matching `whereSql` (its rows up to a cursor). By a walk of the list's index from the
 * cursor back to the list's start, for as far as COUNT_WALK rows: a plain count let the planner guess from
 * the cursor's sort value alone, and where many rows share it (a batch of offers made in one statement) it
 * guessed every one of them and counted them by a scan of the table (1-1.7 s at 5,000,000 offers for page 10
 * of a chain's, the active and the ETH offers). The walk starts at the cursor, where the index finds it by
 * the whole (value, id): walked from the list's start, the scan stops only where the sort value passes the
 * cursor's, through every row that shares it (65 ms for 500,000 offers made together). Past COUNT_WALK (a
 * cursor far down the list), all of them are counted.
 */
function countUpTo(q: Directed, whereSql: string): string {
  const back = q.args.direction === SortDirection.ASC ? SortDirection.DESC : SortDirection.ASC;
  // From sources, each walked back from the cursor on its own (PostgreSQL appends a union and sorts it whole).
  const walked = rowsFrom(q, whereSql, { rows: String(COUNT_WALK + 1), direction: back });
  return walkedCount(`SELECT 1 FROM ${walked} ORDER BY ${orderBySql(q.sort, q.idExpression, back)}`, countAll(q, whereSql));
}

/**
 * The rows from the position on, from the list's kept count (ListQuery.count) less the rows up to the
 * cursor; undefined without a kept count. On a sort with nulls (sorted last), only with `countFrom`: the
 * rows up to a cursor with a value are none of them null, and after a null cursor the rows left are the
 * later nulls, counted as such.
 */
function keptCount(q: Directed, position: Position, count = q.count): string | undefined {
  if (count === undefined) return undefined;
  const after = position.after;
  if (!after) return count;
  const from = q.countFrom?.({ after, direction: q.args.direction, kept: true });
  if (from === undefined) return q.sort.nullable ? undefined : `(${count} - ${countUpTo(q, whereClause([...q.where, upToCursor(q, after)]))})`;
  // After a null, the later nulls, counted: at most the kept count, which is written for the request anyway
  // (PostgreSQL refuses a statement that leaves one of its parameters unused).
  return after.value === null
    ? `LEAST(${count}, (SELECT count(*) FROM ${from}${whereClause([...q.where, keysetCondition(q, after)])}))`
    : `(${count} - (SELECT count(*) FROM ${from}${whereClause([...q.where, upToCursor(q, after)])}))`;
}

/**
 * The rows from the page's position on: the kept count when there is one (keptCount), else counted. A kept
 * count that cannot say it (a nullable sort after a cursor) bounds the counted rows, so its parameters, written
 * for the request, are used (PostgreSQL refuses a statement that leaves one unused: page 2 of collections by
 * total_supply, a kept count by chain, answered 500).
 */
function rowsFromPosition(q: Directed, whereSql: string, position: Position, count = q.count, counted = countAll(q, whereSql)): string {
  return keptCount(q, position, count) ?? (count === undefined ? counted : `LEAST(${count}, ${counted})`);
}

/**
 * The counts of a page that answers `totalCount` (`countRemaining: 'total'`): the rows from its position on
 * (`__total`, for `remaining`) and, when the position is a cursor, every row matching the filters
 * (`__all`). They are made before the page and joined to it (`LEFT JOIN LATERAL` the page): so they come
 * even when the page is empty, and are made once (a one-row relation, or once per parent) before the rows.
 */
export function totalColumns(q: Directed, whereSql: string, filterSql: string | undefined, position: Position): string {
  const all = filterSql === undefined ? '' : `, ${q.count ?? countAll(q, filterSql)} AS "__all"`;
  return `${rowsFromPosition(q, whereSql, position)} AS "__total"${all}`;
}

/**
 * totalColumns of a root list, as a SELECT: both counts from a kept count (after a cursor) read it once (within a
 * price range it walks an index: naming it twice walked it twice).
 */
export function totalCounts(q: Directed, whereSql: string, filterSql: string | undefined, position: Position): string {
  if (q.count === undefined || filterSql === undefined) return `SELECT ${totalColumns(q, whereSql, filterSql, position)}`;
  return `SELECT ${rowsFromPosition(q, whereSql, position, 'k.n')} AS "__total", k.n AS "__all" FROM (SELECT ${q.count} AS n OFFSET 0) k`;
}

/** The list as its counts read it when they count every matching row: from `countFrom`, when it answers (ListQuery.countFrom). */
export function counting(q: Directed, position: Position): Directed {
  if (q.args.countRemaining === false || q.count !== undefined) return q;
  const from = q.countFrom?.({ after: position.after, direction: q.args.direction, kept: false });
  return from === undefined ? q : { ...q, from, sources: undefined };
}

/** A list's rows as the SQL of its pages reads them (ListQuery's): one FROM item or parts read apart, sorted over `idExpression`'s row. */
export type ListRows = Pick<ListQuery, 'from' | 'sources' | 'idExpression' | 'sort'>;

/**
 * The list's rows matching `whereSql`, as a `FROM` item aliased as `from`'s row, for every page written
 * (fetchPage's, fetchPagesByParent's and the SQL plans', app/graphql/sql-plan/page.ts). From several sources
 * (ListQuery.sources), each is cut to its first `cut.rows` rows in `cut.direction` (the page's) when given: a
 * page of the merge needs no more.
 */
export function rowsFrom(q: ListRows, whereSql: string, cut?: { rows: string; direction: SortDirection }): string {
  if (!q.sources) return `${q.from}${whereSql}`;
  const row = q.idExpression.split('.')[0];
  const order = cut ? ` ORDER BY ${orderBySql(q.sort, q.idExpression, cut.direction)} LIMIT ${cut.rows}` : '';
  return `(${q.sources.map((source) => `(SELECT ${row}.* FROM ${source}${whereSql}${order})`).join(' UNION ALL ')}) ${row}`;
}

/** The count of every row of the list matching `whereSql`. */
export const countAll = (q: ListRows, whereSql: string): string => `(SELECT count(*) FROM ${rowsFrom(q, whereSql)})`;

export const whereClause = (conditions: string[]) => (conditions.length ? ` WHERE ${conditions.join(' AND ')}` : '');

/**
 * The rows of a first page that a SQL plan answers (app/graphql/sql-plan/page.ts), as a ListQuery states a
 * list's: one FROM item or parts read apart, `where`, the sort over the row `alias`, so that its statement is
 * written as fetchPage writes one. `args`: the list's. `count`: how many rows match, when something cheaper
 * than counting them says it exactly; it may add a parameter, so it is called only when used (a named
 * statement has as many as its text names). `countAllRead`: every matching row is read to be ranked (a
 * search's candidates), counted by a window.
 */
export interface PageRows extends ListRows {
  alias: string;
  where: string[];
  args: Record<string, unknown>;
  count?: () => string;
  countAllRead?: boolean;
}

/**
 * A first page's SQL as fetchPage writes a page's: its rows with their direction resolved (the one given, else
 * the sort's default), FROM the page's rows (cut to the page in each of their parts), ORDER BY, LIMIT, and the
 * count `remaining` and a cursor follow from: every matching row when `remaining` is asked (`all`); for a
 * cursor alone, whether a row follows the page is all it takes, so at most limit + 1 rows are counted, as the
 * resolvers read one row past the page (PageArgs.countRemaining false): counting the 10,000 orders for F3's
 * cursor was most of its statement's time.
 */
export function firstPageSql(given: PageRows, all: boolean) {
  const direction = directionOf(given.args.direction as SortDirection | null | undefined, given.sort);
  const r: PageRows = { ...given, args: { ...given.args, direction } };
  const limit = r.args.limit as number;
  const where = whereClause(r.where);
  const count = () => (r.count ? r.count() : all ? countAll(r, where) : walkOf(`SELECT 1 FROM ${rowsFrom(r, where)}`, limit));
  return { r, sort: r.sort, count, pageFrom: rowsFrom(r, where, { rows: String(limit), direction }), order: orderBySql(r.sort, r.idExpression, direction), limit };
}
