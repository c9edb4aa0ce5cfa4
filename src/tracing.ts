/* eslint-disable @typescript-eslint/no-require-imports -- the SDK is loaded only when traces are configured, so off costs nothing */
import type { Context, ContextManager } from '@opentelemetry/api';
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
  const sdk = new NodeSDK({
    // The operator's name when given (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES), else the gateway's.
    serviceName: named ? undefined : 'nft-marketplace-gateway',
    contextManager: new CallContextManager(),
    instrumentations: [],
    // Traces only: the metrics are Prometheus's (/metrics), the logs are the JSON lines on stderr.
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  tracingStarted(() => sdk.shutdown());
}

if (tracingConfigured()) startTracing();
