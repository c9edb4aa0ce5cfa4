import { performance } from 'node:perf_hooks';
import type { Attributes, AttributeValue, Exception, HrTime, Link, Span, SpanContext, SpanKind, SpanStatus, TimeInput } from '@opentelemetry/api';
import { SpanStatusCode } from '@opentelemetry/api';

/**
 * A span of the gateway's own, made without the SDK's tracer: a request's span (its sampling decided by
 * the SDK's sampler, common/tracing.ts) and its children (an operation, a SQL statement, a Redis call),
 * which are in their parent's trace and sampled as their parent is (a recording parent of this process:
 * every sampler the OTEL_TRACES_SAMPLER variable names decides so for its children too). It is handed to
 * the SDK's span processor when it ends, as the SDK's spans are, so the same exporter sends it. What it
 * skips is the SDK's bookkeeping per span (attribute checks done twice, a context, its own metrics'
 * objects, empty lists), which cost more than the span's encoding.
 */

/** The SDK's span processor as the spans here use it (the one src/tracing.ts gives the SDK). */
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

// Two hex digits of each byte: an id is joined from them (a third of the time of a Buffer's writes and hex slice).
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));
const random32 = () => (Math.random() * 2 ** 32) >>> 0;
const hex32 = (n: number) => HEX[n >>> 24] + HEX[(n >>> 16) & 0xff] + HEX[(n >>> 8) & 0xff] + HEX[n & 0xff];

/** A random span id: 8 bytes in hex, never all zero (W3C), as the SDK's RandomIdGenerator makes them. */
export function newSpanId(): string {
  return hex32(random32()) + hex32(random32() || 1);
}

/** A random trace id: 16 bytes in hex, never all zero. */
export function newTraceId(): string {
  return hex32(random32()) + hex32(random32()) + hex32(random32()) + hex32(random32() || 1);
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

export class LightSpan implements Span {
  readonly attributes: Attributes;
  links: Link[] = NO_LINKS;
  events: SpanEvent[] = NO_EVENTS;
  readonly startTime: HrTime;
  endTime: HrTime = [0, 0];
  status: SpanStatus = { code: SpanStatusCode.UNSET };
  ended = false;
  droppedAttributesCount = 0;
  private attributeCount = 0;
  readonly droppedEventsCount = 0;
  readonly droppedLinksCount = 0;
  // Times as the SDK's spans take them: the monotonic clock, set against the wall clock when the span starts.
  private readonly offset: number;

  /**
   * `context`: the span's own; `parentSpanContext`: its parent's (none: the root of its trace here);
   * `attributes`: made for this span, which keeps the object itself.
   */
  constructor(
    private readonly context: SpanContext,
    readonly parentSpanContext: SpanContext | undefined,
    readonly resource: unknown,
    readonly instrumentationScope: unknown,
    public name: string,
    readonly kind: SpanKind,
    attributes: Attributes,
    private readonly sink: SpanSink,
    private readonly limits: AttributeLimits,
  ) {
    const now = performance.now();
    this.offset = Date.now() - (now + TIME_ORIGIN);
    this.startTime = millisToHrTime(now + TIME_ORIGIN + this.offset);
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
    const context = { traceId: up.traceId, spanId: newSpanId(), traceFlags: up.traceFlags, traceState: up.traceState };
    return new LightSpan(context, up, (parent as ParentSpan).resource, (parent as ParentSpan).instrumentationScope, name, kind, attributes, sink, limits);
  }

  /** Whether `span` can be the parent of one of these: a recording span that says what resource and scope it exports under. */
  static canParent(span: Span): boolean {
    return span.isRecording() && (span as ParentSpan).resource !== undefined && (span as ParentSpan).instrumentationScope !== undefined;
  }

  get duration(): HrTime {
    let seconds = this.endTime[0] - this.startTime[0];
    let nanos = this.endTime[1] - this.startTime[1];
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
    this.events.push({ name, time: this.now(), attributes: own, droppedAttributesCount: 0 });
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
    this.endTime = this.now();
    if (this.duration[0] < 0) this.endTime = this.startTime;
    this.ended = true;
    this.sink.onEnd(this as never);
  }

  private now(): HrTime {
    return millisToHrTime(performance.now() + TIME_ORIGIN + this.offset);
  }
}
