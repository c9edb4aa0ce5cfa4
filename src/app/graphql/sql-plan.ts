import {
  FieldNode,
  getNamedType,
  getNullableType,
  GraphQLField,
  GraphQLObjectType,
  GraphQLSchema,
  isEnumType,
  isListType,
  Kind,
  OperationDefinitionNode,
  SelectionSetNode,
} from 'graphql';
import { getArgumentValues } from 'graphql/execution/values';
import type { DataSource, EntityMetadata } from 'typeorm';
import type { Context } from '../../common/request/context';
import { MAX_LIMIT, orderBySql, SortDirection, SortKey } from '../../common/pagination';
import { Params } from '../../common/sql';
import { UUID } from '../../common/validate';
import { Asset } from '../../modules/asset/asset.entity';
import { ASSET_SORTS } from '../../modules/asset/asset.loaders';
import { Collection } from '../../modules/collection/collection.entity';
import { COLLECTION_SORTS } from '../../modules/collection/collection.service';

/**
 * SQL plans: a query whose whole selection PostgreSQL can answer exactly as the resolvers would is run
 * as one statement that builds the response as JSON (`json_build_array` per object, `ARRAY(...)` of the
 * rows in their order), so Node parses one value instead of hydrating rows, filling loaders and walking
 * resolvers field by field; Node then gives the values their keys (decode).
 *
 * What a plan covers, decided once per document (anything else: no plan, the resolvers answer):
 * - roots `asset(tokenAddress, tokenId, chainId)`, `assets(...)` and `collections(...)` with their
 *   plain filters, first pages only (`page` absent) and without `cursor` or `remaining`;
 * - fields of Asset and Collection stored in a column and returned as stored (no field resolver):
 *   text, ids, addresses and token ids as strings, Int, JSON, enums (by their GraphQL names) and
 *   DateTimeISO (ISO text of the millisecond timestamp, as Date#toISOString writes it);
 * - `asset.collection` and `collection.assets(limit, orderBy, direction)`, nested in the statement;
 * - aliases and `__typename`; no fragments, no directives.
 * A plan also steps aside at run time, before any byte is sent, whenever the resolvers would answer an
 * error or need another statement to decide: an asset that is not found (or is on several chains), an
 * empty page of a collection given by id (which may not exist), an out-of-range limit, a `page`, a
 * chain filter (the resolvers check that the chain exists), `includeAssets: false`. The resolvers then
 * answer the request as always. `test/graphql-sql-plan.test.ts` holds the two answers to each other,
 * byte for byte.
 */
export interface SqlPlan {
  /** The operation's `data`, or undefined when the resolvers must answer (nothing was sent). */
  run(context: Context, variables: Record<string, unknown>): Promise<Record<string, unknown> | undefined>;
}


/** Per request: the statement's parameters, the coerced variables, fresh table aliases. */
interface Build {
  p: Params;
  variables: Record<string, unknown>;
  aliases: number;
}

/** A SQL expression for one value of the response, given the alias of the row it belongs to; undefined: step aside. */
type Render = (b: Build, row: string) => string | undefined;

/**
 * How a value PostgreSQL sends becomes the response's value. Objects travel as JSON arrays of their
 * values in selection order (json_build_array costs PostgreSQL a fraction of json_build_object, which
 * escapes every key of every row); their keys, and constants such as __typename, are put back here.
 */
type Shape =
  | { kind: 'value' }
  | { kind: 'constant'; value: string }
  | { kind: 'object'; keys: string[]; fields: Shape[] }
  | { kind: 'list'; item: Shape };

/** A planned part: its shape, and (unless constant) its SQL. */
interface Part {
  shape: Shape;
  render?: Render;
}

const VALUE: Shape = { kind: 'value' };
const constant = (value: string): Part => ({ shape: { kind: 'constant', value } });

