import { randomUUID } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { clock } from '../../common/clock';
import { updateReturning } from '../../common/sql';
import { EventLog, withEvents } from '../event/event.log';
import { lockAssets } from '../listing/auction';
import { INACTIVE_REASON, InactivatableListing, inactivatableListings, inactivateListings, reactivateListings } from '../listing/listing.owner-changes';
import { settleByTransfers, unsettleByTransfers } from '../order/settlement';
import { MetadataUpdate, queueMetadataUpdates } from './chain.metadata-updates';
import { ApprovalLog, applyApprovals, rollBackApprovals } from './chain.approvals';
import { applyOwnershipLogs, OwnershipLog, OwnersAtFork, rollBackOwnershipLogs } from './chain.ownership';

/** Block hashes kept below the last applied block, to find where a reorg forked. */
const KEPT_BLOCK_HASHES = 1024;
const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';

/** One ERC721 Transfer log, as the follower read it (addresses in lower case). */
export interface ChainTransfer {
  blockNumber: bigint;
  blockHash: string;
  txHash: string;
  logIndex: number;
  tokenAddress: string;
  tokenId: bigint;
  from: string;
  to: string;
}

/** A tracked collection of the chain, with the block its contract has been read up to (-1: none yet). */
export interface TrackedCollection {
  id: string;
  chainId: string;
  contractAddress: string;
  syncedBlock: bigint;
}

/** What one step of the follower applies: the transfers of a block range and where each collection stands after it. */
export interface ChainStep {
  chainId: string;
  /** The range's last block and its hash; the chain's last applied block when every collection reached it. */
  toBlock: bigint;
  toHash: string;
  /** Hashes of the blocks whose transfers are applied (with toBlock's), kept to see a reorg. */
  blockHashes: Map<bigint, string>;
  transfers: ChainTransfer[];
  /** The collections read up to toBlock by this step. */
  collections: TrackedCollection[];
  /** ERC-4906 updates of the step's blocks: their tokens' tokenURIs are read again (chain.metadata-updates.ts). */
  metadataUpdates?: MetadataUpdate[];
  /** The chain's operator (CHAIN_OPERATOR_<chain_id>) and the step's approval logs (chain.approvals.ts); unset: approvals are not followed. */
  operator?: string;
  approvals?: ApprovalLog[];
  /** ERC-173 OwnershipTransferred logs of the step's blocks: the collections' claims move (chain.ownership.ts). */
  ownershipLogs?: OwnershipLog[];
}

/** A transfer applied by a step (not one applied before), in chain order: what it did to which asset. */
export interface AppliedTransfer {
  assetId: string;
  from: string;
  to: string;
  blockNumber: bigint;
  txHash: string;
  logIndex: number;
}

/**
 * Applies a step in one transaction with its events: each transfer once (its unique key), in chain order,
 * then the collections' and the chain's positions. A transfer already applied (a restart that read its range
 * again) changes nothing. Returns how many transfers were applied.
 */
