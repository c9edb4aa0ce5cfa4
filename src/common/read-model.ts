import { clock } from './clock';
import { compareDecimals } from './decimal';
import { FieldProblem, Problems } from './errors';
import type { ListQuery, PageArgs, SortKey } from './pagination';
import { Params, PLANNED_PER_CALL, unionOfRanges } from './sql';
import { KeyedType, nodeIdSql } from './graphql/node';

/**
 * A noun's read model, declared once in its module (modules/<noun>/<noun>.read.ts) and read by two
 * readers: its service and loaders, which build their statements from it, and the SQL plans
 * (app/graphql/sql-plan), which compile a selection to one statement. A rule stated here is stated for
 * both; there is no second copy to keep equal.
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

/** Whether a given filter of `filters` leaves few rows (ReadFilter.bounds). */
export const boundsRows = (filters: readonly ReadFilter[], args: object): boolean =>
  filters.some((f) => f.bounds && (args as Record<string, unknown>)[f.arg] != null);

/**
 * A sort (`orderBy` value): a SortKey whose expression is over the model's `alias`, or, when it depends on
 * the statement (its moment, a joined row), written for it; `joins` names the rows of the model's `joins`
 * it reads. Plans read only a sort of a fixed expression that joins nothing.
 */
export interface ReadSort extends Omit<SortKey, 'expression'> {
  expression: string | ((row: string, s: SqlScope) => string);
  joins?: readonly string[];
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
   * Its pages nested in a parent, by `Parent.field` (Asset.offers): how a row `row` belongs to the parent's
   * row `parent`, whose key is its `id` (an account's: its address). Plans read these pages' first page
   * inside the parent's row, with `filters`; the loaders read every parent's page at once (pagesOfParent).
   */
  pagesOf: Record<string, (row: string, parent: string) => string>;
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

/** A loader's parents (fetchPagesByParent's `belongs`) of a model's pages nested in `at`: its rows, as `alias`, of the parent row `p`. */
export const pagesOfParent = (model: ReadModel, at: string) => ({ belongs: (p: string) => model.pagesOf[at](model.alias, p) });

/** Whether a model's root list keeps a count for the filters given in `args` (see ReadModel.count). */
export function keepsCount(model: ReadModel, args: object): boolean {
  const given = args as Record<string, unknown>;
  const filters = model.count?.filters;
  return filters !== undefined && [...model.filters, ...model.rootFilters].every((f) => given[f.arg] == null || filters.includes(f.arg));
}

/** The kept count of a model's root list for `args`; undefined when it keeps none for the filters given. */
export function keptCountSql(model: ReadModel, s: SqlScope, args: object): string | undefined {
  return keepsCount(model, args) ? model.count!.sql(s, args as Record<string, unknown>) : undefined;
}

/** A field's SQL expression over `row`, as the service reads it. */
export const fieldSql = (field: ReadField, row: string, s: SqlScope): string =>
  typeof field.sql === 'string' ? `${field.on ? s.joined![field.on] : row}.${field.sql}` : field.sql(row, s);

/** A field's SQL expression over `row` as GraphQL answers it, which plans write: a key as its Node id (ReadField.node). */
export const planSql = (field: ReadField, row: string, s: SqlScope): string => (field.node ? nodeIdSql(field.node, fieldSql(field, row, s)) : fieldSql(field, row, s));

/**
 * The service's select list: every field of the model as the row property of its name (`only`: those named
 * there, and `always`).
 */
export function selectList(model: ReadModel, s: SqlScope, row = model.alias, only?: ReadonlySet<string>, always: readonly string[] = []): string {
  return Object.entries(model.fields)
    .filter(([name]) => !only || only.has(name) || always.includes(name))
    .map(([name, field]) => {
      const sql = fieldSql(field, row, s);
      const value = field.kind === 'text' || field.kind === 'decimal' ? `${sql}::text` : field.kind === 'float' ? `${sql}::float8` : sql;
      return `${value} AS "${name}"`;
    })
    .join(', ');
}

const wholeRows = new WeakMap<ReadModel, Map<string, string>>();

/**
 * Every field of a model over `row` (selectList), as the service reads a whole row, written once: for models
 * whose fields are columns and expressions that add no parameter (an asset, a collection, a currency).
 */
export function modelColumns(model: ReadModel, row = model.alias): string {
  let byRow = wholeRows.get(model);
  if (!byRow) wholeRows.set(model, (byRow = new Map()));
  let list = byRow.get(row);
  if (list === undefined) byRow.set(row, (list = selectList(model, sqlScope(), row)));
  return list;
}

/** Whether selectList's `only` and `always` name every field of the model (the rows are whole). */
export const selectsEveryField = (model: ReadModel, only?: ReadonlySet<string>, always: readonly string[] = []): boolean =>
  !only || Object.keys(model.fields).every((name) => only.has(name) || always.includes(name));

/** A sort as the statement writes it, over `row`. */
export function sortKey(sort: ReadSort, s: SqlScope, row: string): SortKey {
  const { joins: _joins, expression, ...key } = sort;
  return { ...key, expression: typeof expression === 'string' ? expression : expression(row, s) };
}

/** A sort plans read as it is (a fixed expression over the model's alias, joining nothing), or undefined. */
export const fixedSort = (sort: ReadSort | undefined): SortKey | undefined =>
  sort && typeof sort.expression === 'string' && !sort.joins?.length ? (sort as SortKey) : undefined;

/** The JOIN clauses of a model's `with` rows to its row `row`, each under the alias `aliases` gives its name. */
export const withJoins = (model: ReadModel, row: string, aliases: Record<string, string>): string =>
  Object.entries(model.with ?? {})
    .map(([name, { table, key }]) => ` JOIN ${table} ${aliases[name]} ON ${aliases[name]}.id = ${row}.${key}`)
    .join('');

/** The aliases of a model's joins, as its scope names them (`joined`). */
export const joinAliases = (model: ReadModel): Record<string, string> =>
  Object.fromEntries(Object.entries(model.joins ?? {}).map(([name, join]) => [name, join.alias]));

/**
 * FROM the model's table as `row`, with the joins that the given filters (of `filters`, values in `args`)
 * and the sort read, under the aliases of `s.joined`.
 */
export function fromWithJoins(model: ReadModel, s: SqlScope, row: string, filters: readonly ReadFilter[], args: object, sort?: ReadSort): string {
  const needed = new Set(sort?.joins ?? []);
  for (const filter of filters) if ((args as Record<string, unknown>)[filter.arg] != null) for (const name of filter.joins ?? []) needed.add(name);
  const joins = Object.entries(model.joins ?? {}).filter(([name]) => needed.has(name));
  return [`${model.table!} ${row}`, ...joins.map(([name, join]) => join.sql(row, s.joined![name], s))].join(' ');
}

export interface RootRows {
  table: string;
  /** The list's rows as parts read apart (ReadFilter.sources), each a FROM item aliased as the row; `table` is then not read. */
  sources?: string[];
  written: (filter: ReadFilter) => boolean;
}

/**
 * What a root list reads as its row `row` for the given filters of `filters` (values in `args`): `table`, or,
 * given a filter with `ranges` or `sources` for its value (the first), the union of the table's rows in each
 * range (common/sql.ts unionOfRanges), to be written before `row` as a table's name is, or the sources to read
 * apart; and whether a given filter is written as a condition (that one is not: its rows are those read).
 */
export function rootRows(table: string, filters: readonly ReadFilter[], s: SqlScope, row: string, args: object): RootRows {
  const given = args as Record<string, unknown>;
  for (const filter of filters) {
    if (given[filter.arg] == null) continue;
    const sources = filter.sources?.(s, row, given[filter.arg]);
    if (sources) return { table, sources, written: (f) => f !== filter };
    const ranges = filter.ranges?.(s, row, given[filter.arg]);
    if (ranges) return { table: unionOfRanges(`${table} ${row}`, row, ranges), written: (f) => f !== filter };
  }
  return { table, written: () => true };
}

/** The REST query parameter of a filter. */
export const restName = (filter: ReadFilter): string => filter.rest ?? filter.arg.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** The problems of the given filter values, by argument name. */
export function filterProblems(filters: readonly ReadFilter[], args: object): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const filter of filters) {
    const value = (args as Record<string, unknown>)[filter.arg];
    const message = value == null || !filter.check ? undefined : filter.check(value, args as Record<string, unknown>);
    if (message) problems.push({ field: filter.arg, message });
  }
  return problems;
}

