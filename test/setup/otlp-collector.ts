import { once } from 'node:events';
import http from 'node:http';
import { AddressInfo } from 'node:net';

/** A span as the collector received it, with its attributes as a record and its service's name. */
export interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  traceState?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Record<string, unknown>;
  droppedAttributesCount?: number;
  events?: { name: string; timeUnixNano: string; attributes?: OtlpAttribute[]; droppedAttributesCount?: number }[];
  links?: { traceId: string; spanId: string; attributes?: OtlpAttribute[]; flags?: number }[];
  status?: { code?: number; message?: string };
  flags?: number;
  service: string;
}

type OtlpValue = { stringValue?: string; boolValue?: boolean; intValue?: string | number; doubleValue?: number; bytesValue?: string; arrayValue?: { values?: OtlpValue[] }; kvlistValue?: { values?: OtlpAttribute[] } };
export type OtlpAttribute = { key: string; value: OtlpValue };
type OtlpSpan = Omit<Span, 'attributes' | 'service'> & { attributes?: OtlpAttribute[] };
/** An ExportTraceServiceRequest in OTLP's JSON mapping (what the protobuf decoder below returns too). */
export interface OtlpExport {
  resourceSpans: {
    resource: { attributes: OtlpAttribute[]; droppedAttributesCount?: number };
    scopeSpans: { scope: { name: string; version?: string }; spans: OtlpSpan[]; schemaUrl?: string }[];
    schemaUrl?: string;
  }[];
}

const valueOf = (v: OtlpValue): unknown =>
  v.stringValue ??
  v.boolValue ??
  (v.intValue !== undefined ? Number(v.intValue) : undefined) ??
  v.doubleValue ??
  v.bytesValue ??
  (v.arrayValue ? (v.arrayValue.values ?? []).map(valueOf) : undefined) ??
  (v.kvlistValue ? attributesOf(v.kvlistValue.values) : undefined);
export const attributesOf = (list: OtlpAttribute[] = []): Record<string, unknown> => Object.fromEntries(list.map((a) => [a.key, valueOf(a.value)]));

/** The messages of OTLP's trace export, field number -> [name, kind]; a kind is a message of this table, or how the scalar is read. */
type Scalar = 'string' | 'bytes' | 'hex' | 'varint' | 'int64' | 'bool' | 'double' | 'fixed64' | 'fixed32';
type Field = [name: string, kind: Scalar | string, repeated?: boolean];
const MESSAGES: Record<string, Record<number, Field>> = {
  ExportTraceServiceRequest: { 1: ['resourceSpans', 'ResourceSpans', true] },
  ResourceSpans: { 1: ['resource', 'Resource'], 2: ['scopeSpans', 'ScopeSpans', true], 3: ['schemaUrl', 'string'] },
  Resource: { 1: ['attributes', 'KeyValue', true], 2: ['droppedAttributesCount', 'varint'] },
  ScopeSpans: { 1: ['scope', 'InstrumentationScope'], 2: ['spans', 'Span', true], 3: ['schemaUrl', 'string'] },
  InstrumentationScope: { 1: ['name', 'string'], 2: ['version', 'string'], 3: ['attributes', 'KeyValue', true], 4: ['droppedAttributesCount', 'varint'] },
  Span: {
    1: ['traceId', 'hex'],
    2: ['spanId', 'hex'],
    3: ['traceState', 'string'],
    4: ['parentSpanId', 'hex'],
    5: ['name', 'string'],
    6: ['kind', 'varint'],
    7: ['startTimeUnixNano', 'fixed64'],
    8: ['endTimeUnixNano', 'fixed64'],
    9: ['attributes', 'KeyValue', true],
    10: ['droppedAttributesCount', 'varint'],
    11: ['events', 'Event', true],
    12: ['droppedEventsCount', 'varint'],
    13: ['links', 'Link', true],
    14: ['droppedLinksCount', 'varint'],
    15: ['status', 'Status'],
    16: ['flags', 'fixed32'],
  },
  Event: { 1: ['timeUnixNano', 'fixed64'], 2: ['name', 'string'], 3: ['attributes', 'KeyValue', true], 4: ['droppedAttributesCount', 'varint'] },
  Link: { 1: ['traceId', 'hex'], 2: ['spanId', 'hex'], 3: ['traceState', 'string'], 4: ['attributes', 'KeyValue', true], 5: ['droppedAttributesCount', 'varint'], 6: ['flags', 'fixed32'] },
  Status: { 2: ['message', 'string'], 3: ['code', 'varint'] },
  KeyValue: { 1: ['key', 'string'], 2: ['value', 'AnyValue'] },
  AnyValue: { 1: ['stringValue', 'string'], 2: ['boolValue', 'bool'], 3: ['intValue', 'int64'], 4: ['doubleValue', 'double'], 5: ['arrayValue', 'ArrayValue'], 6: ['kvlistValue', 'KeyValueList'], 7: ['bytesValue', 'bytes'] },
  ArrayValue: { 1: ['values', 'AnyValue', true] },
  KeyValueList: { 1: ['values', 'KeyValue', true] },
};

