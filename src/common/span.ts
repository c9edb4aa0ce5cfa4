import { performance } from 'node:perf_hooks';
import type { Attributes, AttributeValue, Exception, HrTime, Link, Span, SpanContext, SpanKind, SpanStatus, TimeInput } from '@opentelemetry/api';
import { SpanStatusCode } from '@opentelemetry/api';
import { TraceWords, WordsContext } from './span-context';

/**
 * A span of the gateway's own, made without the SDK's tracer: a request's span (its sampling decided by
 * the SDK's sampler, common/tracing.ts) and its children (an operation, a SQL statement, a Redis call),
 * which are in their parent's trace and sampled as their parent is (a recording parent of this process:
 * every sampler the OTEL_TRACES_SAMPLER variable names decides so for its children too). It is handed to
 * the span processor when it ends, as the SDK's spans are (the gateway's, common/span-processor.ts, which
 * encodes it then and keeps nothing of it). What it
 * skips is the SDK's bookkeeping per span (attribute checks done twice, a context, its own metrics'
 * objects, empty lists), which cost more than the span's encoding. Its ids are words (span-context.ts)
 * and its times milliseconds since the epoch, which the protobuf encoder writes as they are: no hex
 * string nor HrTime is made unless something asks for one.
 */

/** The span processor as the spans here use it (the one src/tracing.ts gives the SDK). */
export interface SpanSink {
  onStart(span: never, context: never): void;
  onEnd(span: never): void;
}

/** What a child takes from its parent (an SDK span or another of these): its trace, resource and scope. */
interface ParentSpan extends Span {
  resource?: unknown;
  instrumentationScope?: unknown;
}

/** The attribute limits of a span, as the SDK reads them for its own (OTEL_SPAN_ATTRIBUTE_*, else OTEL_ATTRIBUTE_*). */
export interface AttributeLimits {
  valueLength: number;
  count: number;
}

export function attributeLimitsFromEnv(env: NodeJS.ProcessEnv = process.env): AttributeLimits {
  const limit = (name: string, otherwise: number) => {
    const raw = env[`OTEL_SPAN_${name}`]?.trim() || env[`OTEL_${name}`]?.trim();
    const value = raw ? Number(raw) : Number.NaN;
    return Number.isFinite(value) && value >= 0 ? Math.floor(value) : otherwise;
  };
  return { valueLength: limit('ATTRIBUTE_VALUE_LENGTH_LIMIT', Infinity), count: limit('ATTRIBUTE_COUNT_LIMIT', 128) };
}

function millisToHrTime(ms: number): HrTime {
  const seconds = Math.trunc(ms / 1000);
  return [seconds, Math.round((ms - seconds * 1000) * 1e6)];
}

const SECOND = 1e9;
// The epoch time the monotonic clock counts from (read once: its getter is not free).
const TIME_ORIGIN = performance.timeOrigin;

/** How many attributes `attributes` holds, or -1 when one is undefined or the limits would cut it. */
function countWithin(attributes: Attributes, limits: AttributeLimits): number {
  let count = 0;
  for (const key in attributes) {
    const value = attributes[key];
    if (value === undefined || value === null || (typeof value === 'string' && value.length > limits.valueLength) || Array.isArray(value)) return -1;
    count += 1;
  }
  return count <= limits.count ? count : -1;
}

type SpanEvent = { name: string; time: HrTime; attributes?: Attributes; droppedAttributesCount: number };
// What most spans have: no link, no event (one shared empty list each until the first is added).
const NO_LINKS: Link[] = [];
const NO_EVENTS: SpanEvent[] = [];

// A span's status until one is set (setStatus replaces it, never changes it).
const UNSET: SpanStatus = Object.freeze({ code: SpanStatusCode.UNSET });

export class LightSpan implements Span {
  readonly attributes: Attributes;
  links: Link[] = NO_LINKS;
  events: SpanEvent[] = NO_EVENTS;
  /** When it started and ended, in milliseconds since the epoch (startTime and endTime give them as HrTime; the protobuf encoder reads these). */
  readonly startMs: number;
  endMs = 0;
  status: SpanStatus = UNSET;
  ended = false;
  droppedAttributesCount = 0;
  private attributeCount = 0;
  readonly droppedEventsCount = 0;
  readonly droppedLinksCount = 0;
  // Times as the SDK's spans take them: the monotonic clock, set against the wall clock when the root
  // of the trace here started (its children keep its offset, so none starts before its parent).
  private readonly offset: number;

  /**
   * `context`: the span's own; `parentSpanContext`: its parent's (none: the root of its trace here);
   * `attributes`: made for this span, which keeps the object itself; `offset`: the parent's clock offset.
   */
  constructor(
    private readonly context: WordsContext,
    readonly parentSpanContext: SpanContext | undefined,
    readonly resource: unknown,
    readonly instrumentationScope: unknown,
    public name: string,
    readonly kind: SpanKind,
    attributes: Attributes,
    private readonly sink: SpanSink,
    private readonly limits: AttributeLimits,
    offset?: number,
  ) {
    const now = performance.now() + TIME_ORIGIN;
    this.offset = offset ?? Date.now() - now;
    this.startMs = now + this.offset;
    // The caller's object (made for this span) is the span's own when the limits keep it whole: no copy.
    const count = countWithin(attributes, limits);
    if (count >= 0) {
      this.attributes = attributes;
      this.attributeCount = count;
    } else {
      this.attributes = {};
      this.setAttributes(attributes);
    }
    sink.onStart(this as never, undefined as never);
  }

