import {
  FieldNode,
  getNamedType,
  getNullableType,
  GraphQLField,
  GraphQLEnumType,
  GraphQLObjectType,
  GraphQLSchema,
  isEnumType,
  isLeafType,
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
import { clock } from '../../common/clock';
import { Asset } from '../../modules/asset/asset.entity';
import { ASSET_SORTS } from '../../modules/asset/asset.loaders';
import { Category } from '../../modules/catalog/category.entity';
import { Chain } from '../../modules/chain/chain.entity';
import { Collection, StoredFee } from '../../modules/collection/collection.entity';
import { COLLECTION_SORTS } from '../../modules/collection/collection.service';
import { feesOf } from '../../modules/collection/fee.type';
import { currentPriceSql, isActiveListingSql } from '../../modules/listing/listing.sql';

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
  /** The statement's `now` (a listing's status and prices, an asset's status), added on first use. */
  now?: string;
  /** Rows whose related row is already in the statement: an asset's collection (collection.assets), a listing's asset. */
  collectionOf: Map<string, string>;
  assetOf: Map<string, string>;
  /** Collections read with includeAssets: false, whose `assets` is null. */
  withoutAssets: Set<string>;
}

const nowOf = (b: Build) => (b.now ??= b.p.add(clock.now()));

/** A SQL expression for one value of the response, given the alias of the row it belongs to; undefined: step aside. */
type Render = (b: Build, row: string) => string | undefined;

/**
 * How a value PostgreSQL sends becomes the response's value. Objects travel as JSON arrays of their
 * values in selection order (json_build_array costs PostgreSQL a fraction of json_build_object, which
 * escapes every key of every row); their keys, and constants such as __typename, are put back here.
 * `map`: a value Node finishes (a scalar's own serializer, fees from their stored JSON, a cursor).
 */
type Shape =
  | { kind: 'value' }
  | { kind: 'constant'; value: string }
  | { kind: 'map'; map: (value: unknown) => unknown }
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
    case 'map':
      return shape.map(value);
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

/** A leaf whose text PostgreSQL sends and whose GraphQL type serializes it in Node (prices, exact decimals). */
const serialized = (field: GraphQLField<unknown, unknown>, render: Render): Part | undefined => {
  const type = getNamedType(field.type);
  if (!isLeafType(type)) return undefined;
  return { shape: { kind: 'map', map: (value) => (value === null || value === undefined ? null : type.serialize(value)) }, render };
};

/** A cursor as pagination.ts's encodeCursor writes it, from the `[orderBy, direction, sort value, id]` PostgreSQL sends. */
const CURSOR: Shape = { kind: 'map', map: (value) => (value === null ? null : Buffer.from(JSON.stringify(value)).toString('base64url')) };

const STEP_ASIDE = Symbol('stepAside');

/** json_build_array takes at most 100 arguments. */
const MAX_FIELDS = 100;

const nextAlias = (b: Build) => `j${(b.aliases += 1)}`;

/** The sort expressions name the list's table `t`; a plan names each table of its own. */
const realias = (sort: SortKey, alias: string): SortKey => ({ ...sort, expression: sort.expression.replace(/\bt\./g, `${alias}.`) });

