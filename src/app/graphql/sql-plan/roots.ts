import type { FieldNode, GraphQLField, OperationDefinitionNode } from 'graphql';
import { isSearchQuery, nameSearch, RELEVANCE } from '../../../common/name-search';
import type { SortKey } from '../../../common/pagination';
import { ADDRESS, UUID } from '../../../common/validate';
import { keyOf } from '../../../common/graphql/node';
import { ASSET_SORTS } from '../../../modules/asset/asset.loaders';
import { COLLECTION_SORTS } from '../../../modules/collection/collection.service';
import { keepsCount, keptCountSql } from '../../../common/read-model';
import type { ReadFilter, ReadModel } from '../../../common/read-model';
import { argumentReader } from '../variables';
import { Build, nextAlias, PAGE_ARGUMENTS, Planned, plannedPage, readsEveryArgument, realias, Render, scopeOf, Shape, STEP_ASIDE } from './parts';
import { assetCountSql } from './leaves';
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

/**
 * The arguments each planned root reads (each root's `where` below, and pages' own; a read model's list,
 * its declared filters): any other argument of the field means no plan (readsEveryArgument). A root reads
 * an argument by turning it into SQL or by stepping aside when it is given (a chain filter, a status of
 * assets, traits).
 */
const ROOT_ARGUMENTS: Record<string, readonly string[]> = {
  ...Object.fromEntries([...MODEL_LISTS].map(([list, model]) => [list, [...PAGE_ARGUMENTS, ...listFilters(model).map((f) => f.arg)]])),
  asset: ['tokenAddress', 'tokenId', 'chainId'],
  collection: ['address', 'id', 'chainId', 'includeAssets'],
  assets: [...PAGE_ARGUMENTS, 'collectionId', 'assetContract', 'ownerId', 'chainId', 'status', 'trait', 'currency'],
  collections: [...PAGE_ARGUMENTS, 'includeAssets', 'chainId', 'categoryId', 'ownerAddress', 'status'],
  searchAssets: [...PAGE_ARGUMENTS, 'query', 'collectionId', 'assetContract', 'ownerId', 'chainId', 'status', 'trait', 'currency'],
  searchCollections: [...PAGE_ARGUMENTS, 'query', 'includeAssets', 'chainId', 'categoryId', 'ownerAddress', 'status'],
};

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
      else if (name === 'asset') root = this.assetRoot(field, node);
      else if (name === 'collection') root = this.collectionRoot(field, node);
      else if (name === 'assets') root = this.assetsRoot(field, node);
      else if (name === 'collections') root = this.collectionsRoot(field, node);
      else if (MODEL_LISTS.has(name)) root = this.modelListRoot(MODEL_LISTS.get(name)!, field, node);
      else if (name === 'searchAssets') root = this.searchAssetsRoot(field, node);
      else if (name === 'searchCollections') root = this.searchCollectionsRoot(field, node);
      if (!root) return undefined;
      roots.push({ key, ...root });
    }
    return roots;
  }

  private assetRoot(field: GraphQLField<unknown, unknown>, node: FieldNode): Omit<Root, 'key'> | undefined {
    return this.oneRow(field, node, 'Asset', 'assets', (b, args, a) => {
      const where = [`${a}.token_address = ${b.p.add(args.tokenAddress)}`, `${a}.token_id = ${b.p.add(args.tokenId)}::numeric`];
      if (args.chainId != null) where.push(`${a}.chain_id = ${b.p.add(args.chainId)}`);
      return where;
    });
  }

  /** `collection(address | id, chainId, includeAssets)`: as collection.service.ts's findNamedCollection finds it. */
  private collectionRoot(field: GraphQLField<unknown, unknown>, node: FieldNode): Omit<Root, 'key'> | undefined {
    return this.oneRow(field, node, 'Collection', 'collections', (b, args, a) => {
      if (typeof args.includeAssets !== 'boolean') return undefined;
      const { address, id } = args;
      // Named twice or not at all: the resolver's error.
      if ((typeof address === 'string') === (typeof id === 'string')) return undefined;
      // includeAssets: false answers its `assets` with null.
      if (!args.includeAssets) b.withoutAssets.add(a);
      const ref = (id ?? address) as string;
      const where = [
        UUID.test(ref)
          ? `${a}.id = ${b.p.add(ref.toLowerCase())}::uuid`
          : typeof address === 'string' || ADDRESS.test(ref)
            ? `${a}.contract_address = ${b.p.add(ref.toLowerCase())}`
            : `${a}.slug = ${b.p.add(ref)}`,
      ];
      if (args.chainId != null) where.push(`${a}.chain_id = ${b.p.add(args.chainId)}`);
      return where;
    });
  }

  /**
   * A root of one row of `table` found by `where` (undefined: the resolver answers). Not found, or found
   * on several chains (the rows are read in the chains' order, at most 2): the resolver's error, so the
   * resolver answers.
   */
  private oneRow(
    field: GraphQLField<unknown, unknown>,
    node: FieldNode,
    typeName: Planned,
    table: string,
    where: (b: Build, args: Record<string, unknown>, alias: string) => string[] | undefined,
  ): Omit<Root, 'key'> | undefined {
    const object = this.object(typeName, node.selectionSet);
    if (!object) return undefined;
    const argumentsOf = argumentReader(field, node);
    /** The rows as `json(alias)`. */
    const rows = (b: Build, json: Render) => {
      const a = nextAlias(b);
      const conditions = where(b, argumentsOf(b.variables), a);
      const sql = conditions && json(b, a);
      return sql && `SELECT ${sql} AS v FROM ${table} ${a} WHERE ${conditions!.join(' AND ')} ORDER BY ${a}.chain_id LIMIT 2`;
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
    types: { page: string; item: Planned; table: string; sorts: Record<string, SortKey>; sortTable?: string },
    filters: (
      b: Build,
      args: Record<string, unknown>,
      a: string,
    ) => { where: string[]; checkEmpty?: boolean; count?: () => string; exists?: () => string; ranked?: SortKey } | undefined,
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
        rows: { table: types.table, alias: a, where: filtered.where, sort, args: pageArgs, count: filtered.count, countAllRead: filtered.ranked !== undefined },
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

  private assetsRoot(field: GraphQLField<unknown, unknown>, node: FieldNode): Omit<Root, 'key'> | undefined {
    return this.listRoot(field, node, { page: 'AssetPage', item: 'Asset', table: 'assets', sorts: ASSET_SORTS }, (b, args, a) => {
      const filter = assetFilters(b, args, a);
      if (!filter) return undefined;
      // A collection's own assets are counted in collection_asset_counts.
      const count = filter.checkEmpty && filter.where.length === 1 ? () => assetCountSql(filter.id()) : undefined;
      return { ...filter, count };
    });
  }

  /** `searchAssets(query, ...)`: the filters of `assets`, ranked by name as asset.service.ts's listAssets searches. */
  private searchAssetsRoot(field: GraphQLField<unknown, unknown>, node: FieldNode): Omit<Root, 'key'> | undefined {
    return this.searchRoot(field, node, { page: 'AssetPage', item: 'Asset', table: 'assets' }, assetFilters);
  }

  /** `searchCollections(query, ...)`: the filters of `collections`, ranked by name as collection.service.ts's listCollections searches. */
  private searchCollectionsRoot(field: GraphQLField<unknown, unknown>, node: FieldNode): Omit<Root, 'key'> | undefined {
    return this.searchRoot(field, node, { page: 'CollectionPage', item: 'Collection', table: 'collections' }, collectionFilters);
  }

  /**
   * A search: the list's `filters`, and among the rows that pass them the candidates of common/name-search.ts
   * for `query`, ranked; an invalid query is the resolver's error, so the resolver answers.
   */
  private searchRoot(
    field: GraphQLField<unknown, unknown>,
    node: FieldNode,
    types: { page: string; item: Planned; table: string },
    filters: (b: Build, args: Record<string, unknown>, a: string) => { where: string[] } | undefined,
  ): Omit<Root, 'key'> | undefined {
    const rank = (b: Build, args: Record<string, unknown>, a: string) => {
      const filter = isSearchQuery(args.query) ? filters(b, args, a) : undefined;
      if (!filter) return undefined;
      const search = nameSearch(b.p, a, args.query as string);
      return { ...filter, where: [...filter.where, search.where(`${types.table} ${a}`, filter.where)], ranked: search.sort };
    };
    return this.listRoot(field, node, { ...types, sorts: {} }, rank, true);
  }

  /** A read model's root list, filtered by its declared filters as its service filters them. */
  private modelListRoot(model: ReadModel, field: GraphQLField<unknown, unknown>, node: FieldNode): Omit<Root, 'key'> | undefined {
    const types = { page: `${model.type}Page`, item: model.type as Planned, table: model.table, sorts: model.sorts, sortTable: model.alias };
    return this.listRoot(field, node, types, (b, args, a) => {
      const filtered = plannedFilters(b, listFilters(model), args, a);
      // Counted without reading the rows where the model keeps counts for the filters given.
      return filtered && { ...filtered, count: keepsCount(model, args) ? () => keptCountSql(model, scopeOf(b), args)! : undefined };
    });
  }

  private collectionsRoot(field: GraphQLField<unknown, unknown>, node: FieldNode): Omit<Root, 'key'> | undefined {
    return this.listRoot(field, node, { page: 'CollectionPage', item: 'Collection', table: 'collections', sorts: COLLECTION_SORTS }, collectionFilters);
  }
}

/**
 * The filters of `assets` and `searchAssets` over `a`, or undefined when the resolver must answer: a status
 * or a `currency` (the resolvers check it) reads the active listing, which the plans do not join.
 */
function assetFilters(b: Build, args: Record<string, unknown>, a: string) {
  if (args.chainId != null || args.status != null || args.currency != null || (args.trait as unknown[] | null)?.length) return undefined;
  const byCollection = collectionFilter(b, args, a);
  if (!byCollection) return undefined;
  if (args.assetContract != null) byCollection.where.push(`${a}.token_address = ${b.p.add(args.assetContract)}`);
  if (args.ownerId != null) byCollection.where.push(`${a}.owner = ${b.p.add(args.ownerId)}`);
  return byCollection;
}

/** The filters of `collections` and `searchCollections` over `a`, or undefined when the resolver must answer. */
function collectionFilters(b: Build, args: Record<string, unknown>, a: string): { where: string[] } | undefined {
  // A chain filter checks that the chain exists.
  if (args.chainId != null || typeof args.includeAssets !== 'boolean') return undefined;
  // includeAssets: false answers `assets` of each collection with null.
  if (!args.includeAssets) b.withoutAssets.add(a);
  const where: string[] = [];
  if (args.categoryId != null) where.push(`${a}.category_id = ${b.p.add(keyOf('Category', args.categoryId as string))}`);
  if (args.ownerAddress != null) where.push(`${a}.owner = ${b.p.add(args.ownerAddress)}`);
  if (args.status != null) where.push(`${a}.status = ${b.p.add(args.status)}`);
  return { where };
}

/** A read model's root list's filters. */
function listFilters(model: ReadModel): ReadFilter[] {
  return [...model.filters, ...model.rootFilters];
}

/** An asset's collection by its id (a contract address: the resolvers look the collection up). */
const ASSET_COLLECTION: ReadFilter = { arg: 'collectionId', type: 'String', plan: 'collection', where: (s, a, id: string) => `${a}.collection_id = ${s.p.add(id)}` };

/** A list's `collectionId` filter over `a` (see plannedFilters). */
const collectionFilter = (b: Build, args: Record<string, unknown>, a: string) => plannedFilters(b, [ASSET_COLLECTION], args, a);
