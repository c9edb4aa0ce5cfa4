import { FieldProblem, Problems } from './errors';
import type { PageArgs, SortKey } from './pagination';
import type { KeysetLead, ListQuery } from './list-query';
import { unionOfRanges } from './sql';
import { nodeIdSql } from './graphql/node';
import { PageOf, ReadField, ReadFilter, ReadModel, ReadSort, SqlScope, sqlScope } from './read-model';

/**
 * How the readers of a read model (common/read-model.ts) write their statements from it: its services and
 * loaders, and the SQL plans (app/graphql/sql-plan): select lists, sorts, joins, filter conditions, kept
 * counts.
 */

/** Whether a given filter of `filters` leaves few rows (ReadFilter.bounds). */
export const boundsRows = (filters: readonly ReadFilter[], args: object): boolean =>
  filters.some((f) => f.bounds && (args as Record<string, unknown>)[f.arg] != null);

/**
 * How the rows `row` of a model's page nested in `at` belong to the parent's row `parent` (ReadModel.pagesOf),
 * for the field's arguments `args`; undefined for a value of its argument that it does not declare.
 */
export function belongsTo(model: ReadModel, at: string, row: string, parent: string, args: Record<string, unknown>): string | readonly string[] | undefined {
  const of = model.pagesOf[at];
  if (typeof of === 'function') return of(row, parent);
  const value = args[of.arg];
  return typeof value === 'string' && Object.hasOwn(of.by, value) ? of.by[value](row, parent) : undefined;
}

/** The arguments of a nested page's field that say which rows are the parent's (PageOf's `arg`), besides its filters. */
export const belongingArgs = (of: PageOf): string[] => (typeof of === 'function' ? [] : [of.arg]);

/** A loader's parents (fetchPagesByParent's `belongs`) of a model's pages nested in `at`, for `args`: its rows, as `alias`, of the parent row `p`. */
export const pagesOfParent = (model: ReadModel, at: string, args: object = {}) => ({
  belongs: (p: string) => belongsTo(model, at, model.alias, p, args as Record<string, unknown>)!,
  row: model.alias,
});

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

/**
 * The sort `orderBy` names when it is a fixed expression over the model's alias that joins nothing (plans
 * read no other), written over `row`; undefined otherwise.
 */
export function fixedSort(model: ReadModel, orderBy: unknown, row = model.alias): SortKey | undefined {
  const sort = typeof orderBy === 'string' && Object.hasOwn(model.sorts, orderBy) ? model.sorts[orderBy] : undefined;
  if (!sort || typeof sort.expression !== 'string' || sort.joins?.length) return undefined;
  return { ...(sort as SortKey), expression: row === model.alias ? sort.expression : sort.expression.replace(new RegExp(`\\b${model.alias}\\.`, 'g'), `${row}.`) };
}

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
 * How a SQL plan reads the given filters of `filters` (values in `args`) over rows `a` (ReadFilter's `plan`
 * and `names`), or undefined when the resolvers must answer: a value with a problem (their error), a filter
 * read `aside` or joining a row, a row named otherwise than by its key. `rootTable`: a root list's table, read
 * as rootRows says (`table`: the union of a filter's ranges, or `sources`: its parts read apart, that filter then
 * no condition). Given a row's
 * key, an empty page must be checked (`checkEmpty`): the resolvers answer an unknown row with an
 * error; `id` adds the key's parameter when it is used.
 */
export function plannedFilters(filters: readonly ReadFilter[], s: SqlScope, a: string, args: Record<string, unknown>, rootTable?: string) {
  if (filterProblems(filters, args).length) return undefined;
  const given = filters.filter((filter) => args[filter.arg] != null);
  if (given.some((filter) => filter.plan === 'aside' || filter.joins?.length)) return undefined;
  const values = { ...args };
  let named: { table: string; keyType: string; key: string } | undefined;
  for (const filter of given) {
    if (!filter.names) continue;
    const key = filter.names.key(args[filter.arg]);
    if (key === undefined) return undefined;
    named = { ...filter.names, key };
    values[filter.arg] = key;
  }
  const root = rootTable === undefined ? undefined : rootRows(rootTable, filters, s, a, values);
  const where = filterConditions(root ? given.filter(root.written) : given, s, a, values);
  const row = named;
  const id = () => `${s.p.add(row!.key)}::${row!.keyType}`;
  return { table: root?.table, sources: root?.sources, where, given, checkEmpty: row !== undefined, id };
}

/** A list's planned filters (plannedFilters). */
export type PlannedFilters = NonNullable<ReturnType<typeof plannedFilters>>;

/**
 * A page's query (common/list-page.ts fetchPage) of all of a model's rows as its service reads them, in the
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

/** The first filter of `sort.ledBy` given in `args`, as the lead of a keyset over `row` (ListQuery.keysetLead). */
export function keysetLead(filters: readonly ReadFilter[], sort: ReadSort, row: string, args: object): KeysetLead | undefined {
  for (const arg of sort.ledBy ?? []) {
    const value = (args as Record<string, unknown>)[arg];
    const equals = filters.find((f) => f.arg === arg)?.equals;
    if (value != null && equals) return { expression: `${row}.${equals.column}`, value, cast: equals.cast };
  }
  return undefined;
}
