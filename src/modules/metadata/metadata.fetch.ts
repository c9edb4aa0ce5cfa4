import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import type { Span } from '@opentelemetry/api';
import type { MetadataSettings } from '../../config';
import { traceOutgoing } from '../../common/tracing';
import { checkedLookup, hostOf, isInternalAddress } from '../webhook/webhook.target';

/** How fetching behaves: the METADATA_* settings this module reads. */
export type FetchOptions = Pick<MetadataSettings, 'allowPrivate' | 'ipfsGateway' | 'arweaveGateway' | 'timeoutMs' | 'maxBytes' | 'maxRedirects'>;

/** What one attempt gave: the document and the URL it came from, or why not and whether trying again may help. */
export type FetchResult = { ok: true; document: Record<string, unknown>; from: string } | { ok: false; error: string; retry: boolean };

const failed = (error: string, retry: boolean): FetchResult => ({ ok: false, error: error.slice(0, 500), retry });

/**
 * The http(s) URL a tokenURI is read from: ipfs:// through the IPFS gateway (`ipfs://ipfs/<cid>` too),
 * ar:// through the Arweave gateway; null for a data: URI (read in place) or a scheme the gateway does not read.
 */
export function httpUrlOf(uri: string, options: Pick<FetchOptions, 'ipfsGateway' | 'arweaveGateway'>): string | null {
  const ipfs = /^ipfs:\/\/(?:ipfs\/)?(.+)$/i.exec(uri);
  if (ipfs) return options.ipfsGateway + ipfs[1];
  const ar = /^ar:\/\/(.+)$/i.exec(uri);
  if (ar) return options.arweaveGateway + ar[1];
  if (/^https?:\/\//i.test(uri)) return uri;
  return null;
}

/** A JSON object, or the reason the text is not one. */
function jsonObject(text: string): Record<string, unknown> | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'the document is not JSON';
  }
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : 'the document is JSON but not an object';
}

/** `data:application/json[;charset=...][;base64],...` read in place. */
function readDataUri(uri: string, maxBytes: number): FetchResult {
  const match = /^data:([^,]*),(.*)$/is.exec(uri);
  if (!match) return failed('a data: URI without a comma', false);
  const params = match[1].split(';').map((p) => p.trim().toLowerCase());
  if (params[0] !== 'application/json') return failed(`a data: URI of ${params[0] || 'text/plain'}; only application/json is read`, false);
  let text: string;
  try {
    text = params.includes('base64') ? Buffer.from(match[2], 'base64').toString('utf8') : decodeURIComponent(match[2]);
  } catch {
    return failed('a data: URI whose text cannot be decoded', false);
  }
  if (Buffer.byteLength(text) > maxBytes) return failed(`the document is larger than ${maxBytes} bytes`, false);
  const document = jsonObject(text);
  return typeof document === 'string' ? failed(document, false) : { ok: true, document, from: 'data:' };
}

/** Content types a JSON document is served as (gateways serve it as text/plain or octet-stream too); others are refused before the body is read. */
function jsonish(contentType: string | undefined): boolean {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  return type === '' || type === 'application/json' || type.endsWith('+json') || type === 'text/plain' || type === 'application/octet-stream';
}

type Hop = { redirect: string } | FetchResult;

/**
 * Whether a URL may reach a private, loopback or link-local address: when the deployment allows it, or when
 * it is on one of the configured gateways (the operator's choice, often a local IPFS node).
 */
function mayBePrivate(url: URL, options: FetchOptions): boolean {
  return options.allowPrivate || [options.ipfsGateway, options.arweaveGateway].some((gateway) => new URL(gateway).origin === url.origin);
}

/**
 * One GET: the connection goes only to an address that passed the check; a redirect is handed back, not
 * followed. `trace` brings the request's headers (a traceparent) and takes the answer's status.
 */
