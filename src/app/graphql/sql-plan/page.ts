import type { FieldNode } from 'graphql';
import { CursorParts, cursorValueSql, encodeCursor, rowCursorSql } from '../../../common/pagination';
import { firstPageSql, PageRows } from '../../../common/list-query';
import { Build, columnKey, CURSOR, literal, nextAlias, objectShape, Part, Render, rowJson, Shape, VALUE } from './parts';

/**
 * A list's first page in SQL plans: `{ cursor remaining result }` (and `__typename`), in the three forms a
 * plan sends it (one JSON value, one row per item, REST's text one row per item).
 */

/** A field of a selection with its response key. */
export type Selected = { key: string; node: FieldNode };

export interface PagePlan {
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
export type RowsForm = { sql: string; read: (rows: StreamRow<unknown>[]) => unknown };

/** Whether a shape holds a list (an item with lists of its own). */
export const hasList = (shape: Shape): boolean =>
  shape.kind === 'list' || (shape.kind === 'object' && shape.fields.some(hasList));

/**
 * A root page's REST text sent as one row per item, in the page's order, each item's JSON written by
 * PostgreSQL; Node writes the page's other keys around them. One JSON value of the whole page would be
 * copied whole at every level that nests it (the array, the page's row, the output): for the 418 KB of
 * GET /v1/collections?include_assets=true, 2-3x the CPU of its rows, most of it faulting in fresh memory.
 * The items come as the bytes of their text (readStatement's textAsBytes), and are sent as they came.
 */
export interface TextStream {
  sql: string;
  /** The page's JSON text, in pieces, from the rows: `t` an item's JSON, `n` the count, `s` and `i` the sort value's JSON and the id. */
  assemble: (rows: StreamRow[]) => (string | Buffer)[];
}

export interface StreamRow<T = string | Buffer> {
  t: T;
  n?: string | number;
  s?: unknown;
  i?: string;
}

/**
 * A first page `{ cursor remaining result }` (and `__typename`) of the rows the caller gives for the
 * request's arguments, written as fetchPage writes its statement (common/list-query.ts firstPageSql: the rows,
 * cut to the page in each of their parts, their order and their count); the cursor is the last row's, when rows remain.
 */
export function planPage(pageType: string, fields: Selected[], itemOf: (node: FieldNode) => Part | undefined, asRows = false): PagePlan | undefined {
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
      item = itemOf(child);
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
  /** The page's SQL (common/list-query.ts), counting every matching row when `remaining` is asked. */
  const prepared = (given: PageRows) => firstPageSql(given, sent.includes('remaining'));

  /** The page's values in selection order (`cursor` as [orderBy, direction, value, id] or as its base64url text), with FROM of the count. */
  const values = (b: Build, given: PageRows, json: Render | undefined, cursorText: boolean, constants: boolean) => {
    const { r, sort, count, pageFrom, order, limit } = prepared(given);
    const n = counted ? nextAlias(b) : '';
    const out: string[] = [];
    for (const { node: child } of fields) {
      const name = child.name.value;
      if (name === '__typename') {
        if (constants) out.push(literal(pageType));
      } else if (name === 'result') {
        const sql = json!(b, r.alias);
        if (!sql) return undefined;
        out.push(`array_to_json(ARRAY(SELECT ${sql} FROM ${pageFrom} ORDER BY ${order} LIMIT ${limit}))`);
      } else if (name === 'remaining') {
        out.push(`GREATEST(0, ${n}.n - ${limit})`);
      } else {
        // The page's last row: its sort value and id, picked before anything is computed of it (OFFSET
        // computes the select list of every row it skips).
        const last = nextAlias(b);
        const cursor = rowCursorSql(b.p, [r.args.orderBy, r.args.direction], sort, last, cursorText);
        const lastRow = `SELECT ${sort.expression} AS s, ${r.alias}.id FROM ${pageFrom} ORDER BY ${order} OFFSET ${limit - 1} LIMIT 1`;
        out.push(`CASE WHEN ${n}.n > ${limit} THEN (SELECT ${cursor} FROM (${lastRow}) ${last}) END`);
      }
    }
    const countFrom = counted ? ` FROM (SELECT ${count()} AS n) ${n}` : '';
    return { out, countFrom };
  };
  const keys = fields.map((f) => f.key);

  /**
   * The page's rows with their item (`t`, the item's `json` over the row), the count (`n`), and each row's
   * sort value as JSON (`s`) and id (`i`) for the cursor; `textual`: the text forms (s and i as varchar, so
   * only `t` is text). With what the rows say besides their items, `remaining` and the last row's cursor
   * parts when rows remain (`value` reads a sort value as sent; an empty first page: nothing matched).
   */
  const itemRows = (b: Build, given: PageRows, json: Render, textual: boolean, value: (s: unknown) => unknown) => {
    const { r, sort, count, pageFrom, order, limit } = prepared(given);
    const item = json(b, r.alias);
    if (!item) return undefined;
    const columns = [`${item}${textual ? '::text' : ''} AS t`];
    // Uncorrelated, so run once (an InitPlan); the subquery's alias hides the page's own.
    if (counted) columns.push(r.countAllRead ? 'count(*) OVER () AS n' : `(SELECT ${count()}) AS n`);
    if (sent.includes('cursor')) columns.push(`to_json(${cursorValueSql(sort)})${textual ? '::varchar' : ''} AS s`, `${r.alias}.id::${textual ? 'varchar' : 'text'} AS i`);
    const end = (rows: StreamRow<unknown>[]) => {
      const total = rows.length ? Number(rows[0].n) : 0;
      const last = rows[rows.length - 1];
      const cursor: CursorParts | null = total > limit ? [String(r.args.orderBy), String(r.args.direction), value(last.s), String(last.i)] : null;
      return { remaining: Math.max(0, total - limit), cursor };
    };
    return { sql: `SELECT ${columns.join(', ')} FROM ${pageFrom} ORDER BY ${order} LIMIT ${limit}`, end };
  };

  /** The page's values as `render` sends them (decode's input), from its rows. */
  const rowsForm = (b: Build, given: PageRows): RowsForm | undefined => {
    const form = itemRows(b, given, resultItem!.render!, false, (s) => s);
    return (
      form && {
        sql: form.sql,
        read: (rows) => {
          const { remaining, cursor } = form.end(rows);
          return sent.map((name) => (name === 'result' ? rows.map((row) => row.t) : name === 'remaining' ? remaining : cursor));
        },
      }
    );
  };

  const stream = (b: Build, given: PageRows): TextStream | undefined => {
    const form = itemRows(b, given, resultItem!.text!, true, (s) => (s == null ? null : JSON.parse(s as string)));
    if (!form) return undefined;
    const assemble = (rows: StreamRow[]) => {
      const { remaining, cursor } = form.end(rows);
      // The items are pieces of their own; the text around them is gathered in `text`.
      const pieces: (string | Buffer)[] = [];
      let text = '{';
      fields.forEach(({ key, node: child }, i) => {
        const name = child.name.value;
        text += `${i ? ',' : ''}"${key}":`;
        if (name === '__typename') text += JSON.stringify(pageType);
        else if (name === 'remaining') text += String(remaining);
        else if (name === 'cursor') text += cursor ? `"${encodeCursor(...cursor)}"` : 'null';
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
    return { sql: form.sql, assemble };
  };
  return {
    stream: keys.every(columnKey) && resultItem?.text ? stream : undefined,
    // Items with lists of their own (collections with their assets): as one value, the nested arrays
    // cost PostgreSQL several times the rows (W1: 2.8 -> 0.75 ms); flat items gain nothing, but `asRows`
    // (a search) counts its rows by a window over the page's own scan.
    rows: resultItem?.render && (asRows || hasList(resultItem.shape)) ? rowsForm : undefined,
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
