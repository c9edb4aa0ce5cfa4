import { DocumentNode, GraphQLSchema, Kind, OperationDefinitionNode } from 'graphql';
import type { Context } from '../../../common/request/context';
import { Params, UsedParams } from '../../../common/sql';
import { sqlScope } from '../../../common/read-model';
import { readStatement } from '../../../db/read-statement';
import { RawJson } from '../../http/chunked-text';
import { flattenOperation } from '../flatten';
import { Build, decode, RowOf, STEP_ASIDE } from './parts';
import { Planner } from './roots';
import type { StreamRow } from './page';

/**
 * SQL plans (docs/architecture.md "SQL plans", where a table says what each file holds): a query whose whole
 * selection PostgreSQL can answer exactly as the resolvers would runs as one statement that builds the
 * response as JSON (json_build_array per object, Node gives the values their keys: decode); for a /v1 route
 * PostgreSQL writes the body's JSON, a list's items one row each. What a plan covers is decided once per
 * document from the read models (modules/read-models.ts), nothing per noun here; a plan steps aside at run
 * time, before any byte is sent, whenever the resolvers would answer an error or need another statement to
 * decide. `test/differential.test.ts` holds the two answers equal byte for byte.
 */
export interface SqlPlan {
  /** The operation's `data`, or undefined when the resolvers must answer (nothing was sent). */
  run(context: Context, variables: Record<string, unknown>): Promise<Record<string, unknown> | undefined>;
}

/** A request's Build. */
class RequestBuild implements Build {
  readonly p = new Params();
  readonly now = sqlScope(this.p).now;
  aliases = 0;
  rows?: Map<string, RowOf>;

  constructor(readonly variables: Record<string, unknown>) {}
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
  const text = new UsedParams();
  /** A plan of one statement per request: its SQL, and the operation's `data` read from its rows (undefined: the resolvers answer). */
  const planOf = (make: (b: Build) => { sql: string; read: (rows: any[]) => Record<string, unknown> | undefined; textAsBytes?: boolean } | undefined): SqlPlan => ({
    async run(context, variables) {
      const b = new RequestBuild(variables);
      const planned = make(b);
      if (!planned) return undefined;
      const statement = text.bind(planned.sql, b.p.values);
      return planned.read(await readStatement(context, statement.sql, statement.values, { textAsBytes: planned.textAsBytes }));
    },
  });
  const [only] = roots;
  const stream = only.stream;
  if (options.restText && roots.length === 1 && stream) {
    return planOf((b) => {
      const planned = stream(b);
      const read = (rows: StreamRow[]) => {
        const body = planned!.assemble(rows);
        return body && { [only.key]: new RawJson(body) };
      };
      return planned && { sql: planned.sql, textAsBytes: true, read };
    });
  }
  // The roots that send a value; the others are constants (__typename).
  const sent = roots.filter((root) => root.render);
  const sentAt = roots.map((root) => sent.indexOf(root));
  /** The operation's data from the values the roots in `sent` send (STEP_ASIDE: the resolvers answer). */
  const dataOf = (values: unknown[]) => {
    const data: Record<string, unknown> = {};
    for (let i = 0; i < roots.length; i += 1) {
      const value = sentAt[i] < 0 ? undefined : values[sentAt[i]];
      if (value === STEP_ASIDE) return undefined;
      data[roots[i].key] = decode(roots[i].shape, value);
    }
    return data;
  };
  // One root sent as rows (a page whose items hold lists).
  const rowsOf = sent.length === 1 ? sent[0].rows : undefined;
  if (rowsOf) {
    return planOf((b) => {
      const form = rowsOf(b);
      return form && { sql: form.sql, read: (rows) => dataOf([form.read(rows)]) };
    });
  }
  return planOf((b) => {
    const values: string[] = [];
    const reads: (((value: unknown) => unknown) | undefined)[] = [];
    for (const root of sent) {
      const rendered = root.render!(b);
      if (!rendered) return undefined;
      values.push(rendered.sql);
      reads.push(rendered.read);
    }
    const read = ([row]: { data: unknown[] }[]) => dataOf(row.data.map((value, i) => (reads[i] ? reads[i]!(value) : value)));
    return { sql: `SELECT json_build_array(${values.join(', ')}) AS data`, read };
  });
}