/** Throws a 400 naming every filter whose value has a problem. */
export function checkFilters(filters: readonly ReadFilter[], args: object): void {
  const problems = new Problems();
  for (const problem of filterProblems(filters, args)) problems.add(problem.field, problem.message);
  problems.throwIfAnyMalformed();
}

/** The conditions of the given filters that have one, for the values given (null or absent: no condition). */
export function filterConditions(filters: readonly ReadFilter[], s: SqlScope, row: string, args: object): string[] {
  const where: string[] = [];
  for (const filter of filters) {
    const value = (args as Record<string, unknown>)[filter.arg];
    if (value != null && filter.where) where.push(filter.where(s, row, value));
  }
  return where;
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

/**
 * A page's query (common/pagination.ts fetchPage) of all of a model's rows as its service reads them, in the
 * sort `args.orderBy` names (a catalog's list).
 */
export const modelListQuery = (model: ReadModel, s: SqlScope, args: PageArgs & { orderBy: string }, idType: ListQuery['idType']): ListQuery => ({
  from: `${model.table!} ${model.alias}`,
  columns: selectList(model, s),
  idExpression: `${model.alias}.id`,
  idType,
  where: [],
  params: s.p,
  sort: sortKey(model.sorts[args.orderBy], s, model.alias),
  orderBy: args.orderBy,
  args,
});

/** A filter on a column equal to the value (`cast`: the SQL type the parameter is read as). */
export const equalsFilter = (arg: string, type: string, column: string, cast = '', note?: string): ReadFilter => ({
  arg,
  type,
  note,
  plan: 'sql',
  where: (s, row, value) => `${row}.${column} = ${s.p.add(value)}${cast && `::${cast}`}`,
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
