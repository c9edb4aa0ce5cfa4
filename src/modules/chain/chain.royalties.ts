import { DataSource } from 'typeorm';
import type { StoredFee } from '../collection/collection.entity';
import { withEvents } from '../event/event.log';
import { chainRoyaltiesChanged } from '../../common/metrics';

/**
 * ERC-2981 (docs/chain.md, "Royalties"): the royalty a collection's contract declares. The follower reads it
 * for the collections of its chain not read yet and those refreshed since (chain_collection_royalties.due),
 * apart from its steps: `supportsInterface(0x2a55205a)`, then `royaltyInfo(tokenId, ROYALTY_SALE_PRICE)` for
 * the collection's lowest known token id (0 when it has none). The collection's royalty fees show it unless
 * its owner set fees. A token whose royaltyInfo answers otherwise (OpenZeppelin's `_setTokenRoyalty`) has its
 * own, read with its tokenURI (chain.token-uris.ts) and shown as the asset's fees whatever the collection's.
 */

/** Collections whose royalty one round reads. */
export const ROYALTY_BATCH = 20;
/** The sale price royaltyInfo is asked about: 10^18, so that the amount gives the basis points exactly. */
export const ROYALTY_SALE_PRICE = 10n ** 18n;

/** A collection whose royalty is due to be read. */
export interface DueRoyalty {
  collectionId: string;
  contractAddress: string;
  tokenId: bigint;
}

/**
 * What reading a contract's royalty gave: `null` when it does not answer ERC-2981 (supportsInterface false or
 * reverted), the receiver and amount for ROYALTY_SALE_PRICE, or `undefined` when the node did not answer (read
 * again next round).
 */
export type RoyaltyRead = { receiver: string; amount: bigint } | null | undefined;

const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';

/** The royalty as the collection's fees: none for no royalty, a zero receiver or amount; at most 10000 basis points. */
export function royaltyFees(read: { receiver: string; amount: bigint } | null): StoredFee[] {
  if (!read || read.amount <= 0n || read.receiver.toLowerCase() === ZERO_ADDRESS) return [];
  const bps = (read.amount * 10000n) / ROYALTY_SALE_PRICE;
  return [{ address: read.receiver.toLowerCase(), basisPoints: Number(bps > 10000n ? 10000n : bps) }];
}

/** A royalty as the royalty events carry it, in the API's words: `[{address, basis_points}]` (empty: none). */
export function royaltiesAsApi(fees: StoredFee[] | null): { address: string; basis_points: number }[] {
  return (fees ?? []).map((f) => ({ address: f.address, basis_points: f.basisPoints }));
}

/**
 * One round: the chain's collections whose royalty is due (never read, or refreshed), read by `read`, each
 * recorded: the royalty kept in chain_collection_royalties and shown as the collection's fees when its owner set
 * none (its fees are empty, or are the royalty shown before); one that differs from the last read (none before
 * the first) writes `collection.royalties_updated` and counts in gateway_chain_royalties_changed_total. Returns
 * how many were recorded.
 */
export async function readDueRoyalties(ds: DataSource, chainId: string, read: (due: DueRoyalty[]) => Promise<RoyaltyRead[]>): Promise<number> {
  const rows: { collectionId: string; contractAddress: string; tokenId: string }[] = await ds.query(
    `SELECT c.id AS "collectionId", c.contract_address AS "contractAddress",
       COALESCE((SELECT a.token_id FROM assets a WHERE a.collection_id = c.id ORDER BY a.token_id LIMIT 1), 0)::text AS "tokenId"
     FROM collections c LEFT JOIN chain_collection_royalties r ON r.collection_id = c.id
     WHERE c.chain_id = $1 AND (r.collection_id IS NULL OR r.due) ORDER BY c.id LIMIT $2`,
    [chainId, ROYALTY_BATCH],
  );
  if (!rows.length) return 0;
  const reads = await read(rows.map((r) => ({ collectionId: r.collectionId, contractAddress: r.contractAddress, tokenId: BigInt(r.tokenId) })));
  let recorded = 0;
  for (const [i, row] of rows.entries()) {
    const got = reads[i];
    if (got === undefined) continue;
    const fees = JSON.stringify(royaltyFees(got));
    await withEvents(ds, async (m, events) => {
      // The royalty as last read (none before the first read), to tell a change: its event and metric.
      const [kept]: { before: StoredFee[]; changed: boolean }[] = await m.query(
        `WITH prev AS (
           SELECT c.id, (COALESCE(r.shown, false) OR c.fees = '[]'::jsonb) AS show, COALESCE(r.fees, '[]'::jsonb) AS last_read
           FROM collections c LEFT JOIN chain_collection_royalties r ON r.collection_id = c.id WHERE c.id = $1 FOR UPDATE OF c),
         shown AS (UPDATE collections c SET fees = $3::jsonb, updated_at = now() FROM prev
                   WHERE c.id = prev.id AND prev.show AND c.fees IS DISTINCT FROM $3::jsonb RETURNING c.id),
         stored AS (
           INSERT INTO chain_collection_royalties (collection_id, due, supported, fees, shown, read_at)
           SELECT id, false, $2, $3::jsonb, show AND $3::jsonb <> '[]'::jsonb, now() FROM prev
           ON CONFLICT (collection_id) DO UPDATE SET due = false, supported = excluded.supported, fees = excluded.fees, shown = excluded.shown, read_at = now()
           RETURNING 1)
         SELECT last_read AS before, last_read <> $3::jsonb AS changed FROM prev`,
        [row.collectionId, got !== null, fees],
      );
      if (!kept?.changed) return;
      events.add('collection.royalties_updated', 'collection', row.collectionId, {
        royalties: royaltiesAsApi(JSON.parse(fees) as StoredFee[]),
        previous_royalties: royaltiesAsApi(kept.before),
      });
      events.afterCommit(() => chainRoyaltiesChanged.inc({ chain_id: chainId, subject: 'collection' }));
    });
    // A token's own royalty is kept only where it differs from its collection's (chain.token-uris.ts): those
    // that now equal it show the collection's again. Apart from the statement above, which holds the collection.
    await ds.query(`UPDATE assets SET royalty_fees = NULL, updated_at = now() WHERE collection_id = $1 AND royalty_fees IS NOT NULL AND royalty_fees = $2::jsonb`, [
      row.collectionId,
      fees,
    ]);
    recorded += 1;
  }
  return recorded;
}

/** Asks for the royalty of these collections to be read again (a refresh): the follower reads it at its next round. */
export async function royaltyReadDue(m: Pick<DataSource, 'query'>, collectionIds: readonly string[]): Promise<void> {
  await m.query(
    `INSERT INTO chain_collection_royalties (collection_id, due) SELECT unnest($1::uuid[]), true
     ON CONFLICT (collection_id) DO UPDATE SET due = true`,
    [collectionIds],
  );
}
