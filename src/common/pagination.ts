import { ArgsType, Extensions, Field, Int, ObjectType, registerEnumType } from 'type-graphql';
import type { ClassType } from 'type-graphql';
import type { GraphQLResolveInfo } from 'graphql';
import { DataSource } from 'typeorm';
import { selectedFields } from './graphql/selection';
import { BadRequestError } from './errors';
import { stringProblem } from './limits';
import { Params } from './sql';

export enum SortDirection {
  ASC = 'asc',
  DESC = 'desc',
}
registerEnumType(SortDirection, { name: 'SortDirection' });

export const DEFAULT_LIMIT = 20;
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

  @Field(() => SortDirection, { defaultValue: SortDirection.DESC })
  direction: SortDirection;

  /**
   * Not an argument: false when the request does not select `remaining`, so the list need not count every
   * matching row (it reads one row past the page to know whether a cursor is due). Set from remainingSelected().
   */
  countRemaining?: boolean;
}

/** Whether the page being resolved selects `remaining`; set it on the args as `countRemaining`. */
export function remainingSelected(info: GraphQLResolveInfo): boolean {
  return selectedFields(info).has('remaining');
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
}

/** The page envelope type of one item type: `{ cursor remaining result }`. */
export function PageType<T extends object>(itemType: ClassType<T>) {
  @ObjectType({ simpleResolvers: true })
  abstract class PageClass implements Page<T> {
    @Field(() => String, { nullable: true, description: 'Pass as `page` to get the next page; null on the last page' })
    cursor: string | null;

    @Field(() => Int, { description: 'How many matching items come after this page' })
    remaining: number;

    @Field(() => [itemType])
    result: T[];
  }
  return PageClass;
}

/** How a list sorts by one `order_by` value: the SQL expression, its type, and whether it can be null. */
export interface SortKey {
  expression: string;
  sqlType: 'timestamptz' | 'numeric' | 'text' | 'integer' | 'bigint';
  nullable?: boolean;
}

interface Position {
  offset: number;
  after?: { value: unknown; id: string };
}

const MAX_PAGE_NUMBER = 1_000_000;

function encodeCursor(orderBy: string, direction: string, value: unknown, id: string): string {
  const v = value instanceof Date ? value.toISOString() : value;
  return Buffer.from(JSON.stringify([orderBy, direction, v, id])).toString('base64url');
}

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

