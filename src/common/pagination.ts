import { ArgsType, Extensions, Field, Int, ObjectType, registerEnumType } from 'type-graphql';
import type { ClassType } from 'type-graphql';
import type { GraphQLResolveInfo } from 'graphql';
import { DataSource } from 'typeorm';
import { selectedFields } from './graphql/selection';
import { edgesOf, edgeType, PageConnection, PageInfo, pageInfoOf, totalCountOf } from './connection';
import type { Edge } from './connection';
import { BadRequestError } from './errors';
import { stringProblem } from './limits';
import { base64urlSql, isoSql, Params, unionOfRanges } from './sql';

export enum SortDirection {
  ASC = 'asc',
  DESC = 'desc',
}
registerEnumType(SortDirection, { name: 'SortDirection' });

export const DEFAULT_LIMIT = 20;

/** What a list's `direction` argument says of its default (the same words for every list, both doors). */
export const DIRECTION_DESCRIPTION = 'ASC or DESC; when absent, ASC (A to Z) for a sort by name, DESC for every other sort';
export const MAX_LIMIT = 100;

/**
 * The values a list's `limit` argument takes, declared on the argument (its GraphQL extension
 * `limitRange`): the cost estimate reads it (app/graphql/limits.ts) to count a list at most at its
 * maximum and to refuse a document with a limit out of range before anything runs.
 */
export interface LimitRange {
  min: number;
  max: number;
}
export const PAGE_LIMIT_RANGE: LimitRange = { min: 1, max: MAX_LIMIT };

/**
 * How many items a field without a `limit` returns for its arguments (a chart's buckets, a depth's price
 * ranges), declared on the field (its GraphQL extension `itemsOf`): the cost estimate multiplies the
 * field's selection by `count` of its arguments, or by `max` while they are not known (variables during
 * validation) and when `count` throws or says more.
 */
export interface ItemsOf {
  max: number;
  count(args: Record<string, unknown>): number;
}

/** The list parameters common to every list (interface.md 4.1); each list adds `orderBy` and its filters. */
@ArgsType()
export class PageArgs {
  @Field(() => Int, { defaultValue: DEFAULT_LIMIT, description: `Page size, 1 to ${MAX_LIMIT}` })
  @Extensions({ limitRange: PAGE_LIMIT_RANGE })
  limit: number;

  @Field(() => String, {
    nullable: true,
    description: 'A 1-based page number ("1", "2", ...) or the `cursor` of the previous page',
  })
  page?: string | null;

  /** Absent: the sort's own direction (SortKey.defaultDirection), so the server tells an absent direction from a given one. */
  @Field(() => SortDirection, { nullable: true, description: DIRECTION_DESCRIPTION })
  direction?: SortDirection | null;

  /**
   * Relay's names of `limit` and `page` (the connection's arguments): the schema's list fields take them
   * as those (graphql/connection-arguments.ts), so a list reads only `limit` and `page`.
   */
  @Field(() => Int, { nullable: true, description: `As \`limit\` (1 to ${MAX_LIMIT}), for Relay's connection; not with \`limit\`` })
  @Extensions({ limitRange: PAGE_LIMIT_RANGE })
  first?: number | null;

  @Field(() => String, {
    nullable: true,
    description: "The items after this edge's `cursor` (or a page's `cursor`), for Relay's connection; not with `page`",
  })
  after?: string | null;

  /** Not an argument: what the list counts besides its page (see Counting). Set from remainingSelected(). */
  countRemaining?: Counting;
}

/**
 * What a list counts besides its page: `true` the items after it (`remaining`); `'total'` also every item
 * matching the filters (`totalCount`); `false` nothing, so the list need not count every matching row (it
 * reads one row past the page to know whether a cursor is due).
 */
export type Counting = boolean | 'total';

/** What the page being resolved needs counted (`remaining`, `totalCount`); set it on the args as `countRemaining`. */
export function remainingSelected(info: GraphQLResolveInfo): Counting {
  const fields = selectedFields(info);
  return fields.has('totalCount') ? 'total' : fields.has('remaining');
}

/**
 * A nested list's arguments as its page loader keys them (pagesByParent): those given, `page` null when
 * absent, and whether the request selects `remaining`.
 */
export function nestedPageArgs<A extends PageArgs>(args: A, info: GraphQLResolveInfo): A {
  return { ...args, page: args.page ?? null, countRemaining: remainingSelected(info) };
}

export interface Page<T> {
  cursor: string | null;
  remaining: number;
  result: T[];
  /** The page as a connection (edges, pageInfo, totalCount); absent on a list made whole, without paging. */
  connection?: PageConnection;
}

