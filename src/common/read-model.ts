import { clock } from './clock';
import { compareDecimals } from './decimal';
import type { SortKey } from './pagination';
import { Params, PLANNED_PER_CALL } from './sql';
import type { KeyedType } from './graphql/node';

/**
 * A noun's read model, declared once in its module (modules/<noun>/<noun>.read.ts) and read by two
 * readers: its service and loaders, which build their statements from it, and the SQL plans
 * (app/graphql/sql-plan), which compile a selection to one statement. A rule stated here is stated for
 * both; there is no second copy to keep equal. How the readers write SQL from it: common/read-model-sql.ts.
 */

/**
 * Where a read model's SQL is written: the statement's parameters, its moment (a parameter added on first
 * use), and the aliases of the rows joined to the noun's row (a listing's asset: `joined.asset`).
 */
export interface SqlScope {
  p: Params;
  now: () => string;
  joined?: Record<string, string>;
  /**
   * Plans only: the statement's row of `type` that this row is read within (a nested page's parent row, or
   * its parent's: a listing's asset's collection), if any.
   */
  within?: (type: string) => string | undefined;
}

/** A scope over `p` whose moment is `at` (default: the clock's now when first used). */
export function sqlScope(p: Params = new Params(), at?: Date, joined?: Record<string, string>): SqlScope {
  let now: string | undefined;
  return { p, now: () => (now ??= p.add(at ?? clock.now())), joined };
}

/**
 * How a field's SQL value becomes its GraphQL value. The service reads the rows pg returns; the plans write
 * the response's JSON in SQL:
 * - `value`: as stored (text, integers, JSON);
 * - `text`: as text (uuids, token ids);
 * - `float`: a double (float8);
 * - `timestamp`: a Date for the service, Date#toISOString's text in plans (stored to the millisecond);
 * - `ratio`: a double from 0 to 1, which REST's text writes as JavaScript does (0.00009998, not 9.998e-05);
 * - `decimal`: an exact decimal as text, serialized by its GraphQL type (Price, Decimal);
 * - `enum`: a stored enum value, written by its GraphQL name in plans.
 */
export type FieldKind = 'value' | 'text' | 'float' | 'ratio' | 'timestamp' | 'decimal' | 'enum';

export interface ReadField {
  /** Its SQL over the noun's row `row`: a column name (of the joined row `on`, when given), or an expression. */
  sql: string | ((row: string, s: SqlScope) => string);
  on?: string;
  kind: FieldKind;
  /** Read by the service only: plans do not write it (the field is not planned). */
  serviceOnly?: true;
  /**
   * The value is the key of a row of this type, and GraphQL's field its Node id (common/graphql/node.ts
   * keyedNodeResolver): the service reads the key, plans write the Node id (planSql).
   */
  node?: KeyedType;
}

/**
 * A filter: a list argument (GraphQL `arg` of GraphQL type `type`, REST `rest`, by default its snake_case;
 * `note` what REST's route summary says of it) and the condition on
 * the noun's row for a given value (absent: the service writes it, after a look-up). `plan` says how SQL
 * plans read it: `sql` by its condition; `aside` when given the resolvers answer (they look something up
 * first: a chain, a currency). `check` states what a value must be; a value with a problem is the
 * resolvers' error (a 400 naming the field), and plans step aside for it.
 */
