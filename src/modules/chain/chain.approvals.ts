import type { PublicClient } from 'viem';
import { EntityManager } from 'typeorm';
import { updateReturning } from '../../common/sql';
import { AssetStatus } from '../asset/asset.entity';
import { setAssetsStatus } from '../asset/asset.status';
import { EventLog } from '../event/event.log';
import { lockAssets } from '../listing/auction';
import { APPROVAL_REVOKED, APPROVAL_REVOKED_WHY, approvalRevokedSql } from '../listing/listing.approval';

/**
 * Fillability (docs/chain.md "Approvals"): with the chain's operator set (CHAIN_OPERATOR_<chain_id>), the
 * follower reads the ERC721 approval logs of the collections it follows, beside their transfers, and applies
 * them in the step of their block: a listing whose seller no longer approves the operator (neither for all
 * nor for its token) becomes `inactive` (`approval_revoked`), and one made so is active again when the seller
 * approves again. A reorg deletes the logs above its fork and judges the listings again.
 */

/** keccak256("Approval(address,address,uint256)"): ERC721's has its three arguments indexed, ERC20's (the same topic) not its amount. */
const APPROVAL_TOPIC = '0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925';
/** keccak256("ApprovalForAll(address,address,bool)"): owner and operator indexed, the flag in the data. */
const APPROVAL_FOR_ALL_TOPIC = '0x17307eab39ab6107e8899845ad3d59bd9653f200f220920489ca2b5937696c31';
const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';
const toHex = (n: bigint) => `0x${n.toString(16)}` as `0x${string}`;
const addressOfTopic = (topic: string) => `0x${topic.slice(26).toLowerCase()}`;

/** One approval log: ApprovalForAll of the operator (tokenId null) or Approval of a token (operator: the approved address). */
export interface ApprovalLog {
  blockNumber: bigint;
  blockHash: string;
  txHash: string;
  logIndex: number;
  tokenAddress: string;
  owner: string;
  tokenId: bigint | null;
  operator: string;
  approved: boolean;
}

/** A range to read: its blocks and its collections with their positions (chain.ranges.ts's RangePlan). */
interface ApprovalRange {
  from: bigint;
  to: bigint;
  reading: { contractAddress: string; syncedBlock: bigint }[];
}

/** What applyApprovals needs of a step (chain.transfers.ts's ChainStep). */
interface ApprovalStep {
  chainId: string;
  operator?: string;
  approvals?: ApprovalLog[];
  transfers: { blockNumber: bigint; txHash: string; logIndex: number; tokenAddress: string; tokenId: bigint; from: string; to: string }[];
}

/** Where a listing's change comes from, in its event: the log (or the undone log, with `reason: reorg`). */
type Cause = Record<string, unknown>;

/**
 * The approval logs of the plan's range and collections that matter to `operator`, in chain order: one
 * eth_getLogs of both topics; an ApprovalForAll of another operator is left out, every ERC721 Approval is kept
 * (an approval of another address takes the operator's away).
 */
export async function readApprovals(client: PublicClient, plan: ApprovalRange, operator: string): Promise<ApprovalLog[]> {
  const { from, to, reading } = plan;
  const logs = await client.request({
    method: 'eth_getLogs',
    params: [{ address: reading.map((c) => c.contractAddress as `0x${string}`), topics: [[APPROVAL_TOPIC, APPROVAL_FOR_ALL_TOPIC]], fromBlock: toHex(from), toBlock: toHex(to) }],
  });
  const synced = new Map(reading.map((c) => [c.contractAddress, c.syncedBlock]));
  const approvals: ApprovalLog[] = [];
  for (const log of logs) {
    if (log.removed || log.blockNumber === null || log.blockHash === null || log.transactionHash === null || log.logIndex === null) continue;
    const tokenAddress = log.address.toLowerCase();
    const blockNumber = BigInt(log.blockNumber);
    if (blockNumber <= (synced.get(tokenAddress) ?? to)) continue;
    const at = { blockNumber, blockHash: log.blockHash, txHash: log.transactionHash, logIndex: Number(log.logIndex), tokenAddress, owner: addressOfTopic(log.topics[1]!) };
    if (log.topics[0] === APPROVAL_TOPIC && log.topics.length === 4) {
      approvals.push({ ...at, tokenId: BigInt(log.topics[3]!), operator: addressOfTopic(log.topics[2]!), approved: true });
    } else if (log.topics[0] === APPROVAL_FOR_ALL_TOPIC && log.topics.length === 3 && addressOfTopic(log.topics[2]!) === operator) {
      approvals.push({ ...at, tokenId: null, operator, approved: BigInt(log.data) !== 0n });
    }
  }
  return approvals.sort((a, b) => (a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1));
}