/**
 * The page type of one item type: the envelope `{ cursor remaining result }` and Relay's connection
 * `{ edges pageInfo totalCount }` of the same page (common/connection.ts).
 */
export function PageType<T extends object>(itemType: ClassType<T>) {
  const EdgeClass = edgeType(itemType);

  @ObjectType({ simpleResolvers: true })
  abstract class PageClass implements Page<T> {
    @Field(() => String, { nullable: true, description: 'Pass as `page` to get the next page; null on the last page' })
    cursor: string | null;

    @Field(() => Int, { description: 'How many matching items come after this page' })
    remaining: number;

    @Field(() => [itemType])
    result: T[];

    declare connection?: PageConnection;

    @Field(() => [EdgeClass], { description: 'The items of the page (`result`), each with its cursor' })
    get edges(): Edge<T>[] {
      return edgesOf(this.result, this.connection);
    }

    @Field(() => PageInfo)
    get pageInfo(): PageInfo {
      return pageInfoOf(this.result.length, this.remaining > 0, this.connection);
    }

    @Field(() => Int, { description: 'How many items match the filters, before and after this page' })
    get totalCount(): number {
      return totalCountOf(this.result.length, this.remaining, this.connection);
    }
  }
  return PageClass;
}

/**
 * How a list sorts by one `order_by` value: the SQL expression, its type, whether it can be null, and its
 * direction when the request gives none (DESC unless declared: dates, prices and volumes read newest and
 * highest first; a name reads A to Z).
 */
export interface SortKey {
  expression: string;
  sqlType: 'timestamptz' | 'numeric' | 'text' | 'integer' | 'bigint';
  nullable?: boolean;
  defaultDirection?: SortDirection;
}

/** The direction of a page: the one given, else its sort's default. */
export const directionOf = (given: SortDirection | null | undefined, sort: SortKey): SortDirection => given ?? sort.defaultDirection ?? SortDirection.DESC;

/** A list query whose direction is resolved (directionOf), and its kept count written when the request counts. */
type Directed = ListQuery & { args: ListQuery['args'] & { direction: SortDirection }; count?: string };

const directed = (q: ListQuery): Directed => ({
  ...q,
  args: { ...q.args, direction: directionOf(q.args.direction, q.sort) },
  count: q.args.countRemaining === false || typeof q.count !== 'function' ? (q.count as string | undefined) : q.count(),
});

interface Position {
  offset: number;
  after?: { value: unknown; id: string };
}

const MAX_PAGE_NUMBER = 1_000_000;

/** What a cursor says: the list's orderBy and direction, and the last row's sort value and id. */
export type CursorParts = [orderBy: string, direction: string, value: unknown, id: string];

/** A page's cursor: base64url of JSON [orderBy, direction, sort value, id] (a timestamp as Date#toISOString writes it). */
export function encodeCursor(...[orderBy, direction, value, id]: CursorParts): string {
  const v = value instanceof Date ? value.toISOString() : value;
  return Buffer.from(JSON.stringify([orderBy, direction, v, id])).toString('base64url');
}

/** encodeCursor in SQL, given the SQL of its four parts' JSON texts. */
export const cursorSql = (jsonTexts: readonly string[]) => base64urlSql(`'[' || ${jsonTexts.join(` || ',' || `)} || ']'`);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const BIGINT = /^(0|[1-9][0-9]{0,17})$/;
/** A timestamp as the cursors spell it (Date#toISOString, and the SQL plans' to_char). */
const ISO_TIMESTAMP = /^(\d{4})-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const INT4 = 2 ** 31;

/** Text PostgreSQL can take (no NUL, no lone surrogate), of at most `max` characters. */
function storableText(value: unknown, max: number): boolean {
  return typeof value === 'string' && value.length <= max && stringProblem(value) === undefined;
}

/**
 * A cursor's sort value must be of the sort's type and a value PostgreSQL takes, or the database would be
 * asked nonsense (and answer with an error): a forged cursor is the client's mistake, a 400.
 */
function cursorValueFits(value: unknown, sort: SortKey): boolean {
  if (value === null) return Boolean(sort.nullable);
  switch (sort.sqlType) {
    case 'timestamptz': {
      // A day that does not exist (30 February) reads as a later one in JavaScript; year 0 does not exist.
      const match = typeof value === 'string' ? ISO_TIMESTAMP.exec(value) : null;
      if (!match || match[1] === '0000') return false;
      const time = Date.parse(match[0]);
      return !Number.isNaN(time) && new Date(time).toISOString() === value;
    }
    case 'numeric':
      return typeof value === 'string' && /^-?\d{1,80}(\.\d{1,40})?$/.test(value);
    case 'integer': {
      const n = typeof value === 'string' && /^-?\d{1,10}$/.test(value) ? Number(value) : value;
      return typeof n === 'number' && Number.isInteger(n) && n >= -INT4 && n < INT4;
    }
    case 'bigint':
      return typeof value === 'string' && BIGINT.test(value);
    default:
      return storableText(value, 1000);
  }
}