function decode(shape: Shape, value: unknown): unknown {
  switch (shape.kind) {
    case 'value':
      return value;
    case 'constant':
      return shape.value;
    case 'list':
      return (value as unknown[]).map((item) => decode(shape.item, item));
    case 'object': {
      if (value === null) return null;
      const values = value as unknown[];
      const out: Record<string, unknown> = {};
      let next = 0;
      for (let i = 0; i < shape.keys.length; i += 1) {
        const field = shape.fields[i];
        out[shape.keys[i]] = field.kind === 'constant' ? field.value : decode(field, values[next++]);
      }
      return out;
    }
  }
}

const objectShape = (fields: [string, Shape][]): Shape => ({ kind: 'object', keys: fields.map(([key]) => key), fields: fields.map(([, shape]) => shape) });

/** An object of planned parts: `json_build_array` of the values that are not constant. */
function objectPart(parts: [string, Part][]): Part {
  const shape = objectShape(parts.map(([key, part]) => [key, part.shape]));
  const renders = parts.map(([, part]) => part.render).filter((r): r is Render => r !== undefined);
  return {
    shape,
    render: (b, row) => {
      const values: string[] = [];
      for (const render of renders) {
        const sql = render(b, row);
        if (sql === undefined) return undefined;
        values.push(sql);
      }
      return `json_build_array(${values.join(', ')})`;
    },
  };
}

const STEP_ASIDE = Symbol('stepAside');

/** json_build_array takes at most 100 arguments. */
const MAX_FIELDS = 100;

const nextAlias = (b: Build) => `j${(b.aliases += 1)}`;

/** The sort expressions name the list's table `t`; a plan names each table of its own. */
const realias = (sort: SortKey, alias: string): SortKey => ({ ...sort, expression: sort.expression.replace(/\bt\./g, `${alias}.`) });

/** FROM ... WHERE ... ORDER BY ... LIMIT of a first page of `table` (aliased `alias`). */
function firstPageSql(b: Build, table: string, alias: string, where: string[], sort: SortKey, args: Record<string, unknown>): string {
  const order = orderBySql(realias(sort, alias), `${alias}.id`, args.direction as SortDirection);
  return `${table} ${alias}${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY ${order} LIMIT ${b.p.add(args.limit)}`;
}

const isFirstPage = (page: unknown) => page === undefined || page === null || page === '';
const limitFits = (limit: unknown): limit is number => Number.isInteger(limit) && (limit as number) >= 1 && (limit as number) <= MAX_LIMIT;

