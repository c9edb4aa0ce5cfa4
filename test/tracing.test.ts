import { execFile } from 'node:child_process';
import { once } from 'node:events';
import http, { IncomingHttpHeaders } from 'node:http';
import { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { randomAddress, startServer, TestServer } from './setup/server';
import { GatewayProcess, startGatewayProcess } from './setup/gateway-process';
import { exclusive } from './setup/exclusive';
import { Span, startCollector, until } from './setup/otlp-collector';

/**
 * Issue #39 item 3: OpenTelemetry traces. The real service (src/main.ts in a child process: the
 * instrumentations patch modules as they are required, which jest's own module registry would hide)
 * exports to an OTLP/HTTP receiver in this process, in protobuf (OTEL_EXPORTER_OTLP_PROTOCOL's default,
 * encoded by src/common/otlp.ts; the receiver decodes every field; tracing-metadata.test.ts exports
 * http/json). Every road a request can take gives one trace: the HTTP span, the GraphQL operation's span
 * under it, and the SQL statements under that.
 */
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const SERVER = 2;
const CLIENT = 3;

/** A webhook receiver on loopback: the headers of each delivery. */
async function startReceiver() {
  const received: IncomingHttpHeaders[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.push(req.headers);
      res.writeHead(204).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

let collector: Awaited<ReturnType<typeof startCollector>>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let local: TestServer;
let gateway: GatewayProcess;
let release: () => void;

beforeAll(async () => {
  // Its gateway's delivery worker and webhooks.test.ts's would deliver each other's endpoints.
  release = await exclusive('webhook-workers');
  [collector, receiver, local] = await Promise.all([startCollector(), startReceiver(), startServer()]);
  gateway = await startGatewayProcess({
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_SERVICE_NAME: 'gateway-traced',
    OTEL_BSP_SCHEDULE_DELAY: '50',
    LOG_LEVEL: 'info',
    // Rate limits in Redis: each request makes Redis calls, which are traced too.
    RATE_LIMIT: 'on',
    REDIS_URL,
    RATE_LIMIT_REDIS_PREFIX: `tracing-test-${Date.now()}`,
    WEBHOOK_DELIVERY: 'on',
    WEBHOOK_ALLOW_PRIVATE: 'on',
    WEBHOOK_POLL_MS: '50',
  });
  // The rate limiter sends nothing to a Redis it is still connecting to (no offline queue): one request first.
  expect((await fetch(`${gateway.url}/v1/categories?limit=1`)).status).toBe(200);
}, 720_000);

afterAll(async () => {
  await gateway?.stop();
  await Promise.all([local?.close(), collector?.close(), receiver?.close()]);
  release?.();
});

/** The trace id of the request's log line (observe.ts), found by the response's request id. */
async function traceIdOf(res: Response, process = gateway): Promise<string | undefined> {
  const requestId = res.headers.get('x-request-id');
  const line = await until(
    () =>
      process
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => (l.message === 'request' || l.message === 'slow request') && l.requestId === requestId),
    `the log line of request ${requestId}`,
  );
  return line.traceId as string | undefined;
}

/** The trace's spans once its HTTP span (or `root`) has been exported. */
async function traceOf(traceId: string, root = (s: Span) => s.kind === SERVER): Promise<Span[]> {
  await until(() => collector.spans.find((s) => s.traceId === traceId && root(s)), `the root span of trace ${traceId}`);
  // The request's span ends last; a batch already under way may still hold the others.
  await new Promise((resolve) => setTimeout(resolve, 200));
  return collector.spans.filter((s) => s.traceId === traceId);
}

const isSql = (s: Span) => s.attributes['db.system.name'] === 'postgresql';
const isRedis = (s: Span) => s.attributes['db.system.name'] === 'redis';

/** Whether `span` lies under `ancestor` in `spans`. */
function under(spans: Span[], span: Span, ancestor: Span): boolean {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  for (let at = span.parentSpanId; at; at = byId.get(at)?.parentSpanId) if (at === ancestor.spanId) return true;
  return false;
}

/**
 * One request's trace: its HTTP span at the root, the operation's span under it, the SQL statements of
 * the operation under that (an API key's lookup comes before the operation, under the HTTP span).
 */
function expectRequestTrace(spans: Span[], expected: { http: string; operation?: string; type: string }) {
  const roots = spans.filter((s) => !s.parentSpanId || !spans.some((p) => p.spanId === s.parentSpanId));
  expect(roots.map((s) => [s.name, s.kind])).toEqual([[expected.http, SERVER]]);
  const [request] = roots;
  expect(request.service).toBe('gateway-traced');
  expect(request.attributes).toMatchObject({ 'http.request.method': expected.http.split(' ')[0], 'http.route': expected.http.split(' ')[1], 'http.response.status_code': 200, 'url.scheme': 'http', 'url.path': expect.any(String), 'gateway.request_id': expect.any(String) });
  for (const span of spans) {
    // Sampled, timed, and not failed.
    expect(span.flags! & 1).toBe(1);
    expect(BigInt(span.startTimeUnixNano)).toBeLessThanOrEqual(BigInt(span.endTimeUnixNano));
    expect(BigInt(span.startTimeUnixNano)).toBeGreaterThan(BigInt(Date.now() - 600_000) * 1_000_000n);
    expect(span.status?.code ?? 0).toBe(0);
  }
  const operations = spans.filter((s) => s.attributes['graphql.operation.type']);
  expect(operations.map((s) => s.name)).toEqual([expected.operation ? `${expected.type} ${expected.operation}` : expected.type]);
  const [operation] = operations;
  expect(operation.parentSpanId).toBe(request.spanId);
  expect(operation.attributes['graphql.operation.name']).toBe(expected.operation);
  const statements = spans.filter(isSql);
  for (const statement of statements) {
    expect(under(spans, statement, request)).toBe(true);
    expect(statement.kind).toBe(CLIENT);
    expect(statement.attributes).toEqual({ 'db.system.name': 'postgresql', 'db.operation.name': expect.any(String), 'db.query.text': expect.any(String) });
    // Named by the statement's verb; a plan's text cut to a length a collector takes in.
    expect(statement.name).toBe(String(statement.attributes['db.operation.name']));
    expect(String(statement.attributes['db.query.text']).length).toBeLessThanOrEqual(1024 + '...'.length);
  }
  const operationStatements = statements.filter((s) => under(spans, s, operation));
  expect(operationStatements.length).toBeGreaterThan(0);
  return { request, operation, statements: operationStatements };
}

async function graphql(query: string, variables: Record<string, unknown>, headers: Record<string, string> = {}) {
  const res = await fetch(`${gateway.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ query, variables }) });
  const body = (await res.json()) as { data?: any; errors?: unknown[] };
  expect(body.errors).toBeUndefined();
  return { res, body };
}

describe('with OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  test('when a known query comes to the lean door, then each use is one trace: the HTTP span, the operation span (lean, a SQL plan) and its SQL statement', async () => {
    const query = `query TracedCollections($limit: Int!) { collections(limit: $limit) { result { id name } } }`;
    const traces: Span[][] = [];
    for (let i = 0; i < 3; i += 1) {
      const { res } = await graphql(query, { limit: 2 });
      const traceId = await traceIdOf(res);
      expect(traceId).toMatch(/^[0-9a-f]{32}$/);
      traces.push(await traceOf(traceId!));
    }
    expect(new Set(traces.map((t) => t[0].traceId)).size).toBe(3);
    const operations = traces.map((t) => expectRequestTrace(t, { http: 'POST /graphql', operation: 'TracedCollections', type: 'query' }).operation);
    // The first use goes through Apollo; from the third on the lean door answers, with one SQL plan.
    expect(operations[0].attributes['gateway.entry']).toBeUndefined();
    expect(operations[2].attributes).toMatchObject({ 'gateway.entry': 'lean', 'gateway.executor': 'plan', 'gateway.sql_plan': true });
    // The rate limit's Redis calls are in the trace, under the HTTP span (the lean door takes its token too).
    const redisCalls = traces[2].filter(isRedis);
    expect(redisCalls.length).toBeGreaterThan(0);
    for (const call of redisCalls) {
      expect(under(traces[2], call, traces[2].find((s) => s.kind === SERVER)!)).toBe(true);
      expect([call.name, call.kind, call.attributes]).toEqual(['evalsha', CLIENT, { 'db.system.name': 'redis', 'db.operation.name': 'evalsha' }]);
    }
    expect([...collector.contentTypes].every((t) => t === 'POST /v1/traces application/x-protobuf')).toBe(true);
  });

  test('when a mutation goes through express and Apollo, then it is one trace with its operation span (no plan) and its SQL statements under it', async () => {
    const { key } = await local.key();
    const { res, body } = await graphql(
      `mutation TracedCreate($input: CreateCollectionInput!) { createCollection(input: $input) { id } }`,
      { input: { contractAddress: randomAddress(), chainId: '1', name: 'Traced' } },
      { 'access-token': key },
    );
    expect(body.data.createCollection.id).toEqual(expect.any(String));
    const { operation, statements } = expectRequestTrace(await traceOf((await traceIdOf(res))!), { http: 'POST /graphql', operation: 'TracedCreate', type: 'mutation' });
    expect(operation.attributes).toMatchObject({ 'gateway.executor': 'graphql-js', 'gateway.sql_plan': false });
    expect(statements.some((s) => /INSERT INTO/i.test(String(s.attributes['db.query.text'])))).toBe(true);
  });

  test('when a REST GET is answered, then it is one trace named after its route, with the route document\'s operation span and SQL under it', async () => {
    const res = await fetch(`${gateway.url}/v1/collections?limit=2`);
    expect(res.status).toBe(200);
    const { request, operation } = expectRequestTrace(await traceOf((await traceIdOf(res))!), { http: 'GET /v1/collections', type: 'query' });
    expect(operation.attributes).toMatchObject({ 'gateway.entry': 'lean', 'gateway.sql_plan': true });
    expect(request.attributes).toMatchObject({ 'http.route': '/v1/collections', 'url.path': '/v1/collections', 'gateway.request_id': res.headers.get('x-request-id') });
  });

  test('when a request carries a traceparent, then its trace continues that one: same trace id, the HTTP span a child of the caller\'s', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parent = '00f067aa0ba902b7';
    const res = await fetch(`${gateway.url}/v1/collections?limit=1`, { headers: { traceparent: `00-${traceId}-${parent}-01` } });
    expect(res.status).toBe(200);
    expect(await traceIdOf(res)).toBe(traceId);
    const spans = await traceOf(traceId);
    const request = spans.find((s) => s.kind === SERVER)!;
    expect(request.parentSpanId).toBe(parent);
    expectRequestTrace(spans, { http: 'GET /v1/collections', type: 'query' });
  });

  test('when a request\'s traceparent says it is not sampled, then none of its spans is exported, and its log line still names its trace', async () => {
    const traceId = 'a3ce929d0e0e47364bf92f3577b34da6';
    const res = await fetch(`${gateway.url}/v1/collections?limit=1`, { headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-00` } });
    expect(res.status).toBe(200);
    expect(await traceIdOf(res)).toBe(traceId);
    // A sampled request after it: once its spans are in, the unsampled one's would have been too.
    const after = await fetch(`${gateway.url}/v1/collections?limit=1`);
    await traceOf((await traceIdOf(after))!);
    expect(collector.spans.filter((s) => s.traceId === traceId)).toEqual([]);
  });

  test('when a webhook is delivered, then the POST carries a traceparent of the delivery\'s own trace, which holds its SQL statements and links to the request that wrote the event', async () => {
    const { key } = await local.key();
    const contractAddress = randomAddress();
    await graphql(`mutation ($input: CreateCollectionInput!) { createCollection(input: $input) { id } }`, { input: { contractAddress, chainId: '1', name: 'Hooked' } }, { 'access-token': key });
    const headers = { 'content-type': 'application/json', 'access-token': key };
    const created = await fetch(`${gateway.url}/v1/webhooks`, { method: 'POST', headers, body: JSON.stringify({ url: receiver.url, event_types: ['collection.updated'] }) });
    expect(created.status).toBe(200);
    const updated = await fetch(`${gateway.url}/v1/collections/${contractAddress}`, { method: 'PUT', headers, body: JSON.stringify({ description: 'traced' }) });
    expect(updated.status).toBe(200);
    const writeTrace = await traceOf((await traceIdOf(updated))!);

    const delivery = await until(() => receiver.received[0], 'a webhook delivery');
    const [, traceId, parent] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(String(delivery.traceparent)) ?? [];
    expect(traceId).toBeDefined();
    const spans = await traceOf(traceId, (s) => s.name === 'webhook delivery');
    const root = spans.find((s) => s.name === 'webhook delivery')!;
    expect(root.parentSpanId).toBeUndefined();
    // Linked to the span of the request that wrote the event: its mutation's.
    expect(root.links).toHaveLength(1);
    const [link] = root.links!;
    const cause = writeTrace.find((s) => s.spanId === link.spanId);
    expect(link.traceId).toBe(writeTrace[0].traceId);
    expect(cause?.attributes['graphql.operation.type']).toBe('mutation');
    const post = spans.find((s) => s.spanId === parent)!;
    expect(post.kind).toBe(CLIENT);
    expect(post.parentSpanId).toBe(root.spanId);
    expect(spans.filter(isSql).length).toBeGreaterThan(0);
    for (const statement of spans.filter(isSql)) expect(under(spans, statement, root)).toBe(true);
  });
});

