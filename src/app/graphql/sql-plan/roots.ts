import type { FieldNode, GraphQLField, OperationDefinitionNode } from 'graphql';
import { isSearchQuery, nameSearch, RELEVANCE } from '../../../common/name-search';
import { isPlainFirstPage } from '../../../common/pagination';
import type { PageRows } from '../../../common/list-query';
import type { ReadModel } from '../../../common/read-model';
import { boundsRows, fixedSort, keepsCount, keptCountSql, plannedFilters, PlannedFilters } from '../../../common/read-model-sql';
import { READ_MODELS } from '../../../modules/read-models';
import { argumentReader } from '../variables';
import { Build, nextAlias, PAGE_ARGUMENTS, readsEveryArgument, Render, rowOf, scopeOf, Shape, STEP_ASIDE } from './parts';
import { ObjectPlanner } from './objects';
import type { RowsForm, StreamRow } from './page';

/** A root field of a SQL plan (which a plan answers, with which arguments; objects.ts plans what they select): its shape, its SQL for the request's arguments, and how its value is read back. */
export interface Root {
  key: string;
  shape: Shape;
  render?: (b: Build) => { sql: string; read?: (value: unknown) => unknown } | undefined;
  /** REST's text as rows (a list's first page, see TextStream; a row's, one row); `assemble` answers undefined when the resolvers must. */
  stream?: (b: Build) => { sql: string; assemble: (rows: StreamRow[]) => (string | Buffer)[] | undefined } | undefined;
  /** `render` as one row per item (a list's first page, see PagePlan.rows); `read` may answer STEP_ASIDE. */
  rows?: (b: Build) => RowsForm | undefined;
}

type RootKind = 'list' | 'search' | 'one';

/**
 * The read models' roots by field name (`list`, `search`, `one`), with the arguments each reads: its
 * model's declared filters (a root of one row: `one.args`), pages' own, and `omits`. Any other argument of
 * the field means no plan (readsEveryArgument). A root reads an argument by turning it into SQL or by
 * stepping aside when it is given (a chain filter, a status of assets, traits).
 */
const ROOTS = new Map(
  READ_MODELS.flatMap((model) => {
    const of = (field: string | undefined, kind: RootKind, args: readonly string[]) =>
      field ? [[field, { model, kind, args: [...args, ...(model.omits ? [model.omits.arg] : [])] }] as const] : [];
    const filters = [...PAGE_ARGUMENTS, ...[...model.filters, ...model.rootFilters].map((f) => f.arg)];
    return [...of(model.list, 'list', filters), ...of(model.search, 'search', [...filters, 'query']), ...of(model.one?.field, 'one', model.one?.args ?? [])];
  }),
);

/**
 * Whether a plan reads a model's `omits` argument as given (a boolean; anything else is the resolvers'
 * error), marking the row `a` when it is false: its `omits.field` answers null.
 */