/**
 * The steps with the approval logs of their blocks (each step ends at its `toBlock`; the first starts after
 * the range's start), and those blocks' hashes kept with the step's, to see a reorg of them.
 */
export function withApprovals<S extends { toBlock: bigint; blockHashes: Map<bigint, string> }>(steps: S[], approvals: ApprovalLog[], operator: string): S[] {
  let next = 0;
  return steps.map((step) => {
    const mine: ApprovalLog[] = [];
    while (next < approvals.length && approvals[next].blockNumber <= step.toBlock) mine.push(approvals[next++]);
    const blockHashes = new Map(step.blockHashes);
    for (const a of mine) blockHashes.set(a.blockNumber, a.blockHash);
    return { ...step, blockHashes, approvals: mine, operator };
  });
}

/**
 * A step's approval logs, inside its transaction, after its transfers: each recorded once (its unique key);
 * a transfer of a token that has approval rows recorded as clearing its approval (ERC721 clears it without a
 * log); then the listings of each (collection, owner) the logs name, and of each token the step moved, judged
 * again (reconcile).
 */
export async function applyApprovals(m: EntityManager, events: EventLog, step: ApprovalStep, now: Date): Promise<void> {
  const operator = step.operator!;
  const approvals = step.approvals ?? [];
  await m.query('UPDATE chain_sync SET operator = $2 WHERE chain_id = $1 AND operator IS DISTINCT FROM $2', [step.chainId, operator]);
  if (approvals.length) {
    await m.query(
      `INSERT INTO chain_approvals (chain_id, block_number, tx_hash, log_index, token_address, owner, token_id, operator, approved)
       SELECT $1::varchar, k.block_number, k.tx_hash, k.log_index, k.token_address, k.owner, k.token_id, k.operator, k.approved
       FROM unnest($2::bigint[], $3::text[], $4::int[], $5::text[], $6::text[], $7::numeric[], $8::text[], $9::boolean[])
         k(block_number, tx_hash, log_index, token_address, owner, token_id, operator, approved)
       ON CONFLICT (chain_id, tx_hash, log_index) DO NOTHING`,
      [
        step.chainId,
        approvals.map((a) => a.blockNumber.toString()),
        approvals.map((a) => a.txHash),
        approvals.map((a) => a.logIndex),
        approvals.map((a) => a.tokenAddress),
        approvals.map((a) => a.owner),
        approvals.map((a) => a.tokenId?.toString() ?? null),
        approvals.map((a) => a.operator),
        approvals.map((a) => a.approved),
      ],
    );
  }
  const transfers = step.transfers;
  if (transfers.length) {
    await m.query(
      `INSERT INTO chain_approvals (chain_id, block_number, tx_hash, log_index, token_address, owner, token_id, operator, approved)
       SELECT $1::varchar, k.block_number, k.tx_hash, k.log_index, k.token_address, k.owner, k.token_id, $8, false
       FROM unnest($2::bigint[], $3::text[], $4::int[], $5::text[], $6::text[], $7::numeric[]) k(block_number, tx_hash, log_index, token_address, owner, token_id)
       WHERE EXISTS (SELECT 1 FROM chain_approvals x WHERE x.chain_id = $1 AND x.token_address = k.token_address AND x.token_id = k.token_id)
       ON CONFLICT (chain_id, tx_hash, log_index) DO NOTHING`,
      [
        step.chainId,
        transfers.map((t) => t.blockNumber.toString()),
        transfers.map((t) => t.txHash),
        transfers.map((t) => t.logIndex),
        transfers.map((t) => t.tokenAddress),
        transfers.map((t) => t.from),
        transfers.map((t) => t.tokenId.toString()),
        ZERO_ADDRESS,
      ],
    );
  }
  // The newest log of each (collection, owner) is the cause its listings' events name.
  const causes = new Map<string, { tokenAddress: string; owner: string; cause: Cause }>();
  const onChain = (x: { blockNumber: bigint; txHash: string; logIndex: number }) => ({ block_number: x.blockNumber.toString(), transaction_hash: x.txHash, log_index: x.logIndex });
  for (const a of approvals) causes.set(`${a.tokenAddress}:${a.owner}`, { tokenAddress: a.tokenAddress, owner: a.owner, cause: onChain(a) });
  for (const t of transfers) {
    const key = `${t.tokenAddress}:${t.to}`;
    if (!causes.has(key)) causes.set(key, { tokenAddress: t.tokenAddress, owner: t.to, cause: onChain(t) });
  }
  await reconcile(m, events, step.chainId, operator, [...causes.values()], now);
}

