import type { HrTime, Link, SpanContext } from '@opentelemetry/api';

/**
 * OTLP's trace export request (ExportTraceServiceRequest), encoded from the SDK's finished spans in
 * protobuf (OTLP/HTTP `http/protobuf`) or in OTLP's JSON (`http/json`): the bytes the SDK's own
 * serializers write, field for field, made for less CPU. The SDK's protobuf writer copies strings into
 * its buffer in JavaScript, a character at a time, and sizes every message in a first pass; its JSON
 * serializer builds an object per span, attribute and value before stringifying them. Here strings go
 * through Buffer's native UTF-8 writer, a span's identifiers through its hex decoder, and what is the
 * same in every export (the resource, the instrumentation scope, attribute keys) is encoded once.
 * test/otlp.test.ts checks both encodings against the SDK's serializers.
 */

/** What of the SDK's ReadableSpan the encoders read (a structural copy, so that nothing of the SDK is loaded here). */
export interface ExportedSpan {
  name: string;
  kind: number;
  spanContext(): SpanContext;
  parentSpanContext?: SpanContext;
  startTime: HrTime;
  endTime: HrTime;
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

type Resource = ExportedSpan['resource'];
type Scope = ExportedSpan['instrumentationScope'];

/** The spans by resource, then by instrumentation scope (`key`: the object itself, or what identifies it). */
function grouped<K>(spans: readonly ExportedSpan[], scopeKey: (scope: Scope) => K): Map<Resource, Map<K, ExportedSpan[]>> {
  const byResource = new Map<Resource, Map<K, ExportedSpan[]>>();
  for (const span of spans) {
    let byScope = byResource.get(span.resource);
    if (!byScope) byResource.set(span.resource, (byScope = new Map()));
    const key = scopeKey(span.instrumentationScope);
    const list = byScope.get(key);
    if (list) list.push(span);
    else byScope.set(key, [span]);
  }
  return byResource;
}

// A span's flags: the low 8 bits are W3C's trace flags; then "whether the parent is remote is known", and "it is".
const FLAGS_HAS_IS_REMOTE = 0x100;
const FLAGS_IS_REMOTE = 0x200;
const flagsOf = (traceFlags: number, isRemote: boolean | undefined) => (traceFlags & 0xff) | FLAGS_HAS_IS_REMOTE | (isRemote ? FLAGS_IS_REMOTE : 0);

const MIN_INT64 = -(2 ** 63);
const MAX_INT64 = 2 ** 63;
const isInt64 = (n: number) => Number.isInteger(n) && n >= MIN_INT64 && n < MAX_INT64;

// Protobuf's wire types.
const VARINT = 0;
const I64 = 1;
const LEN = 2;
const I32 = 5;

const varintSize = (n: number) => (n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x200000 ? 3 : n < 0x10000000 ? 4 : 5);

/** A growing buffer that protobuf is written into; length-delimited messages reserve room for their length and close over it. */
class ProtoWriter {
  buf = Buffer.allocUnsafe(64 * 1024);
  pos = 0;

  room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  varint(value: number): void {
    this.room(10);
    const buf = this.buf;
    if (value >= 0 && value <= 0xffffffff) {
      let v = value >>> 0;
      while (v > 0x7f) {
        buf[this.pos++] = (v & 0x7f) | 0x80;
        v >>>= 7;
      }
      buf[this.pos++] = v;
      return;
    }
    // Beyond 32 bits, or negative (an int64 in two's complement: ten bytes).
    const abs = Math.abs(value);
    let low = abs >>> 0;
    let high = (abs / 0x100000000) >>> 0;
    if (value < 0) {
      low = ~low >>> 0;
      high = ~high >>> 0;
      low = (low + 1) >>> 0;
      if (low === 0) high = (high + 1) >>> 0;
    }
    while (high > 0 || low > 0x7f) {
      buf[this.pos++] = (low & 0x7f) | 0x80;
      low = ((low >>> 7) | (high << 25)) >>> 0;
      high >>>= 7;
    }
    buf[this.pos++] = low;
  }

  tag(field: number, wire: number): void {
    this.varint((field << 3) | wire);
  }

