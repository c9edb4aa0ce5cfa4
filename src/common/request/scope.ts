import { DataSource, EntityManager, QueryRunner, ReplicationMode } from 'typeorm';

/** What the server tracks for one HTTP request: its id and the SQL statements it caused. */
export interface RequestScope {
  requestId: string;
  sqlStatements: number;
  /** REST: the route's path; GraphQL: the operation's name once it is known. For logs and metrics. */
  route?: string;
  operation?: string;
}

/** Statements issued by the whole process since start (served on /metrics-style counters and used by the benchmark). */
export const processCounters = { sqlStatements: 0, requests: 0 };

/** Called by the data source's logger for every statement; `queryRunner` tells whose statement it is. */
export function countSqlStatement(queryRunner?: QueryRunner): void {
  processCounters.sqlStatements += 1;
  const scope = (queryRunner?.data as { scope?: RequestScope } | undefined)?.scope;
  if (scope) scope.sqlStatements += 1;
}

/**
 * The data source as one request sees it: every query runner it creates (for `query`, repositories,
 * query builders and transactions alike) carries the request's scope, so the logger counts the
 * statement for that request. This replaces an AsyncLocalStorage, whose promise hooks cost every
 * promise of the process about a quarter of the throughput of the large responses.
 */
export function scopedDataSource(ds: DataSource, scope: RequestScope): DataSource {
  const view = Object.create(ds) as DataSource;
  let manager: EntityManager | undefined;
  Object.defineProperties(view, {
    createQueryRunner: {
      value(mode?: ReplicationMode): QueryRunner {
        const queryRunner = DataSource.prototype.createQueryRunner.call(view, mode);
        queryRunner.data = { ...queryRunner.data, scope };
        return queryRunner;
      },
    },
    // DataSource.transaction and getRepository go through `manager`, which must create its runners here too.
    manager: { get: () => (manager ??= view.createEntityManager()) },
  });
  return view;
}
