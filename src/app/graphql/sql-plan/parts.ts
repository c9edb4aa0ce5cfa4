import { getNamedType, GraphQLEnumType, GraphQLField, isLeafType } from 'graphql';
import { CursorParts, encodeCursor } from '../../../common/pagination';
import { Params } from '../../../common/sql';
import type { SqlScope } from '../../../common/read-model';

/**
 * The vocabulary of SQL plans (see index.ts): a planned part of the response is a Shape (how the value
 * PostgreSQL sends becomes the response's) and its SQL (a Render, per request, given the alias of the
 * row it belongs to), in two forms: the response's values, and REST's final text.
 */

/** Per request: the statement's parameters, the coerced variables, fresh table aliases. */
export interface Build {
  p: Params;
  variables: Record<string, unknown>;
  aliases: number;
  /** The statement's moment (a listing's status and prices, an asset's status): a parameter added on first use (sqlScope). */
  now: () => string;
  /** What the statement knows of its rows, by alias (made on first use: most plans need none). */
  rows?: Map<string, RowOf>;
}

/** A row of the statement: its parent (a nested page's row, a listing's asset: type and alias), its `with` rows, its `omits`, its shared value. */
export interface RowOf {
  /** The row its relation is read within: a nested page's parent row. */
  parent?: { type: string; row: string };
  /** Rows of its model's joined to it (a listing's asset: SqlScope.joined). */
  joined?: Record<string, string>;
  /** Read with its model's `omits` argument false (includeAssets: false): the field that answers null. */
  omitted?: string;
  /** The alias of its shared value (see objectPart), computed once in the object's FROM. */
  shared?: string;
}

/** What the statement knows of the row `row`, made when first told. */
export const rowOf = (b: Build, row: string): RowOf => {
  const rows = (b.rows ??= new Map());
  let known = rows.get(row);
  if (!known) rows.set(row, (known = {}));
  return known;
};

/** The statement's row of type `type` that `row` is read within (SqlScope.within): its parent, or its parent's, if any. */
export const withinRow = (b: Build, row: string, type: string): string | undefined => {
  for (let parent = b.rows?.get(row)?.parent; parent; parent = b.rows?.get(parent.row)?.parent) if (parent.type === type) return parent.row;
  return undefined;
};

/** The request's statement as a read model writes SQL in it (common/read-model.ts), over the row `row` when given. */
export const scopeOf = (b: Build, row?: string): SqlScope => ({
  p: b.p,
  now: b.now,
  joined: row === undefined ? undefined : b.rows?.get(row)?.joined,
  within: row === undefined ? undefined : (type) => withinRow(b, row, type),
});

/** A SQL expression for one value of the response, given the alias of the row it belongs to; undefined: step aside. */
export type Render = (b: Build, row: string) => string | undefined;

/**
 * How a value PostgreSQL sends becomes the response's value. Objects travel as JSON arrays of their
 * values in selection order (json_build_array costs PostgreSQL a fraction of json_build_object, which
 * escapes every key of every row); their keys, and constants such as __typename, are put back here.
 * `map`: a value Node finishes (a scalar's own serializer, fees from their stored JSON, a cursor).
 */
export type Shape =
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
export interface Part {
  shape: Shape;
  render?: Render;
  text?: Render;
}

export const VALUE: Shape = { kind: 'value' };
/** A SQL string literal of a GraphQL name (type names, enum values: [_A-Za-z0-9]). */
export const literal = (value: string) => `'${value.replace(/'/g, "''")}'`;
export const constant = (value: string): Part => ({ shape: { kind: 'constant', value }, text: () => literal(value) });
/** The row's shared value (see objectPart). */
export const sharedValue: Render = (b, row) => `${b.rows?.get(row)?.shared}.v`;
/** A part whose SQL is the same in both forms. */
export const plain = (render: Render): Part => ({ shape: VALUE, render, text: render });

export function decode(shape: Shape, value: unknown): unknown {
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

export const objectShape = (fields: [string, Shape][]): Shape => ({ kind: 'object', keys: fields.map(([key]) => key), fields: fields.map(([, shape]) => shape) });

/** Each render's SQL, or undefined when one of them steps aside. */
export function renderAll(b: Build, row: string, renders: Render[]): string[] | undefined {
  const values: string[] = [];
  for (const render of renders) {
    const sql = render(b, row);
    if (sql === undefined) return undefined;
    values.push(sql);
  }
  return values;
}

/** A key PostgreSQL can carry as a column name unchanged (at most 63 bytes, no quoting). */
export const columnKey = (key: string) => /^[_A-Za-z][_0-9A-Za-z]{0,62}$/.test(key);

/**
 * An object's final JSON: row_to_json of one row whose columns are the keys, in order. Unlike
 * json_build_object (`{"a" : 1, "b" : 2}`) it writes no spaces, as JSON.stringify does.
 */
export const rowJson = (columns: string[], keys: string[], from = '') =>
  `(SELECT row_to_json(r) FROM (SELECT ${columns.map((sql, i) => `${sql} AS "${keys[i]}"`).join(', ')}${from}) r)`;

/**
 * An object of planned parts: `json_build_array` of the values that are not constant. `shared`: a value
 * several parts read (sharedValue), computed once per row in the object's FROM.
 */
export function objectPart(parts: [string, Part][], shared?: Part): Part {
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
    rowOf(b, row).shared = x;
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
export function wrapped(object: Part, wrap: (json: Render) => Render): Part {
  return { shape: object.shape, render: object.render && wrap(object.render), text: object.text && wrap(object.text) };
}

/**
 * A leaf whose text PostgreSQL sends and whose GraphQL type serializes it in Node (prices, exact
 * decimals). In REST's text an exact decimal is written by PostgreSQL: trim_scale gives exactDecimal's
 * digits, a JSON number unless the key ends in `_decimal` (router.ts's rule); a Price (a double) has no text.
 */
export const serialized = (field: GraphQLField<unknown, unknown>, key: string, numeric: Render): Part | undefined => {
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

/** A cursor as pagination.ts's encodeCursor writes it, from the `[orderBy, direction, sort value, id]` PostgreSQL sends. */
export const CURSOR: Shape = { kind: 'map', map: (value) => (value === null ? null : encodeCursor(...(value as CursorParts))) };

export const STEP_ASIDE = Symbol('stepAside');

/** json_build_array takes at most 100 arguments. */
export const MAX_FIELDS = 100;

export const nextAlias = (b: Build) => `j${(b.aliases += 1)}`;

/**
 * A part of a stored enum: by its GraphQL name in the response, by its value in REST's text (REST spells
 * enums by their values); a value the enum lacks reads as null. Undefined when the values or names
 * cannot be written as SQL literals. The CASE arms are written once, not per request.
 */
export function enumPart(type: GraphQLEnumType, expression: Render): Part | undefined {
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

/**
 * Whether a plan reads every argument the field takes. Plans are made by an allow-list: an argument the
 * schema gains later (a new filter) means no plan, and the resolvers answer, until the planner reads it.
 */
export const readsEveryArgument = (field: GraphQLField<unknown, unknown>, read: readonly string[]) => field.args.every((arg) => read.includes(arg.name));

/**
 * The arguments of every page: a first page is planned, in any order (`page` given: the resolvers answer).
 * Relay's `first` and `after` are read by stepping aside when given (isPlainFirstPage): plans know the page
 * envelope only, not the connection.
 */
export const PAGE_ARGUMENTS = ['limit', 'orderBy', 'direction', 'page', 'first', 'after'] as const;