function get(url: URL, options: FetchOptions, signal: AbortSignal, maxBytes: number, trace: { headers: Record<string, string>; status: number | null }): Promise<Hop> {
  const host = hostOf(url);
  const allowPrivate = mayBePrivate(url, options);
  // A literal address is not looked up (the lookup below never runs for it): it is checked here.
  if (isIP(host) && isInternalAddress(host) && !allowPrivate) {
    return Promise.resolve(failed(`the host ${host} is a private, loopback or link-local address; such targets are refused`, false));
  }
  return new Promise((resolve) => {
    let done = false;
    const finish = (hop: Hop) => {
      if (done) return;
      done = true;
      resolve(hop);
    };
    const client = url.protocol === 'https:' ? https : http;
    const req = client.request(
      url,
      {
        method: 'GET',
        headers: { accept: 'application/json', 'user-agent': 'nft-marketplace-gateway-metadata/1', ...trace.headers },
        lookup: checkedLookup(allowPrivate) as never,
        signal,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        trace.status = status;
        if (status >= 300 && status < 400 && res.headers.location) {
          res.resume();
          return finish({ redirect: new URL(res.headers.location, url).toString() });
        }
        if (status < 200 || status >= 300) {
          res.resume();
          // A server error, a rate limit or a missing document (not pinned yet) may pass; anything else will not.
          return finish(failed(`the host answered ${status}`, status >= 500 || status === 404 || status === 429 || status === 408));
        }
        if (!jsonish(res.headers['content-type'])) {
          res.destroy();
          return finish(failed(`the document is ${res.headers['content-type']}, not JSON`, false));
        }
        const declared = Number(res.headers['content-length']);
        if (declared > maxBytes) {
          res.destroy();
          return finish(failed(`the document is larger than ${maxBytes} bytes`, false));
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) {
            res.destroy();
            finish(failed(`the document is larger than ${maxBytes} bytes`, false));
          } else chunks.push(chunk);
        });
        res.on('end', () => {
          const document = jsonObject(Buffer.concat(chunks).toString('utf8'));
          finish(typeof document === 'string' ? failed(document, false) : { ok: true, document, from: url.toString() });
        });
        res.on('error', (err) => finish(failed(`the answer broke off: ${err.message}`, true)));
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => {
      // A refused address fails for good; a name that does not resolve may resolve later (DNS has bad moments).
      if (err.code === 'ETARGETREFUSED') finish(failed(err.message, /does not resolve/.test(err.message)));
      else if (signal.aborted) finish(failed(String(signal.reason ?? 'aborted'), true));
      else finish(failed(`${err.code ?? 'error'}: ${err.message}`, true));
    });
    req.end();
  });
}

/**
 * Fetches the JSON document behind a tokenURI: data: URIs in place; http(s), ipfs:// and ar:// with the
 * protections of webhooks (no private, loopback or link-local address unless allowed or a configured
 * gateway's, checked again at every redirect hop), within the time, size and redirect limits, only JSON objects.
 * Under a traced `span`, each hop is a client span of its own, and carries a traceparent to the host.
 */
export async function fetchDocument(uri: string, options: FetchOptions, stopping: AbortSignal, span?: Span): Promise<FetchResult> {
  if (/^data:/i.test(uri)) return readDataUri(uri, options.maxBytes);
  const first = httpUrlOf(uri, options);
  if (!first) return failed(`unsupported tokenURI scheme: ${uri.slice(0, 40)}; http(s)://, ipfs://, ar:// and data:application/json are read`, false);
  // One controller for the time limit and the stop (AbortSignal.any over the process's long-lived stop signal
  // keeps a dependent signal per fetch until it is collected: 10,000 documents, 10,000 of them).
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error(`no document within ${options.timeoutMs} ms`));
  }, options.timeoutMs);
  const stop = () => controller.abort(stopping.reason);
  if (stopping.aborted) stop();
  else stopping.addEventListener('abort', stop, { once: true });
  try {
    let target = first;
    for (let hop = 0; ; hop += 1) {
      let url: URL;
      try {
        url = new URL(target);
      } catch {
        return failed(`not a URL: ${target.slice(0, 200)}`, false);
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') return failed(`a redirect to ${url.protocol} is not followed`, false);
      const trace = { headers: {}, status: null as number | null };
      const result = await traceOutgoing(span, 'GET', url.toString(), trace.headers, () => get(url, options, controller.signal, options.maxBytes, trace), () => trace.status);
      if (timedOut && !('ok' in result && result.ok)) return failed(`no document within ${options.timeoutMs} ms`, true);
      if (!('redirect' in result)) return result;
      if (hop >= options.maxRedirects) return failed(`more than ${options.maxRedirects} redirects`, false);
      target = result.redirect;
    }
  } finally {
    clearTimeout(timer);
    stopping.removeEventListener('abort', stop);
  }
}
