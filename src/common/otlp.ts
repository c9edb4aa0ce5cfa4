import type { HrTime, Link, SpanContext } from '@opentelemetry/api';

/**
 * OTLP's trace export request (ExportTraceServiceRequest), encoded from finished spans in protobuf
 * (OTLP/HTTP `http/protobuf`) or in OTLP's JSON (`http/json`), a span at a time as each ends (SpanBatch,
 * which common/span-processor.ts fills): the bytes the SDK's own serializers write, field for field,
 * made for less CPU. The SDK's protobuf writer copies strings into its buffer in JavaScript, a
 * character at a time, and sizes every message in a first pass; its JSON
 * serializer builds an object per span, attribute and value before stringifying them. Here strings go
 * through Buffer's native UTF-8 writer, a span's identifiers through its hex decoder, and what is the
 * same in every export (the resource, the instrumentation scope, attribute keys) is encoded once.
 * test/otlp.test.ts checks both encodings against the SDK's serializers. Here: what both encodings read
 * of a span and the batch they fill; the protobuf encoding is otlp-protobuf.ts's (its wire format
 * protobuf-writer.ts's), the JSON one otlp-json.ts's.
 */

/** What of the SDK's ReadableSpan the encoders read (a structural copy, so that nothing of the SDK is loaded here). */
export interface ExportedSpan {
  name: string;
  kind: number;
  spanContext(): SpanContext;
  parentSpanContext?: SpanContext;
  startTime: HrTime;
  endTime: HrTime;
  /** The gateway's own spans (common/span.ts): startTime and endTime in milliseconds since the epoch, which the protobuf encoder writes without an HrTime. */
  startMs?: number;
  endMs?: number;
  status: { code: number; message?: string };
  attributes: Record<string, unknown>;
  links: Link[];
  events: { name: string; time: HrTime; attributes?: Record<string, unknown>; droppedAttributesCount?: number }[];
  droppedAttributesCount: number;
  droppedEventsCount: number;
  droppedLinksCount: number;
  resource: { attributes: Record<string, unknown>; schemaUrl?: string; asyncAttributesPending?: boolean };
  instrumentationScope: { name: string; version?: string; schemaUrl?: string; attributes?: Record<string, unknown>; droppedAttributesCount?: number };
}

export type Resource = ExportedSpan['resource'];
export type Scope = ExportedSpan['instrumentationScope'];

// A span's flags: the low 8 bits are W3C's trace flags; then "whether the parent is remote is known", and "it is".
const FLAGS_HAS_IS_REMOTE = 0x100;
const FLAGS_IS_REMOTE = 0x200;
export const flagsOf = (traceFlags: number, isRemote: boolean | undefined) => (traceFlags & 0xff) | FLAGS_HAS_IS_REMOTE | (isRemote ? FLAGS_IS_REMOTE : 0);

/**
 * Spans encoded one at a time, as each ends, into the request that will carry them (OTLP groups them
 * by resource, then by instrumentation scope): nothing of a span is kept once it is added, and sealing
 * wraps the bytes already written. `seal` empties the batch for the next spans.
 */
export interface SpanBatch {
  /** Spans added since the last seal. */
  readonly count: number;
  /** Encodes `span` into the batch, whole, or throws and leaves the batch as it was. */
  add(span: ExportedSpan): void;
  /** Resolves once every resource of the batch has its final attributes (resource detectors still running), or undefined when they all have. */
  settled(): Promise<unknown> | undefined;
  /**
   * The ExportTraceServiceRequest of the spans added; the batch is empty again. The bytes may be the
   * batch's own: they stay valid until the batch is next written (add).
   */
  seal(): Uint8Array;
}

/** Resolves once every resource given has its final attributes (SpanBatch.settled). */
export function settledResources(resources: Iterable<Resource>): Promise<unknown> | undefined {
  let waiting: Promise<unknown>[] | undefined;
  for (const resource of resources) {
    const pending = resource as Resource & { waitForAsyncAttributes?: () => Promise<void> };
    if (pending.asyncAttributesPending && pending.waitForAsyncAttributes) (waiting ??= []).push(pending.waitForAsyncAttributes());
  }
  return waiting && Promise.all(waiting);
}
