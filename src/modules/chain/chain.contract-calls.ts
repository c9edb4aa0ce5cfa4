import type { PublicClient } from 'viem';
import { viem } from '../../common/eip712';
import { OWNER_FUNCTION, ZERO_ADDRESS } from './chain.owner';
import type { OwnersAtFork } from './chain.ownership';
import { DueRoyalty, ROYALTY_SALE_PRICE, RoyaltyRead } from './chain.royalties';
import type { PendingToken, TokenRead } from './chain.token-uris';
import { unanswered } from './chain.viem';

/**
 * The follower's eth_calls to the contracts it follows, each kind in one JSON-RPC batch (the client's): their
 * ERC-2981 royalties, their tokens' tokenURIs, and owner() at a fork block. A call the contract refused (a
 * revert, no such function) and one that did not reach an answer (chain.viem.ts `unanswered`) are told apart:
 * the first is an answer, the second is asked again later.
 */

const TOKEN_URI_FUNCTION = 'function tokenURI(uint256 tokenId) view returns (string)';
const ERC2981_FUNCTIONS = [
  'function supportsInterface(bytes4 interfaceId) view returns (bool)',
  'function royaltyInfo(uint256 tokenId, uint256 salePrice) view returns (address receiver, uint256 royaltyAmount)',
] as const;
/** ERC-2981's interface id, as supportsInterface is asked about it. */
const ERC2981_INTERFACE = '0x2a55205a';

/**
 * Each contract's ERC-2981 royalty, in one batch: supportsInterface(0x2a55205a), then royaltyInfo of those
 * that answer true. A contract that answers false or reverts (no ERC-165) has none (null); a call that did
 * not reach an answer is undefined (read again later).
 */
export async function callRoyalties(client: PublicClient, due: DueRoyalty[]): Promise<RoyaltyRead[]> {
  const { parseAbi } = viem();
  const abi = parseAbi(ERC2981_FUNCTIONS);
  const answered = (reason: unknown) => !unanswered(reason);
  const supports = await Promise.allSettled(
    due.map((d) => client.readContract({ address: d.contractAddress as `0x${string}`, abi, functionName: 'supportsInterface', args: [ERC2981_INTERFACE] })),
  );
  const infos = await Promise.allSettled(
    due.map((d, i) =>
      supports[i].status === 'fulfilled' && supports[i].value
        ? client.readContract({ address: d.contractAddress as `0x${string}`, abi, functionName: 'royaltyInfo', args: [d.tokenId, ROYALTY_SALE_PRICE] })
        : Promise.resolve(null),
    ),
  );
  return due.map((_, i) => {
    const support = supports[i];
    if (support.status === 'rejected') return answered(support.reason) ? null : undefined;
    const info = infos[i];
    if (info.status === 'rejected') return answered(info.reason) ? null : undefined;
    return info.value ? { receiver: info.value[0], amount: info.value[1] } : null;
  });
}

/**
 * tokenURI(id) of each token, and royaltyInfo(id, ROYALTY_SALE_PRICE) of those whose collection may declare
 * an ERC-2981 royalty, in one batch. A call that failed at the node (a revert: nodes report it with various
 * codes; a contract without the function) is null; one that did not reach an answer (the node did not
 * answer or limits the rate) is undefined: a tokenURI is read again later, a royalty kept as it is.
 */
export async function callTokenUris(client: PublicClient, tokens: PendingToken[]): Promise<TokenRead[]> {
  const { parseAbi } = viem();
  const abi = parseAbi([TOKEN_URI_FUNCTION, ...ERC2981_FUNCTIONS]);
  const address = (t: PendingToken) => t.tokenAddress as `0x${string}`;
  const [uris, royalties] = await Promise.all([
    Promise.allSettled(tokens.map((t) => client.readContract({ address: address(t), abi, functionName: 'tokenURI', args: [t.tokenId] }))),
    Promise.allSettled(
      tokens.map((t) =>
        t.royalty ? client.readContract({ address: address(t), abi, functionName: 'royaltyInfo', args: [t.tokenId, ROYALTY_SALE_PRICE] }) : Promise.resolve(undefined),
      ),
    ),
  ]);
  const settled = <T>(r: PromiseSettledResult<T>): T | null | undefined => (r.status === 'fulfilled' ? r.value : unanswered(r.reason) ? undefined : null);
  return tokens.map((_, i) => {
    const royalty = settled(royalties[i]);
    return { uri: settled(uris[i]), royalty: royalty ? { receiver: royalty[0], amount: royalty[1] } : royalty };
  });
}

/**
 * owner() of these collections' contracts at the fork block, in one batch: a contract that reverts or answers
 * the zero address has none (null). A read the node did not answer fails the whole (the follower's step, which
 * finds the reorg again and retries).
 */
export async function callOwnersAt(client: PublicClient, collections: { id: string; contractAddress: string }[], fork: bigint): Promise<OwnersAtFork> {
  const { parseAbi } = viem();
  const abi = parseAbi([OWNER_FUNCTION]);
  const reads = await Promise.allSettled(
    collections.map((c) => client.readContract({ address: c.contractAddress as `0x${string}`, abi, functionName: 'owner', blockNumber: fork })),
  );
  return new Map(
    collections.map((c, i): [string, string | null] => {
      const read = reads[i];
      if (read.status === 'rejected') {
        if (unanswered(read.reason)) throw read.reason instanceof Error ? read.reason : new Error(String(read.reason));
        return [c.id, null];
      }
      const owner = read.value.toLowerCase();
      return [c.id, owner === ZERO_ADDRESS ? null : owner];
    }),
  );
}
