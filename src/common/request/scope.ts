import type { Span } from '@opentelemetry/api';
import { DataSource, EntityManager, QueryRunner, ReplicationMode } from 'typeorm';
import { traceStatement, tracingEnabled } from '../tracing';

/** What the server tracks for one HTTP request: its id and the SQL statements it caused. */
export interface RequestScope {
  requestId: string;
  sqlStatements: number;
  /** REST: the route's path; GraphQL: the operation's name once it is known. For logs and metrics. */
  route?: string;
  operation?: string;
  /** The request only reads (a GraphQL query, a REST GET): with read replicas, its statements may go to one. */
  readOnly?: boolean;
  /** The client's consistency token (x-min-lsn): a replica serves this request only once it has replayed that far. */
  minLsn?: bigint;
  /** The replica chosen for this request on its first read (null: the primary), so all its reads see one snapshot source. */
  readFrom?: unknown;
  /**
   * The road a request took, for /metrics: where it came in (`lean`: the lean door in front of express;
   * `express`: a known query answered inside express; else Apollo) and what answered it (`plan`: one SQL
   * statement; `compiled`: graphql-jit over the resolvers; `graphql-js`: graphql-js over the resolvers).
   */
  entry?: 'lean' | 'express';
  executor?: 'plan' | 'compiled' | 'graphql-js';
  /**
   * With traces on (common/tracing.ts), the span its statements go under: the request's, the running
   * GraphQL operation's, a webhook delivery's. Absent: the request is not traced.
   */
  span?: Span;
}

/**
 * Sends the statements of read-only requests to read replicas (see db/replicas.ts). Registered per data
 * source, so that this layer names no implementation.
 */
export interface ReadRouter {
  /** A query runner for one statement or repository call of a read-only request; `primary` makes one on the primary. */
  createQueryRunner(scope: RequestScope, primary: () => QueryRunner): QueryRunner;
  /** The primary's WAL position after a write committed: the consistency token its response carries (x-min-lsn). */
  consistencyToken(): Promise<string>;
}

const readRouters = new WeakMap<DataSource, ReadRouter>();

export function attachReadRouter(ds: DataSource, router: ReadRouter): void {
  readRouters.set(ds, router);
}

export function readRouterOf(ds: DataSource): ReadRouter | undefined {
  return readRouters.get(ds);
}

/** Statements issued by the whole process since start (served on /metrics-style counters and used by the benchmark). */
export const processCounters = { sqlStatements: 0, requests: 0 };

/** Called by the data source's logger for every statement; `queryRunner` tells whose statement it is. */
export function countSqlStatement(queryRunner?: QueryRunner): void {
  countScopedStatement((queryRunner?.data as { scope?: RequestScope } | undefined)?.scope);
}

/** Counts one statement of `scope`'s request (none: the process's own). */
export function countScopedStatement(scope: RequestScope | undefined): void {
  processCounters.sqlStatements += 1;
  if (scope) scope.sqlStatements += 1;
}

/**
 * The data source as one request sees it: every query runner it creates (for `query`, repositories,
 * query builders and transactions alike) carries the request's scope, so the logger counts the
 * statement for that request. This replaces an AsyncLocalStorage, whose promise hooks cost every
 * promise of the process about a quarter of the throughput of the large responses.
 */
/** The service's data source behind a request's view of it (scopedDataSource), or `ds` itself. */
export function rootDataSource(ds: DataSource): DataSource {
  const proto = Object.getPrototypeOf(ds) as unknown;
  return proto instanceof DataSource ? proto : ds;
}

export function scopedDataSource(ds: DataSource, scope: RequestScope): DataSource {
  const view = Object.create(ds) as DataSource;
  let manager: EntityManager | undefined;
  const router = readRouters.get(ds);
  const onPrimary = (mode?: ReplicationMode): QueryRunner => {
    const queryRunner = DataSource.prototype.createQueryRunner.call(view, mode);
    queryRunner.data = { ...queryRunner.data, scope };
    return queryRunner;
  };
  Object.defineProperties(view, {
    createQueryRunner: {
      value(mode?: ReplicationMode): QueryRunner {
        const queryRunner = router && scope.readOnly ? router.createQueryRunner(scope, () => onPrimary(mode)) : onPrimary(mode);
        return tracingEnabled() && scope.span ? tracedRunner(queryRunner, scope) : queryRunner;
      },
    },
    // DataSource.transaction and getRepository go through `manager`, which must create its runners here too.
    manager: { get: () => (manager ??= view.createEntityManager()) },
  });
  return view;
}

/** Each statement of the runner (its transaction's BEGIN and COMMIT too) as a span under the scope's span of the moment. */
function tracedRunner(queryRunner: QueryRunner, scope: RequestScope): QueryRunner {
  const query = queryRunner.query as (sql: string, parameters?: unknown, structured?: boolean) => Promise<unknown>;
  queryRunner.query = ((sql: string, parameters?: unknown, structured?: boolean) =>
    traceStatement(scope, sql, () => query.call(queryRunner, sql, parameters, structured))) as QueryRunner['query'];
  return queryRunner;
}