/** A protobuf message of MESSAGES decoded into OTLP's JSON mapping (ids in hex, 64-bit numbers as decimal strings, bytes in base64). */
export function decodeProtobuf(bytes: Buffer, type = 'ExportTraceServiceRequest'): Record<string, unknown> {
  const fields = MESSAGES[type];
  const out: Record<string, unknown> = {};
  let pos = 0;
  const varint = (): bigint => {
    let result = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (pos >= bytes.length) throw new Error(`${type}: a varint runs past the end`);
      const b = bytes[pos++];
      result |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return result;
    }
  };
  while (pos < bytes.length) {
    const key = Number(varint());
    const [number, wire] = [key >>> 3, key & 7];
    const field = fields[number];
    if (!field) throw new Error(`${type}: unknown field ${number} (wire type ${wire})`);
    const [name, kind, repeated] = field;
    let value: unknown;
    if (wire === 0) {
      const v = varint();
      value = kind === 'bool' ? v !== 0n : kind === 'int64' ? String(BigInt.asIntN(64, v)) : Number(v);
    } else if (wire === 1) {
      value = kind === 'double' ? bytes.readDoubleLE(pos) : String(bytes.readBigUInt64LE(pos));
      pos += 8;
    } else if (wire === 5) {
      value = bytes.readUInt32LE(pos);
      pos += 4;
    } else if (wire === 2) {
      const length = Number(varint());
      if (pos + length > bytes.length) throw new Error(`${type}.${name}: ${length} bytes run past the end`);
      const content = bytes.subarray(pos, pos + length);
      pos += length;
      value = kind === 'string' ? content.toString('utf8') : kind === 'hex' ? content.toString('hex') : kind === 'bytes' ? content.toString('base64') : decodeProtobuf(content, kind);
    } else {
      throw new Error(`${type}.${name}: wire type ${wire}`);
    }
    if (repeated) ((out[name] ??= []) as unknown[]).push(value);
    else out[name] = value;
  }
  return out;
}

/** An OTLP/HTTP trace receiver on loopback, protobuf (the default) and JSON: what a collector would get. */
export async function startCollector() {
  const spans: Span[] = [];
  const contentTypes = new Set<string>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const type = req.headers['content-type'];
      contentTypes.add(`${req.method} ${req.url} ${type}`);
      const raw = Buffer.concat(chunks);
      const body = (type === 'application/x-protobuf' ? decodeProtobuf(raw) : JSON.parse(raw.toString('utf8'))) as unknown as OtlpExport;
      for (const resource of body.resourceSpans) {
        const service = String(attributesOf(resource.resource.attributes)['service.name']);
        for (const scope of resource.scopeSpans) for (const s of scope.spans ?? []) spans.push({ ...s, parentSpanId: s.parentSpanId || undefined, attributes: attributesOf(s.attributes), service });
      }
      res.writeHead(200, { 'content-type': type === 'application/x-protobuf' ? 'application/x-protobuf' : 'application/json' }).end(type === 'application/x-protobuf' ? '' : '{}');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    contentTypes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** What `read` finds (not undefined), once it finds it; polled every 50 ms for up to `ms`. */
export async function until<T>(read: () => T | undefined, what: string, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
