import { viem } from '../../common/eip712';

/**
 * Whether a failed call did not reach the contract's answer (the node did not answer, or limits the rate): it
 * may pass, and is asked again. Otherwise the contract answered with a failure (a revert, no code).
 */
export function unanswered(reason: unknown): boolean {
  const { BaseError, HttpRequestError, TimeoutError, LimitExceededRpcError } = viem();
  return !(reason instanceof BaseError) || reason.walk((e) => e instanceof HttpRequestError || e instanceof TimeoutError || e instanceof LimitExceededRpcError) !== null;
}
