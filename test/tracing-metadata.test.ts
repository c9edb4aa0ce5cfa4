import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import http, { IncomingHttpHeaders } from 'node:http';
import { AddressInfo } from 'node:net';
import { exclusive } from './setup/exclusive';
import { GatewayProcess, startGatewayProcess } from './setup/gateway-process';
import { Span, startCollector, until } from './setup/otlp-collector';
import { randomAddress, startServer, TestServer } from './setup/server';

/**
 * Issue #39 item 3, traces beyond requests: the fetch of a token's metadata document is a trace of its own
 * (`metadata fetch`), linked to the span of the request that queued it, with a client span per GET that
 * carries a traceparent to the host. The real service (src/main.ts, its fetch worker on) exports to an
 * OTLP/HTTP receiver in this process.
 */
const CLIENT = 3;

/** A metadata host on loopback: a document per path, and the headers of each request. */
async function startHost() {
  const received: { path: string; headers: IncomingHttpHeaders }[] = [];
  const server = http.createServer((req, res) => {
    received.push({ path: req.url ?? '', headers: req.headers });
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ name: `Traced ${req.url}` }));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

let collector: Awaited<ReturnType<typeof startCollector>>;
let host: Awaited<ReturnType<typeof startHost>>;
let local: TestServer;
let gateway: GatewayProcess;
let release: () => void;
let key: string;
let address: string;
let collection: { id: string; contract_address: string };

beforeAll(async () => {
  // Its gateway's fetch worker and the metadata files' would fetch each other's documents.
  release = await exclusive('metadata-workers');
  [collector, host, local] = await Promise.all([startCollector(), startHost(), startServer()]);
  gateway = await startGatewayProcess({
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_SERVICE_NAME: 'gateway-traced-metadata',
    OTEL_BSP_SCHEDULE_DELAY: '50',
    METADATA_FETCH: 'on',
    METADATA_ALLOW_PRIVATE: 'on',
    METADATA_POLL_MS: '50',
    METADATA_TIMEOUT_MS: '2000',
  });
  ({ key, address } = await local.key());
  const created = await fetch(`${gateway.url}/v1/collections`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'access-token': key },
    body: JSON.stringify({ contract_address: randomAddress(), chain_id: '1', name: 'Traced documents' }),
  });
  expect(created.status).toBe(200);
  collection = (await created.json()) as typeof collection;
}, 720_000);

afterAll(async () => {
  await gateway?.stop();
  await Promise.all([local?.close(), collector?.close(), host?.close()]);
  release?.();
});

/** Creates an asset whose token_uri is `path` on the host, the request carrying `traceparent`. */
async function createWithUri(path: string, traceparent: string) {
  const res = await fetch(`${gateway.url}/v1/assets`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'access-token': key, traceparent },
    body: JSON.stringify({ collection_id: collection.id, token_address: collection.contract_address, chain_id: '1', owner: address, token_uri: `${host.url}${path}` }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { id: string };
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const fetchSpanOf = (assetId: string) => () => collector.spans.find((s) => s.name === 'metadata fetch' && s.attributes['gateway.asset_id'] === assetId);

test("when a request queues a token's document, then its fetch is a trace of its own linked to that request, with the GET under it carrying a traceparent to the host", async () => {
  const traceId = hex(16);
  const asset = await createWithUri('/doc/linked', `00-${traceId}-${hex(8)}-01`);

  const root = await until(fetchSpanOf(asset.id), 'the metadata fetch span', 30_000);
  expect(root.parentSpanId).toBeUndefined();
  expect(root.traceId).not.toBe(traceId);
  // Linked to a span of the request's trace: the one whose statement queued the fetch.
  expect(root.links).toHaveLength(1);
  expect(root.links![0].traceId).toBe(traceId);
  const requestSpans = await until(() => {
    const spans = collector.spans.filter((s) => s.traceId === traceId);
    return spans.some((s) => s.spanId === root.links![0].spanId) ? spans : undefined;
  }, 'the linked span of the request');
  expect(requestSpans.find((s) => s.spanId === root.links![0].spanId)?.attributes['graphql.operation.type']).toBe('mutation');

  const get = await until(() => collector.spans.find((s: Span) => s.traceId === root.traceId && s.parentSpanId === root.spanId), 'the GET span');
  expect(get).toMatchObject({ name: 'GET', kind: CLIENT });
  expect(get.attributes).toMatchObject({ 'url.full': `${host.url}/doc/linked`, 'http.response.status_code': 200 });
  const hit = host.received.find((r) => r.path === '/doc/linked')!;
  expect(hit.headers.traceparent).toBe(`00-${root.traceId}-${get.spanId}-01`);
});

test("when the request that queued a document was not sampled, then the fetch's trace has no link, and the request still has no spans", async () => {
  const traceId = hex(16);
  const asset = await createWithUri('/doc/unsampled', `00-${traceId}-${hex(8)}-00`);

  const root = await until(fetchSpanOf(asset.id), 'the metadata fetch span', 30_000);
  expect(root.links ?? []).toEqual([]);
  expect(collector.spans.filter((s) => s.traceId === traceId)).toEqual([]);
});
