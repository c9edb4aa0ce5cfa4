/* eslint-disable @typescript-eslint/no-require-imports -- the SDK is loaded only when traces are configured, so off costs nothing */
import type { Context, ContextManager } from '@opentelemetry/api';
import type { SpanProcessor } from '@opentelemetry/sdk-trace';
import { ROOT_CONTEXT } from '@opentelemetry/api';
import { tracingConfigured, tracingStarted } from './common/tracing';

/**
 * A context that lasts for one synchronous call: the gateway hands each span its parent itself
 * (common/tracing.ts), so nothing needs a context to survive an `await`, and the process keeps free of
 * AsyncLocalStorage (the SDK's default), whose promise hooks would cost every promise of every request.
 */
class CallContextManager implements ContextManager {
  private current: Context = ROOT_CONTEXT;
  active(): Context {
    return this.current;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(context: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    const outer = this.current;
    this.current = context;
    try {
      return fn.call(thisArg, ...args);
    } finally {
      this.current = outer;
    }
  }
  bind<T>(_context: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.current = ROOT_CONTEXT;
    return this;
  }
}

/**
 * OpenTelemetry traces, off unless configured (common/tracing.ts says when): the SDK reads the standard
 * OTEL_* variables itself (endpoint, protocol, headers, service name, resource attributes, sampler,
 * propagators, batching). Imported first by main.ts, so that traces are on before the first request.
 *
 * Spans (common/tracing.ts makes them, no instrumentation library patches a module): the HTTP request
 * (server; an incoming `traceparent` continues its trace), the GraphQL operation, each SQL statement of a
 * request or a webhook delivery, the rate limit's Redis call, and a delivery's POST (client; it carries
 * `traceparent`). Statements of background work outside those (the sweeper, pollers, migrations) make no
 * trace of their own: a trace per poll would bury the requests'.
 */
function startTracing(): void {
  const { NodeSDK } = require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');
  const env = process.env;
  const named = Boolean(env.OTEL_SERVICE_NAME) || /(^|,)\s*service\.name\s*=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '');
  const processor = otlpHttpProcessor(env);
  const sdk = new NodeSDK({
    // The operator's name when given (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES), else the gateway's.
    serviceName: named ? undefined : 'nft-marketplace-gateway',
    contextManager: new CallContextManager(),
    // Undefined: the SDK's exporters as the variables say (grpc, zipkin, console, several at once).
    spanProcessors: processor ? [processor] : undefined,
    instrumentations: [],
    // Traces only: the metrics are Prometheus's (/metrics), the logs are the JSON lines on stderr.
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  tracingStarted(() => sdk.shutdown(), processor);
}

/**
 * For OTLP over HTTP (`http/protobuf`, the default, or `http/json`) as the only exporter: the gateway's
 * span processor (common/span-processor.ts), which encodes each span as it ends with the gateway's
 * encoders (common/otlp.ts, otlp-protobuf.ts, otlp-json.ts) and batches as the SDK's BatchSpanProcessor does (OTEL_BSP_*), and the SDK's
 * OTLP/HTTP transport (endpoint, headers, timeout, compression, retries from the same
 * OTEL_EXPORTER_OTLP_* variables) to send the bytes.
 */
function otlpHttpProcessor(env: NodeJS.ProcessEnv): SpanProcessor | undefined {
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((name) => name.trim()).filter(Boolean);
  if (exporters.length > 1 || (exporters.length === 1 && exporters[0] !== 'otlp')) return undefined;
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?.trim() || env.OTEL_EXPORTER_OTLP_PROTOCOL?.trim() || 'http/protobuf').toLowerCase();
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') return undefined;
  const { convertLegacyHttpOptions, createOtlpHttpExportDelegate } = require('@opentelemetry/otlp-exporter-base/node-http') as typeof import('@opentelemetry/otlp-exporter-base/node-http');
  const transformer = require('@opentelemetry/otlp-transformer') as typeof import('@opentelemetry/otlp-transformer');
  const { JsonBatch } = require('./common/otlp-json') as typeof import('./common/otlp-json');
  const { ProtobufBatch } = require('./common/otlp-protobuf') as typeof import('./common/otlp-protobuf');
  const { batchSettingsFromEnv, EncodingSpanProcessor } = require('./common/span-processor') as typeof import('./common/span-processor');
  const json = protocol === 'http/json';
  type Request = { body: Uint8Array; spans: number };
  const serializer = {
    serializeRequest: (request: Request) => request.body,
    // Partial successes as the SDK reads them.
    deserializeResponse: (json ? transformer.JsonTraceSerializer : transformer.ProtobufTraceSerializer).deserializeResponse,
  };
  const options = convertLegacyHttpOptions({}, 'TRACES', 'v1/traces', { 'Content-Type': json ? 'application/json' : 'application/x-protobuf' });
  const delegate = createOtlpHttpExportDelegate(options, serializer, 'otlp_http_span_exporter', { name: 'span', countItems: (request: Request) => request.spans }, undefined);
  const send = (body: Uint8Array, spans: number) =>
    new Promise<void>((resolve, reject) => delegate.export({ body, spans }, (result) => (result.code === 0 ? resolve() : reject(result.error ?? new Error('span export failed')))));
  const processor = new EncodingSpanProcessor(() => (json ? new JsonBatch() : new ProtobufBatch()), send, batchSettingsFromEnv(env), () => delegate.shutdown());
  return processor as unknown as SpanProcessor;
}

if (tracingConfigured()) startTracing();