describe('without tracing', () => {
  test('when OTEL_SDK_DISABLED=true beside an endpoint, then nothing is exported, the log line has no trace id, and an incoming traceparent goes nowhere', async () => {
    const off = await startGatewayProcess({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SDK_DISABLED: 'true', OTEL_SERVICE_NAME: 'gateway-off', LOG_LEVEL: 'info', OTEL_BSP_SCHEDULE_DELAY: '50' });
    try {
      const res = await fetch(`${off.url}/v1/collections?limit=1`, { headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } });
      expect(res.status).toBe(200);
      const graphqlRes = await fetch(`${off.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ collections(limit: 1) { result { id } } }' }) });
      expect(graphqlRes.status).toBe(200);
      expect(await traceIdOf(res, off)).toBeUndefined();
      expect(await traceIdOf(graphqlRes, off)).toBeUndefined();
    } finally {
      await off.stop();
    }
    expect(collector.spans.filter((s) => s.service === 'gateway-off')).toEqual([]);
    // A second gateway process starts as slowly as the first (beforeAll's bound): 180 s ran out under a load of 30 on 2 cores.
  }, 720_000);

  test.each([
    ['no OTEL_* variable', {}],
    ['OTEL_SDK_DISABLED=true', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' }],
    ['OTEL_TRACES_EXPORTER=none', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_EXPORTER: 'none' }],
  ])('when traces are off (%s), then the start-up loads nothing of the SDK', async (_case, env) => {
    const loaded = await loadedOpenTelemetry(env);
    expect(loaded.filter((name) => name !== 'api')).toEqual([]);
  }, 60_000);

  test('when an endpoint is set, then the same start-up loads the SDK, and no instrumentation that patches node:http, pg or ioredis', async () => {
    const loaded = await loadedOpenTelemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' });
    expect(loaded).toContain('sdk-node');
    expect(loaded.filter((name) => name.startsWith('instrumentation-'))).toEqual([]);
  }, 60_000);
});

/** The @opentelemetry packages loaded once src/tracing.ts (main.ts's first import) has run, in a process with `env`. */
async function loadedOpenTelemetry(env: Record<string, string>): Promise<string[]> {
  const script = `require(${JSON.stringify(path.resolve(__dirname, '../src/tracing.ts'))});
    const names = new Set(Object.keys(require.cache).map((f) => /node_modules\\/@opentelemetry\\/([^/]+)\\//.exec(f)?.[1]).filter(Boolean));
    process.stdout.write(JSON.stringify([...names].sort()));
    process.exit(0);`;
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('OTEL_')));
  const { stdout } = await promisify(execFile)(process.execPath, ['-r', path.resolve(__dirname, 'setup/ts-register.js'), '-e', script], { env: { ...clean, ...env } });
  return JSON.parse(stdout);
}
