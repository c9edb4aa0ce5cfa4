import type { Span } from '@opentelemetry/api';
import { viem } from '../../common/eip712';
import { traceRpc } from '../../common/tracing';

/**
 * Whether a failed call did not reach the contract's answer (the node did not answer, or limits the rate): it
 * may pass, and is asked again. Otherwise the contract answered with a failure (a revert, no code).
 */
export function unanswered(reason: unknown): boolean {
  const { BaseError, HttpRequestError, TimeoutError, LimitExceededRpcError } = viem();
  return !(reason instanceof BaseError) || reason.walk((e) => e instanceof HttpRequestError || e instanceof TimeoutError || e instanceof LimitExceededRpcError) !== null;
}

/**
 * viem's HTTP transport to a chain's node whose requests are client spans (traceRpc) under `spanOf()`, the
 * span of the work that makes them, while it is traced; otherwise requests go out as they are.
 */
export function tracedTransport(rpcUrl: string, chainId: string, spanOf: () => Span | undefined, options: { batch?: { batchSize: number }; timeout?: number } = {}) {
  return viem().http(rpcUrl, {
    retryCount: 0,
    ...options,
    fetchFn: (input, init) => {
      const span = spanOf();
      if (!span?.isRecording()) return fetch(input, init);
      const headers: Record<string, string> = {};
      const body: unknown = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
      const send = () => fetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers).entries()), ...headers } });
      return traceRpc(span, chainId, rpcUrl, body, headers, send, (res) => res.status);
    },
  });
}