export async function applyChainStep(ds: DataSource, step: ChainStep): Promise<number> {
  return withEvents(ds, async (m, events) => {
    await withoutJit(m);
    const now = clock.now();
    const applied = await applyTransfers(m, events, step, now);
    // SETTLEMENT=chain: the pending orders these transfers complete or fail (settlement.ts), in chain order.
    await settleByTransfers(m, events, applied.map((a) => ({ ...a, blockNumber: a.blockNumber.toString() })), now);
    if (step.operator) await applyApprovals(m, events, step, now);
    await queueMetadataUpdates(m, step.chainId, step.collections, step.metadataUpdates);
    await applyOwnershipLogs(m, events, step.chainId, step.collections, step.ownershipLogs, now);
    await m.query(
      `INSERT INTO chain_collection_sync (collection_id, synced_block) SELECT unnest($1::uuid[]), $2::bigint
       ON CONFLICT (collection_id) DO UPDATE SET synced_block = GREATEST(chain_collection_sync.synced_block, EXCLUDED.synced_block)`,
      [step.collections.map((c) => c.id), step.toBlock.toString()],
    );
    const blocks = [...step.blockHashes.entries()];
    await m.query(
      `INSERT INTO chain_blocks (chain_id, number, hash) SELECT $1, unnest($2::bigint[]), unnest($3::text[])
       ON CONFLICT (chain_id, number) DO UPDATE SET hash = EXCLUDED.hash`,
      [step.chainId, blocks.map(([n]) => n.toString()), blocks.map(([, h]) => h)],
    );
    // Hashes far below the head are no use to see a reorg (the follower compares the newest ones).
    await m.query('DELETE FROM chain_blocks WHERE chain_id = $1 AND number < $2::bigint - $3', [step.chainId, step.toBlock.toString(), KEPT_BLOCK_HASHES]);
    // The chain's last applied block: the lowest position of its collections (all of them, not only this step's).
    await m.query(
      `UPDATE chain_sync s SET last_block = p.low, last_hash = CASE WHEN p.low = $2::bigint THEN $3 ELSE (SELECT hash FROM chain_blocks b WHERE b.chain_id = s.chain_id AND b.number = p.low) END,
         updated_at = now(), last_error = NULL, last_error_at = NULL
       FROM (SELECT min(COALESCE(cs.synced_block, c.start_block - 1, -1)) AS low
             FROM collections c LEFT JOIN chain_collection_sync cs ON cs.collection_id = c.id WHERE c.chain_id = $1) p
       WHERE s.chain_id = $1`,
      [step.chainId, step.toBlock.toString(), step.toHash],
    );
    return applied.length;
  });
}

/**
 * PostgreSQL's JIT off for the rest of the transaction. A step's statements over thousands of rows are
 * estimated costly enough to be compiled, and compiling them cost more than running them: the events
 * append of 5,000 transfers spent 1.2-1.5 s in JIT (EXPLAIN ANALYZE) for 0.3 s of execution.
 */
async function withoutJit(m: EntityManager): Promise<void> {
  await m.query('SET LOCAL jit = off');
}

/** A token as the step goes through its transfers: its asset, its owner, its listings still active. */
interface TokenState {
  assetId: string;
  owner: string;
  listings: InactivatableListing[];
}

/**
 * The step's transfers, set-based: a handful of statements whatever their number (one transfer at a time
 * took five or more each). In chain order, each transfer not applied before: a token not known yet appears
 * as an asset named "#<token id>" owned by the receiver (its tokenURI is read later, see
 * chain_token_uris_pending); a known token gets the receiver as owner (`asset.transferred`), and its active
 * listings by anyone else become inactive (`listing.inactivated`). The events are those that applying the
 * transfers one by one writes, in the same order. The known assets are locked first, in one statement in id
 * order, through the lock every change of owner takes (a due english auction is settled first). Each
 * transfer is recorded with what it changed (the owner before it, the listings it made inactive) so that a
 * reorg can undo it.
 */
