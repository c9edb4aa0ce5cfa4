import { EntityMetadata } from 'typeorm';

/** A timestamp(3) as Date#toISOString writes the value pg reads (pagination.ts's cursors, GraphQL's DateTimeISO). */
export const isoSql = (expression: string) => `to_char(${expression} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** base64url of a text, without padding, as Buffer#toString('base64url') writes it; encode() breaks lines every 76 characters. */
export const base64urlSql = (text: string) => `translate(encode(convert_to(${text}, 'UTF8'), 'base64'), E'+/=\\n', '-_')`;

/**
 * Written in a statement, it is planned for its values on every call: db/named-statements.ts runs it unnamed
 * (a named statement's generic plan is made for no values). A price range's share of the rows decides whether
 * a page walks the sort's index through it or reads the range and sorts it: a generic plan took half the
 * offers for 0.5% of them and sorted 262,500 rows for a page of 20 after a cursor (4 s at 500,000 offers).
 */
export const PLANNED_PER_CALL = '/* planned per call */';

/** Collects positional parameters while a statement is assembled: `p.add(value)` returns "$n". */
export class Params {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/**
 * The rows of `from` (a FROM clause whose row is `row`) that meet any of `ranges`, disjoint conditions over
 * `row`, as a parenthesized query whose rows are `row`'s: their UNION ALL, which PostgreSQL flattens into one
 * relation whose parts each read an index range of their own, filtered by the statement's other conditions
 * (PostgreSQL 15 appends and sorts them; it did not merge them in the sort's order when tried). An OR of
 * the ranges was read as one walk of the sort's index, filtered by it, through every row of the table.
 */
export const unionOfRanges = (from: string, row: string, ranges: readonly string[]): string =>
  `(${ranges.map((range) => `SELECT ${row}.* FROM ${from} WHERE ${range}`).join(' UNION ALL ')})`;

const selectLists = new WeakMap<EntityMetadata, Map<string, string>>();

/**
 * `t."token_id" AS "tokenId", ...` for every column of an entity: rows come back as plain objects with
 * the entity's property names, ready for the GraphQL types, without entity hydration.
 */
export function selectColumns(metadata: EntityMetadata, alias: string): string {
  let byAlias = selectLists.get(metadata);
  if (!byAlias) selectLists.set(metadata, (byAlias = new Map()));
  let list = byAlias.get(alias);
  if (!list) {
    list = metadata.columns.map((c) => `${alias}."${c.databaseName}" AS "${c.propertyName}"`).join(', ');
    byAlias.set(alias, list);
  }
  return list;
}

/** Every column of an entity under `prefix` + its property name (`c."name" AS "c:name"`): a joined row's columns. */
export function prefixedColumns(metadata: EntityMetadata, alias: string, prefix: string): string {
  return selectColumns(metadata, alias).replace(/ AS "/g, ` AS "${prefix}`);
}

/**
 * Moves the prefixed columns of joined rows (prefixedColumns) out of `row`: one object per prefix, in
 * the order given, null when its `id` is null (a LEFT JOIN that found nothing).
 */
export function takeJoined(row: Record<string, unknown>, prefixes: readonly string[]): Array<Record<string, unknown> | null> {
  const parts = prefixes.map(() => ({}) as Record<string, unknown>);
  for (const key of Object.keys(row)) {
    const i = prefixes.findIndex((prefix) => key.startsWith(prefix));
    if (i < 0) continue;
    parts[i][key.slice(prefixes[i].length)] = row[key];
    delete row[key];
  }
  return parts.map((part) => (part.id == null ? null : part));
}

/**
 * The rows an `UPDATE ... RETURNING` changed. TypeORM's postgres driver answers UPDATE and DELETE with
 * `[rows, rowCount]` (other statements with the rows alone), so `const [row] = await m.query(...)` would
 * take the array for a row; use this for every conditional update whose effect matters.
 */
export async function updateReturning<T>(
  db: { query(sql: string, params?: unknown[]): Promise<unknown> },
  sql: string,
  params: unknown[],
): Promise<T[]> {
  const result = (await db.query(sql, params)) as unknown[];
  return (Array.isArray(result[0]) ? result[0] : result) as T[];
}
