import http, { IncomingHttpHeaders } from 'node:http';
import { AddressInfo } from 'node:net';

/** One JSON-RPC call (or batch) as the proxy received it. */
export interface ProxiedCall {
  /** The request's JSON: one call, or a batch of them. */
  call: { id?: number; method?: string; params?: unknown[] } | { id?: number; method?: string; params?: unknown[] }[];
  headers: IncomingHttpHeaders;
}

export interface RpcProxy {
  url: string;
  close(): Promise<void>;
}

/**
 * A JSON-RPC proxy on loopback in front of a node (the chain tests' ganache): each call is sent to the node,
 * then `answer` (when given) sees the call and the node's answer and says what the follower gets, or when.
 */
export async function startRpcProxy(target: string, answer: (received: ProxiedCall, upstream: string) => Promise<string> | string = (_, upstream) => upstream): Promise<RpcProxy> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const upstream = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        const text = await answer({ call: JSON.parse(body) as ProxiedCall['call'], headers: req.headers }, await upstream.text());
        res.writeHead(200, { 'content-type': 'application/json' }).end(text);
      })().catch(() => res.writeHead(502).end());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
