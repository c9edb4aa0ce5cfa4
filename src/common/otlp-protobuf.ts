import { flagsOf, settledResources } from './otlp';
import type { ExportedSpan, Resource, Scope, SpanBatch } from './otlp';
import { I64, LEN, ProtoWriter, SHORT, varintSize } from './protobuf-writer';
import { WordsContext } from './span-context';

/** OTLP's ExportTraceServiceRequest in protobuf (`http/protobuf`), the bytes of the SDK's ProtobufTraceSerializer (see otlp.ts). */

const MIN_INT64 = -(2 ** 63);
const MAX_INT64 = 2 ** 63;
const isInt64 = (n: number) => Number.isInteger(n) && n >= MIN_INT64 && n < MAX_INT64;

/** A KeyValue's key field (tag, length, UTF-8), encoded once per key name. */
const encodedKeys = new Map<string, Buffer>();
const MAX_ENCODED_KEYS = 512;
// Longer string values are sized before they are written (writeKeyValue).
const LONG = 5000;

function encodedKey(key: string): Buffer {
  let bytes = encodedKeys.get(key);
  if (!bytes) {
    const utf8 = Buffer.from(key, 'utf8');
    bytes = Buffer.concat([Buffer.from([(1 << 3) | LEN]), varintBytes(utf8.length), utf8]);
    if (encodedKeys.size < MAX_ENCODED_KEYS) encodedKeys.set(key, bytes);
  }
  return bytes;
}

