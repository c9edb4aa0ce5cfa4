import type { IncomingMessage, ServerResponse } from 'node:http';
import { Attributes, Context, Link, propagation, ROOT_CONTEXT, SamplingDecision, Span, SpanKind, SpanStatusCode, trace, TraceFlags } from '@opentelemetry/api';
import type { Sampler } from '@opentelemetry/sdk-trace';
import { AttributeLimits, attributeLimitsFromEnv, LightSpan, SpanSink } from './span';
import { TraceWords, WordsContext } from './span-context';

/**
 * The gateway's spans (OpenTelemetry's API only; the SDK is started by src/tracing.ts). A span's parent
 * is passed explicitly, never looked up in an AsyncLocalStorage: the request's span rides on the request
 * and on its scope (RequestScope.span), which already reaches every statement of the request (see
 * scopedDataSource). AsyncLocalStorage's promise hooks, and the http and pg instrumentations that need
 * them, cost more CPU than a small request's own work. While tracing is off nothing here creates an
 * object; a request that is not sampled makes its one non-recording span and no other.
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

/**
 * Called by src/tracing.ts once the SDK runs; `shutdown` sends the spans still queued. With `sink` (the
 * SDK's span processor, when the gateway built it) a request's spans are LightSpans handed to it.
 */
export function tracingStarted(shutdown: () => Promise<void>, sink?: SpanSink): void {
  enabled = true;
  stop = shutdown;
  gatewayTracer = trace.getTracer('nft-marketplace-gateway');
  childSink = sink;
  attributeLimits = attributeLimitsFromEnv();
  // The tracer's sampler, resource and scope (the SDK's Tracer keeps them as fields): a request's span is
  // then a LightSpan too, sampled by the sampler the OTEL_TRACES_SAMPLER variables configured.
  const sdk = gatewayTracer as unknown as SdkTracer;
  roots = sink && sdk._sampler?.shouldSample && sdk._resource && sdk.instrumentationScope ? { sampler: sdk._sampler, resource: sdk._resource, scope: sdk.instrumentationScope } : undefined;
}

/** What the SDK's Tracer holds that a request's span needs. */
interface SdkTracer {
  _sampler?: Sampler;
  _resource?: unknown;
  instrumentationScope?: unknown;
}

/** Whether spans are made at all (the SDK runs). */
export const tracingEnabled = (): boolean => enabled;

/** Sends the spans still queued (at shutdown, before the process exits); at most `withinMs`. */
export function stopTracing(withinMs: number): Promise<void> {
  if (!enabled) return Promise.resolve();
  return Promise.race([stop().catch(() => undefined), new Promise<void>((resolve) => setTimeout(resolve, withinMs).unref())]);
}

/** What the spans here need of a request's scope (RequestScope): its span of the moment, and its road once run. */
interface TracedScope {
  span?: Span;
  executor?: string;
  entry?: string;
}

// The SDK's tracer, once it runs (looked up once: every lookup builds its key and searches the provider's map).
let gatewayTracer = trace.getTracer('nft-marketplace-gateway');
const tracer = () => gatewayTracer;
const under = (parent: Span) => trace.setSpan(ROOT_CONTEXT, parent);
let childSink: SpanSink | undefined;
let roots: { sampler: Sampler; resource: unknown; scope: unknown } | undefined;
let attributeLimits: AttributeLimits = { valueLength: Infinity, count: 128 };

/** A span under `parent` (recording): a LightSpan when the SDK's processor is at hand, else the SDK's. */
function startChild(parent: Span, name: string, kind: SpanKind, attributes: Attributes): Span {
  if (childSink && LightSpan.canParent(parent)) return LightSpan.childOf(parent, name, kind, attributes, childSink, attributeLimits);
  return tracer().startSpan(name, { kind, attributes }, under(parent));
}

/**
 * A request's span, as the SDK's tracer would start it (its remote parent's trace, else a new one; the
 * sampler's decision, trace state and attributes): a LightSpan when sampled, else a span that only
 * carries its context. Without `roots`, the SDK's own.
 */
function startRoot(name: string, kind: SpanKind, attributes: Attributes, context: Context): Span {
  if (!roots || !childSink) return tracer().startSpan(name, { kind, attributes }, context);
  const parent = trace.getSpanContext(context);
  const remote = parent && trace.isSpanContextValid(parent) ? parent : undefined;
  const words = remote ? TraceWords.of(remote.traceId) : TraceWords.random();
  const decision = roots.sampler.shouldSample(context, words.id, name, kind, attributes, []);
  const sampled = decision.decision === SamplingDecision.RECORD_AND_SAMPLED;
  const own = WordsContext.random(words, sampled ? TraceFlags.SAMPLED : TraceFlags.NONE, decision.traceState ?? remote?.traceState);
  if (decision.decision === SamplingDecision.NOT_RECORD) return trace.wrapSpanContext(own);
  if (decision.attributes) Object.assign(attributes, decision.attributes);
  return new LightSpan(own, remote, roots.resource, roots.scope, name, kind, attributes, childSink, attributeLimits);
}