  /** A span under `parent` (one that canParent), in its trace and sampled as it is. */
  static childOf(parent: Span, name: string, kind: SpanKind, attributes: Attributes, sink: SpanSink, limits: AttributeLimits): LightSpan {
    const up = parent.spanContext();
    if (parent instanceof LightSpan) {
      const context = WordsContext.random(parent.context.trace, up.traceFlags, up.traceState);
      return new LightSpan(context, up, parent.resource, parent.instrumentationScope, name, kind, attributes, sink, limits, parent.offset);
    }
    // An SDK span's (a webhook delivery's): its trace in words.
    const context = WordsContext.random(TraceWords.of(up.traceId), up.traceFlags, up.traceState);
    return new LightSpan(context, up, (parent as ParentSpan).resource, (parent as ParentSpan).instrumentationScope, name, kind, attributes, sink, limits);
  }

  /** Whether `span` can be the parent of one of these: a recording span that says what resource and scope it exports under. */
  static canParent(span: Span): boolean {
    return span.isRecording() && (span as ParentSpan).resource !== undefined && (span as ParentSpan).instrumentationScope !== undefined;
  }

  get startTime(): HrTime {
    return millisToHrTime(this.startMs);
  }

  get endTime(): HrTime {
    return millisToHrTime(this.endMs);
  }

  get duration(): HrTime {
    const [startSeconds, startNanos] = this.startTime;
    const [endSeconds, endNanos] = this.endTime;
    let seconds = endSeconds - startSeconds;
    let nanos = endNanos - startNanos;
    if (nanos < 0) {
      seconds -= 1;
      nanos += SECOND;
    }
    return [seconds, nanos];
  }

  spanContext(): SpanContext {
    return this.context;
  }

  isRecording(): boolean {
    return !this.ended;
  }

  setAttribute(key: string, value: AttributeValue | undefined): this {
    if (value === undefined || value === null || this.ended) return this;
    if (!Object.prototype.hasOwnProperty.call(this.attributes, key)) {
      if (this.attributeCount >= this.limits.count) {
        this.droppedAttributesCount += 1;
        return this;
      }
      this.attributeCount += 1;
    }
    this.attributes[key] = this.limited(value);
    return this;
  }

  private limited<T>(value: T): T {
    return (typeof value === 'string' && value.length > this.limits.valueLength ? value.slice(0, this.limits.valueLength) : value) as T;
  }

  setAttributes(attributes: Attributes): this {
    for (const key in attributes) this.setAttribute(key, attributes[key]);
    return this;
  }

  addEvent(name: string, attributes?: Attributes | TimeInput): this {
    if (this.ended) return this;
    const own: Attributes = {};
    if (attributes && typeof attributes === 'object' && !Array.isArray(attributes) && !(attributes instanceof Date)) {
      for (const key in attributes as Attributes) own[key] = this.limited((attributes as Attributes)[key]);
    }
    if (this.events === NO_EVENTS) this.events = [];
    this.events.push({ name, time: millisToHrTime(this.now()), attributes: own, droppedAttributesCount: 0 });
    return this;
  }

  addLink(link: Link): this {
    if (this.ended) return this;
    if (this.links === NO_LINKS) this.links = [];
    this.links.push(link);
    return this;
  }

  addLinks(links: Link[]): this {
    for (const link of links) this.addLink(link);
    return this;
  }

  setStatus(status: SpanStatus): this {
    if (this.ended || status.code === SpanStatusCode.UNSET || this.status.code === SpanStatusCode.OK) return this;
    this.status = status.code === SpanStatusCode.ERROR && typeof status.message === 'string' ? { code: status.code, message: status.message } : { code: status.code };
    return this;
  }

  updateName(name: string): this {
    if (!this.ended) this.name = name;
    return this;
  }

  recordException(exception: Exception): void {
    const attributes: Attributes = {};
    if (typeof exception === 'string') attributes['exception.message'] = exception;
    else if (exception) {
      if (exception.code !== undefined) attributes['exception.type'] = String(exception.code);
      else if (exception.name) attributes['exception.type'] = exception.name;
      if (exception.message) attributes['exception.message'] = exception.message;
      if (exception.stack) attributes['exception.stacktrace'] = exception.stack;
    }
    if (attributes['exception.type'] || attributes['exception.message']) this.addEvent('exception', attributes);
  }

  end(): void {
    if (this.ended) return;
    // A clock that went back: no negative duration.
    this.endMs = Math.max(this.now(), this.startMs);
    this.ended = true;
    this.sink.onEnd(this as never);
  }

  private now(): number {
    return performance.now() + TIME_ORIGIN + this.offset;
  }
}