/** A timestamp(3) as Date#toISOString writes the value pg reads. */
const isoSql = (expression: string) => `to_char(${expression} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** A row's sort value as the resolvers put it in a cursor: pg's reading of pagination.ts's `__sort` column. */
function sortValueSql(sort: SortKey): string {
  if (sort.sqlType === 'timestamptz') return isoSql(sort.expression);
  if (sort.sqlType === 'numeric' || sort.sqlType === 'bigint') return `${sort.expression}::text`;
  return sort.expression;
}

/** A stored enum value as its GraphQL name, or undefined when the names cannot be written as SQL literals. */
function enumSql(type: GraphQLEnumType, expression: string): string | undefined {
  const values = type.getValues();
  if (!values.every((v) => typeof v.value === 'string' && /^[a-z0-9_]+$/.test(v.value) && /^[A-Z0-9_]+$/.test(v.name))) return undefined;
  return `CASE ${expression} ${values.map((v) => `WHEN '${v.value}' THEN '${v.name}'`).join(' ')} END`;
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
    if (!enumSql(type, name)) return undefined;
    return (_b, row) => enumSql(type, `${row}.${name}`);
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
      return (_b, row) => isoSql(`${row}.${name}`);
    default:
      return undefined;
  }
}

/**
 * Listing is not an entity: its fields are listing.sql.ts's listingColumns, in SQL over the listing's row
 * (`l`) and its asset's (`a`, the asset the listing is nested in).
 */
function listingRender(field: GraphQLField<unknown, unknown>): Part | undefined {
  const asset = (b: Build, l: string) => b.assetOf.get(l)!;
  const type = getNamedType(field.type);
  const value = (render: Render): Part => ({ shape: VALUE, render });
  switch (field.name) {
    case 'id':
      return value((_b, l) => `${l}.id::text`);
    case 'assetId':
      return value((_b, l) => `${l}.asset_id::text`);
    case 'seller':
      return value((_b, l) => `${l}.seller`);
    case 'signature':
      return value((_b, l) => `${l}.signature`);
    case 'orderType':
      return isEnumType(type) && enumSql(type, 'x') ? value((_b, l) => enumSql(type, `${l}.order_type`)) : undefined;
    case 'status':
      // As listingColumns: an active listing whose closing date has passed reads as expired.
      return isEnumType(type) && enumSql(type, 'x')
        ? value((b, l) => enumSql(type, `(CASE WHEN ${l}.status = 'active' AND ${l}.closing_date <= ${nowOf(b)}::timestamptz THEN 'expired' ELSE ${l}.status END)`))
        : undefined;
    case 'startPrice':
    case 'startPriceDecimal':
      return serialized(field, (_b, l) => `${l}.start_price::text`);
    case 'acceptPrice':
    case 'acceptPriceDecimal':
      return serialized(field, (_b, l) => `${l}.accept_price::text`);
    case 'currentPrice':
    case 'currentPriceDecimal':
      return serialized(field, (b, l) => `(${currentPriceSql(l, nowOf(b))})::text`);
    case 'listingTime':
      return value((_b, l) => isoSql(`${l}.listing_time`));
    case 'closingDate':
      return value((_b, l) => isoSql(`${l}.closing_date`));
    case 'createdAt':
      return value((_b, l) => isoSql(`${l}.created_at`));
    case 'updatedAt':
      return value((_b, l) => isoSql(`${l}.updated_at`));
    case 'name':
      return value((b, l) => `${asset(b, l)}.name`);
    case 'tokenAddress':
      return value((b, l) => `${asset(b, l)}.token_address`);
    case 'tokenId':
      return value((b, l) => `${asset(b, l)}.token_id::text`);
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

type Planned = 'Asset' | 'Collection' | 'Chain' | 'Category' | 'Listing';

/** The rows of a first page: FROM `table` `alias` WHERE `where`, in the order of `sort`; `args` are the list's. */
interface PageRows {
  table: string;
  alias: string;
  where: string[];
  sort: SortKey;
  args: Record<string, unknown>;
  /**
   * How many rows match, when something cheaper than counting them says it exactly. A function: it may add
   * a parameter, which must be added only when used (a named statement has as many as its text names).
   */
  count?: () => string;
}

/** A collection's assets as collection_asset_counts keeps them (migration 1765000000000). */
const assetCountSql = (collectionId: string) => `COALESCE((SELECT x.assets FROM collection_asset_counts x WHERE x.collection_id = ${collectionId}), 0)`;

interface PagePlan {
  shape: Shape;
  /** Where `result` is among the values sent (undefined: not selected). */
  resultAt?: number;
  render: (b: Build, rows: PageRows) => string | undefined;
}

class Planner {
  private readonly entities: Partial<Record<Planned, EntityMetadata>>;

  constructor(
    private readonly schema: GraphQLSchema,
    ds: DataSource,
  ) {
    this.entities = { Asset: ds.getMetadata(Asset), Collection: ds.getMetadata(Collection), Chain: ds.getMetadata(Chain), Category: ds.getMetadata(Category) };
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

  /** One row of a planned type for this selection. */
  object(typeName: Planned, selectionSet: SelectionSetNode | undefined): Part | undefined {
    const type = this.schema.getType(typeName) as GraphQLObjectType;
    const fields = this.fields(selectionSet);
    if (!fields) return undefined;
    const parts: [string, Part][] = [];
    for (const { key, node } of fields) {
      const name = node.name.value;
      const field = type.getFields()[name];
      const part = name === '__typename' ? constant(typeName) : field && this.field(typeName, field, node);
      if (!part) return undefined;
      parts.push([key, part]);
    }
    return objectPart(parts);
  }

  private field(typeName: Planned, field: GraphQLField<unknown, unknown>, node: FieldNode): Part | undefined {
    if (field.name === 'assets' && typeName === 'Collection') return this.collectionAssets(field, node);
    if (node.arguments?.length) return undefined;
    const leaf = !node.selectionSet;
    switch (`${typeName}.${field.name}`) {
      case 'Asset.collection':
        return this.assetCollection(node);
      case 'Asset.chain':
      case 'Collection.chain':
        return this.byId('Chain', 'chains', node, (_b, row) => `${row}.chain_id`);
      case 'Listing.chain':
        return this.byId('Chain', 'chains', node, (b, l) => `${b.assetOf.get(l)}.chain_id`);
      case 'Collection.category':
        return this.byId('Category', 'categories', node, (_b, row) => `${row}.category_id`);
      case 'Collection.fees':
        return this.fees(node, (_b, c) => `json_build_array(${c}.fees)`);
      case 'Asset.fees':
        return this.fees(node, (b, a) => `json_build_array(${this.collectionFees(b, a)})`);
      case 'Listing.fees':
        // The collection's royalty fees, then the listing's maker fees.
        return this.fees(node, (_b, l) => `json_build_array((SELECT x.fees FROM collections x WHERE x.id = ${l}.collection_id), ${l}.maker_fees)`);
      case 'Asset.status':
        return leaf ? this.assetStatus(field) : undefined;
      case 'Asset.listing':
        return this.assetListing(node);
    }
    if (typeName === 'Listing') return leaf ? listingRender(field) : undefined;
    if (field.resolve || !leaf) return undefined;
    const render = columnRender(this.entities[typeName]!, field);
    return render && { shape: VALUE, render };
  }

  /** An asset's collection's stored fees: the collection row's own when it is in the statement. */
  private collectionFees(b: Build, asset: string): string {
    const c = b.collectionOf.get(asset);
    return c ? `${c}.fees` : `(SELECT x.fees FROM collections x WHERE x.id = ${asset}.collection_id)`;
  }

  /** A row of `table` by its id (`key`), as the object of `typeName`; null when there is none. */
  private byId(typeName: Planned, table: string, node: FieldNode, key: Render): Part | undefined {
    const object = this.object(typeName, node.selectionSet);
    if (!object) return undefined;
    return {
      shape: object.shape,
      render: (b, row) => {
        const x = nextAlias(b);
        const json = object.render!(b, x);
        return json && `(SELECT ${json} FROM ${table} ${x} WHERE ${x}.id = ${key(b, row)})`;
      },
    };
  }

  /**
   * Fees from their stored JSON (collections.fees: royalty; listings.maker_fees: maker): PostgreSQL sends
   * the stored arrays (`render`: a JSON array of [royalty, maker?]), Node types them as fee.type.ts's feesOf does.
   */
  private fees(node: FieldNode, render: Render): Part | undefined {
    const type = this.schema.getType('Fee') as GraphQLObjectType;
    const fields = this.fields(node.selectionSet);
    if (!fields) return undefined;
    const picks: [string, (fee: Record<string, unknown>) => unknown][] = [];
    for (const { key, node: child } of fields) {
      const name = child.name.value;
      if (name === '__typename') {
        picks.push([key, () => 'Fee']);
        continue;
      }
      const field = type.getFields()[name];
      const leaf = field && getNamedType(field.type);
      if (!field || field.resolve || child.arguments?.length || child.selectionSet || !leaf || !isLeafType(leaf)) return undefined;
      picks.push([key, (fee) => (fee[name] === null || fee[name] === undefined ? null : leaf.serialize(fee[name]))]);
    }
    const pick = (fee: Record<string, unknown>) => {
      const out: Record<string, unknown> = {};
      for (const [key, value] of picks) out[key] = value(fee);
      return out;
    };
    const map = (value: unknown) => {
      const [royalty, maker] = value as [StoredFee[] | null, StoredFee[] | undefined];
      const fees = [...feesOf(royalty, 'royalty'), ...(maker === undefined ? [] : feesOf(maker, 'maker'))];
      return fees.map((fee) => pick(fee as unknown as Record<string, unknown>));
    };
    return { shape: { kind: 'map', map }, render };
  }

  /** listed while the asset has an active listing now (the resolver asks activeListingByAsset). */
  private assetStatus(field: GraphQLField<unknown, unknown>): Part | undefined {
    const type = getNamedType(field.type);
    if (!isEnumType(type)) return undefined;
    const listed = type.getValues().find((v) => v.value === 'listed')?.name;
    const unlisted = type.getValues().find((v) => v.value === 'unlisted')?.name;
    if (!listed || !unlisted || !/^[A-Z_]+$/.test(listed + unlisted)) return undefined;
    return {
      shape: VALUE,
      render: (b, a) => {
        const l = nextAlias(b);
        // A correlated scalar subquery probes ux_listings_one_active_per_asset per asset; EXISTS was planned
        // as a hashed subplan that reads every listing.
        return `COALESCE((SELECT '${listed}' FROM listings ${l} WHERE ${l}.asset_id = ${a}.id AND ${isActiveListingSql(l, nowOf(b))} LIMIT 1), '${unlisted}')`;
      },
    };
  }

  /** The asset's active listing now, or null (at most one listing of an asset is active: ux_listings_one_active_per_asset). */
  private assetListing(node: FieldNode): Part | undefined {
    const listing = this.object('Listing', node.selectionSet);
    if (!listing) return undefined;
    return {
      shape: listing.shape,
      render: (b, a) => {
        const l = nextAlias(b);
        b.assetOf.set(l, a);
        const json = listing.render!(b, l);
        return json && `(SELECT ${json} FROM listings ${l} WHERE ${l}.asset_id = ${a}.id AND ${isActiveListingSql(l, nowOf(b))})`;
      },
    };
  }

  private assetCollection(node: FieldNode): Part | undefined {
    const collection = this.object('Collection', node.selectionSet);
    if (!collection) return undefined;
    return {
      shape: collection.shape,
      render: (b, row) => {
        // Inside collection.assets the collection is the page's own parent row.
        const parent = b.collectionOf.get(row);
        if (parent) return collection.render!(b, parent);
        const c = nextAlias(b);
        const json = collection.render!(b, c);
        return json && `(SELECT ${json} FROM collections ${c} WHERE ${c}.id = ${row}.collection_id)`;
      },
    };
  }

  /**
   * A first page `{ cursor remaining result }` (and `__typename`) of the rows the caller gives for the
   * request's arguments. `remaining` and `cursor` follow from a count of all matching rows in the same
   * statement, as pagination.ts's fetchPage counts them; the cursor is the last row's, when rows remain.
   */
  private page(pageType: string, itemType: Planned, node: FieldNode): PagePlan | undefined {
    const fields = this.fields(node.selectionSet);
    if (!fields) return undefined;
    const shapes: [string, Shape][] = [];
    const sent: ('result' | 'remaining' | 'cursor')[] = [];
    let item: Part | undefined;
    for (const { key, node: child } of fields) {
      const name = child.name.value;
      if (name === '__typename') {
        shapes.push([key, { kind: 'constant', value: pageType }]);
        continue;
      }
      if (child.arguments?.length || sent.includes(name as never)) return undefined;
      if (name === 'result') {
        item = this.object(itemType, child.selectionSet);
        if (!item) return undefined;
        shapes.push([key, { kind: 'list', item: item.shape }]);
      } else if (name === 'remaining' && !child.selectionSet) {
        shapes.push([key, VALUE]);
      } else if (name === 'cursor' && !child.selectionSet) {
        shapes.push([key, CURSOR]);
      } else {
        return undefined;
      }
      sent.push(name as 'result' | 'remaining' | 'cursor');
    }
    const resultItem = item;
    const counted = sent.includes('remaining') || sent.includes('cursor');
    return {
      shape: objectShape(shapes),
      resultAt: sent.includes('result') ? sent.indexOf('result') : undefined,
      render: (b, r) => {
        const limit = r.args.limit as number;
        const sort = realias(r.sort, r.alias);
        const from = `${r.table} ${r.alias}${r.where.length ? ` WHERE ${r.where.join(' AND ')}` : ''}`;
        const order = orderBySql(sort, `${r.alias}.id`, r.args.direction as SortDirection);
        const n = counted ? nextAlias(b) : '';
        const values: string[] = [];
        for (const name of sent) {
          if (name === 'result') {
            const json = resultItem!.render!(b, r.alias);
            if (!json) return undefined;
            values.push(`array_to_json(ARRAY(SELECT ${json} FROM ${from} ORDER BY ${order} LIMIT ${limit}))`);
          } else if (name === 'remaining') {
            values.push(`GREATEST(0, ${n}.n - ${limit})`);
          } else {
            const position = `json_build_array(${b.p.add(r.args.orderBy)}::text, ${b.p.add(r.args.direction)}::text, ${sortValueSql(sort)}, ${r.alias}.id::text)`;
            values.push(`CASE WHEN ${n}.n > ${limit} THEN (SELECT ${position} FROM ${from} ORDER BY ${order} OFFSET ${limit - 1} LIMIT 1) END`);
          }
        }
        const array = `json_build_array(${values.join(', ')})`;
        return counted ? `(SELECT ${array} FROM (SELECT ${r.count ? `${r.count()} AS n` : `count(*) AS n FROM ${from}`}) ${n})` : array;
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
        if (b.withoutAssets.has(row)) return 'NULL';
        const args = getArgumentValues(field, node, b.variables);
        const sort = ASSET_SORTS[args.orderBy as keyof typeof ASSET_SORTS];
        if (!sort || !limitFits(args.limit) || !isFirstPage(args.page)) return undefined;
        const a = nextAlias(b);
        b.collectionOf.set(a, row);
        return page.render(b, { table: 'assets', alias: a, where: [`${a}.collection_id = ${row}.id`], sort, args, count: () => assetCountSql(`${row}.id`) });
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
    types: { page: string; item: Planned; table: string; sorts: Record<string, SortKey> },
    filters: (b: Build, args: Record<string, unknown>, a: string) => { where: string[]; checkEmpty?: boolean; count?: () => string } | undefined,
  ): Omit<Root, 'key'> | undefined {
    const page = this.page(types.page, types.item, node);
    if (!page) return undefined;
    const resultAt = page.resultAt;
    return {
      shape: page.shape,
      render: (b) => {
        const args = getArgumentValues(field, node, b.variables);
        const sort = types.sorts[args.orderBy as string];
        if (!sort || !limitFits(args.limit) || !isFirstPage(args.page)) return undefined;
        const a = nextAlias(b);
        const filtered = filters(b, args, a);
        // An empty page must be told apart from an error, which needs the rows.
        if (!filtered || (filtered.checkEmpty && resultAt === undefined)) return undefined;
        const sql = page.render(b, { table: types.table, alias: a, where: filtered.where, sort, args, count: filtered.count });
        if (!sql) return undefined;
        const isEmpty = (value: unknown) => !Array.isArray(value) || !Array.isArray(value[resultAt!]) || value[resultAt!].length === 0;
        return { sql, read: filtered.checkEmpty ? (value) => (isEmpty(value) ? STEP_ASIDE : value) : undefined };
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
      return { where, checkEmpty: byCollection, count: byCollection && where.length === 1 ? () => assetCountSql(`${b.p.add((args.collectionId as string).toLowerCase())}::uuid`) : undefined };
    });
  }

  private collectionsRoot(field: GraphQLField<unknown, unknown>, node: FieldNode): Omit<Root, 'key'> | undefined {
    return this.listRoot(field, node, { page: 'CollectionPage', item: 'Collection', table: 'collections', sorts: COLLECTION_SORTS }, (b, args, a) => {
      // A chain filter checks that the chain exists.
      if (args.chainId != null || typeof args.includeAssets !== 'boolean') return undefined;
      // includeAssets: false answers `assets` of each collection with null.
      if (!args.includeAssets) b.withoutAssets.add(a);
      const where: string[] = [];
      if (args.categoryId != null) where.push(`${a}.category_id = ${b.p.add(args.categoryId)}`);
      if (args.ownerAddress != null) where.push(`${a}.owner = ${b.p.add(args.ownerAddress)}`);
      if (args.status != null) where.push(`${a}.status = ${b.p.add(args.status)}`);
      return { where };
    });
  }
}

/** The plan of an operation, or undefined when its selection is not all covered (see above). */
export function planOperation(schema: GraphQLSchema, ds: DataSource, operation: OperationDefinitionNode): SqlPlan | undefined {
  const roots = new Planner(schema, ds).roots(operation);
  if (!roots) return undefined;
  return {
    async run(context, variables) {
      const b: Build = { p: new Params(), variables, aliases: 0, collectionOf: new Map(), assetOf: new Map(), withoutAssets: new Set() };
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
