import { createHash } from 'node:crypto';
import pg from 'pg';
import { PLANNED_PER_CALL } from '../common/sql';

/**
 * A `pg` module whose connections prepare each parameterised statement once, under a name, and run it
 * by that name afterwards: PostgreSQL then parses the text once per connection and can keep its plan,
 * where an unnamed statement is parsed and planned on every call (planning was most of PostgreSQL's
 * time for the small reads: 0.9 ms to plan the active-listing lookup, 0.02 ms to run it).
 *
 * A name is a digest of its text, so it means the same statement in every connection and process: the
 * embedded database's connections share one PGlite session, where a second connection preparing a
 * name that exists is answered by PGliteServer as already done. Texts get names up to
 * MAX_NAMED_STATEMENTS per data source; later texts run unnamed, so a client sending ever new
 * selections cannot grow the statements each connection keeps. A text holding PLANNED_PER_CALL runs unnamed,
 * planned for its values on each call.
 */
export const MAX_NAMED_STATEMENTS = 2000;

/** A client's method that runs one statement by its name even without parameters (within the same cap). */
export const QUERY_NAMED = Symbol('queryNamed');
export type NamedQueryClient = {
  [QUERY_NAMED]?: (text: string, values: unknown[], callback: (err: Error | undefined, result: pg.QueryResult) => void, types?: pg.CustomTypesConfig) => unknown;
};

/** The `pg` module to hand TypeORM (its `driver` option) for named statements. */
export function pgWithNamedStatements(maxNamed = MAX_NAMED_STATEMENTS): typeof pg {
  const names = new Map<string, string>();
  const nameFor = (text: string): string | undefined => {
    // A statement planned for its values (common/sql.ts PLANNED_PER_CALL) runs unnamed.
    if (text.includes(PLANNED_PER_CALL)) return undefined;
    let name = names.get(text);
    if (name === undefined && names.size < maxNamed) {
      name = `gw_${createHash('sha256').update(text).digest('hex').slice(0, 32)}`;
      names.set(text, name);
    }
    return name;
  };

  class NamingClient extends pg.Client {}
  const unnamedQuery = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  const queryNamed = function queryNamed(this: pg.Client, text: string, values: unknown[], callback: unknown, types?: pg.CustomTypesConfig) {
    const name = nameFor(text);
    return unnamedQuery.call(this, name ? { name, text, values, types } : { text, values, types }, callback);
  };
  NamingClient.prototype.query = function query(this: pg.Client, config: unknown, values?: unknown, callback?: unknown) {
    // Statements without parameters (BEGIN, COMMIT, DDL, several statements in one text) stay simple queries.
    if (typeof config === 'string' && Array.isArray(values) && values.length > 0) return queryNamed.call(this, config, values, callback);
    return unnamedQuery.call(this, config, values, callback);
  } as typeof pg.Client.prototype.query;
  (NamingClient.prototype as NamedQueryClient)[QUERY_NAMED] = queryNamed;

  class NamingPool extends pg.Pool {
    constructor(options?: pg.PoolConfig) {
      super({ ...options, Client: NamingClient });
    }
  }
  return Object.create(pg, { Pool: { value: NamingPool } });
}