function readsOmits(b: Build, model: ReadModel, args: Record<string, unknown>, a: string): boolean {
  if (!model.omits) return true;
  const given = args[model.omits.arg];
  if (typeof given !== 'boolean') return false;
  if (!given) rowOf(b, a).omitted = model.omits.field;
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
      const planned = ROOTS.get(name);
      if (field && !readsEveryArgument(field, planned?.args ?? [])) return undefined;
      let root: Omit<Root, 'key'> | undefined;
      if (name === '__typename') root = { shape: { kind: 'constant', value: queryType.name } };
      else if (planned?.kind === 'one') root = this.oneRoot(planned.model, field, node);
      else if (planned) root = this.listRoot(planned.model, field, node, planned.kind === 'search');
      if (!root) return undefined;
      roots.push({ key, ...root });
    }
    return roots;
  }

  /**
   * A read model's root of one row (`one`), found as its service finds it (undefined: the resolver
   * answers), or made of the arguments (`one.row`). Not found, or found more than once (at most 2 rows are
   * read, in `one.order`): the resolver's error, so the resolver answers.
   */
  private oneRoot(model: ReadModel, field: GraphQLField<unknown, unknown>, node: FieldNode): Omit<Root, 'key'> | undefined {
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
      return sql && `SELECT ${sql} AS v FROM ${from}${where}${one.order ? ` ORDER BY ${one.order(a)} LIMIT 2` : ''}`;
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
      // Its REST text as one row, null (the resolver answers) unless exactly one row is found.
      stream: text && ((b) => {
        const found = rows(b, text);
        const sql = found && `SELECT (SELECT CASE WHEN count(*) = 1 THEN min(x.v::text) END FROM (${found}) x)::text AS t`;
        return sql ? { sql, assemble: ([row]) => (row.t === null ? undefined : [row.t]) } : undefined;
      }),
    };
  }

  /**
   * A read model's root list (`list`) or search (`search`: its rows among common/name-search.ts's candidates
   * for `query`, ranked; an invalid query is the resolver's error): the first page of its rows, filtered by
   * its declared filters as its service filters them; a list given one filter alone that it keeps a count
   * of (`counts.byFilter`: a collection's assets), or only filters its `count` keeps, counted by that. A page
   * of a row named by a filter that may not exist (`checkEmpty`) steps aside when empty: the resolvers tell
   * an empty page from an unknown row.
   */
  private listRoot(model: ReadModel, field: GraphQLField<unknown, unknown>, node: FieldNode, search: boolean): Omit<Root, 'key'> | undefined {
    // A search's page is read as rows: its count is a window over the candidates the ranking reads (page.ts).
    const page = this.page(`${model.type}Page`, model.type, node, search);
    if (!page) return undefined;
    const filters = [...model.filters, ...model.rootFilters];
    const argumentsOf = argumentReader(field, node);
    /** The page's rows for the request's arguments, or undefined when the resolver must answer. */
    const rows = (b: Build) => {
      const args = argumentsOf(b.variables);
      const a = nextAlias(b);
      const sort = search ? undefined : fixedSort(model, args.orderBy, a);
      if (!isPlainFirstPage(args) || (search ? !isSearchQuery(args.query) : !sort)) return undefined;
      // A root list reads a filter declared as ranges (ReadFilter.ranges) from their union, or as sources from its parts (rootRows); a search ranks the table's rows.
      const filtered = readsOmits(b, model, args, a) ? plannedFilters(filters, scopeOf(b), a, args, search ? undefined : model.table) : undefined;
      if (!filtered) return undefined;
      const at: Omit<PageRows, 'sort' | 'args'> = { from: `${filtered.table ?? model.table} ${a}`, sources: filtered.sources, alias: a, idExpression: `${a}.id`, where: filtered.where };
      if (search) {
        const ranked = nameSearch(b.p, a, args.query as string);
        const where = [...filtered.where, ranked.where(`${model.table} ${a}`, filtered.where, boundsRows(filtered.given, args))];
        // A search's cursor is of its ranking, as the resolvers write it.
        return { rows: { ...at, where, sort: ranked.sort, args: { ...args, orderBy: RELEVANCE }, countAllRead: true }, filtered };
      }
      const named = filtered.given.length === 1 && filtered.given[0].names ? model.counts?.byFilter?.[filtered.given[0].arg] : undefined;
      const count = named ? () => named(filtered.id()) : keepsCount(model, args) ? () => keptCountSql(model, scopeOf(b), args)! : undefined;
      return { rows: { ...at, sort: sort!, args, count }, filtered };
    };
    /** A form of the page (page.ts), `checked` for what an empty page may mean. */
    const form =
      <F, R>(make: ((b: Build, rows: PageRows) => F | undefined) | undefined, checked: (made: F, filtered: PlannedFilters) => R | undefined) =>
      make &&
      ((b: Build): R | undefined => {
        const found = rows(b);
        const made = found && make(b, found.rows);
        return made === undefined ? undefined : checked(made, found!.filtered);
      });
    const resultAt = page.resultAt;
    const isEmpty = (value: unknown) => !Array.isArray(value) || !Array.isArray(value[resultAt!]) || value[resultAt!].length === 0;
    return {
      shape: page.shape,
      // An empty page is told by its rows: without `result` selected, the resolvers answer.
      render: form(page.render, (sql, f) =>
        !f.checkEmpty ? { sql } : resultAt === undefined ? undefined : { sql, read: (value: unknown) => (isEmpty(value) ? STEP_ASIDE : value) },
      ),
      rows: form(page.rows, (made, f) => ({ sql: made.sql, read: (sent: StreamRow<unknown>[]) => (f.checkEmpty && !sent.length ? STEP_ASIDE : made.read(sent)) })),
      stream: form(page.stream, (made, f) => ({ sql: made.sql, assemble: (sent: StreamRow[]) => (f.checkEmpty && !sent.length ? undefined : made.assemble(sent)) })),
    };
  }
}