/** A cursor's id must be of the list's key type. */
function cursorIdFits(id: unknown, idType: IdType): boolean {
  if (idType === 'uuid') return typeof id === 'string' && UUID.test(id);
  if (idType === 'bigint') return typeof id === 'string' && BIGINT.test(id);
  return storableText(id, 1000);
}

const limitFits = (limit: unknown): limit is number => Number.isInteger(limit) && (limit as number) >= 1 && (limit as number) <= MAX_LIMIT;
const isFirstPage = (page: unknown) => page === undefined || page === null || page === '';

/**
 * Whether a list's arguments ask for a first page (no `page`, no Relay `first` or `after`) with a limit in
 * range: the page a SQL plan answers; any other, the resolvers (decodePosition's errors included).
 */
export const isPlainFirstPage = (args: Record<string, unknown>): boolean => limitFits(args.limit) && isFirstPage(args.page) && args.first == null && args.after == null;

function decodePosition(args: PageArgs & { direction: SortDirection }, orderBy: string, sort: SortKey, idType: IdType = 'uuid'): Position {
  if (!limitFits(args.limit)) {
    throw new BadRequestError(`limit must be an integer from 1 to ${MAX_LIMIT}, got ${args.limit}`, [
      { field: 'limit', message: `must be an integer from 1 to ${MAX_LIMIT}` },
    ]);
  }
  const page = args.page;
  if (isFirstPage(page)) return { offset: 0 };
  // A number (-1, 0, 1.5) is a page number out of range or of the wrong form, not a cursor.
  if (/^[-+]?[0-9]+(\.[0-9]*)?$/.test(page)) {
    const n = Number(page);
    if (!Number.isInteger(n) || n < 1 || n > MAX_PAGE_NUMBER) {
      throw new BadRequestError(`page must be a page number from 1 to ${MAX_PAGE_NUMBER} or a cursor, got ${page}`, [
        { field: 'page', message: 'must be a page number from 1 or a cursor' },
      ]);
    }
    return { offset: (n - 1) * args.limit };
  }
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(page, 'base64url').toString('utf8'));
  } catch {
    decoded = undefined;
  }
  const shaped = Array.isArray(decoded) && decoded.length === 4 && typeof decoded[0] === 'string' && typeof decoded[1] === 'string' ? (decoded as unknown[]) : undefined;
  // A cursor of another ordering is told as such before its value is read as this ordering's (a date is no token id).
  if (shaped && (shaped[0] !== orderBy || shaped[1] !== args.direction) && (Object.values(SortDirection) as string[]).includes(shaped[1] as string)) {
    const [cursorOrderBy, cursorDirection] = shaped as [string, string];
    throw new BadRequestError(
      `this cursor belongs to orderBy ${cursorOrderBy.slice(0, 40)} and direction ${cursorDirection}; ` +
        `the request asks for orderBy ${orderBy} and direction ${args.direction}`,
      [{ field: 'page', message: 'cursor from a different ordering' }],
    );
  }
  if (!shaped || !cursorIdFits(shaped[3], idType) || !cursorValueFits(shaped[2], sort)) {
    throw new BadRequestError(
      `page must be a page number or the cursor of a previous response; "${page.slice(0, 60)}" is neither`,
      [{ field: 'page', message: 'unknown cursor' }],
    );
  }
  const [, , value, id] = shaped as [string, string, unknown, string];
  return { offset: 0, after: { value, id } };
}

type IdType = 'uuid' | 'text' | 'bigint';

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