/**
 * A reorg, inside rollBackChain's transaction after its transfers are undone: the approval logs above the
 * fork are forgotten (the newest below it is each approval again), and the listings of the owners they
 * named, and of the assets whose undone transfers gave them back (`assetIds`), judged again; their events
 * carry the undone log and `reason: reorg`. Nothing when the chain's operator was never set.
 */
export async function rollBackApprovals(m: EntityManager, events: EventLog, chainId: string, forkBlock: bigint, assetIds: string[], now: Date): Promise<void> {
  const [sync]: { operator: string | null }[] = await m.query('SELECT operator FROM chain_sync WHERE chain_id = $1', [chainId]);
  if (!sync?.operator) return;
  const undone = await updateReturning<{ tokenAddress: string; owner: string; blockNumber: string; txHash: string; logIndex: number }>(
    m,
    `DELETE FROM chain_approvals WHERE chain_id = $1 AND block_number > $2
     RETURNING token_address AS "tokenAddress", owner, block_number::text AS "blockNumber", tx_hash AS "txHash", log_index AS "logIndex"`,
    [chainId, forkBlock.toString()],
  );
  const owners: { tokenAddress: string; owner: string }[] = assetIds.length
    ? await m.query('SELECT token_address AS "tokenAddress", owner FROM assets WHERE id = ANY($1::uuid[])', [assetIds])
    : [];
  const causes = new Map<string, { tokenAddress: string; owner: string; cause: Cause }>();
  for (const o of owners) causes.set(`${o.tokenAddress}:${o.owner}`, { ...o, cause: { reason: 'reorg' } });
  // Newest first: the oldest undone log of an owner is the one whose state comes back.
  undone.sort((a, b) => (a.blockNumber === b.blockNumber ? b.logIndex - a.logIndex : BigInt(b.blockNumber) < BigInt(a.blockNumber) ? -1 : 1));
  for (const u of undone) {
    const cause = { block_number: u.blockNumber, transaction_hash: u.txHash, log_index: u.logIndex, reason: 'reorg' };
    causes.set(`${u.tokenAddress}:${u.owner}`, { tokenAddress: u.tokenAddress, owner: u.owner, cause });
  }
  await reconcile(m, events, chainId, sync.operator, [...causes.values()], now);
}

