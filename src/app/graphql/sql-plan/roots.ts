import type { FieldNode, GraphQLField, OperationDefinitionNode } from 'graphql';
import { isSearchQuery, nameSearch, RELEVANCE } from '../../../common/name-search';
import type { SortKey } from '../../../common/pagination';
import { boundsRows, fixedSort, keepsCount, keptCountSql, ReadFilter, ReadModel } from '../../../common/read-model';
import { argumentReader } from '../variables';
import { Build, nextAlias, PAGE_ARGUMENTS, plannedPage, readsEveryArgument, realias, Render, scopeOf, Shape, STEP_ASIDE } from './parts';
import { ObjectPlanner, plannedFilters, READ_MODELS } from './objects';
import type { RowsForm, StreamRow } from './page';

/**
 * The roots of SQL plans: which root fields a plan answers, and with which arguments; objects.ts plans
 * what they select.
 */


/** A root field: its shape, its SQL for the request's arguments, and how its value is read back. */
export interface Root {
  key: string;
  shape: Shape;
  render?: (b: Build) => { sql: string; read?: (value: unknown) => unknown } | undefined;
  /** Its final JSON as REST writes it (see Part); only for a root whose value needs no reading back. */
  text?: (b: Build) => string | undefined;
  /** REST's text as rows (a list's first page, see TextStream); `assemble` answers undefined when the resolvers must. */
  stream?: (b: Build) => { sql: string; assemble: (rows: StreamRow[]) => (string | Buffer)[] | undefined } | undefined;
  /** `render` as one row per item (a list's first page, see PagePlan.rows); `read` may answer STEP_ASIDE. */
  rows?: (b: Build) => RowsForm | undefined;
}

/** The root lists of read models, by field name. */
const MODEL_LISTS = new Map(READ_MODELS.filter((model) => model.list).map((model) => [model.list!, model]));
/** The search roots of read models (searchAssets), by field name. */
const MODEL_SEARCHES = new Map(READ_MODELS.filter((model) => model.search).map((model) => [model.search!, model]));
/** The roots of one row of read models (collection), by field name. */
const MODEL_ONES = new Map(READ_MODELS.filter((model) => model.one).map((model) => [model.one!.field, model]));

/** A read model's arguments every root of it reads besides its own: its `omits`. */
const omitsArgument = (model: ReadModel) => (model.omits ? [model.omits.arg] : []);

/**
 * The arguments each planned root reads (each root's `where` below, and pages' own; a read model's roots,
 * its declared filters and arguments): any other argument of the field means no plan (readsEveryArgument).
 * A root reads an argument by turning it into SQL or by stepping aside when it is given (a chain filter, a
 * status of assets, traits).
 */
const ROOT_ARGUMENTS: Record<string, readonly string[]> = {
  ...Object.fromEntries([...MODEL_LISTS].map(([list, model]) => [list, [...PAGE_ARGUMENTS, ...listFilters(model).map((f) => f.arg), ...omitsArgument(model)]])),
  ...Object.fromEntries([...MODEL_SEARCHES].map(([search, model]) => [search, [...PAGE_ARGUMENTS, 'query', ...listFilters(model).map((f) => f.arg), ...omitsArgument(model)]])),
  ...Object.fromEntries([...MODEL_ONES].map(([one, model]) => [one, [...model.one!.args, ...omitsArgument(model)]])),
};

/**
 * Whether a plan reads a model's `omits` argument as given (a boolean; anything else is the resolvers'
 * error), marking the row `a` when it is false: its `omits.field` answers null.
 */
function readsOmits(b: Build, model: ReadModel, args: Record<string, unknown>, a: string): boolean {
  if (!model.omits) return true;
  const given = args[model.omits.arg];
  if (typeof given !== 'boolean') return false;
  if (!given) b.omitted.set(a, model.omits.field);
  return true;
}

export class Planner extends ObjectPlanner {
  /** The operation's root fields, or undefined when one of them is not covered. */
  roots(operation: OperationDefinitionNode): Root[] | undefined {
    if (operation.operation !== 'query' || operation.directives?.length) return undefined;
    const queryType = this.schema.getQueryType()!;
    const fields = this.fields(operation.selectionSet);
    if (!fields) return undefined;
    const roots: Root[] = [];
    for (const { key, node } of fields) {
      const name = node.name.value;
      const field = queryType.getFields()[name];
      let root: Omit<Root, 'key'> | undefined;
      if (field && !readsEveryArgument(field, ROOT_ARGUMENTS[name] ?? [])) return undefined;
      if (name === '__typename') root = { shape: { kind: 'constant', value: queryType.name } };
      else if (MODEL_ONES.has(name)) root = this.modelOneRoot(MODEL_ONES.get(name)!, field, node);
      else if (MODEL_LISTS.has(name)) root = this.modelListRoot(MODEL_LISTS.get(name)!, field, node);
      else if (MODEL_SEARCHES.has(name)) root = this.modelSearchRoot(MODEL_SEARCHES.get(name)!, field, node);
      if (!root) return undefined;
      roots.push({ key, ...root });
    }
    return roots;
  }

