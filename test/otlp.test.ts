import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { encodeJson, encodeProtobuf, ExportedSpan } from '../src/common/otlp';
import { decodeProtobuf } from './setup/otlp-collector';

/**
 * The gateway's OTLP encoders (src/common/otlp.ts, what its exporter sends with OTEL_EXPORTER_OTLP_PROTOCOL
 * http/protobuf or http/json) write exactly the bytes of the SDK's own serializers, for every kind of
 * value a span can carry; the test receiver's protobuf decoder (test/setup/otlp-collector.ts, which
 * tracing.test.ts reads the gateway's spans with) reads them back as OTLP's JSON mapping says.
 */
const traceState = (value: string) => ({ serialize: () => value }) as never;
const resource = { attributes: { 'service.name': 'gateway-encoded', 'host.name': 'hôte-1', 'process.pid': 4242 } };
const scope = { name: 'nft-marketplace-gateway' };
const otherScope = { name: 'other', version: '1.2.3', schemaUrl: 'https://opentelemetry.io/schemas/1.30.0' };
const sql = `SELECT ${'j1."name" AS "name", '.repeat(40)}1 FROM assets j1 WHERE j1.token_address = $1…`;

function span(overrides: Partial<ExportedSpan> & { traceId?: string; spanId?: string }): ExportedSpan {
  const { traceId = '4bf92f3577b34da6a3ce929d0e0e4736', spanId = '00f067aa0ba902b7', ...rest } = overrides;
  return {
    name: 'SELECT',
    kind: 2,
    spanContext: () => ({ traceId, spanId, traceFlags: 1 }),
    startTime: [1_764_362_400, 123_456_789],
    endTime: [1_764_362_400, 987_654_321],
    status: { code: 0 },
    attributes: {},
    links: [],
    events: [],
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
    resource,
    instrumentationScope: scope,
    ...rest,
  };
}

const spans: ExportedSpan[] = [
  span({
    name: 'GET /v1/assets/{token_address}/{token_id}',
    kind: 1,
    parentSpanContext: { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: 'b7ad6b7169203331', traceFlags: 1, isRemote: true },
    attributes: { 'http.request.method': 'GET', 'url.path': '/v1/assets/0xabc/1', 'http.route': '/v1/assets/{token_address}/{token_id}', 'http.response.status_code': 200, 'gateway.request_id': 'r-1' },
  }),
  span({
    spanId: '1111111111111111',
    parentSpanContext: { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1 },
    attributes: { 'db.system.name': 'postgresql', 'db.operation.name': 'SELECT', 'db.query.text': sql, 'db.query.summary': 'SELECT assets' },
  }),
  span({
    name: 'query Collections',
    kind: 0,
    spanId: '2222222222222222',
    attributes: { 'graphql.operation.type': 'query', 'gateway.sql_plan': true, 'gateway.executor': 'plan', ratio: 0.25, negative: -7, large: 2 ** 40, huge: 2 ** 62, empty: '', unicode: 'ñ 🎨 名前', long: 'é'.repeat(300) },
    status: { code: 2, message: 'relation "x" does not exist' },
    events: [{ name: 'exception', time: [1_764_362_400, 5], attributes: { 'exception.type': 'QueryFailedError', 'exception.message': 'relation "x" does not exist' }, droppedAttributesCount: 0 }],
  }),
  span({
    name: 'webhook delivery',
    kind: 0,
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: '3333333333333333',
    attributes: { 'webhook.id': 'w-1', list: ['a', 'b'], numbers: [1, 2.5, -3], flags: [true, false] },
    links: [{ context: { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '2222222222222222', traceFlags: 1, traceState: traceState('vendor=1') }, attributes: { 'link.kind': 'cause' } }],
    droppedAttributesCount: 3,
    startTime: [0, 42],
    endTime: [0, 1_000],
  }),
  span({ spanContext: () => ({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: '4444444444444444', traceFlags: 0, traceState: traceState('a=b,c=d') }), instrumentationScope: otherScope }),
];

/** OTLP's JSON mapping, with what the protobuf decoder and the JSON encoding may spell differently made alike: int64s as numbers, empty lists left out. */
function normalized(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalized);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (Array.isArray(v) && v.length === 0) continue;
    out[key] = key === 'intValue' ? Number(v) : normalized(v);
  }
  return out;
}

describe('OTLP encoding of exported spans', () => {
  test('when spans of every shape are encoded in protobuf, then the bytes are the SDK serializer\'s', () => {
    const ours = Buffer.from(encodeProtobuf(spans));
    const sdk = Buffer.from(ProtobufTraceSerializer.serializeRequest(spans as never)!);
    expect(ours.equals(sdk)).toBe(true);
    // The resource and scope are encoded once and kept: a second export is the same.
    expect(Buffer.from(encodeProtobuf(spans)).equals(sdk)).toBe(true);
  });

  test('when spans of every shape are encoded in OTLP JSON, then the text is the SDK serializer\'s', () => {
    const ours = Buffer.from(encodeJson(spans)).toString('utf8');
    const sdk = Buffer.from(JsonTraceSerializer.serializeRequest(spans as never)!).toString('utf8');
    expect(ours).toBe(sdk);
  });

  test('when the test receiver decodes the protobuf, then it reads what the JSON says: every span, attribute, event, link and status', () => {
    const decoded = decodeProtobuf(Buffer.from(encodeProtobuf(spans)));
    const fromJson = JSON.parse(Buffer.from(encodeJson(spans)).toString('utf8'));
    expect(normalized(decoded)).toEqual(normalized(fromJson));
    const all = (decoded.resourceSpans as { scopeSpans: { spans: unknown[] }[] }[]).flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
    expect(all).toHaveLength(spans.length);
  });

  test('when a batch outgrows the encoder\'s buffer, then it grows and the bytes are still the SDK serializer\'s', () => {
    const many = Array.from({ length: 300 }, (_, i) => span({ spanId: i.toString(16).padStart(16, '0'), attributes: { 'db.query.text': sql.repeat(2), i } }));
    expect(Buffer.from(encodeProtobuf(many)).equals(Buffer.from(ProtobufTraceSerializer.serializeRequest(many as never)!))).toBe(true);
    expect(Buffer.from(encodeJson(many)).toString('utf8')).toBe(Buffer.from(JsonTraceSerializer.serializeRequest(many as never)!).toString('utf8'));
  });
});
