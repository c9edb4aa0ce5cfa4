import { once } from 'node:events';
import http from 'node:http';
import { AddressInfo } from 'node:net';

/** A span as the collector received it (OTLP's JSON), with its attributes as a record and its service's name. */
export interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  links?: { traceId: string; spanId: string }[];
  service: string;
}

type OtlpValue = { stringValue?: string; boolValue?: boolean; intValue?: string | number; doubleValue?: number };
type OtlpAttribute = { key: string; value: OtlpValue };
interface OtlpExport {
  resourceSpans: {
    resource: { attributes: OtlpAttribute[] };
    scopeSpans: { spans: (Omit<Span, 'attributes' | 'service'> & { attributes?: OtlpAttribute[] })[] }[];
  }[];
}

const valueOf = (v: OtlpValue) => v.stringValue ?? v.boolValue ?? (v.intValue !== undefined ? Number(v.intValue) : v.doubleValue);
const attributesOf = (list: OtlpAttribute[] = []) => Object.fromEntries(list.map((a) => [a.key, valueOf(a.value)]));

/** An OTLP/HTTP trace receiver (JSON) on loopback: what a collector would get. */
export async function startCollector() {
  const spans: Span[] = [];
  const contentTypes = new Set<string>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      contentTypes.add(`${req.method} ${req.url} ${req.headers['content-type']}`);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport;
      for (const resource of body.resourceSpans) {
        const service = String(attributesOf(resource.resource.attributes)['service.name']);
        for (const scope of resource.scopeSpans) for (const s of scope.spans) spans.push({ ...s, parentSpanId: s.parentSpanId || undefined, attributes: attributesOf(s.attributes), service });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
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
