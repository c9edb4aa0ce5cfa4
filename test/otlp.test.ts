import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ExportedSpan } from '../src/common/otlp';
import { encodeJson, JsonBatch } from '../src/common/otlp-json';
import { encodeProtobuf, ProtobufBatch } from '../src/common/otlp-protobuf';
import { EncodingSpanProcessor } from '../src/common/span-processor';
import { LightSpan } from '../src/common/span';
import { TraceWords, WordsContext } from '../src/common/span-context';
import { decodeProtobuf } from './setup/otlp-collector';

/**
 * The gateway's OTLP encoders (src/common/otlp.ts, otlp-protobuf.ts, otlp-json.ts: what its exporter
 * sends with OTEL_EXPORTER_OTLP_PROTOCOL http/protobuf or http/json) write exactly the bytes of the SDK's
 * own serializers, for every kind of value a span can carry; the test receiver's protobuf decoder (test/setup/otlp-collector.ts, which
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
  }),
  // Each way the encoder writes a string value: short ASCII by a loop, short otherwise, long before its lengths, longer sized first; a long key.
  span({
    spanId: '5555555555555555',
    attributes: { a63: 'a'.repeat(63), b64: 'b'.repeat(64), c127: 'c'.repeat(127), d128: 'd'.repeat(128), e5000: 'e'.repeat(5000), f5001: 'f'.repeat(5001), g43: 'é'.repeat(43), h64: `${'h'.repeat(63)}é`, [`key.${'k'.repeat(70)}`]: 'short', [`key.${'l'.repeat(1200)}`]: 'm'.repeat(200) },
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

describe("the gateway's own spans (ids kept as words, times as milliseconds)", () => {
  const limits = { valueLength: Infinity, count: 128 };
  // As the processor reads them (ExportedSpan: the resource and scope are the provider's, opaque to a LightSpan).
  const ended: ExportedSpan[] = [];
  const sink = { onStart: () => undefined, onEnd: (s: never) => void ended.push(s) };

  test('when a request\'s spans end, then their bytes are the SDK serializer\'s, and the ids the encoder wrote are the ones the spans spell', async () => {
    ended.length = 0;
    const root = new LightSpan(WordsContext.random(TraceWords.random(), 1), undefined, resource, scope, 'GET', 1, { 'http.request.method': 'GET', 'url.path': '/v1/assets/0xabc/1' }, sink, limits);
    const operation = LightSpan.childOf(root, 'query', 0, { 'graphql.operation.type': 'query' }, sink, limits);
    const statement = LightSpan.childOf(operation, 'SELECT', 2, { 'db.system.name': 'postgresql', 'db.operation.name': 'SELECT', 'db.query.text': sql }, sink, limits);
    await new Promise((resolve) => setTimeout(resolve, 3));
    statement.end();
    operation.setAttributes({ 'gateway.executor': 'plan', 'gateway.sql_plan': true });
    operation.end();
    root.updateName('GET /v1/assets/{token_address}/{token_id}');
    root.setAttribute('http.response.status_code', 200);
    root.end();
    // A request that continues a caller's trace (its traceparent's ids, in hex).
    const remote = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: 'b7ad6b7169203331', traceFlags: 1, isRemote: true };
    const continued = new LightSpan(WordsContext.random(TraceWords.of(remote.traceId), 1), remote, resource, scope, 'POST /graphql', 1, {}, sink, limits);
    continued.end();
    expect(ended).toHaveLength(4);
    const ours = Buffer.from(encodeProtobuf(ended));
    expect(ours.equals(Buffer.from(ProtobufTraceSerializer.serializeRequest(ended as never)!))).toBe(true);
    expect(Buffer.from(encodeJson(ended)).toString('utf8')).toBe(Buffer.from(JsonTraceSerializer.serializeRequest(ended as never)!).toString('utf8'));
    const decoded = (decodeProtobuf(ours).resourceSpans as { scopeSpans: { spans: { traceId: string; spanId: string; parentSpanId?: string; startTimeUnixNano: string; endTimeUnixNano: string }[] }[] }[])[0].scopeSpans[0].spans;
    expect(decoded.map((s) => [s.traceId, s.spanId, s.parentSpanId])).toEqual([
      [root.spanContext().traceId, statement.spanContext().spanId, operation.spanContext().spanId],
      [root.spanContext().traceId, operation.spanContext().spanId, root.spanContext().spanId],
      [root.spanContext().traceId, root.spanContext().spanId, undefined],
      [remote.traceId, continued.spanContext().spanId, remote.spanId],
    ]);
    for (const s of [root, operation, statement]) expect(s.spanContext().traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set([root, operation, statement].map((s) => s.spanContext().spanId)).size).toBe(3);
    // Children are timed on their root's clock: none starts before its parent, none ends after it.
    const [s, o, r] = decoded.map((d) => [BigInt(d.startTimeUnixNano), BigInt(d.endTimeUnixNano)]);
    expect(r[0] <= o[0] && o[0] <= s[0] && s[1] <= o[1] && o[1] <= r[1]).toBe(true);
    expect(s[1] - s[0]).toBeGreaterThanOrEqual(2_000_000n);
  });
});

describe('the span processor that encodes each span as it ends', () => {
  const sampled = (i: number) => span({ spanId: (i + 1).toString(16).padStart(16, '0'), attributes: { 'db.query.text': sql, i } });

  test('when spans end one by one, then each request carries the SDK serializer\'s bytes for them, a batch at a time, unsampled spans left out', async () => {
    const sent: { body: Buffer; spans: number }[] = [];
    const processor = new EncodingSpanProcessor(() => new ProtobufBatch(), async (body, n) => void sent.push({ body: Buffer.from(body), spans: n }), { maxQueueSize: 100, maxExportBatchSize: 3, scheduledDelayMillis: 60_000, exportTimeoutMillis: 1_000 });
    const ended = Array.from({ length: 7 }, (_, i) => sampled(i));
    const unsampled = span({ spanContext: () => ({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: '4444444444444444', traceFlags: 0 }) });
    for (const s of ended.slice(0, 4)) processor.onEnd(s);
    processor.onEnd(unsampled);
    for (const s of ended.slice(4)) processor.onEnd(s);
    await processor.forceFlush();
    expect(sent.map((r) => r.spans)).toEqual([3, 3, 1]);
    const sdk = (list: ExportedSpan[]) => Buffer.from(ProtobufTraceSerializer.serializeRequest(list as never)!);
    expect(sent[0].body.equals(sdk(ended.slice(0, 3)))).toBe(true);
    expect(sent[1].body.equals(sdk(ended.slice(3, 6)))).toBe(true);
    expect(sent[2].body.equals(sdk(ended.slice(6)))).toBe(true);
  });

  test('when the receiver is slow, then spans wait as bytes up to the queue\'s size, the rest are dropped, and what waited is sent once it answers', async () => {
    const sent: string[] = [];
    let answer: () => void = () => undefined;
    const processor = new EncodingSpanProcessor(
      () => new JsonBatch(),
      (body) => {
        sent.push(Buffer.from(body).toString('utf8'));
        return new Promise<void>((resolve) => (answer = resolve));
      },
      { maxQueueSize: 4, maxExportBatchSize: 2, scheduledDelayMillis: 60_000, exportTimeoutMillis: 60_000 },
    );
    const ended = Array.from({ length: 8 }, (_, i) => sampled(i));
    // Two fill a batch, which goes out and waits for its answer; four more wait; the last two are dropped.
    for (const s of ended) processor.onEnd(s);
    expect(sent).toHaveLength(1);
    const flushed = processor.forceFlush();
    for (let i = 0; i < 3; i += 1) {
      answer();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await flushed;
    const sdk = (list: ExportedSpan[]) => Buffer.from(JsonTraceSerializer.serializeRequest(list as never)!).toString('utf8');
    expect(sent).toEqual([sdk(ended.slice(0, 2)), sdk(ended.slice(2, 4)), sdk(ended.slice(4, 6))]);
  });

  test('when an export is given up on after its timeout, then the bytes the exporter holds are not written over by later spans', async () => {
    const held: { body: Uint8Array; copy: Buffer }[] = [];
    // The first request never answers (an exporter still retrying it); the later ones do.
    const processor = new EncodingSpanProcessor(
      () => new ProtobufBatch(),
      (body) => {
        held.push({ body, copy: Buffer.from(body) });
        return held.length === 1 ? new Promise<void>(() => undefined) : Promise.resolve();
      },
      { maxQueueSize: 100, maxExportBatchSize: 2, scheduledDelayMillis: 60_000, exportTimeoutMillis: 20 },
    );
    for (let i = 0; i < 2; i += 1) processor.onEnd(sampled(i));
    await new Promise((resolve) => setTimeout(resolve, 100));
    for (let i = 2; i < 8; i += 1) processor.onEnd(sampled(i));
    await processor.forceFlush();
    expect(held).toHaveLength(4);
    for (const { body, copy } of held) expect(Buffer.from(body).equals(copy)).toBe(true);
  });

  test('when no batch fills, then the spans go out after the schedule delay', async () => {
    const sent: number[] = [];
    const processor = new EncodingSpanProcessor(() => new ProtobufBatch(), async (_body, n) => void sent.push(n), { maxQueueSize: 100, maxExportBatchSize: 50, scheduledDelayMillis: 20, exportTimeoutMillis: 1_000 });
    processor.onEnd(sampled(0));
    processor.onEnd(sampled(1));
    expect(sent).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(sent).toEqual([2]);
    await processor.shutdown();
    // Shut down: a span that ends later is not exported.
    processor.onEnd(sampled(2));
    await processor.forceFlush();
    expect(sent).toEqual([2]);
  });
});