export interface ReadFilter {
  arg: string;
  type: string;
  rest?: string;
  note?: string;
  where?: (s: SqlScope, row: string, value: any) => string;
  plan: 'sql' | 'aside';
  /**
   * A value that names a row of `table` (a collection by its id or contract address): `key` the row's key
   * (of SQL type `keyType`) as the value gives it, which the condition takes, or undefined when the
   * resolvers look it up (plans step aside). The resolvers answer an unknown row with an error, so a plan
   * checks an empty page against the row's existence; a count kept by the filter (`counts.byFilter`) reads the key.
   */
  names?: { table: string; keyType: string; key: (value: unknown) => string | undefined };
  check?: (value: any, args: Record<string, any>) => string | undefined;
  /** The condition is `row.column = value` (of SQL type `cast`, if given): a sort's keyset may lead with it (ReadSort.ledBy). */
  equals?: { column: string; cast?: string };
  /** The rows of the model's `joins` its condition reads (as `s.joined[name]`); plans step aside for it. */
  joins?: readonly string[];
  /**
   * It leaves few rows whatever the market's size (one owner's): a search among them ranks them all instead
   * of walking the name indexes (common/name-search.ts).
   */
  bounds?: true;
  /**
   * Its rows as disjoint conditions over the row (their OR is `where`'s), each a range of an index, for a
   * value whose `where` no one index serves (undefined: `where` does): a root list given it reads the union
   * of its ranges (rootRows), each read by its index, instead of a walk of every row filtered by `where`.
   */
  ranges?: (s: SqlScope, row: string, value: any) => string[] | undefined;
  /**
   * Its rows as disjoint parts of the table, each a FROM item whose rows are aliased `row`, for a value whose
   * rows grow with the market and lie in no one index in a list's order (undefined: `where` or `ranges`
   * serve): a root list given it reads each part by its own index, filtered, ordered and cut to the page on
   * its own, then merges them (ListQuery.sources; a union of ranges PostgreSQL 15 appends and sorts whole).
   */
  sources?: (s: SqlScope, row: string, value: any) => string[] | undefined;
}

/**
 * A sort (`orderBy` value): a SortKey whose expression is over the model's `alias`, or, when it depends on
 * the statement (its moment, a joined row), written for it; `joins` names the rows of the model's `joins`
 * it reads. Plans read only a sort of a fixed expression that joins nothing.
 */
export interface ReadSort extends Omit<SortKey, 'expression'> {
  expression: string | ((row: string, s: SqlScope) => string);
  joins?: readonly string[];
  /**
   * Filters (`equals`, few rows whatever the market: one token, one contract, one taker, one collection) whose
   * column leads an index ahead of this sort, `(column, sort, id)`: given one, a later page's keyset compares
   * `(column, sort, id)`, which only that index serves (keysetLead). Else the planner may walk the sort's own
   * index, filtering by the column, wherever it guesses the cursor's side nearly empty: rows made in one
   * transaction share `created_at`, and a page after one of them walked 2,500,000 offers (a 503 at 10M).
   */
  ledBy?: readonly string[];
}

/** A row joined to the noun's row `row` (a LEFT JOIN LATERAL clause) as `alias`, read by some filters and sorts. */
export interface ReadJoin {
  alias: string;
  sql: (row: string, alias: string, s: SqlScope) => string;
}

/**
 * How rows of another noun reached from this one are read (the planner follows them inside its statement).
 * A column named by a relation is the row's own, or its joined row's `on` (a listing's asset's chain).
 */
export type ReadRelation =
  /**
   * The row of `table` whose id is this row's `key` column; null when none. Read within a row of type
   * `sameAs` (SqlScope.within), it is that row (an asset of a collection's page is of that collection);
   * within a row of type `sharedWith` with the same `key` column, that row's (built once per that row)
   * when the keys agree.
   */
  | { kind: 'byId'; type: string; table: string; key: string; on?: string; sameAs?: string; sharedWith?: string }
  /** The row of `table` that `where` finds for this row `row` (at most one; null when none), which it reads joined as `joinedAs` (an asset's active listing, a price's currency). */
  | { kind: 'one'; type: string; table: string; where: (x: string, row: string, s: SqlScope) => string; joinedAs?: string }
  /** Whether relation `of` finds a row, as the value `value` gives (an enum's value). */
  | { kind: 'presence'; of: string; value: (present: boolean) => string }
  /**
   * Rows of `type` with no read model of their own, in their order: `from` (FROM, WHERE and ORDER BY over
   * `x`) for this row `row`, their fields over `x`, which reads `row` joined as `joinedAs`.
   */
  | { kind: 'rows'; type: string; from: (x: string, row: string, s: SqlScope) => string; fields: Record<string, ReadField>; joinedAs?: string };

