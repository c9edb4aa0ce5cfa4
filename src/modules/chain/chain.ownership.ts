import { EntityManager } from 'typeorm';
import { updateReturning } from '../../common/sql';
import { EventLog } from '../event/event.log';
import { OwnerVerification } from '../collection/collection.entity';

/**
 * ERC-173 on chain (docs/chain.md "Who may speak for a collection"): the follower reads
 * `OwnershipTransferred(previousOwner, newOwner)` of the collections it follows with their transfers (the same
 * eth_getLogs) and moves each collection's claim in the step that applies the log: the new owner's key speaks
 * for it (`verified`), or nobody's when ownership was renounced (`no_contract_owner`, the owner stays). Only a
 * claim checked on chain moves (`verified` or `no_contract_owner`), and only for a log above the block it was
 * checked at (`owner_checked_block`): owner() read at a later block already said what the log says. A reorg gives
 * every claim decided above its fork (by a log or by a write's owner() read) the claim owner() at the fork block says.
 */

/** keccak256("OwnershipTransferred(address,address)"): both arguments indexed. */
export const OWNERSHIP_TRANSFERRED_TOPIC = '0x8be0079c531659141344cd1fd0a4f28419497f9722a3daafe3b4186f6b6457e0';
const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';
const addressOfTopic = (topic: string) => `0x${topic.slice(26).toLowerCase()}`;

/** One OwnershipTransferred log of a followed contract. */
export interface OwnershipLog {
  blockNumber: bigint;
  blockHash: string;
  txHash: string;
  logIndex: number;
  tokenAddress: string;
  previousOwner: string;
  newOwner: string;
}

/** A log as eth_getLogs answers it (what of it is read here). */
interface RawLog {
  address: string;
  topics: readonly string[];
  blockNumber: string | null;
  blockHash: string | null;
  transactionHash: string | null;
  logIndex: string | null;
  removed?: boolean;
}

/** The ownership transfer a log carries, or null when it is none (another topic, arguments not indexed as ERC-173 has them). */
export function ownershipLogOf(log: RawLog): OwnershipLog | null {
  if (log.topics[0] !== OWNERSHIP_TRANSFERRED_TOPIC || log.topics.length !== 3 || log.removed) return null;
  if (log.blockNumber === null || log.blockHash === null || log.transactionHash === null || log.logIndex === null) return null;
  return {
    blockNumber: BigInt(log.blockNumber),
    blockHash: log.blockHash,
    txHash: log.transactionHash,
    logIndex: Number(log.logIndex),
    tokenAddress: log.address.toLowerCase(),
    previousOwner: addressOfTopic(log.topics[1]),
    newOwner: addressOfTopic(log.topics[2]),
  };
}

/** Gives each step the ownership logs of its blocks (after the previous step's last block, up to its own), their blocks' hashes kept with the step's. */
export function withOwnershipLogs<S extends { toBlock: bigint; blockHashes: Map<bigint, string>; ownershipLogs?: OwnershipLog[] }>(steps: S[], fromBlock: bigint, logs: OwnershipLog[]): S[] {
  let after = fromBlock - 1n;
  for (const step of steps) {
    const low = after;
    step.ownershipLogs = logs.filter((l) => l.blockNumber > low && l.blockNumber <= step.toBlock);
    for (const l of step.ownershipLogs) step.blockHashes.set(l.blockNumber, l.blockHash);
    after = step.toBlock;
  }
  return steps;
}

/** A collection's claim columns, as chain_ownership_transfers.claim_before keeps them. */
interface Claim {
  owner: string;
  ownerVerification: OwnerVerification;
  contractOwner: string | null;
  ownerCheckedBlock: string | null;
}

const CLAIM_COLUMNS = `owner, owner_verification AS "ownerVerification", contract_owner AS "contractOwner", owner_checked_block::text AS "ownerCheckedBlock"`;

/** The claim a log leaves, or null when the log does not move it (a claim never checked on chain, or checked at or above the log's block). */
function claimAfter(claim: Claim, log: OwnershipLog): Claim | null {
  if (claim.ownerVerification === OwnerVerification.UNVERIFIED) return null;
  if (claim.ownerCheckedBlock !== null && BigInt(claim.ownerCheckedBlock) >= log.blockNumber) return null;
  const block = log.blockNumber.toString();
  if (log.newOwner === ZERO_ADDRESS) return { owner: claim.owner, ownerVerification: OwnerVerification.NO_CONTRACT_OWNER, contractOwner: null, ownerCheckedBlock: block };
  // A claim proven for this same owner() (a key it signed a claim for) stays with its key.
  const proven = claim.ownerVerification === OwnerVerification.VERIFIED && claim.contractOwner === log.newOwner;
  return { owner: proven ? claim.owner : log.newOwner, ownerVerification: OwnerVerification.VERIFIED, contractOwner: log.newOwner, ownerCheckedBlock: block };
}

