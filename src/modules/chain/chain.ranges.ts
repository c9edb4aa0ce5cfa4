import type { PublicClient } from 'viem';
import { ChainStep, ChainTransfer, TrackedCollection } from './chain.transfers';
import { BATCH_METADATA_UPDATE_TOPIC, METADATA_UPDATE_TOPIC, MetadataUpdate, metadataUpdateOfLog, withMetadataUpdates } from './chain.metadata-updates';
import { OWNERSHIP_TRANSFERRED_TOPIC, OwnershipLog, ownershipLogOf, withOwnershipLogs } from './chain.ownership';

/**
 * keccak256("Transfer(address,address,uint256)"). The logs are read raw (eth_getLogs) and their indexed
 * arguments taken from the topics: decoding each log through the ABI cost as much as the node's answer.
 */
const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
const toHex = (n: bigint) => `0x${n.toString(16)}` as `0x${string}`;
/** The address in a 32-byte topic (its last 20 bytes), in lower case. */
const addressOfTopic = (topic: string) => `0x${topic.slice(26).toLowerCase()}`;

/** The blocks one eth_getLogs asks for, and of which collections (those not read that far yet). */
export interface RangePlan {
  from: bigint;
  to: bigint;
  reading: TrackedCollection[];
  /** The same key, the same read: a read made ahead of time is used only for a plan of the same key. */
  key: string;
}

/** What the read of a range gave: its ERC721 transfers in chain order, the hashes of their blocks and of the range's last. */
export interface RangeRead {
  transfers: ChainTransfer[];
  blockHashes: Map<bigint, string>;
  toHash: string;
  /**
   * The parent hash of the range's first block, on the chain the range was read from: the follower applies the
   * range only when it is the hash it kept for that block (chainContinues), else a reorg came between its steps.
   */
  fromParentHash: string;
  /** ERC-4906 updates of the range's collections, in chain order (chain.metadata-updates.ts). */
  metadataUpdates: MetadataUpdate[];
  /** ERC-173 OwnershipTransferred logs of the range's collections, in chain order (chain.ownership.ts). */
  ownershipLogs: OwnershipLog[];
  /** Logs in the node's answer (ERC20 transfers and blocks already read included): what the range's size is judged by. */
  logs: number;
}

/**
 * The next range of a chain's collections that are behind the confirmed block: from the lowest of their
 * positions, `range` blocks at most; the collections already read to its end are left out. Null when none is behind.
 */
export function planRange(collections: TrackedCollection[], confirmed: bigint, range: bigint): RangePlan | null {
  const behind = collections.filter((c) => c.syncedBlock < confirmed);
  if (!behind.length) return null;
  const from = behind.reduce((low, c) => (c.syncedBlock < low ? c.syncedBlock : low), confirmed) + 1n;
  const to = from + range - 1n < confirmed ? from + range - 1n : confirmed;
  const reading = behind.filter((c) => c.syncedBlock < to);
  return { from, to, reading, key: `${from}-${to}:${reading.map((c) => `${c.contractAddress}@${c.syncedBlock}`).join(',')}` };
}

/** The collections as a step that applied `plan` leaves them: those it read are at its last block. */
export function afterRange(collections: TrackedCollection[], plan: RangePlan): TrackedCollection[] {
  const read = new Set(plan.reading.map((c) => c.id));
  return collections.map((c) => (read.has(c.id) && c.syncedBlock < plan.to ? { ...c, syncedBlock: plan.to } : c));
}

/** A reorg happened while a range was read: its logs and its hashes may come from two chains. The next step finds the fork. */
export class ReorgDuringRead extends Error {
  constructor(readonly to: bigint) {
    super(`block ${to} changed while its range was read (a reorg under way)`);
  }
}

/**
 * One eth_getLogs of the plan's range and collections, with the hash of its last block and the parent hash of
 * its first; the Transfer topics decoded by hand. The last block is read before and after the logs (and the
 * first block between): the same hash twice says the logs and both hashes are of one chain. A reorg between
 * the two reads throws ReorgDuringRead, so a range is never applied half from the branch a reorg orphaned
 * with the new branch's hash kept for its last block (which would hide the reorg from the next step).
 */