async function applyTransfers(m: EntityManager, events: EventLog, step: ChainStep, now: Date): Promise<AppliedTransfer[]> {
  const byAddress = new Map(step.collections.map((c) => [c.contractAddress, c]));
  const tracked = step.transfers.filter((t) => byAddress.has(t.tokenAddress));
  if (!tracked.length) return [];
  const logKey = (txHash: string, logIndex: number) => `${txHash}:${logIndex}`;
  const before: { tx: string; log: number }[] = await m.query(
    `SELECT t.tx_hash AS tx, t.log_index AS log FROM unnest($2::text[], $3::int[]) k(tx, log)
     JOIN chain_transfers t ON t.chain_id = $1 AND t.tx_hash = k.tx AND t.log_index = k.log`,
    [step.chainId, tracked.map((t) => t.txHash), tracked.map((t) => t.logIndex)],
  );
  const seen = new Set(before.map((r) => logKey(r.tx, r.log)));
  const fresh: ChainTransfer[] = [];
  for (const t of tracked) {
    const key = logKey(t.txHash, t.logIndex);
    if (seen.has(key)) continue;
    seen.add(key);
    fresh.push(t);
  }
  if (!fresh.length) return [];

  const tokenKey = (address: string, tokenId: string) => `${address}:${tokenId}`;
  const tokens = [...new Map(fresh.map((t) => [tokenKey(t.tokenAddress, t.tokenId.toString()), t])).values()];
  const known: { id: string }[] = await m.query(
    `SELECT a.id FROM unnest($2::text[], $3::numeric[]) k(address, token_id)
     JOIN assets a ON a.chain_id = $1 AND a.token_address = k.address AND a.token_id = k.token_id`,
    [step.chainId, tokens.map((t) => t.tokenAddress), tokens.map((t) => t.tokenId.toString())],
  );
  const locked = [...(await lockAssets(m, events, known.map((a) => a.id), now)).values()];
  const state = new Map<string, TokenState>(locked.map((a) => [tokenKey(a.tokenAddress, a.tokenId), { assetId: a.id, owner: a.owner, listings: [] }]));
  const lockedOwners = new Map(locked.map((a) => [a.id, a.owner]));
  const byAsset = new Map([...state.values()].map((s) => [s.assetId, s]));
  for (const listing of await inactivatableListings(m, [...byAsset.keys()], now)) byAsset.get(listing.assetId)!.listings.push(listing);

  const created: { id: string; collectionId: string; tokenAddress: string; tokenId: string }[] = [];
  const inactive: InactivatableListing[] = [];
  const recorded: { previousOwner: string | null; inactivated: string[] }[] = [];
  const applied: AppliedTransfer[] = [];
  for (const t of fresh) {
    const onChain = { block_number: t.blockNumber.toString(), transaction_hash: t.txHash, log_index: t.logIndex };
    const tokenId = t.tokenId.toString();
    const key = tokenKey(t.tokenAddress, tokenId);
    let token = state.get(key);
    if (!token) {
      token = { assetId: randomUUID(), owner: t.to, listings: [] };
      state.set(key, token);
      created.push({ id: token.assetId, collectionId: byAddress.get(t.tokenAddress)!.id, tokenAddress: t.tokenAddress, tokenId });
      events.add('asset.created', 'asset', token.assetId, { ...onChain, from: t.from });
      recorded.push({ previousOwner: null, inactivated: [] });
    } else {
      const previousOwner = token.owner;
      if (previousOwner !== t.to) {
        token.owner = t.to;
        // The event's row is read at commit: a later transfer of the token in this step shows there, not here.
        events.add('asset.transferred', 'asset', token.assetId, { previous_owner: previousOwner, owner: t.to, ...onChain });
      }
      const gone = token.listings.filter((l) => l.seller !== t.to);
      token.listings = token.listings.filter((l) => l.seller === t.to);
      for (const l of gone) events.add('listing.inactivated', 'listing', l.id, { reason: INACTIVE_REASON, ...onChain });
      inactive.push(...gone);
      recorded.push({ previousOwner, inactivated: gone.map((l) => l.id) });
    }
    applied.push({ assetId: token.assetId, from: t.from, to: t.to, blockNumber: t.blockNumber, txHash: t.txHash, logIndex: t.logIndex });
  }

  for (const a of created) byAsset.set(a.id, state.get(tokenKey(a.tokenAddress, a.tokenId))!);
  const owners = (ids: string[]) => ids.map((id) => byAsset.get(id)!.owner);
  // New tokens: their assets with the owner after the step; no metadata yet, so no traits to index.
  if (created.length) {
    const ids = created.map((a) => a.id);
    await m.query(
      `INSERT INTO assets (id, collection_id, chain_id, token_address, token_id, name, description, image_url, metadata, owner)
       SELECT k.id, k.collection_id, $1, k.address, k.token_id, '#' || k.token_id::text, '', '', '{}'::jsonb, k.owner
       FROM unnest($2::uuid[], $3::uuid[], $4::text[], $5::numeric[], $6::text[]) k(id, collection_id, address, token_id, owner)`,
      [step.chainId, ids, created.map((a) => a.collectionId), created.map((a) => a.tokenAddress), created.map((a) => a.tokenId), owners(ids)],
    );
    await m.query('INSERT INTO chain_token_uris_pending (asset_id, chain_id) SELECT unnest($2::uuid[]), $1', [step.chainId, ids]);
  }
  const moved = [...lockedOwners].filter(([id, owner]) => byAsset.get(id)!.owner !== owner).map(([id]) => id);
  if (moved.length) {
    await m.query(
      `UPDATE assets a SET owner = k.owner, updated_at = $3 FROM unnest($1::uuid[], $2::text[]) k(id, owner) WHERE a.id = k.id`,
      [moved, owners(moved), now],
    );
  }
  await inactivateListings(m, inactive, now);
  const [{ count }]: { count: number }[] = await m.query(
    `WITH recorded AS (
       INSERT INTO chain_transfers (chain_id, block_number, block_hash, tx_hash, log_index, token_address, token_id, from_address, to_address,
         asset_id, previous_owner, inactivated_listings)
       SELECT $1, k.block_number, k.block_hash, k.tx_hash, k.log_index, k.token_address, k.token_id, k.from_address, k.to_address,
         k.asset_id, k.previous_owner, k.inactivated::uuid[]
       FROM unnest($2::bigint[], $3::text[], $4::text[], $5::int[], $6::text[], $7::numeric[], $8::text[], $9::text[], $10::uuid[], $11::text[], $12::text[])
         k(block_number, block_hash, tx_hash, log_index, token_address, token_id, from_address, to_address, asset_id, previous_owner, inactivated)
       ON CONFLICT (chain_id, tx_hash, log_index) DO NOTHING RETURNING 1)
     SELECT count(*)::int AS count FROM recorded`,
    [
      step.chainId,
      fresh.map((t) => t.blockNumber.toString()),
      fresh.map((t) => t.blockHash),
      fresh.map((t) => t.txHash),
      fresh.map((t) => t.logIndex),
      fresh.map((t) => t.tokenAddress),
      fresh.map((t) => t.tokenId.toString()),
      fresh.map((t) => t.from),
      fresh.map((t) => t.to),
      applied.map((a) => a.assetId),
      recorded.map((r) => r.previousOwner),
      recorded.map((r) => `{${r.inactivated.join(',')}}`),
    ],
  );
  // Another transaction recorded some of them meanwhile (the follower's lock lost and taken): this step starts again.
  if (count !== fresh.length) throw new Error(`${fresh.length - count} of the step's transfers were applied by another transaction`);
  return applied;
}

