import type { ChainSettings } from '../../config';
import { UnavailableError } from '../../common/errors';
import type { ContractOwnerRead } from '../../common/request/context';

import { viem } from '../../common/eip712';
import type { Span } from '@opentelemetry/api';
import { tracedTransport, unanswered } from './chain.viem';

type Viem = typeof import('viem');

export const OWNER_FUNCTION = 'function owner() view returns (address)';
export const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';
/** How long a request waits for the node's answer to owner() before it is a 503. */
const OWNER_READ_TIMEOUT_MS = 5000;

/**
 * ERC-173 owner() of contracts on the chains this process follows (CHAIN_RPC_<id>), read at the latest block
 * (its number read first, and kept with the answer) when a key registers, changes or claims a collection (docs/chain.md "Who may speak for a collection"). A
 * contract that reverts (no owner()), has no code or answers the zero address (ownership renounced) has no
 * owner (null). A node that does not answer, or answers too slowly, is a 503 (UnavailableError): the write is
 * refused, never let through unchecked.
 */
export function contractOwnerReader(
  settings: ChainSettings | undefined,
): ((chainId: string, contractAddress: string, parent?: Span) => Promise<ContractOwnerRead>) | undefined {
  if (!settings?.follow.length) return undefined;
  const urls = new Map(settings.follow.map((c) => [c.chainId, c.rpcUrl]));
  const clients = new Map<string, ReturnType<Viem['createPublicClient']>>();
  const clientFor = (chainId: string, url: string, parent?: Span) =>
    viem().createPublicClient({ transport: tracedTransport(url, chainId, () => parent, { timeout: OWNER_READ_TIMEOUT_MS }) });
  // A traced request's read gets a client of its own, whose call is a span under the request's; others share one per chain.
  const clientOf = (chainId: string, url: string, parent?: Span) => {
    if (parent?.isRecording()) return clientFor(chainId, url, parent);
    let client = clients.get(chainId);
    if (!client) {
      client = clientFor(chainId, url);
      clients.set(chainId, client);
    }
    return client;
  };
  return async (chainId, contractAddress, parent) => {
    const url = urls.get(chainId);
    if (!url) return { followed: false };
    const { parseAbi } = viem();
    const client = clientOf(chainId, url, parent);
    let block: bigint | undefined;
    try {
      // The block it is read at: the follower moves the claim for OwnershipTransferred logs above it only.
      block = await client.getBlockNumber({ cacheTime: 0 });
      const owner = await client.readContract({ address: contractAddress as `0x${string}`, abi: parseAbi([OWNER_FUNCTION]), functionName: 'owner', blockNumber: block });
      const lower = owner.toLowerCase();
      return { followed: true, owner: lower === ZERO_ADDRESS ? null : lower, block: block.toString() };
    } catch (err) {
      if (block !== undefined && !unanswered(err)) return { followed: true, owner: null, block: block.toString() };
      throw new UnavailableError(
        `the node of chain ${chainId} did not answer owner() of ${contractAddress.toLowerCase()}, so who may speak for the collection is unknown; nothing was changed, retry shortly`,
      );
    }
  };
}
