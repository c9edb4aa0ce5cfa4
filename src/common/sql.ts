import { EntityMetadata } from 'typeorm';

/** A timestamp(3) as Date#toISOString writes the value pg reads (pagination.ts's cursors, GraphQL's DateTimeISO). */
export const isoSql = (expression: string) => `to_char(${expression} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * A float8 of at most 1 in REST's text, a JSON number as JSON.stringify writes it. PostgreSQL writes the
 * same shortest digits, but with an exponent below 1e-4 (`9.998e-05`), where JavaScript writes one only
 * below 1e-6 (`9.998e-7`) and plain decimals above (`0.00009998`).
 */
export const jsFloatSql = (value: string) =>
  `(SELECT (CASE WHEN f.e IS NULL THEN f.t WHEN f.e <= 6 THEN '0.' || repeat('0', f.e - 1) || replace(f.m, '.', '') ELSE f.m || 'e-' || f.e END)::json` +
  ` FROM (SELECT g.t, split_part(g.t, 'e-', 1) AS m, NULLIF(split_part(g.t, 'e-', 2), '')::int AS e FROM (SELECT (${value})::text AS t) g) f)`;

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

/** A parameter's place in a statement's text: `$n`. */
const PARAM = /\$(\d+)/g;

/**
 * A statement built anew on each use (a SQL plan's), and the parameters its text names. A part may add a
 * parameter its final SQL leaves out (plans: the filters of a page whose selection reads no row,
 * `{ __typename }`; the page's filter beside a count read elsewhere): PostgreSQL refuses to bind more
 * values than a prepared statement names (08P01), so such values are dropped and the others renumbered.
 * The text is almost always the same: given back the string it had before, the statement's name is found
 * without hashing the new one (V8 keeps a string's hash on it; named-statements.ts looks names up by
 * text), an equality check instead, and the text is not searched for its parameters again.
 */
export class UsedParams {
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
