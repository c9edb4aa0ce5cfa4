import { DataSource, EntityManager } from 'typeorm';
import { clock } from '../../common/clock';
import { updateReturning } from '../../common/sql';
import { EventLog, withEvents } from '../event/event.log';
import { insertAsset } from '../asset/asset.service';
import { lockAsset } from '../listing/auction';
import { inactivateListingsOfFormerOwners, reactivateListings } from '../listing/listing.service';
import { settleByTransfers, SettlingTransfer, unsettleByTransfers } from '../order/settlement';

/** Block hashes kept below the last applied block, to find where a reorg forked. */
const KEPT_BLOCK_HASHES = 1024;

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
}

/**
 * Applies a step in one transaction with its events: each transfer once (its unique key), in chain order,
 * then the collections' and the chain's positions. A transfer already applied (a restart that read its range
 * again) changes nothing.
 */
export async function applyChainStep(ds: DataSource, step: ChainStep): Promise<number> {
  return withEvents(ds, async (m, events) => {
    const now = clock.now();
    const byAddress = new Map(step.collections.map((c) => [c.contractAddress, c]));
    const applied: SettlingTransfer[] = [];
    for (const transfer of step.transfers) {
      const collection = byAddress.get(transfer.tokenAddress);
      if (!collection) continue;
      const assetId = await applyTransfer(m, events, collection, transfer, now);
      if (assetId) applied.push({ assetId, from: transfer.from, to: transfer.to, blockNumber: transfer.blockNumber.toString(), txHash: transfer.txHash, logIndex: transfer.logIndex });
    }
    await settleByTransfers(m, events, applied, now);
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
 * One transfer: recorded once, then the token's owner becomes the receiver (a token not known yet appears
 * as an asset, named "#<token id>"), and an active listing by anyone else becomes inactive. The asset goes
 * through the lock every change of owner takes (lockAsset). Returns the asset's id, or null when it was applied before.
 */
async function applyTransfer(m: EntityManager, events: EventLog, collection: TrackedCollection, t: ChainTransfer, now: Date): Promise<string | null> {
  const [recorded] = await m.query(
    `INSERT INTO chain_transfers (chain_id, block_number, block_hash, tx_hash, log_index, token_address, token_id, from_address, to_address)
     VALUES ($1, $2, $3, $4, $5, $6, $7::numeric, $8, $9) ON CONFLICT (chain_id, tx_hash, log_index) DO NOTHING RETURNING log_index`,
    [collection.chainId, t.blockNumber.toString(), t.blockHash, t.txHash, t.logIndex, t.tokenAddress, t.tokenId.toString(), t.from, t.to],
  );
  if (!recorded) return null;
  const onChain = { block_number: t.blockNumber.toString(), transaction_hash: t.txHash, log_index: t.logIndex };
  const tokenId = t.tokenId.toString();
  const [known]: { id: string }[] = await m.query(
    'SELECT id FROM assets WHERE chain_id = $1 AND token_address = $2 AND token_id = $3::numeric',
    [collection.chainId, collection.contractAddress, tokenId],
  );
  let assetId: string;
  let previousOwner: string | null = null;
  let inactivated: string[] = [];
  if (!known) {
    const asset = await insertAsset(
      m,
      events,
      collection,
      { name: `#${tokenId}`, description: '', imageUrl: '', metadata: {}, tokenId, owner: t.to },
      { ...onChain, from: t.from },
    );
    assetId = asset.id;
  } else {
    assetId = known.id;
    const locked = await lockAsset(m, events, assetId, now);
    previousOwner = locked.owner;
    if (locked.owner !== t.to) {
      await m.query('UPDATE assets SET owner = $2, updated_at = $3 WHERE id = $1', [assetId, t.to, now]);
      // The event's row is read at commit: a later transfer of the token in this step must not show through.
      events.add('asset.transferred', 'asset', assetId, { previous_owner: locked.owner, owner: t.to, ...onChain });
    }
    inactivated = await inactivateListingsOfFormerOwners(m, events, assetId, t.to, now, onChain);
  }
  await m.query(
    `UPDATE chain_transfers SET asset_id = $3, previous_owner = $4, inactivated_listings = $6::uuid[]
     WHERE chain_id = $1 AND tx_hash = $2 AND log_index = $5`,
    [collection.chainId, t.txHash, assetId, previousOwner, t.logIndex, inactivated],
  );
  return assetId;
}

/**
 * A reorg: the chain's blocks above `forkBlock` are no longer the ones applied. Their transfers are undone
 * in reverse order, in one transaction with their events: each token's owner goes back to the one before
 * the transfer (a token the transfer made known goes back to its sender, the zero address for a mint:
 * the asset stays, owned by no one), `asset.transfer_reverted` says so, and the listings the transfer made
 * inactive are active again where their seller owns the token again (`listing.reactivated`). The transfers,
 * block hashes and positions above the fork are forgotten, so the next steps apply the new branch.
 * Returns how many transfers were undone.
 */
export async function rollBackChain(ds: DataSource, chainId: string, forkBlock: bigint): Promise<number> {
  return withEvents(ds, async (m, events) => {
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
    for (const t of orphaned) {
      const locked = await lockAsset(m, events, t.assetId, now);
      const restored = t.previousOwner ?? t.from;
      const undone = { block_number: t.blockNumber, transaction_hash: t.txHash, log_index: t.logIndex, reason: 'reorg' };
      if (locked.owner !== restored) {
        await m.query('UPDATE assets SET owner = $2, updated_at = $3 WHERE id = $1', [t.assetId, restored, now]);
        events.add('asset.transfer_reverted', 'asset', t.assetId, { previous_owner: locked.owner, owner: restored, ...undone });
      }
      await reactivateListings(m, events, t.assetId, t.inactivated, restored, now, undone);
    }
    await unsettleByTransfers(m, events, chainId, orphaned, now);
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