/** Paths probed by balancers and scrapers every few seconds: no trace of their own. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);
const REQUEST_SPAN = Symbol('requestSpan');
type Traced = IncomingMessage & { [REQUEST_SPAN]?: Span };

/**
 * The request's span (server), when tracing is on: a child of the caller's span when the request carries
 * a `traceparent` (OTEL_PROPAGATORS), else the root of a new trace. It ends when the response is done.
 */
export function traceRequest(req: IncomingMessage, res: ServerResponse): void {
  if (!enabled) return;
  const url = req.url ?? '';
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  if (UNTRACED_PATHS.has(path)) return;
  const method = req.method ?? 'GET';
  const span = startRoot(method, SpanKind.SERVER, { 'http.request.method': method, 'url.path': path, 'url.scheme': 'http' }, propagation.extract(ROOT_CONTEXT, req.headers));
  (req as Traced)[REQUEST_SPAN] = span;
  if (!span.isRecording()) return;
  // `on`, not `once`: a response closes once, and once's wrapper is two objects more per request.
  res.on('close', () => {
    const status = res.statusCode;
    span.setAttribute('http.response.status_code', status);
    if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    // A client that left before its answer was sent.
    if (!res.writableFinished) span.setAttribute('error.type', 'aborted');
    span.end();
  });
}

/** The request's span (traceRequest), when it has one. */
export function requestSpanOf(req: IncomingMessage): Span | undefined {
  return (req as Traced)[REQUEST_SPAN];
}

/** Names the request's span after its route once known (`GET /v1/assets/{token_address}/{token_id}`, `POST /graphql`), and says which request it was. */
export function nameRequestSpan(span: Span, method: string, route: string, requestId: string): void {
  if (!span.isRecording()) return;
  span.updateName(`${method} ${route}`);
  span.setAttribute('http.route', route);
  span.setAttribute('gateway.request_id', requestId);
}

/**
 * One GraphQL operation (its span: `query Collections`), whichever road runs it: the span records its
 * name and type, whether a SQL plan answered it (`gateway.sql_plan`; `gateway.executor` says which
 * executor did) and, when it did not come through Apollo, where it came in (`gateway.entry`: the lean
 * door, or express's known-query shortcut). Its SQL statements are its children: while it runs, it is
 * the scope's span.
 */
export function traceOperation<T>(type: string, name: string | undefined, scope: TracedScope, run: () => Promise<T>): Promise<T> {
  const parent = scope.span;
  // Off or not sampled: the operation itself, not even a promise more.
  return parent?.isRecording() ? inOperationSpan(type, name, scope, parent, run) : run();
}

async function inOperationSpan<T>(type: string, name: string | undefined, scope: TracedScope, parent: Span, run: () => Promise<T>): Promise<T> {
  const attributes: Attributes = { 'graphql.operation.type': type };
  if (name) attributes['graphql.operation.name'] = name;
  const span = startChild(parent, name ? `${type} ${name}` : type, SpanKind.INTERNAL, attributes);
  scope.span = span;
  try {
    return await run();
  } catch (err) {
    failed(span, err);
    throw err;
  } finally {
    scope.span = parent;
    if (scope.executor) {
      span.setAttribute('gateway.executor', scope.executor);
      span.setAttribute('gateway.sql_plan', scope.executor === 'plan');
    }
    if (scope.entry) span.setAttribute('gateway.entry', scope.entry);
    span.end();
  }
}

/**
 * A statement's text as its span shows it: plans' statements are several KB, which every span would copy
 * into its export; the start names the statement, and `db.query.text` is cut here (semantic conventions
 * allow it). OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT cuts shorter still.
 */
export const MAX_QUERY_TEXT = 1024;

// The verbs the gateway's statements start with, most frequent first: found without a regular expression.
const VERBS = ['SELECT', 'WITH', 'INSERT', 'UPDATE', 'DELETE', 'BEGIN', 'COMMIT', 'ROLLBACK', 'START', 'SAVEPOINT', 'RELEASE', 'SET', 'SHOW'];

/** The statement's verb: `SELECT`, `INSERT`, `WITH`, ... (the span's name). */
export function verbOf(sql: string): string {
  for (const verb of VERBS) {
    // The verb, then anything but a letter (the end too: NaN | 0x20 is a space).
    const next = sql.charCodeAt(verb.length) | 0x20;
    if (sql.startsWith(verb) && (next < 0x61 || next > 0x7a)) return verb;
  }
  const match = /^\s*([A-Za-z]+)/.exec(sql);
  return match ? match[1].toUpperCase() : 'SQL';
}

/** One SQL statement of `scope`'s request (a client span under the scope's span), when the request is traced. */
export function traceStatement<T>(scope: TracedScope | undefined, sql: string, run: () => Promise<T>): Promise<T> {
  const parent = scope?.span;
  if (!parent?.isRecording()) return run();
  const verb = verbOf(sql);
  const span = startChild(parent, verb, SpanKind.CLIENT, {
    'db.system.name': 'postgresql',
    'db.operation.name': verb,
    // Marked in ASCII: one '…' would make the whole text a two-byte string, which every encoder handles slower.
    'db.query.text': sql.length > MAX_QUERY_TEXT ? `${sql.slice(0, MAX_QUERY_TEXT)}...` : sql,
  });
  return ended(span, run());
}

