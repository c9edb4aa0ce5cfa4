import { DocumentNode, GraphQLSchema, Kind, OperationDefinitionNode } from 'graphql';
import type { Context } from '../../../common/request/context';
import { Params } from '../../../common/sql';
import { readStatement } from '../../../db/read-statement';
import type { ResponseText } from '../../http/chunked-text';
import { flattenOperation } from '../flatten';
import { Build, decode, STEP_ASIDE } from './parts';
import { Planner, Root } from './roots';

/**
 * SQL plans: a query whose whole selection PostgreSQL can answer exactly as the resolvers would is run
 * as one statement that builds the response as JSON (`json_build_array` per object, `ARRAY(...)` of the
 * rows in their order), so Node parses one value instead of hydrating rows, filling loaders and walking
 * resolvers field by field; Node then gives the values their keys (decode). For a /v1 route (REST text
 * plans, see planOperation) PostgreSQL writes the body's JSON instead, a list's items one row each (see
 * TextStream), and Node sends them as they are.
 *
 * What a plan covers, decided once per document (anything else: no plan, the resolvers answer): what the
 * read models (common/read-model.ts, READ_MODELS in objects.ts) declare, and nothing per noun here:
 * - their roots: a list (`assets`, `collections`, `orders`, `offers`) and a search (`searchAssets`,
 *   `searchCollections`, ranked as common/name-search.ts ranks them) with their declared filters, first
 *   pages only (`page` absent), with `cursor` and `remaining`; a root of one row (`asset`, `collection`,
 *   `account`); by an allow-list of arguments (roots.ts's ROOT_ARGUMENTS, derived from the declarations):
 *   a field with an argument the planner does not read is not planned;
 * - their declared fields (stored columns and SQL expressions, serialized as their GraphQL types do:
 *   DateTimeISO as Date#toISOString writes it, enums by their GraphQL names, exact decimals as text), their
 *   relations (a row by id, a row a condition finds, its presence, rows with fields of their own) and their
 *   nested pages (`pagesOf`: a collection's, an account's assets, an asset's offers, listings of an asset,
 *   a collection and a seller ...), nested in the statement; not a trait's `id` (the resolvers answer);
 * - aliases, `__typename`, fragments (named and inline, put in place by flatten.ts); no directives.
 * A plan also steps aside at run time, before any byte is sent, whenever the resolvers would answer an
 * error or need another statement to decide: an asset that is not found (or is on several chains), an
 * empty page of a collection given by id (which may not exist), an out-of-range limit, a `page`, a
 * chain filter (the resolvers check that the chain exists). The resolvers then answer the request as
 * always. `test/differential.test.ts` holds the two answers to each other byte for byte over generated
 * documents and /v1 GETs; `test/graphql-sql-plan.test.ts` and `test/rest-sql-plan.test.ts` hold the
 * cases found so far.
 *
 * The parts: parts.ts (the vocabulary: shapes, parts, renders), leaves.ts (columns, and the fields read
 * models declare), page.ts (a list's first page), objects.ts (a selection on one row, and the relations
 * followed inside the statement), roots.ts (the operation's roots and their arguments), this file (the
 * statement of a request, and running it).
 */
export interface SqlPlan {
  /** The operation's `data`, or undefined when the resolvers must answer (nothing was sent). */
  run(context: Context, variables: Record<string, unknown>): Promise<Record<string, unknown> | undefined>;
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
  private parents?: Map<string, { type: string; row: string }>;
  private joined?: Map<string, Record<string, string>>;
  private omittedRows?: Map<string, string>;
  private sharedValues?: Map<string, string>;

  constructor(readonly variables: Record<string, unknown>) {}

  get parentOf() {
    return (this.parents ??= new Map());
  }

  get joinedOf() {
    return (this.joined ??= new Map());
  }

  get omitted() {
    return (this.omittedRows ??= new Map());
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
  operation: OperationDefinitionNode,
  options: { restText?: boolean; document?: DocumentNode } = {},
): SqlPlan | undefined {
  // Fragments in place and a key's fields merged (flatten.ts): the planner reads fields only.
  const flat = flattenOperation(schema, options.document ?? { kind: Kind.DOCUMENT, definitions: [operation] }, operation);
  const roots = flat && new Planner(schema).roots(flat);
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
        // Null: the resolvers answer (see roots.ts oneRow).
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
