import type { FieldNode } from 'graphql';
import { CursorParts, cursorSql, cursorValueSql, directionOf, encodeCursor, orderBySql, SortDirection, SortKey } from '../../../common/pagination';
import { Build, columnKey, CURSOR, literal, nextAlias, objectShape, Part, Render, rowJson, Shape, VALUE } from './parts';

/**
 * A list's first page in SQL plans: `{ cursor remaining result }` (and `__typename`), in the three forms a
 * plan sends it (one JSON value, one row per item, REST's text one row per item).
 */

/** A field of a selection with its response key. */
export interface Selected {
  key: string;
  node: FieldNode;
}

/** The rows of a first page: FROM `table` `alias` `joins` WHERE `where`, in the order of `sort` (over `alias`); `args` are the list's (see directed). */
export interface PageRows {
  table: string;
  /**
   * Instead of `table`: disjoint parts of the rows, each a FROM item aliased `alias`, each filtered, ordered and
   * cut to the page on its own before they are merged (as pagination.ts's ListQuery.sources); its counts read them whole.
   */
  sources?: readonly string[];
  alias: string;
  /** JOIN clauses of rows read with each row (a listing's asset). */
  joins?: string;
  where: string[];
  sort: SortKey;
  args: Record<string, unknown>;
  /**
 * How many rows match, when something cheaper than counting them says it exactly. A function: it may add
 * a parameter, which must be added only when used (a named statement has as many as its text names).
   */
  count?: () => string;
  /** Every matching row is read to be ranked (a search's candidates): the rows forms count them by a window, not a second scan. */
  countAllRead?: boolean;
}


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
export interface RowsForm {
  sql: string;
  read: (rows: StreamRow<unknown>[]) => unknown;
}

/** The rows with their direction resolved: the one given, else the sort's default (as pagination.ts's fetchPage). */
const directed = (r: PageRows): PageRows => ({ ...r, args: { ...r.args, direction: directionOf(r.args.direction as SortDirection | null | undefined, r.sort) } });

/**
 * FROM and WHERE of a page's rows. From parts (PageRows.sources), each cut to `cut` (its ORDER BY and LIMIT)
 * when given: the page needs no more of each; its counts read them whole.
 */
function fromOf(r: PageRows, cut?: string): string {
  const where = r.where.length ? ` WHERE ${r.where.join(' AND ')}` : '';
  if (!r.sources) return `${r.table} ${r.alias}${r.joins ?? ''}${where}`;
  const parts = r.sources.map((source) => `(SELECT ${r.alias}.* FROM ${source}${r.joins ?? ''}${where}${cut ? ` ${cut}` : ''})`);
  return `(${parts.join(' UNION ALL ')}) ${r.alias}`;
}

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
 * request's arguments. `remaining` and `cursor` follow from a count of all matching rows in the same
 * statement, as pagination.ts's fetchPage counts them; the cursor is the last row's, when rows remain.
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

  /**
   * The count `remaining` and `cursor` follow from: every matching row when `remaining` is asked; for a
   * `cursor` alone, whether a row follows the page is all it takes, so at most limit + 1 rows are
   * counted, as the resolvers read one row past the page (pagination.ts countRemaining): counting the
   * 10,000 orders for F3's cursor was most of its statement's time.
   */
  const countOf = (b: Build, r: PageRows, from: string) => {
    if (r.count) return r.count();
    if (sent.includes('remaining')) return `(SELECT count(*) FROM ${from})`;
    return `(SELECT count(*) FROM (SELECT 1 FROM ${from} LIMIT ${(r.args.limit as number) + 1}) ${nextAlias(b)})`;
  };

  /**
   * The rows with their direction resolved, their sort, FROM and WHERE of the page's rows (`pageFrom`) and of
   * its counts (`from`), ORDER BY, LIMIT.
   */
  const prepared = (given: PageRows) => {
    const r = directed(given);
    const order = orderBySql(r.sort, `${r.alias}.id`, r.args.direction as SortDirection);
    const limit = r.args.limit as number;
    return { r, sort: r.sort, from: fromOf(r), pageFrom: fromOf(r, `ORDER BY ${order} LIMIT ${limit}`), order, limit };
  };

  /** The page's values in selection order (`cursor` as [orderBy, direction, value, id] or as its base64url text), with FROM of the count. */
  const values = (b: Build, given: PageRows, json: Render | undefined, cursorText: boolean, constants: boolean) => {
    const { r, sort, from, pageFrom, order, limit } = prepared(given);
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
        const position = [b.p.add(r.args.orderBy), b.p.add(r.args.direction), cursorValueSql({ ...sort, expression: `${last}.s` }), `${last}.id::text`];
        const cursor = cursorText
          ? cursorSql(position.map((v, i) => (i === 2 ? `COALESCE(to_json(${v})::text, 'null')` : `to_json(${v}::text)::text`)))
          : `json_build_array(${position[0]}::text, ${position[1]}::text, ${position[2]}, ${position[3]})`;
        const lastRow = `SELECT ${sort.expression} AS s, ${r.alias}.id FROM ${pageFrom} ORDER BY ${order} OFFSET ${limit - 1} LIMIT 1`;
        out.push(`CASE WHEN ${n}.n > ${limit} THEN (SELECT ${cursor} FROM (${lastRow}) ${last}) END`);
      }
    }
    const countFrom = counted ? ` FROM (SELECT ${countOf(b, r, from)} AS n) ${n}` : '';
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
    const { r, sort, from, pageFrom, order, limit } = prepared(given);
    const item = json(b, r.alias);
    if (!item) return undefined;
    const columns = [`${item}${textual ? '::text' : ''} AS t`];
    // Uncorrelated, so run once (an InitPlan); the subquery's alias hides the page's own.
    if (counted) columns.push(r.countAllRead ? 'count(*) OVER () AS n' : `(SELECT ${countOf(b, r, from)}) AS n`);
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
