import { ArgsType, Extensions, Field, Int, ObjectType, registerEnumType } from 'type-graphql';
import type { ClassType } from 'type-graphql';
import type { GraphQLResolveInfo } from 'graphql';
import { selectedFields } from './graphql/selection';
import { edgesOf, edgeType, PageConnection, PageInfo, pageInfoOf, totalCountOf } from './connection';
import type { Edge } from './connection';
import { BadRequestError } from './errors';
import { stringProblem } from './limits';
import { base64urlSql, isoSql } from './sql';
import type { Params } from './sql';

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

/** Where a page starts: after `offset` rows (a page number), or after the row of a cursor. */
export interface Position {
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
const cursorSql = (jsonTexts: readonly string[]) => base64urlSql(`'[' || ${jsonTexts.join(` || ',' || `)} || ']'`);

/**
 * The cursor of the row `row` (its sort value `row.s`, its id `row.id`) of a list in `orderBy` and `direction`,
 * in SQL (a SQL plan's last row of a page): its text as encodeCursor writes it (`text`), else its four parts as
 * a JSON array, which encodeCursor finishes in Node.
 */
export function rowCursorSql(p: Params, [orderBy, direction]: [unknown, unknown], sort: SortKey, row: string, text: boolean): string {
  const parts = [p.add(orderBy), p.add(direction), cursorValueSql({ ...sort, expression: `${row}.s` }), `${row}.id::text`];
  return text
    ? cursorSql(parts.map((v, i) => (i === 2 ? `COALESCE(to_json(${v})::text, 'null')` : `to_json(${v}::text)::text`)))
    : `json_build_array(${parts[0]}::text, ${parts[1]}::text, ${parts[2]}, ${parts[3]})`;
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

const limitFits = (limit: unknown): limit is number => Number.isInteger(limit) && (limit as number) >= 1 && (limit as number) <= MAX_LIMIT;
const isFirstPage = (page: unknown) => page === undefined || page === null || page === '';

/**
 * Whether a list's arguments ask for a first page (no `page`, no Relay `first` or `after`) with a limit in
 * range: the page a SQL plan answers; any other, the resolvers (decodePosition's errors included).
 */
export const isPlainFirstPage = (args: Record<string, unknown>): boolean => limitFits(args.limit) && isFirstPage(args.page) && args.first == null && args.after == null;

/** The position a list's `page` argument names, its `limit` checked: a forged or foreign cursor is a 400. */
export function decodePosition(args: PageArgs & { direction: SortDirection }, orderBy: string, sort: SortKey, idType: IdType = 'uuid'): Position {
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

export type IdType = 'uuid' | 'text' | 'bigint';

/**
 * A row's sort value as its cursor holds it (encodeCursor): a timestamp as Date#toISOString writes it, an
 * exact number as its text (a JSON string, as pg reads numeric and bigint); the SQL plans write it in SQL.
 */
export function cursorValueSql(sort: SortKey): string {
  if (sort.sqlType === 'timestamptz') return isoSql(sort.expression);
  if (sort.sqlType === 'numeric' || sort.sqlType === 'bigint') return `${sort.expression}::text`;
  return sort.expression;
}