export async function readRange(client: PublicClient, plan: RangePlan): Promise<RangeRead> {
  const { from, to, reading } = plan;
  const last = await client.getBlock({ blockNumber: to });
  const [logs, first] = await Promise.all([
    client.request({
      method: 'eth_getLogs',
      params: [{ address: reading.map((c) => c.contractAddress as `0x${string}`), topics: [[TRANSFER_TOPIC, METADATA_UPDATE_TOPIC, BATCH_METADATA_UPDATE_TOPIC, OWNERSHIP_TRANSFERRED_TOPIC]], fromBlock: toHex(from), toBlock: toHex(to) }],
    }),
    from === to ? last : client.getBlock({ blockNumber: from }),
  ]);
  if ((await client.getBlock({ blockNumber: to })).hash !== last.hash) throw new ReorgDuringRead(to);
  const synced = new Map(reading.map((c) => [c.contractAddress, c.syncedBlock]));
  const transfers: ChainTransfer[] = [];
  const blockHashes = new Map<bigint, string>();
  const metadataUpdates: MetadataUpdate[] = [];
  const ownershipLogs: OwnershipLog[] = [];
  for (const log of logs) {
    if (log.topics[0] === OWNERSHIP_TRANSFERRED_TOPIC) {
      const owned = ownershipLogOf(log);
      if (owned && owned.blockNumber > (synced.get(owned.tokenAddress) ?? to)) ownershipLogs.push(owned);
      continue;
    }
    if (log.topics[0] !== TRANSFER_TOPIC) {
      const update = metadataUpdateOfLog(log);
      if (update && update.blockNumber > (synced.get(update.tokenAddress) ?? to)) metadataUpdates.push(update);
      continue;
    }
    // ERC721's Transfer has its three arguments indexed; ERC20's (the same topic) has the amount in its data.
    if (log.topics.length !== 4 || log.removed || log.blockNumber === null || log.blockHash === null || log.transactionHash === null || log.logIndex === null) continue;
    const tokenAddress = log.address.toLowerCase();
    const blockNumber = BigInt(log.blockNumber);
    // A collection read further than this range's start already has these blocks.
    if (blockNumber <= (synced.get(tokenAddress) ?? to)) continue;
    blockHashes.set(blockNumber, log.blockHash);
    transfers.push({
      blockNumber,
      blockHash: log.blockHash,
      txHash: log.transactionHash,
      logIndex: Number(log.logIndex),
      tokenAddress,
      tokenId: BigInt(log.topics[3]!),
      from: addressOfTopic(log.topics[1]!),
      to: addressOfTopic(log.topics[2]!),
    });
  }
  transfers.sort((a, b) => (a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1));
  ownershipLogs.sort((a, b) => (a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1));
  return { transfers, blockHashes, toHash: last.hash!, fromParentHash: first.parentHash, metadataUpdates, ownershipLogs, logs: logs.length };
}

/**
 * The steps that apply a read range, each in a transaction of its own: whole blocks of at most `limit`
 * transfers each (a block with more is one step), the last one ending at the range's last block. Each step
 * moves the positions of the range's collections to its own last block, so a step that fails leaves them
 * where the steps before it put them.
 */
export function stepsOfRange(chainId: string, plan: RangePlan, read: RangeRead, limit: number): ChainStep[] {
  const { transfers } = read;
  const steps: ChainStep[] = [];
  let start = 0;
  for (let i = 0; i < transfers.length; ) {
    let end = i;
    while (end < transfers.length && transfers[end].blockNumber === transfers[i].blockNumber) end++;
    // The block from i to end does not fit in the step so far: that step ends with the block before it.
    if (end - start > limit && i > start) {
      const last = transfers[i - 1].blockNumber;
      steps.push(step(chainId, plan, read, start, i, last, read.blockHashes.get(last)!));
      start = i;
    }
    i = end;
  }
  steps.push(step(chainId, plan, read, start, transfers.length, plan.to, read.toHash));
  return withOwnershipLogs(withMetadataUpdates(steps, plan.from, read.metadataUpdates), plan.from, read.ownershipLogs);
}

function step(chainId: string, plan: RangePlan, read: RangeRead, start: number, end: number, toBlock: bigint, toHash: string): ChainStep {
  const transfers = read.transfers.slice(start, end);
  const blockHashes = new Map(transfers.map((t) => [t.blockNumber, t.blockHash]));
  blockHashes.set(toBlock, toHash);
  return { chainId, toBlock, toHash, blockHashes, transfers, collections: plan.reading };
}
