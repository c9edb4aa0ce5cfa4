import { AsyncLocalStorage } from 'node:async_hooks';

/** What the server tracks for one HTTP request, across every await of its handling. */
export interface RequestScope {
  requestId: string;
  sqlStatements: number;
}

export const requestScope = new AsyncLocalStorage<RequestScope>();

/** Statements issued by the whole process since start (served on /metrics-style counters and used by the benchmark). */
export const processCounters = { sqlStatements: 0, requests: 0 };

export function countSqlStatement(): void {
  processCounters.sqlStatements += 1;
  const scope = requestScope.getStore();
  if (scope) scope.sqlStatements += 1;
}