function decodePosition(args: PageArgs, orderBy: string, sort: SortKey, idType: IdType = 'uuid'): Position {
  if (!Number.isInteger(args.limit) || args.limit < 1 || args.limit > MAX_LIMIT) {
    throw new BadRequestError(`limit must be an integer from 1 to ${MAX_LIMIT}, got ${args.limit}`, [
      { field: 'limit', message: `must be an integer from 1 to ${MAX_LIMIT}` },
    ]);
  }
  const page = args.page;
  if (page === undefined || page === null || page === '') return { offset: 0 };
  if (/^[0-9]+$/.test(page)) {
    const n = Number(page);
    if (n < 1 || n > MAX_PAGE_NUMBER) {
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
  if (
    !Array.isArray(decoded) ||
    decoded.length !== 4 ||
    !cursorIdFits(decoded[3], idType) ||
    !cursorValueFits(decoded[2], sort)
  ) {
    throw new BadRequestError(
      `page must be a page number or the cursor of a previous response; "${page.slice(0, 60)}" is neither`,
      [{ field: 'page', message: 'unknown cursor' }],
    );
  }
  const [cursorOrderBy, cursorDirection, value, id] = decoded as [string, string, unknown, string];
  if (cursorOrderBy !== orderBy || cursorDirection !== args.direction) {
    throw new BadRequestError(
      `this cursor belongs to orderBy ${cursorOrderBy} and direction ${cursorDirection}; ` +
        `the request asks for orderBy ${orderBy} and direction ${args.direction}`,
      [{ field: 'page', message: 'cursor from a different ordering' }],
    );
  }
  return { offset: 0, after: { value, id } };
}

type IdType = 'uuid' | 'text' | 'bigint';

export interface ListQuery {
  /** `FROM` clause with the main table aliased, e.g. `assets t`. */
  from: string;
  /** Select list of the item columns (see selectColumns). */
  columns: string;
  /** Primary key expression used to break ties, e.g. `t.id`. */
  idExpression: string;
  /** Type of that key: uuid (default), text (categories, tags) or bigint (event positions). */
  idType?: IdType;
  where: string[];
  params: Params;
  sort: SortKey;
  orderBy: string;
  args: PageArgs;
}

function keysetCondition(q: ListQuery, after: NonNullable<Position['after']>): string {
  const op = q.args.direction === SortDirection.ASC ? '>' : '<';
  // Sorted by the key itself (event positions): one comparison, which an index on (parent, key) serves.
  if (q.sort.expression === q.idExpression) return `${q.idExpression} ${op} ${q.params.add(after.id)}::${q.idType ?? 'uuid'}`;
  const { expression, sqlType, nullable } = q.sort;
  const id = q.params.add(after.id);
  if (after.value === null) {
    // Nulls sort last: after a null, only later nulls remain.
    return `(${expression} IS NULL AND ${q.idExpression} ${op} ${id}::${q.idType ?? 'uuid'})`;
  }
  const value = q.params.add(after.value);
  const tuple = `(${expression}, ${q.idExpression}) ${op} (${value}::${sqlType}, ${id}::${q.idType ?? 'uuid'})`;
  return nullable ? `(${tuple} OR ${expression} IS NULL)` : tuple;
}

/** A list's ORDER BY: the sort key, then the id to break ties, both in the page's direction. */
export function orderBySql(sort: SortKey, idExpression: string, direction: SortDirection): string {
  const dir = direction === SortDirection.ASC ? 'ASC' : 'DESC';
  // NULLS LAST only where nulls can occur: on a NOT NULL key it would stop an index from giving the order.
  return `${sort.expression} ${dir}${sort.nullable ? ' NULLS LAST' : ''}, ${idExpression} ${dir}`;
}

function orderClause(q: ListQuery): string {
  return orderBySql(q.sort, q.idExpression, q.args.direction);
}

function toPage<T>(rows: Record<string, unknown>[], offset: number, q: ListQuery): Page<T> {
  let remaining: number;
  if (q.args.countRemaining === false) {
    // One row past the page was read to tell whether more follow; `remaining` is not selected, so 1 stands
    // for "some" and is never shown.
    remaining = rows.length > q.args.limit ? 1 : 0;
    if (remaining) rows.length = q.args.limit;
  } else {
    const total = rows.length ? Number(rows[0].__total) : 0;
    remaining = Math.max(0, total - offset - rows.length);
  }
  const last = rows[rows.length - 1];
  const cursor = remaining > 0 && last ? encodeCursor(q.orderBy, q.args.direction, last.__sort, String(last.id)) : null;
  // The helper columns (__sort, __total, __parent) stay on the rows: no field reads them, and deleting
  // them would turn every row into a slow dictionary-mode object.
  return { cursor, remaining, result: rows as T[] };
}

/** The sort value of each row, for the next cursor (a timestamp already as ISO text). */
function sortColumn(q: ListQuery): string {
  const sort =
    q.sort.sqlType === 'timestamptz'
      ? `to_char(${q.sort.expression} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
      : q.sort.expression;
  return `${sort} AS "__sort"`;
}

/**
 * The count of all matching rows (when `remaining` is asked), as a query of its own beside the page's:
 * `count(*) OVER ()` on the page query made PostgreSQL read every matching row whole before the LIMIT
 * (370 ms for a page of a collection of 100,000 assets); a count alone reads only an index. Uncorrelated
 * in the select list, it is an InitPlan: computed once whatever the plan. Joined to the page instead
 * (`CROSS JOIN (SELECT count(*) ...)`), it was computed again for every row of the page's scan whenever
 * the planner expected one row there: a page of a collection whose 10,000 assets came after the last
 * ANALYZE ran past the client's 30 s timeout (by owner, or by current price), its count read per row.
 */
function countColumn(q: ListQuery, whereSql: string): string {
  return q.args.countRemaining === false ? '' : `, (SELECT count(*) FROM ${q.from}${whereSql}) AS "__total"`;
}

/** LIMIT of a page: one row more when that row stands in for the count. */
function pageLimit(q: ListQuery): string {
  return q.params.add(q.args.limit + (q.args.countRemaining === false ? 1 : 0));
}

/**
 * One page of a list in one statement: the rows, the sort value of each (for the next cursor) and the
 * count of all matching rows from which `remaining` follows (when the request selects it).
 */
export async function fetchPage<T>(ds: DataSource, q: ListQuery): Promise<Page<T>> {
  const position = decodePosition(q.args, q.orderBy, q.sort, q.idType);
  const where = [...q.where];
  if (position.after) where.push(keysetCondition(q, position.after));
  const whereSql = where.length ? ` WHERE ${where.join(' AND ')}` : '';
  const sql =
    `SELECT ${q.columns}, ${sortColumn(q)}${countColumn(q, whereSql)} FROM ${q.from}${whereSql}` +
    ` ORDER BY ${orderClause(q)} LIMIT ${pageLimit(q)} OFFSET ${q.params.add(position.offset)}`;
  const rows: Record<string, unknown>[] = await ds.query(sql, q.params.values);
  return toPage<T>(rows, position.offset, q);
}

/**
 * The same page for many parents at once (e.g. the first 20 assets of each of 20 collections), in one
 * statement: a LATERAL subquery per parent id, so each parent gets its own limit, order and count. The
 * counts are made first, once per parent, in a materialized CTE: a count in a lateral join of its own
 * could be planned again per row of the pages, as fetchPage's could. `parent.column`: the column that
 * holds the parent's id; several: a row belongs to every parent any of them holds (an order to its
 * seller and its buyer).
 */
export async function fetchPagesByParent<T>(
  ds: DataSource,
  q: ListQuery,
  parent: { column: string | readonly string[]; ids: readonly string[]; sqlType: 'uuid' | 'text' },
): Promise<Map<string, Page<T>>> {
  const position = decodePosition(q.args, q.orderBy, q.sort, q.idType);
  const ids = q.params.add(parent.ids);
  const columns = typeof parent.column === 'string' ? [parent.column] : parent.column;
  const ofParent = columns.map((column) => `${column} = p.id`).join(' OR ');
  const where = [columns.length > 1 ? `(${ofParent})` : ofParent, ...q.where];
  if (position.after) where.push(keysetCondition(q, position.after));
  const whereSql = ` WHERE ${where.join(' AND ')}`;
  const parents = `unnest(${ids}::${parent.sqlType}[]) AS p(id)`;
  const sql =
    (q.args.countRemaining === false
      ? `SELECT x.* FROM ${parents}`
      : `WITH p AS MATERIALIZED (SELECT p.id${countColumn(q, whereSql)} FROM ${parents}) SELECT x.*, p."__total" FROM p`) +
    ` CROSS JOIN LATERAL (SELECT ${q.columns}, p.id AS "__parent", ${sortColumn(q)} ` +
    `FROM ${q.from}${whereSql} ORDER BY ${orderClause(q)} ` +
    `LIMIT ${pageLimit(q)} OFFSET ${q.params.add(position.offset)}) x`;
  const rows: Record<string, unknown>[] = await ds.query(sql, q.params.values);
  const grouped = new Map<string, Record<string, unknown>[]>();
  for (const row of rows) {
    const key = String(row.__parent);
    let list = grouped.get(key);
    if (!list) grouped.set(key, (list = []));
    list.push(row);
  }
  const pages = new Map<string, Page<T>>();
  for (const id of parent.ids) pages.set(id, toPage<T>(grouped.get(id) ?? [], position.offset, q));
  return pages;
}