function keysetCondition(q: Directed, after: NonNullable<Position['after']>): string {
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

function orderClause(q: Directed): string {
  return orderBySql(q.sort, q.idExpression, q.args.direction);
}

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

/**
 * A row's sort value as its cursor holds it (encodeCursor): a timestamp as Date#toISOString writes it, an
 * exact number as its text (a JSON string, as pg reads numeric and bigint); the SQL plans write it in SQL.
 */
export function cursorValueSql(sort: SortKey): string {
  if (sort.sqlType === 'timestamptz') return isoSql(sort.expression);
  if (sort.sqlType === 'numeric' || sort.sqlType === 'bigint') return `${sort.expression}::text`;
  return sort.expression;
}

/** The sort value of each row, for the next cursor. */
const sortColumn = (q: ListQuery): string => `${cursorValueSql(q.sort)} AS "__sort"`;

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
function countColumn(q: Directed, whereSql: string, position: Position, allRead = false): string {
  if (q.args.countRemaining === false) return '';
  const kept = keptCount(q, position);
  if (kept) return `, ${kept} AS "__total"`;
  return allRead ? ', count(*) OVER () AS "__total"' : `, (SELECT count(*) FROM ${rowsFrom(q, whereSql)}) AS "__total"`;
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
  const walked = rowsFrom(q, whereSql, String(COUNT_WALK + 1), back);
  return walkedCount(`SELECT 1 FROM ${walked} ORDER BY ${orderBySql(q.sort, q.idExpression, back)}`, `(SELECT count(*) FROM ${rowsFrom(q, whereSql)})`);
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
 * The counts of a page that answers `totalCount` (`countRemaining: 'total'`): the rows from its position on
 * (`__total`, for `remaining`) and, when the position is a cursor, every row matching the filters
 * (`__all`). They are made before the page and joined to it (`LEFT JOIN LATERAL` the page): so they come
 * even when the page is empty, and are made once (a one-row relation, or once per parent) before the rows.
 */
function totalColumns(q: Directed, whereSql: string, filterSql: string | undefined, position: Position): string {
  const kept = keptCount(q, position);
  if (kept) return `${kept} AS "__total"${filterSql === undefined ? '' : `, ${q.count} AS "__all"`}`;
  const all = filterSql === undefined ? '' : `, (SELECT count(*) FROM ${rowsFrom(q, filterSql)}) AS "__all"`;
  return `(SELECT count(*) FROM ${rowsFrom(q, whereSql)}) AS "__total"${all}`;
}

/**
 * totalColumns of a root list, as a SELECT: both counts from a kept count (after a cursor) read it once (within a
 * price range it walks an index: naming it twice walked it twice).
 */
function totalCounts(q: Directed, whereSql: string, filterSql: string | undefined, position: Position): string {
  if (q.count === undefined || filterSql === undefined) return `SELECT ${totalColumns(q, whereSql, filterSql, position)}`;
  return `SELECT ${keptCount(q, position, 'k.n')} AS "__total", k.n AS "__all" FROM (SELECT ${q.count} AS n OFFSET 0) k`;
}

/** The list as its counts read it when they count every matching row: from `countFrom`, when it answers (ListQuery.countFrom). */
function counting(q: Directed, position: Position): Directed {
  if (q.args.countRemaining === false || q.count !== undefined) return q;
  const from = q.countFrom?.({ after: position.after, direction: q.args.direction, kept: false });
  return from === undefined ? q : { ...q, from, sources: undefined };
}

/** LIMIT of a page: one row more when that row stands in for the count. */
function pageLimit(q: ListQuery): string {
  return q.params.add(q.args.limit + (q.args.countRemaining === false ? 1 : 0));
}

/**
 * The list's rows matching `whereSql`, as a `FROM` item aliased as `from`'s row. From several sources
 * (ListQuery.sources), each is cut to its first `cut` rows in `direction` (the page's) when given: a page
 * of the merge needs no more.
 */
function rowsFrom(q: Directed, whereSql: string, cut?: string, direction = q.args.direction): string {
  if (!q.sources) return `${q.from}${whereSql}`;
  const row = q.idExpression.split('.')[0];
  const order = cut ? ` ORDER BY ${orderBySql(q.sort, q.idExpression, direction)} LIMIT ${cut}` : '';
  return `(${q.sources.map((source) => `(SELECT ${row}.* FROM ${source}${whereSql}${order})`).join(' UNION ALL ')}) ${row}`;
}

const whereClause = (conditions: string[]) => (conditions.length ? ` WHERE ${conditions.join(' AND ')}` : '');

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
    : rowsFrom(q, whereSql, `${limit}::int + ${offset}::int`);
  const rest = ` FROM ${from} ORDER BY ${orderClause(q)} LIMIT ${limit} OFFSET ${offset}`;
  const sql =
    q.args.countRemaining === 'total'
      ? `SELECT x.*, n.* FROM (${totalCounts(c, whereSql, filterSql, position)}) n LEFT JOIN LATERAL (${select}, true AS "__in"${rest}) x ON true`
      : `${select}${countColumn(c, whereSql, position, q.countAllRead)}${rest}`;
  const rows: Record<string, unknown>[] = await ds.query(sql, q.params.values);
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
  if (q.sources) throw new Error('fetchPagesByParent reads one source');
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