  /**
   * A read model's root of one row (`one`), found as its service finds it (undefined: the resolver
   * answers), or made of the arguments (`one.row`). Not found, or found on several chains (the rows are
   * read in the chains' order, at most 2): the resolver's error, so the resolver answers.
   */
  private modelOneRoot(model: ReadModel, field: GraphQLField<unknown, unknown>, node: FieldNode): Omit<Root, 'key'> | undefined {
    const one = model.one!;
    const object = this.object(model.type, node.selectionSet);
    if (!object) return undefined;
    const argumentsOf = argumentReader(field, node);
    /** The rows as `json(alias)`. */
    const rows = (b: Build, json: Render) => {
      const a = nextAlias(b);
      const args = argumentsOf(b.variables);
      if (!readsOmits(b, model, args, a)) return undefined;
      const from = one.row ? `${one.row(scopeOf(b), args)} ${a}` : `${model.table} ${a}`;
      const conditions = one.where(scopeOf(b), a, args);
      const sql = conditions && json(b, a);
      const where = conditions?.length ? ` WHERE ${conditions.join(' AND ')}` : '';
      return sql && `SELECT ${sql} AS v FROM ${from}${where}${one.row ? '' : ` ORDER BY ${a}.chain_id LIMIT 2`}`;
    };
    const text = object.text;
    return {
      shape: object.shape,
      render: (b) => {
        const found = rows(b, object.render!);
        if (!found) return undefined;
        return {
          sql: `array_to_json(ARRAY(SELECT x.v FROM (${found}) x))`,
          read: (value) => (Array.isArray(value) && value.length === 1 ? value[0] : STEP_ASIDE),
        };
      },
      // Null (the resolver answers) unless exactly one row is found.
      text: text && ((b) => {
        const found = rows(b, text);
        return found && `(SELECT CASE WHEN count(*) = 1 THEN min(x.v::text) END FROM (${found}) x)`;
      }),
    };
  }

  /**
   * A root list's first page: `filters` turns the request's arguments into WHERE conditions on the rows
   * (alias `a`), or undefined when the resolver must answer; `checkEmpty`: an empty page steps aside.
   */
  private listRoot(
    field: GraphQLField<unknown, unknown>,
    node: FieldNode,
    types: { page: string; item: string; table: string; sorts: Record<string, SortKey>; sortTable?: string },
    filters: (
      b: Build,
      args: Record<string, unknown>,
      a: string,
    ) => { table?: string; where: string[]; checkEmpty?: boolean; count?: () => string; exists?: () => string; ranked?: SortKey } | undefined,
    search = false,
  ): Omit<Root, 'key'> | undefined {
    // A search's page is read as rows: its count is a window over the candidates the ranking reads (page.ts).
    const page = this.page(types.page, types.item, node, search);
    if (!page) return undefined;
    // Sorts that name their table otherwise (orders `r`, offers `o`) name it `t`, as page.ts reads them.
    const sorts = types.sortTable ? Object.fromEntries(Object.entries(types.sorts).map(([k, sort]) => [k, realias(sort, 't', types.sortTable)])) : types.sorts;
    const resultAt = page.resultAt;
    const argumentsOf = argumentReader(field, node);
    /** The page's rows for the request's arguments, or undefined when the resolver must answer. */
    const rows = (b: Build, text: boolean, streamed = false) => {
      const args = argumentsOf(b.variables);
      if (!plannedPage(args) || (!search && !sorts[args.orderBy as string])) return undefined;
      const a = nextAlias(b);
      const filtered = filters(b, args, a);
      // An empty page must be told apart from an error: by its rows, or (REST's text) by `exists`.
      if (!filtered || (filtered.checkEmpty && !streamed && (text ? !filtered.exists : resultAt === undefined))) return undefined;
      const sort = filtered.ranked ?? sorts[args.orderBy as string];
      if (!sort) return undefined;
      // A search's cursor is of its ranking, as the resolvers write it.
      const pageArgs = filtered.ranked ? { ...args, orderBy: RELEVANCE } : args;
      return {
        rows: { table: filtered.table ?? types.table, alias: a, where: filtered.where, sort, args: pageArgs, count: filtered.count, countAllRead: filtered.ranked !== undefined },
        filtered,
      };
    };
    const isEmpty = (value: unknown) => !Array.isArray(value) || !Array.isArray(value[resultAt!]) || value[resultAt!].length === 0;
    return {
      shape: page.shape,
      render: (b) => {
        const found = rows(b, false);
        const sql = found && page.render(b, found.rows);
        if (!sql) return undefined;
        return { sql, read: found!.filtered.checkEmpty ? (value) => (isEmpty(value) ? STEP_ASIDE : value) : undefined };
      },
      rows: page.rows
        ? (b) => {
            const found = rows(b, false);
            const form = found && page.rows!(b, found.rows);
            if (!form) return undefined;
            const checkEmpty = found!.filtered.checkEmpty;
            return { sql: form.sql, read: (sent) => (checkEmpty && !sent.length ? STEP_ASIDE : form.read(sent)) };
          }
        : undefined,
      stream: page.stream
        ? (b) => {
            const found = rows(b, false, true);
            const stream = found && page.stream!(b, found.rows);
            if (!stream) return undefined;
            // An empty page of what may not exist: the resolvers tell an empty one from an unknown one.
            const checkEmpty = found!.filtered.checkEmpty;
            return { sql: stream.sql, assemble: (sent) => (checkEmpty && !sent.length ? undefined : stream.assemble(sent)) };
          }
        : undefined,
      text: page.text
        ? (b) => {
            const found = rows(b, true);
            const sql = found && page.text!(b, found.rows);
            // Null (the resolver answers) when what the page is of does not exist.
            return sql && (found.filtered.checkEmpty ? `(CASE WHEN ${found.filtered.exists!()} THEN ${sql} END)` : sql);
          }
        : undefined,
    };
  }