/**
 * How a row `row` of a nested page belongs to the parent's row `parent`, whose key is its `id` (an account's:
 * its address): a condition, or disjoint ones, each a range of an index, whose union the page reads (an
 * account's orders: its sales, then its purchases of others; common/sql.ts unionOfRanges).
 */
export type Belongs = (row: string, parent: string) => string | readonly string[];

/**
 * A nested page's rows of its parent: Belongs, or one Belongs per value of the field's argument `arg` (an
 * account's part in its offers and orders: `role`), which plans then read too.
 */
export type PageOf = Belongs | { arg: string; by: Record<string, Belongs> };

/**
 * One entry of a REST shape (ReadModel.rest): a field or relation of the model by its GraphQL name, shown
 * under `as` (by default its snake_case name) in the form its declaration gives it (app/rest/v1/shapes.ts):
 * a field as it is, a decimal as a JSON number and its exact `_decimal` twin, a relation as its type's REST
 * shape (a row of a `rows` relation: its fields). `shape`: the object's fields REST shows instead (of the
 * relation's model, if any); `of`: the read model whose REST shape an object field of no relation shows,
 * as a page when `page`.
 */
export type RestEntry = string | { field: string; as?: string; shape?: readonly RestEntry[]; of?: string; page?: true };

/** A noun's REST shape: its entries in the body's order, and the fields it does not show (every other field is an entry). */
export interface RestShape {
  shape: readonly RestEntry[];
  omits?: readonly string[];
}

export interface ReadModel {
  /** The GraphQL type it reads; its pages are `<type>Page`. */
  type: string;
  /** Its root list field (Query.orders), whose arguments are PageArgs', `filters` and `rootFilters`; none: not a root list plans read. */
  list?: string;
  /** How /v1 shows a row of it (app/rest/v1/shapes.ts), if it does. */
  rest?: RestShape;
  /** Its table; none for a noun whose row is made of its root's arguments (`one.row`: an account). */
  table?: string;
  /** The row's alias in the statements the service writes (and in `sorts`' expressions). */
  alias: string;
  /** Its fields by GraphQL name (and the service's row property names), in the order the service selects them. */
  fields: Record<string, ReadField>;
  /** The filters of every list of the noun (the root list's and each nested one's). */
  filters: ReadFilter[];
  /** The root list's own filters, besides `filters`. */
  rootFilters: ReadFilter[];
  /** The sorts by `orderBy` value, over `alias`. */
  sorts: Record<string, ReadSort>;
  /**
   * Rows every read of the noun joins to its row, by the name its fields and relations read them by
   * (SqlScope.joined): the row of `table` whose id is the row's `key` column (a listing's asset).
   */
  with?: Record<string, { table: string; key: string }>;
  /** Rows joined to the noun's row only when a given filter or the sort reads them. */
  joins?: Record<string, ReadJoin>;
  /** Its search root (Query.searchAssets, Query.searchCollections): the root list's filters, its rows ranked by name (common/name-search.ts). */
  search?: string;
  /**
   * Counts kept on writes, which a first page's `remaining` reads instead of counting rows: of a nested page
   * without filters (by `Parent.field`, given the parent's row), and of the root list given one filter only
   * (by its argument, given the SQL of its value).
   */
  counts?: { pagesOf?: Record<string, (parent: string) => string>; byFilter?: Record<string, (value: string) => string> };
  relations: Record<string, ReadRelation>;
  /**
   * Its pages nested in a parent, by `Parent.field` (Asset.offers): how its rows belong to the parent's row
   * (PageOf). Plans read these pages' first page inside the parent's row, with `filters`; the loaders read
   * every parent's page at once (read-model-sql.ts pagesOfParent).
   */
  pagesOf: Record<string, PageOf>;
  /**
   * A boolean argument of its roots (list, search, one row) that, when false, answers the rows' `field`
   * with null (a collection's `assets` with includeAssets: false). Plans read it; null is the resolvers' error.
   */
  omits?: { arg: string; field: string };
  /**
   * Its root of one row (Query.collection): the arguments it reads (besides `omits`'), and the conditions on
   * the row `row` that find it, or undefined when the resolvers answer (a mistake in the arguments). Found
   * on no chain or on several, the resolvers answer too (their error). A noun of no table (an account is
   * its address) makes its `row` of the arguments instead: SQL of one row whose key is its `id`.
   */
  one?: {
    field: string;
    args: readonly string[];
    where: (s: SqlScope, row: string, args: Record<string, any>) => string[] | undefined;
    /** The order of the rows its conditions find over `row` when they may find several (on several chains): more than one is the resolvers' error. */
    order?: (row: string) => string;
    row?: (s: SqlScope, args: Record<string, any>) => string;
  };
  /**
   * The count of the root list's rows without reading them (counts kept by the writes), for lists whose
   * filters given are all among `filters`: `sql` for the filter values `args` (a chain as its EIP-155 id).
   */
  count?: { filters: readonly string[]; sql: (s: SqlScope, args: Record<string, unknown>) => string };
}

