import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestScope } from '../../common/request/scope';
import { logger } from '../../common/logger';
import { Door, httpDuration, httpRequests, requestRoads, sqlStatementsPerRequest } from '../../common/metrics';
import { nameRequestSpan, requestSpanOf } from '../../common/tracing';

/** Paths outside both doors that are worth a label of their own; anything else is `(unmatched)`. */
const OWN_PATHS = new Set(['/healthz', '/readyz', '/metrics', '/v1/openapi.json', '/v1/docs']);
/** GraphQL operation names are the client's choice: at most this many distinct ones get a label. */
const MAX_OPERATION_LABELS = 200;
const OPERATION_NAME = /^[_A-Za-z][_0-9A-Za-z]{0,63}$/;
const operationLabels = new Set<string>();

function operationLabel(name: string | undefined): string {
  if (!name) return '(anonymous)';
  if (operationLabels.has(name)) return name;
  if (!OPERATION_NAME.test(name) || operationLabels.size >= MAX_OPERATION_LABELS) return '(other)';
  operationLabels.add(name);
  return name;
}

const pathOf = (req: IncomingMessage & { originalUrl?: string }) => (req.originalUrl ?? req.url ?? '').split('?')[0];
const isDocs = (path: string) => OWN_PATHS.has(path) || path.startsWith('/v1/docs');
/** The explorer's page and files (http/explorer.ts) are pages, not GraphQL requests. */
const isExplorer = (path: string) => path.startsWith('/graphql/explorer');

function doorOf(path: string): Door {
  if (path.startsWith('/graphql') && !isExplorer(path)) return 'graphql';
  return path.startsWith('/v1/') && !isDocs(path) ? 'rest' : 'other';
}

/** The route label: GraphQL's operation name, REST's route path, or one of the server's own paths. */
function routeOf(scope: RequestScope | undefined, door: Door, path: string): string {
  if (door === 'graphql') return operationLabel(scope?.operation);
  if (door === 'rest') return scope?.route ?? '(unmatched)';
  if (isExplorer(path)) return '/graphql/explorer';
  return OWN_PATHS.has(path) ? path : path.startsWith('/v1/docs') ? '/v1/docs' : '(unmatched)';
}

export interface ObserveOptions {
  /** Record Prometheus metrics (METRICS=off: only the log line). */
  metrics: boolean;
  /** A request that takes this long is logged as `slow request`, at warn (SLOW_REQUEST_MS). */
  slowRequestMs: number;
}

/** Who a request was, once answered: its id and its scope (none when refused before it opened one). */
export type Exchange = () => { requestId: string; scope?: RequestScope };

/**
 * One JSON log line per request (request id, door, route or operation, status, duration, SQL
 * statements) and the request metrics, written when the response has been sent (the entry's first step,
 * http/exchange.ts openExchange). Headers and bodies are never logged: no key can reach the log. `started`: performance.now()
 * at its start; `exchange`: read then.
 */
export function observeRequest(req: IncomingMessage, res: ServerResponse, options: ObserveOptions, started: number, exchange: Exchange): void {
  // The request's trace (OTEL_*): its id goes into the log line, its span is named after the route.
  const span = requestSpanOf(req);
  res.on('finish', () => {
    const durationMs = performance.now() - started;
    const { requestId, scope } = exchange();
    const path = pathOf(req);
    const door = doorOf(path);
    const route = routeOf(scope, door, path);
    const spanRoute = door === 'graphql' ? '/graphql' : door === 'rest' ? scope?.route : undefined;
    if (span && spanRoute) nameRequestSpan(span, req.method ?? 'GET', spanRoute, requestId);
    const sqlStatements = scope?.sqlStatements;
    if (options.metrics) {
      httpRequests.inc({ door, route, status: res.statusCode });
      httpDuration.observe({ door, route }, durationMs / 1000);
      if (sqlStatements !== undefined) sqlStatementsPerRequest.observe({ door }, sqlStatements);
      const executor = scope?.executor;
      if (executor) requestRoads.inc({ door, entry: scope.entry ?? (door === 'rest' ? 'express' : 'apollo'), executor });
    }
    const slow = durationMs >= options.slowRequestMs;
    if (!slow && !logger.enabled('info')) return;
    const fields = {
      requestId,
      door,
      method: req.method,
      route,
      status: res.statusCode,
      durationMs: Math.round(durationMs * 10) / 10,
      sqlStatements,
      traceId: span?.spanContext().traceId,
    };
    if (slow) logger.warn('slow request', fields);
    else logger.info('request', fields);
  });
}