  /** A read model's search root: its root list's filters, ranked by name as its service searches. */
  private modelSearchRoot(model: ReadModel, field: GraphQLField<unknown, unknown>, node: FieldNode): Omit<Root, 'key'> | undefined {
    const types = { page: `${model.type}Page`, item: model.type, table: model.table! };
    return this.searchRoot(field, node, types, (b, args, a) => (readsOmits(b, model, args, a) ? plannedFilters(b, listFilters(model), args, a) : undefined));
  }

  /**
   * A search: the list's `filters`, and among the rows that pass them the candidates of common/name-search.ts
   * for `query`, ranked; an invalid query is the resolver's error, so the resolver answers.
   */
  private searchRoot(
    field: GraphQLField<unknown, unknown>,
    node: FieldNode,
    types: { page: string; item: string; table: string },
    filters: (b: Build, args: Record<string, unknown>, a: string) => { where: string[]; given?: readonly ReadFilter[] } | undefined,
  ): Omit<Root, 'key'> | undefined {
    const rank = (b: Build, args: Record<string, unknown>, a: string) => {
      const filter = isSearchQuery(args.query) ? filters(b, args, a) : undefined;
      if (!filter) return undefined;
      const search = nameSearch(b.p, a, args.query as string);
      const where = search.where(`${types.table} ${a}`, filter.where, boundsRows(filter.given ?? [], args));
      return { ...filter, where: [...filter.where, where], ranked: search.sort };
    };
    return this.listRoot(field, node, { ...types, sorts: {} }, rank, true);
  }

  /**
   * A read model's root list, filtered by its declared filters as its service filters them; given one filter
   * alone that it keeps a count of (`counts.byFilter`: a collection's assets), counted by it.
   */
  private modelListRoot(model: ReadModel, field: GraphQLField<unknown, unknown>, node: FieldNode): Omit<Root, 'key'> | undefined {
    const sorts = Object.fromEntries(Object.entries(model.sorts).flatMap(([name, sort]) => (fixedSort(sort) ? [[name, fixedSort(sort)!]] : [])));
    const types = { page: `${model.type}Page`, item: model.type, table: model.table!, sorts, sortTable: model.alias };
    return this.listRoot(field, node, types, (b, args, a) => {
      const filtered = readsOmits(b, model, args, a) ? plannedFilters(b, listFilters(model), args, a, model.table) : undefined;
      if (!filtered) return undefined;
      const byFilter = filtered.given.length === 1 && filtered.given[0].names ? model.counts?.byFilter?.[filtered.given[0].arg] : undefined;
      // Counted without reading the rows where the model keeps counts for the filters given.
      const count = byFilter ? () => byFilter(filtered.id()) : keepsCount(model, args) ? () => keptCountSql(model, scopeOf(b), args)! : undefined;
      return { ...filtered, count };
    });
  }
}

/** A read model's root list's filters. */
function listFilters(model: ReadModel): ReadFilter[] {
  return [...model.filters, ...model.rootFilters];
}
