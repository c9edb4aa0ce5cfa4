/* eslint-disable @typescript-eslint/no-require-imports -- the SDK is loaded only when traces are configured, so off costs nothing */
import type { IncomingMessage } from 'node:http';
import { tracingConfigured, tracingStarted } from './common/tracing';

/** Paths probed by balancers and scrapers every few seconds: no trace of their own. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * OpenTelemetry traces, off unless configured (common/tracing.ts says when): the SDK reads the standard
 * OTEL_* variables itself (endpoint, protocol, headers, service name, resource attributes, sampler,
 * propagators, batching). Imported first by main.ts: the instrumentations patch node:http, pg and
 * ioredis as they are required, so the SDK starts before anything loads them.
 *
 * Spans: the HTTP request (server; an incoming `traceparent` continues its trace), the GraphQL
 * operation (common/tracing.ts), each SQL statement and Redis call inside a request or a webhook
 * delivery, and a delivery's POST (client; it carries `traceparent`). Statements of background work
 * outside those (the sweeper, pollers, migrations) make no trace of their own: a trace per poll would
 * bury the requests'.
 */
function startTracing(): void {
  const { NodeSDK } = require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');
  const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http') as typeof import('@opentelemetry/instrumentation-http');
  const { PgInstrumentation } = require('@opentelemetry/instrumentation-pg') as typeof import('@opentelemetry/instrumentation-pg');
  const { IORedisInstrumentation } = require('@opentelemetry/instrumentation-ioredis') as typeof import('@opentelemetry/instrumentation-ioredis');
  const env = process.env;
  const named = Boolean(env.OTEL_SERVICE_NAME) || /(^|,)\s*service\.name\s*=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '');
  const sdk = new NodeSDK({
    // The operator's name when given (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES), else the gateway's.
    serviceName: named ? undefined : 'nft-marketplace-gateway',
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req: IncomingMessage) => UNTRACED_PATHS.has((req.url ?? '').split('?')[0]),
        requireParentforOutgoingSpans: true,
      }),
      // A span per statement; none for taking a connection from the pool (a wait shows as the gap before the statement).
      new PgInstrumentation({ requireParentSpan: true, ignoreConnectSpans: true }),
      new IORedisInstrumentation({ requireParentSpan: true }),
    ],
    // Traces only: the metrics are Prometheus's (/metrics), the logs are the JSON lines on stderr.
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  tracingStarted(() => sdk.shutdown());
}

if (tracingConfigured()) startTracing();