/**
 * The listings of these owners in these collections, judged against the approvals now: behind their assets'
 * locks (in id order), an active one (closing ahead, its seller the owner) whose seller revoked the operator
 * becomes inactive (`approval_revoked`, `listing.inactivated`); one made inactive so becomes active again
 * (`listing.reactivated`) when its seller approves again, still owns the token, its closing date is ahead
 * and its asset has no other active or pending listing (the newest such listing of an asset).
 */
async function reconcile(m: EntityManager, events: EventLog, chainId: string, operator: string, owners: { tokenAddress: string; owner: string; cause: Cause }[], now: Date): Promise<void> {
  if (!owners.length) return;
  const candidates: { assetId: string }[] = await m.query(
    `SELECT DISTINCT l.asset_id AS "assetId" FROM unnest($2::text[], $3::text[]) k(token_address, owner)
     JOIN collections c ON c.chain_id = $1 AND c.contract_address = k.token_address
     JOIN listings l ON l.seller = k.owner AND l.collection_id = c.id
     WHERE l.status = 'active' OR (l.status = 'inactive' AND l.inactive_reason = $4)`,
    [chainId, owners.map((o) => o.tokenAddress), owners.map((o) => o.owner), APPROVAL_REVOKED],
  );
  if (!candidates.length) return;
  await lockAssets(m, events, candidates.map((c) => c.assetId), now);
  const revoked = approvalRevokedSql({ chainId: '$1', tokenAddress: 'a.token_address', tokenId: 'a.token_id', seller: 'l.seller', operator: '$2' });
  const changed = <T>(sql: string) => updateReturning<T & { assetId: string; tokenAddress: string; seller: string }>(m, sql, [chainId, operator, candidates.map((c) => c.assetId), now, APPROVAL_REVOKED]);
  const inactivated = await changed<{ id: string }>(
    `UPDATE listings l SET status = 'inactive', inactive_reason = $5, updated_at = $4 FROM assets a
     WHERE a.id = l.asset_id AND l.asset_id = ANY($3::uuid[]) AND l.status = 'active' AND (l.closing_date IS NULL OR l.closing_date > $4)
       AND a.owner = l.seller AND ${revoked}
     RETURNING l.id, l.asset_id AS "assetId", a.token_address AS "tokenAddress", l.seller`,
  );
  const reactivated = await changed<{ id: string }>(
    `UPDATE listings l SET status = 'active', inactive_reason = NULL, updated_at = $4 FROM assets a
     WHERE a.id = l.asset_id AND l.id IN (
         SELECT DISTINCT ON (r.asset_id) r.id FROM listings r JOIN assets ra ON ra.id = r.asset_id
         WHERE r.asset_id = ANY($3::uuid[]) AND r.status = 'inactive' AND r.inactive_reason = $5 AND r.seller = ra.owner
           AND (r.closing_date IS NULL OR r.closing_date > $4)
           AND NOT EXISTS (SELECT 1 FROM listings o WHERE o.asset_id = r.asset_id AND o.status IN ('active', 'pending'))
         ORDER BY r.asset_id, r.created_at DESC, r.id DESC)
       AND NOT ${revoked}
     RETURNING l.id, l.asset_id AS "assetId", a.token_address AS "tokenAddress", l.seller`,
  );
  const causeOf = new Map(owners.map((o) => [`${o.tokenAddress}:${o.owner}`, o.cause]));
  const why = (l: { tokenAddress: string; seller: string }) => causeOf.get(`${l.tokenAddress}:${l.seller}`) ?? {};
  if (inactivated.length) await setAssetsStatus(m, [...new Set(inactivated.map((l) => l.assetId))], AssetStatus.UNLISTED, now);
  if (reactivated.length) await setAssetsStatus(m, [...new Set(reactivated.map((l) => l.assetId))], AssetStatus.LISTED, now);
  for (const l of inactivated) events.add('listing.inactivated', 'listing', l.id, { reason: APPROVAL_REVOKED_WHY, ...why(l) });
  for (const l of reactivated) events.add('listing.reactivated', 'listing', l.id, { reason: 'the seller approves the marketplace operator again', ...why(l) });
}