/** The event a change of claim writes: `collection.claimed` when another key speaks for the collection, `collection.updated` otherwise. */
function addClaimEvent(events: EventLog, collectionId: string, before: Claim, after: Claim, extra: Record<string, unknown>): void {
  if (before.owner !== after.owner) events.add('collection.claimed', 'collection', collectionId, { previous_owner: before.owner, ...extra });
  else if (before.ownerVerification !== after.ownerVerification || before.contractOwner !== after.contractOwner) events.add('collection.updated', 'collection', collectionId, extra);
}

/**
 * A step's ownership logs, in its transaction, in chain order: each log of a tracked collection recorded once
 * (its unique key) with the claim it replaces, and the collection's claim moved (claimAfter), with its event
 * carrying the log (`block_number`, `transaction_hash`, `log_index`).
 */
export async function applyOwnershipLogs(
  m: EntityManager,
  events: EventLog,
  chainId: string,
  collections: { id: string; contractAddress: string }[],
  logs: OwnershipLog[] | undefined,
  now: Date,
): Promise<void> {
  if (!logs?.length) return;
  const ids = new Map(collections.map((c) => [c.contractAddress, c.id]));
  for (const log of logs) {
    const collectionId = ids.get(log.tokenAddress);
    if (!collectionId) continue;
    const [claim]: Claim[] = await m.query(`SELECT ${CLAIM_COLUMNS} FROM collections WHERE id = $1 FOR UPDATE`, [collectionId]);
    const after = claim && claimAfter(claim, log);
    if (!after) continue;
    const recorded: unknown[] = await m.query(
      `INSERT INTO chain_ownership_transfers (chain_id, block_number, tx_hash, log_index, collection_id, previous_owner, new_owner, claim_before)
       SELECT $1, $2, $3, $4, c.id, $6, $7,
         jsonb_build_object('owner', c.owner, 'owner_verification', c.owner_verification, 'contract_owner', c.contract_owner,
           'owner_checked_at', c.owner_checked_at, 'owner_checked_block', c.owner_checked_block::text)
       FROM collections c WHERE c.id = $5
       ON CONFLICT (chain_id, tx_hash, log_index) DO NOTHING RETURNING 1`,
      [chainId, log.blockNumber.toString(), log.txHash, log.logIndex, collectionId, log.previousOwner, log.newOwner],
    );
    if (!recorded.length) continue;
    await m.query(
      `UPDATE collections SET owner = $2, owner_verification = $3, contract_owner = $4, owner_checked_block = $5, owner_checked_at = $6, updated_at = $6 WHERE id = $1`,
      [collectionId, after.owner, after.ownerVerification, after.contractOwner, after.ownerCheckedBlock, now],
    );
    addClaimEvent(events, collectionId, claim, after, { block_number: log.blockNumber.toString(), transaction_hash: log.txHash, log_index: log.logIndex });
  }
}

/**
 * The collections of a chain whose claim was decided above `forkBlock` (owner() read, or a log applied, at a
 * block a reorg orphans): a reorg reads their owner() at the fork block (ownersAtFork) before it rolls back.
 */
export async function claimsCheckedAbove(q: Pick<EntityManager, 'query'>, chainId: string, forkBlock: bigint): Promise<{ id: string; contractAddress: string }[]> {
  return q.query(
    `SELECT id, contract_address AS "contractAddress" FROM collections
     WHERE chain_id = $1 AND owner_verification <> 'unverified' AND owner_checked_block > $2 ORDER BY id`,
    [chainId, forkBlock.toString()],
  );
}

/** The contract's owner() at the fork block, for a collection whose claim a reorg judges again (null: none, or renounced). */
export type OwnersAtFork = ReadonlyMap<string, string | null>;

/**
 * The claim a collection decided above the fork gets back. With its owner() at the fork block: the claim the
 * oldest undone log replaced when it was checked at or below the fork and says that same owner(); otherwise
 * that owner()'s (the claim kept by a key proven for it, `no_contract_owner` when none), checked at the fork
 * block, so the new branch's logs above it move it again. Without a read (a caller that has none): the claim
 * the oldest undone log replaced, unless a write read owner() since the newest. Null: nothing to restore.
 */