function varintBytes(n: number): Buffer {
  const bytes: number[] = [];
  while (n > 0x7f) {
    bytes.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  bytes.push(n);
  return Buffer.from(bytes);
}

function writeAttributes(w: ProtoWriter, attributes: Record<string, unknown>, field: number): void {
  for (const key in attributes) {
    if (!Object.prototype.hasOwnProperty.call(attributes, key)) continue;
    writeKeyValue(w, field, key, attributes[key]);
  }
}

function writeKeyValue(w: ProtoWriter, field: number, key: string, value: unknown): void {
  const keyBytes = encodedKey(key);
  w.tag(field, LEN);
  if (typeof value === 'string' && value.length < SHORT && keyBytes.length < 60) {
    // A short ASCII value (most are): every length fits one byte, the string is written by a loop.
    w.room(3 + keyBytes.length + 2 + value.length);
    const start = w.pos;
    w.pos += 1;
    w.raw(keyBytes);
    const buf = w.buf;
    const n = w.ascii(value, w.pos + 4);
    if (n >= 0) {
      buf[start] = keyBytes.length + 4 + n;
      buf[w.pos] = (2 << 3) | LEN;
      buf[w.pos + 1] = n + 2;
      buf[w.pos + 2] = (1 << 3) | LEN;
      buf[w.pos + 3] = n;
      w.pos += 4 + n;
      return;
    }
    w.pos = start;
  }
  if (typeof value === 'string' && value.length >= 128 && value.length <= LONG && keyBytes.length < 1000) {
    // A long value (a statement's text): written first where two-byte lengths put it, which they do
    // for 128 bytes and more (at most 3 * LONG bytes: every length under 2^14), not sized beforehand.
    w.room(5 + keyBytes.length + 4 + 3 * value.length);
    const start = w.pos;
    const at = start + 2 + keyBytes.length + 6;
    const n = w.buf.write(value, at, 'utf8');
    w.pos += 2;
    w.raw(keyBytes);
    w.tag(2, LEN);
    w.varint(n + 3);
    w.tag(1, LEN);
    w.varint(n);
    w.pos = at + n;
    const kv = keyBytes.length + 6 + n;
    w.buf[start] = (kv & 0x7f) | 0x80;
    w.buf[start + 1] = kv >>> 7;
    return;
  }
  if (typeof value === 'string') {
    // Sized exactly: KeyValue { key, value: AnyValue { string_value } }.
    const n = Buffer.byteLength(value, 'utf8');
    const anyValue = 1 + varintSize(n) + n;
    w.varint(keyBytes.length + 1 + varintSize(anyValue) + anyValue);
    w.raw(keyBytes);
    w.tag(2, LEN);
    w.varint(anyValue);
    w.tag(1, LEN);
    w.varint(n);
    w.room(n);
    w.pos += w.buf.write(value, w.pos, n, 'utf8');
    return;
  }
  const kv = w.open(1);
  w.raw(keyBytes);
  w.tag(2, LEN);
  const any = w.open(1);
  writeAnyValue(w, value);
  w.close(any, 1);
  w.close(kv, 1);
}

function writeAnyValue(w: ProtoWriter, value: unknown): void {
  switch (typeof value) {
    case 'string':
      w.stringField(1, value);
      return;
    case 'boolean':
      w.varintField(2, value ? 1 : 0);
      return;
    case 'number':
      if (isInt64(value)) {
        w.varintField(3, value);
      } else {
        w.tag(4, I64);
        w.double(value);
      }
      return;
    default:
  }
  if (value instanceof Uint8Array) {
    w.tag(7, LEN);
    w.varint(value.length);
    w.raw(value);
  } else if (Array.isArray(value)) {
    w.tag(5, LEN);
    const array = w.open(1);
    for (const item of value) {
      w.tag(1, LEN);
      const at = w.open(1);
      writeAnyValue(w, item);
      w.close(at, 1);
    }
    w.close(array, 1);
  } else if (typeof value === 'object' && value !== null) {
    w.tag(6, LEN);
    const list = w.open(1);
    writeAttributes(w, value as Record<string, unknown>, 1);
    w.close(list, 1);
  }
}

function writeSpan(w: ProtoWriter, span: ExportedSpan): void {
  w.tag(2, LEN);
  const at = w.open(2);
  const context = span.spanContext();
  if (context instanceof WordsContext) {
    // The gateway's own span: its ids as words, no hex spelled nor decoded.
    const trace = context.trace;
    w.tag(1, LEN);
    w.idWords(trace.w0, trace.w1, trace.w2, trace.w3);
    w.tag(2, LEN);
    w.idWords(context.high, context.low);
  } else {
    w.idField(1, context.traceId);
    w.idField(2, context.spanId);
  }
  const traceState = context.traceState?.serialize();
  if (traceState) w.stringField(3, traceState);
  const parent = span.parentSpanContext;
  if (parent instanceof WordsContext) {
    w.tag(4, LEN);
    w.idWords(parent.high, parent.low);
  } else if (parent?.spanId) w.idField(4, parent.spanId);
  w.stringField(5, span.name);
  // OTLP's kinds are the API's plus one (0: unspecified).
  const kind = span.kind == null ? 0 : span.kind + 1;
  if (kind !== 0) w.varintField(6, kind);
  if (span.startMs !== undefined) {
    w.tag(7, I64);
    w.timeMs(span.startMs);
    w.tag(8, I64);
    w.timeMs(span.endMs!);
  } else {
    w.timeField(7, span.startTime);
    w.timeField(8, span.endTime);
  }
  writeAttributes(w, span.attributes, 9);
  w.varintField(10, span.droppedAttributesCount);
  for (const event of span.events) {
    w.tag(11, LEN);
    const e = w.open(1);
    w.timeField(1, event.time);
    w.stringField(2, event.name);
    if (event.attributes) writeAttributes(w, event.attributes, 3);
    w.varintField(4, event.droppedAttributesCount || 0);
    w.close(e, 1);
  }
  w.varintField(12, span.droppedEventsCount);
  for (const link of span.links) {
    w.tag(13, LEN);
    const l = w.open(1);
    w.idField(1, link.context.traceId);
    w.idField(2, link.context.spanId);
    const linkState = link.context.traceState?.serialize();
    if (linkState) w.stringField(3, linkState);
    if (link.attributes) writeAttributes(w, link.attributes, 4);
    w.varintField(5, link.droppedAttributesCount || 0);
    w.fixed32Field(6, flagsOf(link.context.traceFlags, link.context.isRemote));
    w.close(l, 1);
  }
  w.varintField(14, span.droppedLinksCount);
  w.tag(15, LEN);
  const status = w.open(1);
  if (span.status.message) w.stringField(2, span.status.message);
  w.varintField(3, span.status.code);
  w.close(status, 1);
  w.fixed32Field(16, flagsOf(context.traceFlags, parent?.isRemote));
  w.close(at, 2);
}

/** Encodes `write`'s output once and keeps it for `owner` (a resource or scope: the same object in every export). */
function once<T extends object>(cache: WeakMap<T, Buffer>, owner: T, write: (w: ProtoWriter) => void, cacheable = true): Buffer {
  let bytes = cache.get(owner);
  if (!bytes) {
    const w = new ProtoWriter();
    write(w);
    bytes = Buffer.from(w.take());
    if (cacheable) cache.set(owner, bytes);
  }
  return bytes;
}

const resourceBytes = new WeakMap<Resource, Buffer>();
const scopeBytes = new WeakMap<Scope, Buffer>();

function writeResource(w: ProtoWriter, resource: Resource): void {
  w.tag(1, LEN);
  const at = w.open(1);
  writeAttributes(w, resource.attributes, 1);
  w.varintField(2, 0);
  w.close(at, 1);
}

function writeScope(w: ProtoWriter, scope: Scope): void {
  w.tag(1, LEN);
  const at = w.open(1);
  w.stringField(1, scope.name);
  if (scope.version) w.stringField(2, scope.version);
  if (scope.attributes) writeAttributes(w, scope.attributes, 3);
  if (scope.droppedAttributesCount) w.varintField(4, scope.droppedAttributesCount);
  w.close(at, 1);
}

const stringFieldSize = (s: string) => {
  const n = Buffer.byteLength(s, 'utf8');
  return 1 + varintSize(n) + n;
};

// A resource whose detectors still run is encoded again next time, not kept half-done.
const resourceField = (resource: Resource) => once(resourceBytes, resource, (w) => writeResource(w, resource), !resource.asyncAttributesPending);
const scopeField = (scope: Scope) => once(scopeBytes, scope, (w) => writeScope(w, scope));

/**
 * One resource's and scope's spans of a protobuf batch: each span already a ScopeSpans `spans` field,
 * written after `head` bytes kept for what goes before them in the request (sealInPlace).
 */
interface ProtoGroup {
  resource: Resource;
  scope: Scope;
  spans: ProtoWriter;
  head: number;
}

/** The protobuf batch (`http/protobuf`). */
export class ProtobufBatch implements SpanBatch {
  count = 0;
  private groups: ProtoGroup[] = [];
  private last: ProtoGroup | undefined;
  private spare: ProtoWriter[] = [];

  add(span: ExportedSpan): void {
    let group = this.last;
    if (!group || group.resource !== span.resource || group.scope !== span.instrumentationScope) group = this.groupOf(span.resource, span.instrumentationScope);
    const start = group.spans.pos;
    try {
      writeSpan(group.spans, span);
    } catch (err) {
      group.spans.pos = start;
      throw err;
    }
    this.count += 1;
  }

  private groupOf(resource: Resource, scope: Scope): ProtoGroup {
    let group = this.groups.find((g) => g.resource === resource && g.scope === scope);
    if (!group) {
      const spans = this.spare.pop() ?? new ProtoWriter();
      // The resource's and scope's fields, two tags and two lengths of at most 5 bytes each.
      const head = resourceField(resource).length + scopeField(scope).length + 12;
      spans.room(head);
      spans.pos = head;
      this.groups.push((group = { resource, scope, spans, head }));
    }
    this.last = group;
    return group;
  }

  settled(): Promise<unknown> | undefined {
    return settledResources(this.groups.map((g) => g.resource));
  }

  /**
   * The ExportTraceServiceRequest of the spans added. With one resource and scope (the gateway's own),
   * it is the batch's own buffer, its head written in the room kept before the spans: valid until the
   * batch is written again (the span processor writes it again only once its export has settled).
   */
  seal(): Uint8Array {
    const bytes = this.groups.length === 1 ? sealInPlace(this.groups[0]) : undefined;
    const request = bytes ?? this.sealCopied();
    for (const g of this.groups) {
      g.spans.pos = 0;
      this.spare.push(g.spans);
    }
    this.groups = [];
    this.last = undefined;
    this.count = 0;
    return request;
  }

  /** Several resources or scopes: the groups' spans copied into a request of their own. */
  private sealCopied(): Uint8Array {
    // Room for all of it at once (the request's own buffer, handed out without a copy): per group its
    // spans, resource, scope and schema URLs, and at most 20 bytes of tags and lengths.
    let room = 0;
    for (const g of this.groups) {
      room += g.spans.pos - g.head + 20 + 3 * ((g.resource.schemaUrl?.length ?? 0) + (g.scope.schemaUrl?.length ?? 0));
      room += resourceField(g.resource).length + scopeField(g.scope).length;
    }
    const w = new ProtoWriter(room);
    const done = new Set<Resource>();
    for (const first of this.groups) {
      const resource = first.resource;
      if (done.has(resource)) continue;
      done.add(resource);
      const resourcePart = resourceField(resource);
      const scopes = this.groups.filter((g) => g.resource === resource);
      const scopeFields = scopes.map((g) => scopeField(g.scope));
      const scopeSizes = scopes.map((g, i) => scopeFields[i].length + g.spans.pos - g.head + (g.scope.schemaUrl ? stringFieldSize(g.scope.schemaUrl) : 0));
      let size = resourcePart.length + (resource.schemaUrl ? stringFieldSize(resource.schemaUrl) : 0);
      for (const n of scopeSizes) size += 1 + varintSize(n) + n;
      w.tag(1, LEN);
      w.varint(size);
      w.raw(resourcePart);
      scopes.forEach((g, i) => {
        w.tag(2, LEN);
        w.varint(scopeSizes[i]);
        w.raw(scopeFields[i]);
        w.raw(g.spans.buf.subarray(g.head, g.spans.pos));
        if (g.scope.schemaUrl) w.stringField(3, g.scope.schemaUrl);
      });
      if (resource.schemaUrl) w.stringField(3, resource.schemaUrl);
    }
    return w.buf.subarray(0, w.pos);
  }
}

/**
 * One group's request in its own buffer: the schema URLs after the spans, the resource, the scope and
 * the two lengths just before them (in the room kept), no span copied. Undefined when the head does not
 * fit (a resource whose detectors added attributes since the room was kept).
 */
function sealInPlace(g: ProtoGroup): Uint8Array | undefined {
  const resourcePart = resourceField(g.resource);
  const scopePart = scopeField(g.scope);
  const w = g.spans;
  const spans = w.pos - g.head;
  const scopeSize = scopePart.length + spans + (g.scope.schemaUrl ? stringFieldSize(g.scope.schemaUrl) : 0);
  const resourceSize = resourcePart.length + 1 + varintSize(scopeSize) + scopeSize + (g.resource.schemaUrl ? stringFieldSize(g.resource.schemaUrl) : 0);
  const headSize = 1 + varintSize(resourceSize) + resourcePart.length + 1 + varintSize(scopeSize) + scopePart.length;
  if (headSize > g.head) return undefined;
  if (g.scope.schemaUrl) w.stringField(3, g.scope.schemaUrl);
  if (g.resource.schemaUrl) w.stringField(3, g.resource.schemaUrl);
  const end = w.pos;
  const start = g.head - headSize;
  w.pos = start;
  w.tag(1, LEN);
  w.varint(resourceSize);
  w.raw(resourcePart);
  w.tag(2, LEN);
  w.varint(scopeSize);
  w.raw(scopePart);
  w.pos = end;
  return w.buf.subarray(start, end);
}

/** The spans as an OTLP ExportTraceServiceRequest in protobuf. */
export function encodeProtobuf(spans: readonly ExportedSpan[]): Uint8Array {
  const batch = new ProtobufBatch();
  for (const span of spans) batch.add(span);
  return batch.seal();
}
