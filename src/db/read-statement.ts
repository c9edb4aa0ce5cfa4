import pg, { type CustomTypesConfig, type Pool, type PoolClient, type QueryResult } from 'pg';
import { QueryFailedError, QueryRunner } from 'typeorm';
import type { Context } from '../common/request/context';
import { countScopedStatement, readRouterOf } from '../common/request/scope';
import { traceStatement } from '../common/tracing';
import { clientTimedOutFor, driverErrorOf, isClientQueryTimeout, isConnectionFailure, isStatementCancelled, POOL_WAIT, timedOutFor, unavailableFor } from './faults';
import { NamedQueryClient, QUERY_NAMED } from './named-statements';

/** What readStatement needs of a request's context: its scope, its view of the data source and the service's. */
export type StatementContext = Pick<Context, 'scope' | 'ds' | 'rootDs'>;

/** One statement on one pooled connection, by pg's callbacks; a connection failure drops the connection. */
function onPooledConnection(pool: Pool, sql: string, values: unknown[], types?: CustomTypesConfig): Promise<QueryResult> {
  return new Promise((resolve, reject) => {
    pool.connect((connectError: Error | undefined, client: PoolClient | undefined, release: (err?: Error | boolean) => void) => {
      if (connectError || !client) return reject(connectError);
      let settled = false;
      let released = false;
      const finish = (failure?: Error) => {
        if (released) return;
        released = true;
        client.removeListener('error', onError);
        release(failure);
      };
      const fail = (err: Error) => {
        if (!settled) {
          settled = true;
          reject(err);
        }
        finish(err);
      };
      // A connection that breaks while it is held emits 'error' (unheard, it would end the process).
      const onError = (err: Error) => fail(err);
      client.on('error', onError);
      try {
        // By its name (named-statements.ts) even without parameters: a plan's text is the same on every
        // request, and PostgreSQL then plans it once per connection (W1's statement: 2.0 -> 1.5 ms).
        const named = (client as unknown as NamedQueryClient)[QUERY_NAMED];
        const answered = (err: Error | undefined, result: QueryResult) => {
          if (settled) return;
          settled = true;
          // A statement's own error leaves its connection usable; a connection failure ends it. Released
          // once the messages of the socket's current read are handled: pg-pool hands a released
          // connection to the next waiter at once, and a goodbye (FATAL) read with the answer must still
          // find this listener, not a waiter (TypeORM's query runner) that attaches its own a microtask later.
          const failure = err && isConnectionFailure(err) ? err : undefined;
          queueMicrotask(() => finish(failure));
          if (err) reject(err);
          else resolve(result);
        };
        if (named) named.call(client, sql, values, answered, types);
        else client.query({ text: sql, values, types }, answered);
      } catch (err) {
        // pg refused the statement before sending it: the connection is dropped, as pg-pool's own query does.
        fail(err as Error);
      }
    });
  });
}

/** PostgreSQL's oid of `text`. */
const TEXT_OID = 25;

/**
 * Values of type text as Buffers of their UTF-8 bytes, not strings. A large answer's rows wait in memory
 * for its last row: as strings they are on V8's heap, whose young generation copies them at every
 * collection they outlive (into fresh pages of the old one), as Buffers they are outside it. REST W1:
 * 4.0 -> 2.9 ms of Node's CPU per request.
 */
const TEXT_AS_BYTES: CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === TEXT_OID ? (value: string) => Buffer.from(value, 'utf8') : pg.types.getTypeParser(oid, format)) as CustomTypesConfig['getTypeParser'],
};

export interface ReadOptions {
  /** Values of type text come as Buffers (TEXT_AS_BYTES) where the pooled connection serves; elsewhere (replicas, a fault's retry) as strings. */
  textAsBytes?: boolean;
}

/**
 * One read statement of a request straight on a pooled connection of the primary: the rows, as the
 * request's `ds.query` gives them. For SQL plans (sql-plan/), whose requests are one statement each:
 * TypeORM's query runner (its objects, the fault guard's closures, its events and result wrapping) and
 * the request's view of the data source cost more of such a request's CPU than pg itself.
 *
 * It keeps what the query runner's path does for a read: the statement is counted for the request,
 * logged when slow, a statement the server cancelled (statement_timeout) is TIMEOUT, and any other
 * failure of the statement itself is a QueryFailedError. Connection faults are
 * met as faults.ts meets them: a pool wait that timed out is UNAVAILABLE at once; any other connection
 * failure runs the statement again through `ds.query`, whose guard runs a read again on other
 * connections before it answers UNAVAILABLE. With read replicas (db/replicas.ts), `ds.query` serves,
 * since it picks the replica.
 */
export async function readStatement<Row = Record<string, unknown>>(context: StatementContext, sql: string, values: unknown[], options: ReadOptions = {}): Promise<Row[]> {
  const { rootDs: root, scope } = context;
  const pool = (root.driver as unknown as { master?: Pool }).master;
  if (!pool || readRouterOf(root)) return context.ds.query(sql, values);
  countScopedStatement(scope);
  const slowMs = root.options.maxQueryExecutionTime;
  const started = slowMs ? Date.now() : 0;
  let result: QueryResult;
  try {
    result = await traceStatement(scope, sql, () => onPooledConnection(pool, sql, values, options.textAsBytes ? TEXT_AS_BYTES : undefined));
  } catch (err) {
    if (isStatementCancelled(err)) throw timedOutFor(scope, sql, err);
    if (isClientQueryTimeout(err)) throw clientTimedOutFor(scope, sql);
    if (!isConnectionFailure(err)) throw new QueryFailedError(sql, values, err as Error);
    if (POOL_WAIT.test(String(driverErrorOf(err)?.message))) throw unavailableFor(scope, sql, err, false);
    return context.ds.query(sql, values);
  }
  if (slowMs) {
    const ms = Date.now() - started;
    if (ms > slowMs) root.logger.logQuerySlow(ms, sql, values, { data: { scope } } as unknown as QueryRunner);
  }
  return result.rows as Row[];
}
