import {
  DocumentNode,
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
import type { DataSource, EntityMetadata } from 'typeorm';
import type { Context } from '../../common/request/context';
import { MAX_LIMIT, orderBySql, SortDirection, SortKey } from '../../common/pagination';
import { Params } from '../../common/sql';
import { readStatement } from '../../db/read-statement';
import { argumentReader } from './variables';
import { flattenOperation } from './flatten';
import type { ResponseText } from '../http/chunked-text';
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
 * resolvers field by field; Node then gives the values their keys (decode). For a /v1 route (REST text
 * plans, see planOperation) PostgreSQL writes the body's JSON instead, a list's items one row each (see
 * TextStream), and Node sends them as they are.
 *
 * What a plan covers, decided once per document (anything else: no plan, the resolvers answer):
 * - roots `asset(tokenAddress, tokenId, chainId)`, `assets(...)` and `collections(...)` with their
 *   plain filters, first pages only (`page` absent), with `cursor` and `remaining`;
 * - fields of Asset and Collection stored in a column and returned as stored (no field resolver):
 *   text, ids, addresses and token ids as strings, Int, JSON, enums (by their GraphQL names) and
 *   DateTimeISO (ISO text of the millisecond timestamp, as Date#toISOString writes it);
 * - `asset.collection`, `collection.assets(limit, orderBy, direction)`, the chain, category and fees of
 *   both, an asset's traits, status and active listing (every Listing field but `asset`; prices and
 *   status at the statement's `now`), nested in the statement;
 * - aliases, `__typename`, fragments (named and inline, put in place by flatten.ts); no directives.
 * A plan also steps aside at run time, before any byte is sent, whenever the resolvers would answer an
 * error or need another statement to decide: an asset that is not found (or is on several chains), an
 * empty page of a collection given by id (which may not exist), an out-of-range limit, a `page`, a
 * chain filter (the resolvers check that the chain exists). The resolvers then answer the request as
 * always. `test/graphql-sql-plan.test.ts` holds the two answers to each other byte for byte,
 * `test/rest-sql-plan.test.ts` token for token (REST text spells stored JSON as PostgreSQL does).
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
  /** Per row, the alias of its shared value (see objectPart), computed once in the object's FROM. */
  shared: Map<string, string>;
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

/**
 * A planned part: its shape, and (unless constant) its SQL; `text`, when the part can say it, the SQL of
 * its final JSON value as REST writes it (REST text plans, see planOperation): objects with their keys,
 * enums by their values, exact decimals as numbers unless their key ends in `_decimal`.
 */
interface Part {
  shape: Shape;
  render?: Render;
  text?: Render;
}

const VALUE: Shape = { kind: 'value' };
/** A SQL string literal of a GraphQL name (type names, enum values: [_A-Za-z0-9]). */
const literal = (value: string) => `'${value.replace(/'/g, "''")}'`;
const constant = (value: string): Part => ({ shape: { kind: 'constant', value }, text: () => literal(value) });
/** The row's shared value (see objectPart). */
const sharedValue: Render = (b, row) => `${b.shared.get(row)}.v`;
/** A part whose SQL is the same in both forms. */
const plain = (render: Render): Part => ({ shape: VALUE, render, text: render });

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

/** Each render's SQL, or undefined when one of them steps aside. */
function renderAll(b: Build, row: string, renders: Render[]): string[] | undefined {
  const values: string[] = [];
  for (const render of renders) {
    const sql = render(b, row);
    if (sql === undefined) return undefined;
    values.push(sql);
  }
  return values;
}

/** A key PostgreSQL can carry as a column name unchanged (at most 63 bytes, no quoting). */
const columnKey = (key: string) => /^[_A-Za-z][_0-9A-Za-z]{0,62}$/.test(key);

/**
 * An object's final JSON: row_to_json of one row whose columns are the keys, in order. Unlike
 * json_build_object (`{"a" : 1, "b" : 2}`) it writes no spaces, as JSON.stringify does.
 */
const rowJson = (columns: string[], keys: string[], from = '') =>
  `(SELECT row_to_json(r) FROM (SELECT ${columns.map((sql, i) => `${sql} AS "${keys[i]}"`).join(', ')}${from}) r)`;

/**
 * An object of planned parts: `json_build_array` of the values that are not constant. `shared`: a value
 * several parts read (as `${b.shared.get(row)}.v`), computed once per row in the object's FROM.
 */
function objectPart(parts: [string, Part][], shared?: Part): Part {
  const shape = objectShape(parts.map(([key, part]) => [key, part.shape]));
  const renders = parts.map(([, part]) => part.render).filter((r): r is Render => r !== undefined);
  const keys = parts.map(([key]) => key);
  const texts = parts.map(([, part]) => part.text);
  const withText = keys.every(columnKey) && texts.every((t) => t !== undefined) && (!shared || shared.text);
  /** ` FROM (SELECT <shared> AS v) x` for this row, or '' without a shared value; undefined: step aside. */
  const sharedFrom = (b: Build, row: string, render: Render | undefined) => {
    if (!shared) return '';
    const sql = render!(b, row);
    if (!sql) return undefined;
    const x = nextAlias(b);
    b.shared.set(row, x);
    // OFFSET 0 keeps the subquery from being pulled up, which would compute the value once per reader.
    return ` FROM (SELECT ${sql} AS v OFFSET 0) ${x}`;
  };
  return {
    shape,
    render: (b, row) => {
      const from = sharedFrom(b, row, shared?.render);
      const values = from === undefined ? undefined : renderAll(b, row, renders);
      return values && (from ? `(SELECT json_build_array(${values.join(', ')})${from})` : `json_build_array(${values.join(', ')})`);
    },
    text: withText
      ? (b, row) => {
          const from = sharedFrom(b, row, shared?.text);
          const values = from === undefined ? undefined : renderAll(b, row, texts as Render[]);
          return values && rowJson(values, keys, from);
        }
      : undefined,
  };
}

/** A part whose both forms (the response's and REST's text) are `object`'s, each put in the same SQL by `wrap`. */
function wrapped(object: Part, wrap: (json: Render) => Render): Part {
  return { shape: object.shape, render: object.render && wrap(object.render), text: object.text && wrap(object.text) };
}

/**
 * A leaf whose text PostgreSQL sends and whose GraphQL type serializes it in Node (prices, exact
 * decimals). In REST's text an exact decimal is written by PostgreSQL: trim_scale gives exactDecimal's
 * digits, a JSON number unless the key ends in `_decimal` (router.ts's rule); a Price (a double) has no text.
 */
const serialized = (field: GraphQLField<unknown, unknown>, key: string, numeric: Render): Part | undefined => {
  const type = getNamedType(field.type);
  if (!isLeafType(type)) return undefined;
  const render: Render = (b, row) => `${numeric(b, row)}::text`;
  const decimal = type.name === 'Decimal';
  return {
    shape: { kind: 'map', map: (value) => (value === null || value === undefined ? null : type.serialize(value)) },
    render,
    text: decimal ? (b, row) => `trim_scale(${numeric(b, row)})${key.endsWith('_decimal') ? '::text' : ''}` : undefined,
  };
};

/** base64url of a JSON text, without padding (Buffer#toString('base64url')); encode() breaks lines every 76 characters. */
const base64urlSql = (text: string) => `translate(encode(convert_to(${text}, 'UTF8'), 'base64'), E'+/=\\n', '-_')`;

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

/**
 * A part of a stored enum: by its GraphQL name in the response, by its value in REST's text (REST spells
 * enums by their values); a value the enum lacks reads as null. Undefined when the values or names
 * cannot be written as SQL literals. The CASE arms are written once, not per request.
 */
function enumPart(type: GraphQLEnumType, expression: Render): Part | undefined {
  const values = type.getValues();
  if (!values.every((v) => typeof v.value === 'string' && /^[a-z0-9_]+$/.test(v.value) && /^[A-Z0-9_]+$/.test(v.name))) return undefined;
  const arms = (spelling: 'name' | 'value') => values.map((v) => `WHEN '${v.value}' THEN '${spelling === 'name' ? v.name : v.value}'`).join(' ');
  const caseOf =
    (whens: string): Render =>
    (b, row) => {
      const sql = expression(b, row);
      return sql && `CASE ${sql} ${whens} END`;
    };
  return { shape: VALUE, render: caseOf(arms('name')), text: caseOf(arms('value')) };
}

const isFirstPage = (page: unknown) => page === undefined || page === null || page === '';
const limitFits = (limit: unknown): limit is number => Number.isInteger(limit) && (limit as number) >= 1 && (limit as number) <= MAX_LIMIT;

/** The JSON value of a column field as its GraphQL type serializes it, or undefined when SQL cannot say it exactly. */
function columnPart(metadata: EntityMetadata, field: GraphQLField<unknown, unknown>): Part | undefined {
  if (isEnumType(getNamedType(field.type))) {
    const column = metadata.findColumnWithPropertyName(field.name);
    if (!column || column.relationMetadata) return undefined;
    return enumPart(getNamedType(field.type) as GraphQLEnumType, (_b, row) => `${row}."${column.databaseName}"`);
  }
  const render = columnRender(metadata, field);
  return render && plain(render);
}

function columnRender(metadata: EntityMetadata, field: GraphQLField<unknown, unknown>): Render | undefined {
  const column = metadata.findColumnWithPropertyName(field.name);
  if (!column || column.relationMetadata) return undefined;
  if (isListType(getNullableType(field.type))) return undefined;
  const type = getNamedType(field.type);
  const sqlType = typeof column.type === 'string' ? column.type : '';
  const name = `"${column.databaseName}"`;
  if (isEnumType(type)) return undefined;
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
function listingRender(field: GraphQLField<unknown, unknown>, key: string): Part | undefined {
  const asset = (b: Build, l: string) => b.assetOf.get(l)!;
  const type = getNamedType(field.type);
  const value = plain;
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
      return isEnumType(type) ? enumPart(type, (_b, l) => `${l}.order_type`) : undefined;
    case 'status':
      // As listingColumns: an active listing whose closing date has passed reads as expired.
      return isEnumType(type)
        ? enumPart(type, (b, l) => `(CASE WHEN ${l}.status = 'active' AND ${l}.closing_date <= ${nowOf(b)}::timestamptz THEN 'expired' ELSE ${l}.status END)`)
        : undefined;
    case 'startPrice':
    case 'startPriceDecimal':
      return serialized(field, key, (_b, l) => `${l}.start_price`);
    case 'acceptPrice':
    case 'acceptPriceDecimal':
      return serialized(field, key, (_b, l) => `${l}.accept_price`);
    case 'currentPrice':
    case 'currentPriceDecimal':
      return serialized(field, key, (b, l) => `(${currentPriceSql(l, nowOf(b))})`);
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
  /** Its final JSON as REST writes it (see Part); only for a root whose value needs no reading back. */
  text?: (b: Build) => string | undefined;
  /** REST's text as rows (a list's first page, see TextStream); `assemble` answers undefined when the resolvers must. */
  stream?: (b: Build) => { sql: string; assemble: (rows: StreamRow[]) => (string | Buffer)[] | undefined } | undefined;
  /** `render` as one row per item (a list's first page, see PagePlan.rows); `read` may answer STEP_ASIDE. */
  rows?: (b: Build) => RowsForm | undefined;
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
  text?: (b: Build, rows: PageRows) => string | undefined;
  /** REST's text of the page as one row per item (see TextStream); only when `result` is selected. */
  stream?: (b: Build, rows: PageRows) => TextStream | undefined;
  /** The response's form as one row per item: the values `render` sends, read from the rows. */
  rows?: (b: Build, rows: PageRows) => RowsForm | undefined;
}

/** A statement of one row per item and how the value `render` would send is read from its rows. */
interface RowsForm {
  sql: string;
  read: (rows: StreamRow<unknown>[]) => unknown;
}

/** Whether a shape holds a list (an item with lists of its own). */
const hasList = (shape: Shape): boolean =>
  shape.kind === 'list' || (shape.kind === 'object' && shape.fields.some(hasList));

/**
 * A root page's REST text sent as one row per item, in the page's order, each item's JSON written by
 * PostgreSQL; Node writes the page's other keys around them. One JSON value of the whole page would be
 * copied whole at every level that nests it (the array, the page's row, the output): for the 418 KB of
 * GET /v1/collections?include_assets=true, 2-3x the CPU of its rows, most of it faulting in fresh memory.
 * The items come as the bytes of their text (readStatement's textAsBytes), and are sent as they came.
 */
interface TextStream {
  sql: string;
  /** The page's JSON text, in pieces, from the rows: `t` an item's JSON, `n` the count, `s` and `i` the sort value's JSON and the id. */
  assemble: (rows: StreamRow[]) => (string | Buffer)[];
}

interface StreamRow<T = string | Buffer> {
  t: T;
  n?: string | number;
  s?: string | null;
  i?: string;
}

/** A Trait's fields in SQL over collection_traits `ct`, given the collection's number of assets (`size`). */
const TRAIT_SQL: Record<string, (ct: string, size: string) => string> = {
  __typename: () => `'Trait'`,
  traitType: (ct) => `${ct}.trait_type`,
  value: (ct) => `${ct}.value`,
  count: (ct) => `${ct}.asset_count`,
  rarity: (ct, size) => `${ct}.asset_count::float8 / GREATEST(${size}, 1)`,
};

/**
 * A float8 of at most 1 in REST's text, a JSON number as JSON.stringify writes it. PostgreSQL writes the
 * same shortest digits, but with an exponent below 1e-4 (`9.998e-05`), where JavaScript writes one only
 * below 1e-6 (`9.998e-7`) and plain decimals above (`0.00009998`).
 */
const jsFloatSql = (value: string) =>
  `(SELECT (CASE WHEN f.e IS NULL THEN f.t WHEN f.e <= 6 THEN '0.' || repeat('0', f.e - 1) || replace(f.m, '.', '') ELSE f.m || 'e-' || f.e END)::json` +
  ` FROM (SELECT g.t, split_part(g.t, 'e-', 1) AS m, NULLIF(split_part(g.t, 'e-', 2), '')::int AS e FROM (SELECT (${value})::text AS t) g) f)`;

/** REST's text of a Trait's fields where it is not their SQL value's: rarity as JavaScript spells it. */
const TRAIT_TEXT: Record<string, (ct: string, size: string) => string> = {
  rarity: (ct, size) => jsFloatSql(TRAIT_SQL.rarity(ct, size)),
};

/** A Fee's fields in SQL over a stored fee `u.f` of type `u.t` (fees' text form). */
const FEE_SQL: Record<string, string> = {
  __typename: `'Fee'`,
  address: `u.f->>'address'`,
  basisPoints: `(u.f->>'basisPoints')::int`,
  type: 'u.t',
};

class Planner {
  private readonly entities: Partial<Record<Planned, EntityMetadata>>;

  constructor(
    private readonly schema: GraphQLSchema,
    ds: DataSource,
  ) {
    this.entities = { Asset: ds.getMetadata(Asset), Collection: ds.getMetadata(Collection), Chain: ds.getMetadata(Chain), Category: ds.getMetadata(Category) };
  }

  /** The fields of a selection with their response keys (flattened by flatten.ts: fields only, keys distinct; else undefined). */
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
    // An asset's status and listing both come from its active listing: looked up once, when both are asked.
    const listingNode = typeName === 'Asset' ? fields.find((f) => f.node.name.value === 'listing' && !f.node.arguments?.length)?.node : undefined;
    const shared = listingNode && fields.some((f) => f.node.name.value === 'status') ? this.assetListing(listingNode) : undefined;
    const parts: [string, Part][] = [];
    for (const { key, node } of fields) {
      const name = node.name.value;
      const field = type.getFields()[name];
      let part: Part | undefined;
      if (name === '__typename') part = constant(typeName);
      // Only the selection the shared value was built for: another alias of `listing` selects other fields.
      else if (shared && node === listingNode) part = { ...shared, render: sharedValue, text: sharedValue };
      else if (shared && name === 'status' && !node.selectionSet && !node.arguments?.length) part = this.assetStatus(field, true);
      else part = field && this.field(typeName, field, node, key);
      if (!part) return undefined;
      parts.push([key, part]);
    }
    return objectPart(parts, shared);
  }

  private field(typeName: Planned, field: GraphQLField<unknown, unknown>, node: FieldNode, key: string): Part | undefined {
    if (field.name === 'assets' && typeName === 'Collection') return this.collectionAssets(field, node);
    if (node.arguments?.length) return undefined;
    const leaf = !node.selectionSet;
    switch (`${typeName}.${field.name}`) {
      case 'Asset.collection':
        return this.assetCollection(node);
      case 'Collection.chain':
        return this.byId('Chain', 'chains', node, (_b, row) => `${row}.chain_id`);
      case 'Asset.chain':
        // Inside collection.assets, the collection's chain (read once per collection) when it is the asset's.
        return this.byId('Chain', 'chains', node, (_b, row) => `${row}.chain_id`, (b, row) => b.collectionOf.get(row));
      case 'Listing.chain':
        // Its asset's chain; inside collection.assets, the collection's (read once per collection) when it is the asset's.
        return this.byId(
          'Chain',
          'chains',
          node,
          (b, row) => `${b.assetOf.get(row) ?? row}.chain_id`,
          (b, l) => b.collectionOf.get(b.assetOf.get(l)!),
        );
      case 'Collection.category':
        return this.byId('Category', 'categories', node, (_b, row) => `${row}.category_id`);
      case 'Collection.fees':
        return this.fees(node, (_b, c) => [`${c}.fees`]);
      case 'Asset.fees':
        return this.fees(node, (b, a) => [this.collectionFees(b, a)]);
      case 'Listing.fees':
        // The collection's royalty fees, then the listing's maker fees.
        return this.fees(node, (b, l) => {
          const collection = `(SELECT x.fees FROM collections x WHERE x.id = ${l}.collection_id)`;
          const parent = b.collectionOf.get(b.assetOf.get(l)!);
          return [parent ? `CASE WHEN ${l}.collection_id = ${parent}.id THEN ${parent}.fees ELSE ${collection} END` : collection, `${l}.maker_fees`];
        });
      case 'Asset.status':
        return leaf ? this.assetStatus(field) : undefined;
      case 'Asset.listing':
        return this.assetListing(node);
      case 'Asset.traits':
        return this.assetTraits(node);
    }
    if (typeName === 'Listing') return leaf ? listingRender(field, key) : undefined;
    if (field.resolve || !leaf) return undefined;
    return columnPart(this.entities[typeName]!, field);
  }

  /**
   * An asset's traits with their counts and rarity, in asset.traits.ts's order (traitsByAssetId): its
   * asset_traits rows with their collection_traits counts; rarity = count / the collection's assets.
   */
  private assetTraits(node: FieldNode): Part | undefined {
    const type = this.schema.getType('Trait') as GraphQLObjectType;
    const fields = this.fields(node.selectionSet);
    if (!fields) return undefined;
    const columns: ((ct: string, size: string) => string)[] = [];
    const shapes: [string, Shape][] = [];
    for (const { key, node: child } of fields) {
      const name = child.name.value;
      if (child.arguments?.length || child.selectionSet || (name !== '__typename' && (!type.getFields()[name] || type.getFields()[name].resolve))) return undefined;
      const sql = TRAIT_SQL[name];
      if (!sql) return undefined;
      columns.push(sql);
      shapes.push([key, name === '__typename' ? { kind: 'constant', value: 'Trait' } : VALUE]);
    }
    const keys = fields.map((f) => f.key);
    const valued = columns.filter((_, i) => shapes[i][1].kind !== 'constant');
    const texts = fields.map((f, i) => TRAIT_TEXT[f.node.name.value] ?? columns[i]);
    const traits =
      (item: (values: string[]) => string, chosen: typeof columns): Render =>
      (b, a) => {
        // Inside collection.assets, the parent collection's count (read once per collection).
        const size = assetCountSql(b.collectionOf.get(a) ? `${b.collectionOf.get(a)}.id` : `${a}.collection_id`);
        const t = nextAlias(b);
        const values = chosen.map((column) => column(t, size));
        return `array_to_json(ARRAY(SELECT ${item(values)} FROM asset_traits ${t}_a JOIN collection_traits ${t} ON ${t}.collection_id = ${t}_a.collection_id AND ${t}.trait_type = ${t}_a.trait_type AND ${t}.value = ${t}_a.value WHERE ${t}_a.asset_id = ${a}.id ORDER BY ${t}.trait_type, ${t}.value))`;
      };
    return {
      shape: { kind: 'list', item: objectShape(shapes) },
      render: traits((values) => `json_build_array(${values.join(', ')})`, valued),
      text: keys.every(columnKey) ? traits((values) => rowJson(values, keys), texts) : undefined,
    };
  }

  /** An asset's collection's stored fees: the collection row's own when it is in the statement. */
  private collectionFees(b: Build, asset: string): string {
    const c = b.collectionOf.get(asset);
    return c ? `${c}.fees` : `(SELECT x.fees FROM collections x WHERE x.id = ${asset}.collection_id)`;
  }

  /**
   * A row of `table` by its id (`key`), as the object of `typeName`; null when there is none. With
   * `parent` (a row in scope with the same key column, e.g. the collection of an asset in its page), the
   * parent's object stands in when the keys agree: PostgreSQL builds it once per parent, not per row.
   */
  private byId(typeName: Planned, table: string, node: FieldNode, key: Render, parent?: (b: Build, row: string) => string | undefined): Part | undefined {
    const object = this.object(typeName, node.selectionSet);
    if (!object) return undefined;
    return wrapped(object, (json) => (b, row) => {
      const of = (source: string) => {
        const x = nextAlias(b);
        const sql = json(b, x);
        return sql && `(SELECT ${sql} FROM ${table} ${x} WHERE ${x}.id = ${key(b, source)})`;
      };
      const own = of(row);
      const up = parent?.(b, row);
      if (!own || !up) return own;
      const shared = of(up);
      return shared && `CASE WHEN ${key(b, row)} = ${key(b, up)} THEN ${shared} ELSE ${own} END`;
    });
  }

  /**
   * Fees from their stored JSON (collections.fees: royalty; listings.maker_fees: maker): PostgreSQL sends
   * the stored arrays (`stored`: [royalty] or [royalty, maker]), Node types them as fee.type.ts's feesOf
   * does; in REST's text PostgreSQL writes them.
   */
  private fees(node: FieldNode, stored: (b: Build, row: string) => string[]): Part | undefined {
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
    const keys = fields.map((f) => f.key);
    const columns = fields.map((f) => FEE_SQL[f.node.name.value]);
    const text: Render | undefined =
      keys.every(columnKey) && columns.every((c) => c !== undefined)
        ? (b, row) => {
            const sources = stored(b, row).map(
              (sql, k) => `SELECT f, ${k} AS k, i, '${k === 0 ? 'royalty' : 'maker'}'::text AS t FROM jsonb_array_elements(${sql}) WITH ORDINALITY e(f, i)`,
            );
            return `array_to_json(ARRAY(SELECT ${rowJson(columns, keys)} FROM (${sources.join(' UNION ALL ')}) u ORDER BY u.k, u.i))`;
          }
        : undefined;
    return { shape: { kind: 'map', map }, render: (b, row) => `json_build_array(${stored(b, row).join(', ')})`, text };
  }

  /**
   * listed while the asset has an active listing now (the resolver asks activeListingByAsset); `fromShared`:
   * the asset's listing, selected too, is the object's shared value (null without one).
   */
  private assetStatus(field: GraphQLField<unknown, unknown>, fromShared = false): Part | undefined {
    const type = getNamedType(field.type);
    if (!isEnumType(type)) return undefined;
    const listed = type.getValues().find((v) => v.value === 'listed');
    const unlisted = type.getValues().find((v) => v.value === 'unlisted');
    if (!listed || !unlisted || !/^[A-Z_]+$/.test(listed.name + unlisted.name)) return undefined;
    // A correlated scalar subquery probes ux_listings_one_active_per_asset per asset; EXISTS was planned
    // as a hashed subplan that reads every listing.
    const status =
      (yes: string, no: string): Render =>
      (b, a) => {
        if (fromShared) return `CASE WHEN ${b.shared.get(a)}.v IS NULL THEN '${no}' ELSE '${yes}' END`;
        const l = nextAlias(b);
        return `COALESCE((SELECT '${yes}' FROM listings ${l} WHERE ${l}.asset_id = ${a}.id AND ${isActiveListingSql(l, nowOf(b))} LIMIT 1), '${no}')`;
      };
    return { shape: VALUE, render: status(listed.name, unlisted.name), text: status('listed', 'unlisted') };
  }

  /** The asset's active listing now, or null (at most one listing of an asset is active: ux_listings_one_active_per_asset). */
  private assetListing(node: FieldNode): Part | undefined {
    const listing = this.object('Listing', node.selectionSet);
    if (!listing) return undefined;
    return wrapped(listing, (json) => (b, a) => {
      const l = nextAlias(b);
      b.assetOf.set(l, a);
      const sql = json(b, l);
      return sql && `(SELECT ${sql} FROM listings ${l} WHERE ${l}.asset_id = ${a}.id AND ${isActiveListingSql(l, nowOf(b))})`;
    });
  }

  private assetCollection(node: FieldNode): Part | undefined {
    const collection = this.object('Collection', node.selectionSet);
    if (!collection) return undefined;
    return wrapped(collection, (json) => (b, row) => {
      // Inside collection.assets the collection is the page's own parent row.
      const parent = b.collectionOf.get(row);
      if (parent) return json(b, parent);
      const c = nextAlias(b);
      const sql = json(b, c);
      return sql && `(SELECT ${sql} FROM collections ${c} WHERE ${c}.id = ${row}.collection_id)`;
    });
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

    /** The page's values in selection order (`cursor` as [orderBy, direction, value, id] or as its base64url text), with FROM of the count. */
    const values = (b: Build, r: PageRows, json: Render | undefined, cursorText: boolean, constants: boolean) => {
      const limit = r.args.limit as number;
      const sort = realias(r.sort, r.alias);
      const from = `${r.table} ${r.alias}${r.where.length ? ` WHERE ${r.where.join(' AND ')}` : ''}`;
      const order = orderBySql(sort, `${r.alias}.id`, r.args.direction as SortDirection);
      const n = counted ? nextAlias(b) : '';
      const out: string[] = [];
      for (const { node: child } of fields) {
        const name = child.name.value;
        if (name === '__typename') {
          if (constants) out.push(literal(pageType));
        } else if (name === 'result') {
          const sql = json!(b, r.alias);
          if (!sql) return undefined;
          out.push(`array_to_json(ARRAY(SELECT ${sql} FROM ${from} ORDER BY ${order} LIMIT ${limit}))`);
        } else if (name === 'remaining') {
          out.push(`GREATEST(0, ${n}.n - ${limit})`);
        } else {
          // The page's last row: its sort value and id, picked before anything is computed of it (OFFSET
          // computes the select list of every row it skips).
          const last = nextAlias(b);
          const position = [b.p.add(r.args.orderBy), b.p.add(r.args.direction), sortValueSql({ ...sort, expression: `${last}.s` }), `${last}.id::text`];
          // JSON.stringify([orderBy, direction, value, id]), as encodeCursor writes it, then base64url.
          const cursor = cursorText
            ? base64urlSql(`'[' || ${position.map((v, i) => (i === 2 ? `COALESCE(to_json(${v})::text, 'null')` : `to_json(${v}::text)::text`)).join(` || ',' || `)} || ']'`)
            : `json_build_array(${position[0]}::text, ${position[1]}::text, ${position[2]}, ${position[3]})`;
          const lastRow = `SELECT ${sort.expression} AS s, ${r.alias}.id FROM ${from} ORDER BY ${order} OFFSET ${limit - 1} LIMIT 1`;
          out.push(`CASE WHEN ${n}.n > ${limit} THEN (SELECT ${cursor} FROM (${lastRow}) ${last}) END`);
        }
      }
      const countFrom = counted ? ` FROM (SELECT ${r.count ? `${r.count()} AS n` : `count(*) AS n FROM ${from}`}) ${n}` : '';
      return { out, countFrom };
    };
    const keys = fields.map((f) => f.key);

    /**
     * The page's rows with their item (`t`), the count (`n`), and each row's sort value as JSON (`s`) and
     * id (`i`) for the cursor; `textual`: the text forms (s and i as varchar, so only `t` is text).
     */
    const itemRows = (b: Build, r: PageRows, item: string | undefined, textual: boolean) => {
      if (!item) return undefined;
      const sort = realias(r.sort, r.alias);
      const from = `${r.table} ${r.alias}${r.where.length ? ` WHERE ${r.where.join(' AND ')}` : ''}`;
      const columns = [`${item}${textual ? '::text' : ''} AS t`];
      // Uncorrelated, so run once (an InitPlan); the subquery's alias hides the page's own.
      if (counted) columns.push(`(SELECT ${r.count ? r.count() : `count(*) FROM ${from}`}) AS n`);
      if (sent.includes('cursor')) columns.push(`to_json(${sortValueSql(sort)})${textual ? '::varchar' : ''} AS s`, `${r.alias}.id::${textual ? 'varchar' : 'text'} AS i`);
      return `SELECT ${columns.join(', ')} FROM ${from} ORDER BY ${orderBySql(sort, `${r.alias}.id`, r.args.direction as SortDirection)} LIMIT ${r.args.limit as number}`;
    };

    /** The page's values as `render` sends them (decode's input), from its rows. */
    const rowsForm = (b: Build, r: PageRows): RowsForm | undefined => {
      const sql = itemRows(b, r, resultItem!.render!(b, r.alias), false);
      if (!sql) return undefined;
      const limit = r.args.limit as number;
      const read = (rows: StreamRow<unknown>[]) => {
        // An empty first page: nothing matched, so the count is 0.
        const total = rows.length ? Number(rows[0].n) : 0;
        const last = rows[rows.length - 1];
        const values: unknown[] = [];
        for (const { node: child } of fields) {
          const name = child.name.value;
          if (name === 'result') values.push(rows.map((row) => row.t));
          else if (name === 'remaining') values.push(Math.max(0, total - limit));
          else if (name === 'cursor') values.push(total > limit ? [String(r.args.orderBy), String(r.args.direction), last.s, last.i] : null);
        }
        return values;
      };
      return { sql, read };
    };

    const stream = (b: Build, r: PageRows): TextStream | undefined => {
      const limit = r.args.limit as number;
      const sql = itemRows(b, r, resultItem!.text!(b, r.alias), true);
      if (!sql) return undefined;
      const head = [r.args.orderBy, r.args.direction].map((v) => JSON.stringify(String(v))).join(',');
      const assemble = (rows: StreamRow[]) => {
        // An empty first page: nothing matched, so the count is 0.
        const total = rows.length ? Number(rows[0].n) : 0;
        const last = rows[rows.length - 1];
        // The items are pieces of their own; the text around them is gathered in `text`.
        const pieces: (string | Buffer)[] = [];
        let text = '{';
        fields.forEach(({ key, node: child }, i) => {
          const name = child.name.value;
          text += `${i ? ',' : ''}"${key}":`;
          if (name === '__typename') text += JSON.stringify(pageType);
          else if (name === 'remaining') text += String(Math.max(0, total - limit));
          // As encodeCursor writes [orderBy, direction, value, id], then base64url.
          else if (name === 'cursor') text += total > limit ? `"${Buffer.from(`[${head},${last.s ?? 'null'},${JSON.stringify(last.i)}]`).toString('base64url')}"` : 'null';
          else {
            rows.forEach((row, k) => {
              pieces.push(k ? text : `${text}[`, row.t);
              text = ',';
            });
            text = rows.length ? ']' : `${text}[]`;
          }
        });
        pieces.push(`${text}}`);
        return pieces;
      };
      return { sql, assemble };
    };
    return {
      stream: keys.every(columnKey) && resultItem?.text ? stream : undefined,
      // Items with lists of their own (collections with their assets): as one value, the nested arrays
      // cost PostgreSQL several times the rows (W1: 2.8 -> 0.75 ms); flat items gain nothing.
      rows: resultItem?.render && hasList(resultItem.shape) ? rowsForm : undefined,
      shape: objectShape(shapes),
      resultAt: sent.includes('result') ? sent.indexOf('result') : undefined,
      render: (b, r) => {
        const page = values(b, r, resultItem?.render, false, false);
        if (!page) return undefined;
        const array = `json_build_array(${page.out.join(', ')})`;
        return page.countFrom ? `(SELECT ${array}${page.countFrom})` : array;
      },
      text:
        keys.every(columnKey) && (!resultItem || resultItem.text)
          ? (b, r) => {
              const page = values(b, r, resultItem?.text, true, true);
              return page && rowJson(page.out, keys, page.countFrom);
            }
          : undefined,
    };
  }

  /** Nested `collection.assets(limit, orderBy, direction)`: the first page, in the collection's own row. */
  private collectionAssets(field: GraphQLField<unknown, unknown>, node: FieldNode): Part | undefined {
    const page = this.page('AssetPage', 'Asset', node);
    if (!page) return undefined;
    const argumentsOf = argumentReader(field, node);
    const within =
      (json: PagePlan['render'] | undefined): Render | undefined =>
      json &&
      ((b, row) => {
        if (b.withoutAssets.has(row)) return 'NULL';
        const args = argumentsOf(b.variables);
        const sort = ASSET_SORTS[args.orderBy as keyof typeof ASSET_SORTS];
        if (!sort || !limitFits(args.limit) || !isFirstPage(args.page)) return undefined;
        const a = nextAlias(b);
        b.collectionOf.set(a, row);
        return json(b, { table: 'assets', alias: a, where: [`${a}.collection_id = ${row}.id`], sort, args, count: () => assetCountSql(`${row}.id`) });
      });
    return { shape: page.shape, render: within(page.render), text: within(page.text) };
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
      else if (name === 'collection') root = this.collectionRoot(field, node);
      else if (name === 'assets') root = this.assetsRoot(field, node);
      else if (name === 'collections') root = this.collectionsRoot(field, node);
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

  /** `collection(address, chainId, includeAssets)`: as collection.service.ts's getCollection finds it. */
  private collectionRoot(field: GraphQLField<unknown, unknown>, node: FieldNode): Omit<Root, 'key'> | undefined {
    return this.oneRow(field, node, 'Collection', 'collections', (b, args, a) => {
      if (typeof args.includeAssets !== 'boolean' || typeof args.address !== 'string') return undefined;
      // includeAssets: false answers its `assets` with null.
      if (!args.includeAssets) b.withoutAssets.add(a);
      const where = [`${a}.contract_address = ${b.p.add(args.address.toLowerCase())}`];
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
    types: { page: string; item: Planned; table: string; sorts: Record<string, SortKey> },
    filters: (
      b: Build,
      args: Record<string, unknown>,
      a: string,
    ) => { where: string[]; checkEmpty?: boolean; count?: () => string; exists?: () => string } | undefined,
  ): Omit<Root, 'key'> | undefined {
    const page = this.page(types.page, types.item, node);
    if (!page) return undefined;
    const resultAt = page.resultAt;
    const argumentsOf = argumentReader(field, node);
    /** The page's rows for the request's arguments, or undefined when the resolver must answer. */
    const rows = (b: Build, text: boolean, streamed = false) => {
      const args = argumentsOf(b.variables);
      const sort = types.sorts[args.orderBy as string];
      if (!sort || !limitFits(args.limit) || !isFirstPage(args.page)) return undefined;
      const a = nextAlias(b);
      const filtered = filters(b, args, a);
      // An empty page must be told apart from an error: by its rows, or (REST's text) by `exists`.
      if (!filtered || (filtered.checkEmpty && !streamed && (text ? !filtered.exists : resultAt === undefined))) return undefined;
      return { rows: { table: types.table, alias: a, where: filtered.where, sort, args, count: filtered.count }, filtered };
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
      const id = () => `${b.p.add((args.collectionId as string).toLowerCase())}::uuid`;
      const count = byCollection && where.length === 1 ? () => assetCountSql(id()) : undefined;
      // The resolver answers an empty page of a collection that exists, and an error for one that does not.
      const exists = () => `EXISTS (SELECT 1 FROM collections x WHERE x.id = ${id()})`;
      return { where, checkEmpty: byCollection, count, exists };
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

/**
 * A REST answer PostgreSQL wrote whole (a REST text plan): the route's body as it is sent. Stored JSON
 * values (metadata, description) come in PostgreSQL's own spelling of jsonb (`{"a": 1}`), the same JSON
 * as the resolvers' `{"a":1}` with other spacing.
 */
export class RawJson {
  constructor(readonly text: ResponseText) {}
}

/** A request's Build; its maps and set are made on first use (most plans touch none of them). */
class RequestBuild implements Build {
  readonly p = new Params();
  aliases = 0;
  now?: string;
  private collections?: Map<string, string>;
  private assets?: Map<string, string>;
  private emptied?: Set<string>;
  private sharedValues?: Map<string, string>;

  constructor(readonly variables: Record<string, unknown>) {}

  get collectionOf() {
    return (this.collections ??= new Map());
  }

  get assetOf() {
    return (this.assets ??= new Map());
  }

  get withoutAssets() {
    return (this.emptied ??= new Set());
  }

  get shared() {
    return (this.sharedValues ??= new Map());
  }
}

/** A parameter's place in a statement's text: `$n`. */
const PARAM = /\$(\d+)/g;

/**
 * A plan's last statement, and the parameters its text names. A part may add a parameter its final SQL
 * leaves out (the filters of a page whose selection reads no row, `{ __typename }`; the page's filter
 * beside a count read elsewhere): PostgreSQL refuses to bind more values than a prepared statement names
 * (08P01), so such values are dropped and the others renumbered. A plan builds its text anew on every
 * request, almost always the same: given back the string it had before, the statement's name is found
 * without hashing the new one (V8 keeps a string's hash on it; named-statements.ts looks names up by
 * text), an equality check instead, and the text is not searched for its parameters again.
 */
class LastText {
  private last = '';
  private count = 0;
  private sql = '';
  /** The values kept, by their index; undefined: all of them. */
  private kept?: number[];

  bind(text: string, values: unknown[]): { sql: string; values: unknown[] } {
    if (text !== this.last || values.length !== this.count) {
      this.last = text;
      this.count = values.length;
      const used = new Set<number>();
      for (const [, n] of text.matchAll(PARAM)) used.add(Number(n));
      if (used.size === values.length) {
        this.sql = text;
        this.kept = undefined;
      } else {
        const kept = values.map((_, i) => i).filter((i) => used.has(i + 1));
        const renumbered = new Map(kept.map((i, k) => [i + 1, k + 1]));
        this.sql = text.replace(PARAM, (_, n: string) => `$${renumbered.get(Number(n))}`);
        this.kept = kept;
      }
    }
    return { sql: this.sql, values: this.kept ? this.kept.map((i) => values[i]) : values };
  }
}

/**
 * The plan of an operation, or undefined when its selection is not all covered (see above). With
 * `restText` (a /v1 route's operation, one root), PostgreSQL writes the route's body when it can (objects
 * by row_to_json, REST's enum values and exact numbers; a page's items one row each, with the text around
 * them from Node): the root's value is a RawJson.
 */
export function planOperation(
  schema: GraphQLSchema,
  ds: DataSource,
  operation: OperationDefinitionNode,
  options: { restText?: boolean; document?: DocumentNode } = {},
): SqlPlan | undefined {
  // Fragments in place and a key's fields merged (flatten.ts): the planner reads fields only.
  const flat = flattenOperation(schema, options.document ?? { kind: Kind.DOCUMENT, definitions: [operation] }, operation);
  const roots = flat && new Planner(schema, ds).roots(flat);
  if (!roots) return undefined;
  const text = new LastText();
  const [only] = roots;
  // A root's text is its stream of one row (a single asset); a list's first page streams its items.
  const rootText = only.text;
  const stream: Root['stream'] =
    only.stream ??
    (rootText &&
      ((b) => {
        const sql = rootText(b);
        // Null: the resolvers answer (see assetRoot).
        return sql ? { sql: `SELECT (${sql})::text AS t`, assemble: ([row]) => (row.t === null ? undefined : [row.t]) } : undefined;
      }));
  if (options.restText && roots.length === 1 && stream) {
    return {
      async run(context, variables) {
        const b = new RequestBuild(variables);
        const planned = stream(b);
        if (!planned) return undefined;
        const statement = text.bind(planned.sql, b.p.values);
        const body = planned.assemble(await readStatement(context, statement.sql, statement.values, { textAsBytes: true }));
        return body === undefined ? undefined : { [only.key]: new RawJson(body) };
      },
    };
  }
  // One root sent as rows (a page whose items hold lists); any others are constants (__typename).
  const sent = roots.filter((root) => root.render);
  const rowsRoot = sent.length === 1 ? sent[0] : undefined;
  if (rowsRoot?.rows) {
    const rowsOf = rowsRoot.rows;
    return {
      async run(context, variables) {
        const b = new RequestBuild(variables);
        const form = rowsOf(b);
        if (!form) return undefined;
        const statement = text.bind(form.sql, b.p.values);
        const value = form.read(await readStatement(context, statement.sql, statement.values));
        if (value === STEP_ASIDE) return undefined;
        const data: Record<string, unknown> = {};
        for (const root of roots) data[root.key] = decode(root.shape, root === rowsRoot ? value : undefined);
        return data;
      },
    };
  }
  return {
    async run(context, variables) {
      const b = new RequestBuild(variables);
      const values: string[] = [];
      const reads: (((value: unknown) => unknown) | undefined)[] = [];
      for (const root of roots) {
        if (!root.render) continue;
        const rendered = root.render(b);
        if (!rendered) return undefined;
        values.push(rendered.sql);
        reads.push(rendered.read);
      }
      const statement = text.bind(`SELECT json_build_array(${values.join(', ')}) AS data`, b.p.values);
      const rows: { data: unknown[] }[] = await readStatement(context, statement.sql, statement.values);
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