function claimAtFork(claim: Claim, forkBlock: bigint, undone: { before: Claim; newestBlock: string } | undefined, read: { owner: string | null } | undefined): Claim | null {
  if (!read) return undone && claim.ownerCheckedBlock === undone.newestBlock ? undone.before : null;
  const owner = read.owner;
  const before = undone?.before;
  const beforeFork = before && (before.ownerCheckedBlock === null || BigInt(before.ownerCheckedBlock) <= forkBlock);
  const says = (c: Claim) =>
    owner === null ? c.ownerVerification === OwnerVerification.NO_CONTRACT_OWNER : c.ownerVerification === OwnerVerification.VERIFIED && c.contractOwner === owner;
  if (before && beforeFork && says(before)) return before;
  const block = forkBlock.toString();
  if (owner === null) return { owner: claim.owner, ownerVerification: OwnerVerification.NO_CONTRACT_OWNER, contractOwner: null, ownerCheckedBlock: block };
  if (says(claim)) return { ...claim, ownerCheckedBlock: block };
  return { owner, ownerVerification: OwnerVerification.VERIFIED, contractOwner: owner, ownerCheckedBlock: block };
}

/**
 * A reorg, inside rollBackChain's transaction: the ownership logs above the fork are forgotten, and each
 * collection whose claim was decided above the fork (a log applied, or owner() read by a write, at an orphaned
 * block) gets the claim the fork block says (claimAtFork, from `ownersAtFork`, read before the transaction).
 * A claim checked again at or below the fork meanwhile (a write after the reorg) is left as it is. Its event
 * carries the undone log (or the fork block) and `reason: reorg`.
 */
export async function rollBackOwnershipLogs(m: EntityManager, events: EventLog, chainId: string, forkBlock: bigint, now: Date, ownersAtFork: OwnersAtFork): Promise<void> {
  const undone = await updateReturning<{ collectionId: string; blockNumber: string; txHash: string; logIndex: number; before: Record<string, string | null> }>(
    m,
    `DELETE FROM chain_ownership_transfers WHERE chain_id = $1 AND block_number > $2
     RETURNING collection_id AS "collectionId", block_number::text AS "blockNumber", tx_hash AS "txHash", log_index AS "logIndex", claim_before AS before`,
    [chainId, forkBlock.toString()],
  );
  // Oldest first: the first undone log of a collection replaced the claim to restore, the last set the claim it has.
  undone.sort((a, b) => (a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : BigInt(a.blockNumber) < BigInt(b.blockNumber) ? -1 : 1));
  const byCollection = new Map<string, { oldest: (typeof undone)[number]; newest: (typeof undone)[number] }>();
  for (const u of undone) {
    const seen = byCollection.get(u.collectionId);
    byCollection.set(u.collectionId, { oldest: seen?.oldest ?? u, newest: u });
  }
  for (const collectionId of [...new Set([...byCollection.keys(), ...ownersAtFork.keys()])].sort()) {
    const [claim]: Claim[] = await m.query(`SELECT ${CLAIM_COLUMNS} FROM collections WHERE id = $1 FOR UPDATE`, [collectionId]);
    if (!claim || claim.ownerCheckedBlock === null || BigInt(claim.ownerCheckedBlock) <= forkBlock) continue;
    const logs = byCollection.get(collectionId);
    const b = logs?.oldest.before;
    const before = b && { owner: b.owner!, ownerVerification: b.owner_verification as OwnerVerification, contractOwner: b.contract_owner, ownerCheckedBlock: b.owner_checked_block };
    const read = ownersAtFork.has(collectionId) ? { owner: ownersAtFork.get(collectionId) ?? null } : undefined;
    const restored = claimAtFork(claim, forkBlock, before && logs ? { before, newestBlock: logs.newest.blockNumber } : undefined, read);
    if (!restored) continue;
    const checkedAt = restored === before ? b!.owner_checked_at : now;
    await m.query(
      `UPDATE collections SET owner = $2, owner_verification = $3, contract_owner = $4, owner_checked_block = $5, owner_checked_at = $6, updated_at = $7 WHERE id = $1`,
      [collectionId, restored.owner, restored.ownerVerification, restored.contractOwner, restored.ownerCheckedBlock, checkedAt, now],
    );
    const cause = logs
      ? { block_number: logs.newest.blockNumber, transaction_hash: logs.newest.txHash, log_index: logs.newest.logIndex }
      : { fork_block: forkBlock.toString() };
    addClaimEvent(events, collectionId, claim, restored, { ...cause, reason: 'reorg' });
  }
}