/** The JSON value of a column field as its GraphQL type serializes it, or undefined when SQL cannot say it exactly. */
function columnRender(metadata: EntityMetadata, field: GraphQLField<unknown, unknown>): Render | undefined {
  const column = metadata.findColumnWithPropertyName(field.name);
  if (!column || column.relationMetadata) return undefined;
  if (isListType(getNullableType(field.type))) return undefined;
  const type = getNamedType(field.type);
  const sqlType = typeof column.type === 'string' ? column.type : '';
  const name = `"${column.databaseName}"`;
  if (isEnumType(type)) {
    const values = type.getValues();
    if (!values.every((v) => typeof v.value === 'string' && /^[a-z0-9_]+$/.test(v.value) && /^[A-Z0-9_]+$/.test(v.name))) return undefined;
    const cases = values.map((v) => `WHEN '${v.value}' THEN '${v.name}'`).join(' ');
    return (_b, row) => `CASE ${row}.${name} ${cases} END`;
  }
  switch (type.name) {
    case 'ID':
    case 'String':
    case 'Address':
    case 'TokenId':
      if (sqlType === 'uuid' || sqlType === 'numeric') return (_b, row) => `${row}.${name}::text`;
      if (sqlType === 'varchar' || sqlType === 'text') return (_b, row) => `${row}.${name}`;
      return undefined;
    case 'Int':
      return sqlType === 'integer' ? (_b, row) => `${row}.${name}` : undefined;
    case 'JSON':
    case 'JSONObject':
      return sqlType === 'jsonb' ? (_b, row) => `${row}.${name}` : undefined;
    case 'DateTimeISO':
      // Stored to the millisecond (precision 3): the text Date#toISOString gives of the value pg reads.
      if (sqlType !== 'timestamptz' || column.precision !== 3) return undefined;
      return (_b, row) => `to_char(${row}.${name} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
    default:
      return undefined;
  }
}

/** A root field: its shape, its SQL for the request's arguments, and how its value is read back. */
interface Root {
  key: string;
  shape: Shape;
  render?: (b: Build) => { sql: string; read?: (value: unknown) => unknown } | undefined;
}

class Planner {
  private readonly entities: Record<'Asset' | 'Collection', EntityMetadata>;

  constructor(
    private readonly schema: GraphQLSchema,
    ds: DataSource,
  ) {
    this.entities = { Asset: ds.getMetadata(Asset), Collection: ds.getMetadata(Collection) };
  }

  /** The fields of a selection with their response keys; undefined for fragments, directives or a key given twice. */
  private fields(selectionSet: SelectionSetNode | undefined): { key: string; node: FieldNode }[] | undefined {
    if (!selectionSet || selectionSet.selections.length > MAX_FIELDS) return undefined;
    const out: { key: string; node: FieldNode }[] = [];
    const keys = new Set<string>();
    for (const node of selectionSet.selections) {
      if (node.kind !== Kind.FIELD || node.directives?.length) return undefined;
      const key = node.alias?.value ?? node.name.value;
      if (keys.has(key)) return undefined;
      keys.add(key);
      out.push({ key, node });
    }
    return out;
  }

  /** One row of Asset or Collection for this selection. */
  object(typeName: 'Asset' | 'Collection', selectionSet: SelectionSetNode | undefined): Part | undefined {
    const type = this.schema.getType(typeName) as GraphQLObjectType;
    const fields = this.fields(selectionSet);
    if (!fields) return undefined;
    const parts: [string, Part][] = [];
    for (const { key, node } of fields) {
      const name = node.name.value;
      let part: Part | undefined;
      if (name === '__typename') {
        part = constant(typeName);
      } else {
        const field = type.getFields()[name];
        if (!field) return undefined;
        if (!field.resolve) {
          const render = node.arguments?.length || node.selectionSet ? undefined : columnRender(this.entities[typeName], field);
          part = render && { shape: VALUE, render };
        } else if (typeName === 'Asset' && name === 'collection') {
          part = this.assetCollection(node);
        } else if (typeName === 'Collection' && name === 'assets') {
          part = this.collectionAssets(field, node);
        }
      }
      if (!part) return undefined;
      parts.push([key, part]);
    }
    return objectPart(parts);
  }

  private assetCollection(node: FieldNode): Part | undefined {
    if (node.arguments?.length) return undefined;
    const collection = this.object('Collection', node.selectionSet);
    if (!collection) return undefined;
    return {
      shape: collection.shape,
      render: (b, row) => {
        const c = nextAlias(b);
        const json = collection.render!(b, c);
        return json && `(SELECT ${json} FROM collections ${c} WHERE ${c}.id = ${row}.collection_id)`;
      },
    };
  }

  /**
   * A page `{ result: [...] }` (and `__typename`): only `result`, whose rows come from the FROM/WHERE/
   * ORDER BY/LIMIT text that the caller gives for the request's arguments (`from`, with the rows' alias).
   */
  private page(pageType: string, itemType: 'Asset' | 'Collection', node: FieldNode): { shape: Shape; render: (b: Build, from: string, row: string) => string | undefined } | undefined {
    const fields = this.fields(node.selectionSet);
    if (!fields) return undefined;
    const shapes: [string, Shape][] = [];
    let item: Part | undefined;
    for (const { key, node: child } of fields) {
      if (child.name.value === '__typename') {
        shapes.push([key, { kind: 'constant', value: pageType }]);
      } else if (child.name.value === 'result' && !child.arguments?.length && !item) {
        item = this.object(itemType, child.selectionSet);
        if (!item) return undefined;
        shapes.push([key, { kind: 'list', item: item.shape }]);
      } else {
        return undefined;
      }
    }
    const resultItem = item;
    return {
      shape: objectShape(shapes),
      render: (b, from, row) => {
        if (!resultItem) return 'json_build_array()';
        const json = resultItem.render!(b, row);
        return json && `json_build_array(array_to_json(ARRAY(SELECT ${json} FROM ${from})))`;
      },
    };
  }

  /** Nested `collection.assets(limit, orderBy, direction)`: the first page, in the collection's own row. */
  private collectionAssets(field: GraphQLField<unknown, unknown>, node: FieldNode): Part | undefined {
    const page = this.page('AssetPage', 'Asset', node);
    if (!page) return undefined;
    return {
      shape: page.shape,
      render: (b, row) => {
        const args = getArgumentValues(field, node, b.variables);
        const sort = ASSET_SORTS[args.orderBy as keyof typeof ASSET_SORTS];
        if (!sort || !limitFits(args.limit) || !isFirstPage(args.page)) return undefined;
        const a = nextAlias(b);
        return page.render(b, firstPageSql(b, 'assets', a, [`${a}.collection_id = ${row}.id`], sort, args), a);
      },
    };
  }

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
      if (name === '__typename') root = { shape: { kind: 'constant', value: queryType.name } };
      else if (name === 'asset') root = this.assetRoot(field, node);
      else if (name === 'assets') root = this.assetsRoot(field, node);
      else if (name === 'collections') root = this.collectionsRoot(field, node);
      if (!root) return undefined;
      roots.push({ key, ...root });
    }
    return roots;
  }

  private assetRoot(field: GraphQLField<unknown, unknown>, node: FieldNode): Omit<Root, 'key'> | undefined {
    const asset = this.object('Asset', node.selectionSet);
    if (!asset) return undefined;
    return {
      shape: asset.shape,
      render: (b) => {
        const args = getArgumentValues(field, node, b.variables);
        const a = nextAlias(b);
        const where = [`${a}.token_address = ${b.p.add(args.tokenAddress)}`, `${a}.token_id = ${b.p.add(args.tokenId)}::numeric`];
        if (args.chainId != null) where.push(`${a}.chain_id = ${b.p.add(args.chainId)}`);
        const json = asset.render!(b, a);
        if (!json) return undefined;
        return {
          sql: `array_to_json(ARRAY(SELECT ${json} FROM assets ${a} WHERE ${where.join(' AND ')} ORDER BY ${a}.chain_id LIMIT 2))`,
          // Not found, or on several chains: the resolver's error.
          read: (value) => (Array.isArray(value) && value.length === 1 ? value[0] : STEP_ASIDE),
        };
      },
    };
  }

  /**
   * A root list's first page: `filters` turns the request's arguments into WHERE conditions on the rows
   * (alias `a`), or undefined when the resolver must answer; `checkEmpty`: an empty page steps aside.
   */
  private listRoot(
    field: GraphQLField<unknown, unknown>,
    node: FieldNode,
    types: { page: string; item: 'Asset' | 'Collection'; table: string; sorts: Record<string, SortKey> },
    filters: (b: Build, args: Record<string, unknown>, a: string) => { where: string[]; checkEmpty?: boolean } | undefined,
  ): Omit<Root, 'key'> | undefined {
    const page = this.page(types.page, types.item, node);
    if (!page) return undefined;
    return {
      shape: page.shape,
      render: (b) => {
        const args = getArgumentValues(field, node, b.variables);
        const sort = types.sorts[args.orderBy as string];
        if (!sort || !limitFits(args.limit) || !isFirstPage(args.page)) return undefined;
        const a = nextAlias(b);
        const filtered = filters(b, args, a);
        if (!filtered) return undefined;
        const sql = page.render(b, firstPageSql(b, types.table, a, filtered.where, sort, args), a);
        if (!sql) return undefined;
        return { sql, read: filtered.checkEmpty ? (value) => (pageIsEmpty(page.shape, value) ? STEP_ASIDE : value) : undefined };
      },
    };
  }

  private assetsRoot(field: GraphQLField<unknown, unknown>, node: FieldNode): Omit<Root, 'key'> | undefined {
    return this.listRoot(field, node, { page: 'AssetPage', item: 'Asset', table: 'assets', sorts: ASSET_SORTS }, (b, args, a) => {
      if (args.chainId != null || args.status != null || (args.trait as unknown[] | null)?.length) return undefined;
      const where: string[] = [];
      const byCollection = args.collectionId != null;
      if (byCollection) {
        // A contract address instead of an id: the resolver looks the collection up.
        if (!UUID.test(args.collectionId as string)) return undefined;
        where.push(`${a}.collection_id = ${b.p.add((args.collectionId as string).toLowerCase())}`);
      }
      if (args.assetContract != null) where.push(`${a}.token_address = ${b.p.add(args.assetContract)}`);
      if (args.ownerId != null) where.push(`${a}.owner = ${b.p.add(args.ownerId)}`);
      // An empty page of a collection given by id: the resolver tells an empty collection from an unknown one.
      return { where, checkEmpty: byCollection };
    });
  }

  private collectionsRoot(field: GraphQLField<unknown, unknown>, node: FieldNode): Omit<Root, 'key'> | undefined {
    return this.listRoot(field, node, { page: 'CollectionPage', item: 'Collection', table: 'collections', sorts: COLLECTION_SORTS }, (b, args, a) => {
      // includeAssets: false answers `assets` with null; a chain filter checks that the chain exists.
      if (args.includeAssets !== true || args.chainId != null) return undefined;
      const where: string[] = [];
      if (args.categoryId != null) where.push(`${a}.category_id = ${b.p.add(args.categoryId)}`);
      if (args.ownerAddress != null) where.push(`${a}.owner = ${b.p.add(args.ownerAddress)}`);
      if (args.status != null) where.push(`${a}.status = ${b.p.add(args.status)}`);
      return { where };
    });
  }
}

/** Whether a page as sent (the values of its non-constant fields: `result` only) has no rows. */
function pageIsEmpty(shape: Shape, value: unknown): boolean {
  if (shape.kind !== 'object' || !Array.isArray(value)) return true;
  const result = value[0];
  return !Array.isArray(result) || result.length === 0;
}

/** The plan of an operation, or undefined when its selection is not all covered (see above). */
export function planOperation(schema: GraphQLSchema, ds: DataSource, operation: OperationDefinitionNode): SqlPlan | undefined {
  const roots = new Planner(schema, ds).roots(operation);
  if (!roots) return undefined;
  return {
    async run(context, variables) {
      const b: Build = { p: new Params(), variables, aliases: 0 };
      const values: string[] = [];
      const reads: (((value: unknown) => unknown) | undefined)[] = [];
      for (const root of roots) {
        if (!root.render) continue;
        const rendered = root.render(b);
        if (!rendered) return undefined;
        values.push(rendered.sql);
        reads.push(rendered.read);
      }
      const rows: { data: unknown[] }[] = await context.ds.query(`SELECT json_build_array(${values.join(', ')}) AS data`, b.p.values);
      const sent = rows[0].data;
      const data: Record<string, unknown> = {};
      let next = 0;
      for (const root of roots) {
        if (!root.render) {
          data[root.key] = decode(root.shape, undefined);
          continue;
        }
        const read = reads[next];
        const value = read ? read(sent[next]) : sent[next];
        next += 1;
        if (value === STEP_ASIDE) return undefined;
        data[root.key] = decode(root.shape, value);
      }
      return data;
    },
  };
}