/** One Redis call of a request (a client span under `parent`), when the request is traced. */
export function traceRedis<T>(parent: Span | undefined, command: string, run: () => Promise<T>): Promise<T> {
  if (!parent?.isRecording()) return run();
  const span = startChild(parent, command, SpanKind.CLIENT, { 'db.system.name': 'redis', 'db.operation.name': command });
  return ended(span, run());
}

/** A W3C `traceparent` of `scope`'s current span (stored with what the request causes, for later work to link to), or null. */
export function traceparentOf(scope: TracedScope | undefined): string | null {
  const span = scope?.span;
  if (!span?.isRecording()) return null;
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-${traceFlags.toString(16).padStart(2, '0')}`;
}

/** The span context of a stored `traceparent`, as a link. */
function linkTo(traceparent: string | null | undefined): Link[] {
  if (!traceparent) return [];
  const span = trace.getSpan(propagation.extract(ROOT_CONTEXT, { traceparent }));
  return span ? [{ context: span.spanContext() }] : [];
}

/**
 * Work that no request runs (a webhook delivery): a trace of its own, linked to the span of the request
 * that caused it (`causedBy`, its stored traceparent). `run` gets the span, to hand its statements and
 * outgoing requests as their parent (a scope's span, traceOutgoing).
 */
export function traceTask<T>(name: string, attributes: Attributes, causedBy: string | null | undefined, run: (span: Span | undefined) => Promise<T>): Promise<T> {
  return enabled ? inTaskSpan(name, attributes, causedBy, run) : run(undefined);
}

async function inTaskSpan<T>(name: string, attributes: Attributes, causedBy: string | null | undefined, run: (span: Span | undefined) => Promise<T>): Promise<T> {
  const span = tracer().startSpan(name, { attributes, links: linkTo(causedBy), root: true });
  try {
    return await run(span);
  } catch (err) {
    failed(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/**
 * An outgoing HTTP request (a client span under `parent`): `headers` get its `traceparent` for the
 * receiver; `statusOf` reads the response's status from what `run` answers (null: none came).
 */
export function traceOutgoing<T>(parent: Span | undefined, method: string, target: string, headers: Record<string, string>, run: () => Promise<T>, statusOf: (answer: T) => number | null): Promise<T> {
  if (!parent?.isRecording()) return run();
  const url = new URL(target);
  // Without its query, which may hold a receiver's token.
  const attributes = { 'http.request.method': method, 'url.full': `${url.origin}${url.pathname}`, 'server.address': url.hostname };
  return inOutgoingSpan(parent, method, attributes, headers, run, statusOf);
}

/**
 * A JSON-RPC call to a chain's node (a client span under `parent`, named after its method: `eth_getLogs`;
 * a batch of calls is one span, `batch`, with their count), made by `run` with `headers` (its traceparent).
 */
export function traceRpc<T>(parent: Span | undefined, chainId: string, target: string, body: unknown, headers: Record<string, string>, run: () => Promise<T>, statusOf: (answer: T) => number | null): Promise<T> {
  if (!parent?.isRecording()) return run();
  const calls = (Array.isArray(body) ? body : [body]) as { method?: unknown }[];
  const methods = [...new Set(calls.map((c) => String(c?.method)))];
  const name = Array.isArray(body) ? 'batch' : methods[0];
  const url = new URL(target);
  const attributes: Attributes = { 'rpc.system': 'jsonrpc', 'rpc.method': methods.join(','), 'server.address': url.hostname, 'gateway.chain_id': chainId };
  if (Array.isArray(body)) attributes['rpc.batch_size'] = calls.length;
  return inOutgoingSpan(parent, name, attributes, headers, run, statusOf);
}

async function inOutgoingSpan<T>(parent: Span, name: string, attributes: Attributes, headers: Record<string, string>, run: () => Promise<T>, statusOf: (answer: T) => number | null): Promise<T> {
  const span = startChild(parent, name, SpanKind.CLIENT, attributes);
  propagation.inject(under(span), headers);
  try {
    const answer = await run();
    const status = statusOf(answer);
    if (status !== null) span.setAttribute('http.response.status_code', status);
    if (status === null || status >= 400) span.setStatus({ code: SpanStatusCode.ERROR });
    return answer;
  } catch (err) {
    failed(span, err);
    throw err;
  } finally {
    span.end();
  }
}

function failed(span: Span, err: unknown): void {
  span.recordException(err as Error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.message });
}

/** Ends `span` when `work` settles; a failure is recorded on it. */
function ended<T>(span: Span, work: Promise<T>): Promise<T> {
  return work.then(
    (value) => {
      span.end();
      return value;
    },
    (err: unknown) => {
      failed(span, err);
      span.end();
      throw err;
    },
  );
}
