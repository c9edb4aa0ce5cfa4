import { Attributes, Span, SpanOptions, SpanStatusCode, trace } from '@opentelemetry/api';
import type { RequestScope } from './request/scope';

/**
 * The gateway's own spans (OpenTelemetry's API only; the SDK is started by src/tracing.ts). While tracing
 * is off nothing here creates an object: each helper runs its work directly, so off costs a boolean test.
 */
let enabled = false;
let stop: () => Promise<void> = async () => {};

/**
 * Whether traces are configured (OpenTelemetry's own variables): an OTLP endpoint, or an explicit
 * OTEL_TRACES_EXPORTER other than `none`; OTEL_SDK_DISABLED=true turns them off whatever else is set.
 */
export function tracingConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase();
  if (exporter === 'none') return false;
  return Boolean(exporter || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/** Called by src/tracing.ts once the SDK runs; `shutdown` sends the spans still queued. */
export function tracingStarted(shutdown: () => Promise<void>): void {
  enabled = true;
  stop = shutdown;
}

/** Sends the spans still queued (at shutdown, before the process exits); at most `withinMs`. */
export function stopTracing(withinMs: number): Promise<void> {
  if (!enabled) return Promise.resolve();
  return Promise.race([stop().catch(() => undefined), new Promise<void>((resolve) => setTimeout(resolve, withinMs).unref())]);
}

const tracer = () => trace.getTracer('nft-marketplace-gateway');

/** The span of the HTTP request being served (the http instrumentation's), when tracing is on. */
export function requestSpan(): Span | undefined {
  return enabled ? trace.getActiveSpan() : undefined;
}

/** Names the request's span after its route once known (`GET /v1/assets/{token_address}/{token_id}`, `POST /graphql`). */
export function nameRequestSpan(span: Span, method: string, route: string): void {
  span.updateName(`${method} ${route}`);
  span.setAttribute('http.route', route);
}

/**
 * One GraphQL operation (its span: `query Collections`), whichever road runs it: the span records its
 * name and type, whether a SQL plan answered it (`gateway.sql_plan`; `gateway.executor` says which
 * executor did) and, when it did not come through Apollo, where it came in (`gateway.entry`: the lean
 * door, or express's known-query shortcut). Its SQL statements are its children.
 */
export function traceOperation<T>(type: string, name: string | undefined, scope: RequestScope, run: () => Promise<T>): Promise<T> {
  if (!enabled) return run();
  const attributes: Attributes = { 'graphql.operation.type': type };
  if (name) attributes['graphql.operation.name'] = name;
  return inSpan(name ? `${type} ${name}` : type, { attributes }, run, (span) => {
    if (scope.executor) span.setAttributes({ 'gateway.executor': scope.executor, 'gateway.sql_plan': scope.executor === 'plan' });
    if (scope.entry) span.setAttribute('gateway.entry', scope.entry);
  });
}

/**
 * Work that no request started (a webhook delivery): a trace of its own, whose outgoing HTTP request
 * carries its `traceparent`, and whose SQL statements are its children.
 */
export function traceTask<T>(name: string, attributes: Attributes, run: () => Promise<T>): Promise<T> {
  if (!enabled) return run();
  return inSpan(name, { attributes, root: true }, run);
}

/** Runs `run` with a new span active; a failure is recorded on it; `before` adds to it as it ends. */
function inSpan<T>(name: string, options: SpanOptions, run: () => Promise<T>, before?: (span: Span) => void): Promise<T> {
  return tracer().startActiveSpan(name, options, async (span) => {
    try {
      return await run();
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
      throw err;
    } finally {
      before?.(span);
      span.end();
    }
  });
}