/**
 * A reorg: the chain's blocks above `forkBlock` are no longer the ones applied. Their transfers are undone
 * in reverse order, in one transaction with their events: each token's owner goes back to the one before
 * the transfer (a token the transfer made known goes back to its sender), `asset.transfer_reverted` says so,
 * and the listings the transfer made inactive are active again where their seller owns the token again
 * (`listing.reactivated`), while an active listing by anyone else (the receiver of the undone transfer listed
 * the token) becomes inactive (`listing.inactivated`). The assets are locked first, in id order. An asset that an undone mint created is
 * deleted when nothing else refers to it (no listing, offer, order or other transfer): its
 * `asset.transfer_reverted` says `removed: true`; one that something refers to stays, owned by the zero
 * address. The transfers, block hashes and positions above the fork are forgotten, so the next steps apply
 * the new branch. The collections' claims decided above the fork take what `ownersAtFork` (owner() at the fork
 * block, chain.ownership.ts) says. Returns how many transfers were undone.
 */
export async function rollBackChain(ds: DataSource, chainId: string, forkBlock: bigint, ownersAtFork: OwnersAtFork = new Map()): Promise<number> {
  return withEvents(ds, async (m, events) => {
    await withoutJit(m);
    const now = clock.now();
    const orphaned = await updateReturning<{
      assetId: string;
      previousOwner: string | null;
      from: string;
      to: string;
      blockNumber: string;
      txHash: string;
      logIndex: number;
      inactivated: string[];
    }>(
      m,
      `DELETE FROM chain_transfers WHERE chain_id = $1 AND block_number > $2
       RETURNING asset_id AS "assetId", previous_owner AS "previousOwner", from_address AS "from", to_address AS "to",
         block_number::text AS "blockNumber", tx_hash AS "txHash", log_index AS "logIndex", inactivated_listings AS inactivated`,
      [chainId, forkBlock.toString()],
    );
    orphaned.sort((a, b) => (a.blockNumber === b.blockNumber ? b.logIndex - a.logIndex : BigInt(b.blockNumber) < BigInt(a.blockNumber) ? -1 : 1));
    const owners = new Map([...(await lockAssets(m, events, [...new Set(orphaned.map((t) => t.assetId))], now)).values()].map((a) => [a.id, a.owner]));
    const minted = orphaned.filter((t) => t.previousOwner === null && t.from === ZERO_ADDRESS).map((t) => t.assetId);
    const removed: { id: string }[] = minted.length
      ? await m.query(
          `SELECT a.id FROM assets a WHERE a.id = ANY($1::uuid[])
             AND NOT EXISTS (SELECT 1 FROM listings WHERE asset_id = a.id) AND NOT EXISTS (SELECT 1 FROM offers WHERE asset_id = a.id)
             AND NOT EXISTS (SELECT 1 FROM orders WHERE asset_id = a.id) AND NOT EXISTS (SELECT 1 FROM chain_transfers WHERE asset_id = a.id)`,
          [minted],
        )
      : [];
    const removedIds = new Set(removed.map((a) => a.id));
    for (const t of orphaned) {
      const owner = owners.get(t.assetId)!;
      const restored = t.previousOwner ?? t.from;
      const undone = { block_number: t.blockNumber, transaction_hash: t.txHash, log_index: t.logIndex, reason: 'reorg' };
      if (owner !== restored) {
        await m.query('UPDATE assets SET owner = $2, updated_at = $3 WHERE id = $1', [t.assetId, restored, now]);
        owners.set(t.assetId, restored);
        const gone = removedIds.has(t.assetId) && t.previousOwner === null ? { removed: true } : {};
        events.add('asset.transfer_reverted', 'asset', t.assetId, { previous_owner: owner, owner: restored, ...undone, ...gone });
      }
      // Listed by whom the undone transfer made owner: that seller no longer owns the token.
      const stale = (await inactivatableListings(m, [t.assetId], now)).filter((l) => l.seller !== restored);
      await inactivateListings(m, stale, now);
      for (const l of stale) events.add('listing.inactivated', 'listing', l.id, { ...undone, reason: INACTIVE_REASON });
      await reactivateListings(m, events, t.assetId, t.inactivated, restored, now, undone);
    }
    await unsettleByTransfers(m, events, chainId, orphaned, now);
    await rollBackApprovals(m, events, chainId, forkBlock, [...owners.keys()].filter((id) => !removedIds.has(id)), now);
    await rollBackOwnershipLogs(m, events, chainId, forkBlock, now, ownersAtFork);
    if (removedIds.size) {
      // The events about these assets are written with their rows as they are now, before the rows go.
      await events.flush(m);
      await m.query('DELETE FROM assets WHERE id = ANY($1::uuid[])', [[...removedIds]]);
    }
    await m.query('DELETE FROM chain_blocks WHERE chain_id = $1 AND number > $2', [chainId, forkBlock.toString()]);
    await m.query(
      `UPDATE chain_collection_sync s SET synced_block = $2 FROM collections c
       WHERE c.id = s.collection_id AND c.chain_id = $1 AND s.synced_block > $2`,
      [chainId, forkBlock.toString()],
    );
    await m.query(
      `UPDATE chain_sync SET last_block = LEAST(last_block, $2::bigint), last_hash = (SELECT hash FROM chain_blocks WHERE chain_id = $1 AND number = $2),
         updated_at = now() WHERE chain_id = $1`,
      [chainId, forkBlock.toString()],
    );
    return orphaned.length;
  });
}