  raw(bytes: Uint8Array): void {
    this.room(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  /** A string field's length and UTF-8 bytes (its tag written before). */
  string(s: string): void {
    if (s.length < 43) {
      // At most 126 bytes of UTF-8: a one-byte length.
      this.room(1 + 3 * s.length);
      const n = this.buf.write(s, this.pos + 1, 'utf8');
      this.buf[this.pos] = n;
      this.pos += 1 + n;
      return;
    }
    const n = Buffer.byteLength(s, 'utf8');
    this.varint(n);
    this.room(n);
    this.pos += this.buf.write(s, this.pos, n, 'utf8');
  }

  /** A trace or span id (hex) as its bytes, length first. */
  id(hex: string): void {
    const n = hex.length >>> 1;
    this.room(1 + n);
    this.buf[this.pos] = n;
    this.buf.write(hex, this.pos + 1, n, 'hex');
    this.pos += 1 + n;
  }

  /** Nanoseconds since the epoch as fixed64, without losing precision past 2^53. */
  time([seconds, nanos]: HrTime): void {
    this.room(8);
    const lowSeconds = seconds % 0x10000;
    const part = lowSeconds * 1e9 + Math.trunc(nanos);
    const upper = ((seconds - lowSeconds) / 0x10000) * 1e9;
    const upperLow = upper % 0x10000;
    const low = upperLow * 0x10000 + part;
    const low32 = low % 0x100000000;
    this.buf.writeUInt32LE(low32, this.pos);
    this.buf.writeUInt32LE(((upper - upperLow) / 0x10000 + (low - low32) / 0x100000000) >>> 0, this.pos + 4);
    this.pos += 8;
  }

  fixed32(value: number): void {
    this.room(4);
    this.buf.writeUInt32LE(value >>> 0, this.pos);
    this.pos += 4;
  }

  double(value: number): void {
    this.room(8);
    this.buf.writeDoubleLE(value, this.pos);
    this.pos += 8;
  }

  // A field: its tag, then its value.
  stringField(field: number, s: string): void {
    this.tag(field, LEN);
    this.string(s);
  }

  idField(field: number, hex: string): void {
    this.tag(field, LEN);
    this.id(hex);
  }

  varintField(field: number, value: number): void {
    this.tag(field, VARINT);
    this.varint(value);
  }

  timeField(field: number, time: HrTime): void {
    this.tag(field, I64);
    this.time(time);
  }

  fixed32Field(field: number, value: number): void {
    this.tag(field, I32);
    this.fixed32(value);
  }

  /** Opens a length-delimited message: `reserve` bytes kept for its length; its content starts at the position returned. */
  open(reserve: number): number {
    this.room(reserve);
    this.pos += reserve;
    return this.pos;
  }

  /** Closes the message opened at `start`: its length written before it, the content moved if the length needs more or fewer bytes. */
  close(start: number, reserve: number): void {
    const length = this.pos - start;
    const size = varintSize(length);
    if (size !== reserve) {
      this.room(size - reserve);
      this.buf.copyWithin(start + size - reserve, start, this.pos);
      this.pos += size - reserve;
    }
    let at = start - reserve;
    let v = length;
    while (v > 0x7f) {
      this.buf[at++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[at] = v;
  }

  /** The bytes written, copied (the buffer is written again by the next export while this one is still being sent). */
  take(): Uint8Array {
    const bytes = new Uint8Array(this.pos);
    bytes.set(this.buf.subarray(0, this.pos));
    this.pos = 0;
    return bytes;
  }
}

/** A KeyValue's key field (tag, length, UTF-8), encoded once per key name. */
const encodedKeys = new Map<string, Buffer>();
const MAX_ENCODED_KEYS = 512;

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
  if (typeof value === 'string') {
    // The common case, sized exactly: KeyValue { key, value: AnyValue { string_value } }.
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
  w.idField(1, context.traceId);
  w.idField(2, context.spanId);
  const traceState = context.traceState?.serialize();
  if (traceState) w.stringField(3, traceState);
  const parent = span.parentSpanContext;
  if (parent?.spanId) w.idField(4, parent.spanId);
  w.stringField(5, span.name);
  // OTLP's kinds are the API's plus one (0: unspecified).
  const kind = span.kind == null ? 0 : span.kind + 1;
  if (kind !== 0) w.varintField(6, kind);
  w.timeField(7, span.startTime);
  w.timeField(8, span.endTime);
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

const writer = new ProtoWriter();

/** The spans as an OTLP ExportTraceServiceRequest in protobuf. */
export function encodeProtobuf(spans: readonly ExportedSpan[]): Uint8Array {
  const w = writer;
  w.pos = 0;
  for (const [resource, byScope] of grouped(spans, (scope) => scope)) {
    w.tag(1, LEN);
    const resourceSpans = w.open(3);
    // A resource whose detectors still run is encoded again next time, not kept half-done.
    w.raw(once(resourceBytes, resource, (r) => writeResource(r, resource), !resource.asyncAttributesPending));
    for (const [scope, list] of byScope) {
      w.tag(2, LEN);
      const scopeSpans = w.open(3);
      w.raw(once(scopeBytes, scope, (s) => writeScope(s, scope)));
      for (const span of list) writeSpan(w, span);
      if (scope.schemaUrl) w.stringField(3, scope.schemaUrl);
      w.close(scopeSpans, 3);
    }
    if (resource.schemaUrl) w.stringField(3, resource.schemaUrl);
    w.close(resourceSpans, 3);
  }
  return w.take();
}

// OTLP's JSON: ids in hex, times as decimal strings of nanoseconds, enums as numbers; objects in the SDK's
// order of keys, stringified once (JSON.stringify writes the long strings natively).
function jsonTime([seconds, nanos]: HrTime): string {
  const s = Math.trunc(seconds);
  const n = Math.trunc(nanos);
  return s === 0 ? String(n) : `${s}${String(n).padStart(9, '0')}`;
}

function jsonValue(value: unknown): object {
  switch (typeof value) {
    case 'string':
      return { stringValue: value };
    case 'boolean':
      return { boolValue: value };
    case 'number':
      return Number.isInteger(value) ? { intValue: value } : { doubleValue: value };
    default:
  }
  if (value instanceof Uint8Array) return { bytesValue: Buffer.from(value.buffer, value.byteOffset, value.length).toString('base64') };
  if (Array.isArray(value)) return { arrayValue: { values: value.map(jsonValue) } };
  if (typeof value === 'object' && value !== null) return { kvlistValue: { values: jsonAttributes(value as Record<string, unknown>) } };
  return {};
}

function jsonAttributes(attributes: Record<string, unknown>): object[] {
  const keys = Object.keys(attributes);
  const out = new Array<object>(keys.length);
  for (let i = 0; i < keys.length; i += 1) out[i] = { key: keys[i], value: jsonValue(attributes[keys[i]]) };
  return out;
}

function jsonSpan(span: ExportedSpan): object {
  const context = span.spanContext();
  const parent = span.parentSpanContext;
  return {
    traceId: context.traceId,
    spanId: context.spanId,
    parentSpanId: parent?.spanId ? parent.spanId : undefined,
    traceState: context.traceState?.serialize(),
    name: span.name,
    kind: span.kind == null ? 0 : span.kind + 1,
    startTimeUnixNano: jsonTime(span.startTime),
    endTimeUnixNano: jsonTime(span.endTime),
    attributes: jsonAttributes(span.attributes),
    droppedAttributesCount: span.droppedAttributesCount,
    events: span.events.map((e) => ({ attributes: e.attributes ? jsonAttributes(e.attributes) : [], name: e.name, timeUnixNano: jsonTime(e.time), droppedAttributesCount: e.droppedAttributesCount || 0 })),
    droppedEventsCount: span.droppedEventsCount,
    status: { code: span.status.code, message: span.status.message },
    links: span.links.map((l) => ({
      attributes: l.attributes ? jsonAttributes(l.attributes) : [],
      spanId: l.context.spanId,
      traceId: l.context.traceId,
      traceState: l.context.traceState?.serialize(),
      droppedAttributesCount: l.droppedAttributesCount || 0,
      flags: flagsOf(l.context.traceFlags, l.context.isRemote),
    })),
    droppedLinksCount: span.droppedLinksCount,
    flags: flagsOf(context.traceFlags, parent?.isRemote),
  };
}

const jsonResources = new WeakMap<Resource, object>();
const jsonScopes = new WeakMap<Scope, object>();
const scopeKeys = new WeakMap<Scope, string>();

function jsonResource(resource: Resource): object {
  let out = jsonResources.get(resource);
  if (!out) {
    out = { attributes: jsonAttributes(resource.attributes), droppedAttributesCount: 0, ...(resource.schemaUrl ? { schemaUrl: resource.schemaUrl } : {}) };
    if (!resource.asyncAttributesPending) jsonResources.set(resource, out);
  }
  return out;
}

function jsonScope(scope: Scope): object {
  let out = jsonScopes.get(scope);
  if (!out) {
    const attributes = scope.attributes && Object.keys(scope.attributes).length > 0 ? { attributes: jsonAttributes(scope.attributes), droppedAttributesCount: scope.droppedAttributesCount ?? 0 } : {};
    out = { name: scope.name, version: scope.version, ...attributes };
    jsonScopes.set(scope, out);
  }
  return out;
}

/** Scopes by name, version and schema, as the SDK's JSON serializer groups them. */
function scopeKey(scope: Scope): string {
  let key = scopeKeys.get(scope);
  if (key === undefined) scopeKeys.set(scope, (key = `${scope.name}@${scope.version || ''}:${scope.schemaUrl || ''}`));
  return key;
}

/** The spans as an OTLP ExportTraceServiceRequest in OTLP's JSON (UTF-8). */
export function encodeJson(spans: readonly ExportedSpan[]): Uint8Array {
  const resourceSpans: object[] = [];
  for (const [resource, byScope] of grouped(spans, scopeKey)) {
    const scopeSpans: object[] = [];
    for (const list of byScope.values()) {
      const scope = list[0].instrumentationScope;
      scopeSpans.push({ scope: jsonScope(scope), spans: list.map(jsonSpan), schemaUrl: scope.schemaUrl });
    }
    resourceSpans.push({ resource: jsonResource(resource), scopeSpans, schemaUrl: resource.schemaUrl || undefined });
  }
  return Buffer.from(JSON.stringify({ resourceSpans }), 'utf8');
}