/**
 * The fields of a type keyed by a text key in its `id` column (common/graphql/node.ts keyedNodeResolver): its
 * key field `key` (a chain's chainId) and GraphQL's `id`, its Node id (the service's `id`: the key).
 */
export const keyedFields = (type: KeyedType, key: string): Record<string, ReadField> => ({
  [key]: { sql: 'id', kind: 'value' },
  id: { sql: 'id', kind: 'value', node: type },
});

/**
 * A read model of a row read by its own service and as another's relation (a chain, a category, a
 * currency): its fields, the sorts of its list, if any, and its REST shape.
 */
export const relatedModel = (
  type: string,
  table: string,
  alias: string,
  fields: Record<string, ReadField>,
  { sorts = {}, rest }: { sorts?: Record<string, ReadSort>; rest?: RestShape } = {},
): ReadModel => ({
  type,
  table,
  alias,
  fields,
  filters: [],
  rootFilters: [],
  sorts,
  relations: {},
  pagesOf: {},
  rest,
});

/** A filter on a column equal to the value (`cast`: the SQL type the parameter is read as). */
export const equalsFilter = (arg: string, type: string, column: string, cast = '', note?: string): ReadFilter => ({
  arg,
  type,
  note,
  plan: 'sql',
  where: (s, row, value) => `${row}.${column} = ${s.p.add(value)}${cast && `::${cast}`}`,
  equals: { column, cast: cast || undefined },
});

const atLeastZero = (price: string) => (compareDecimals(price, '0') < 0 ? `must be a price of at least 0, got ${price}` : undefined);

/**
 * `minPrice` and `maxPrice` (REST `min_price`, `max_price`): rows whose price (`price` over the row) is
 * within the range, both ends included. A negative end, or a maximum below the minimum, is a 400. A statement
 * with a range is planned for its values (PLANNED_PER_CALL): how many rows it holds decides the plan.
 */
export function priceRangeFilters(price: (row: string, s: SqlScope) => string): ReadFilter[] {
  return [
    { arg: 'minPrice', type: 'Price', plan: 'sql', check: atLeastZero, where: (s, row, min: string) => `${price(row, s)} >= ${s.p.add(min)}::numeric ${PLANNED_PER_CALL}` },
    {
      arg: 'maxPrice',
      type: 'Price',
      plan: 'sql',
      check: (max: string, args) =>
        atLeastZero(max) ??
        (typeof args.minPrice === 'string' && !atLeastZero(args.minPrice) && compareDecimals(args.minPrice, max) > 0
          ? `must not be below the minimum price (${args.minPrice}), got ${max}`
          : undefined),
      where: (s, row, max: string) => `${price(row, s)} <= ${s.p.add(max)}::numeric ${PLANNED_PER_CALL}`,
    },
  ];
}
