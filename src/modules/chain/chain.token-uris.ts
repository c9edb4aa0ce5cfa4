import { DataSource } from 'typeorm';
import type { StoredFee } from '../collection/collection.entity';
import { withEvents } from '../event/event.log';
import { chainRoyaltiesChanged } from '../../common/metrics';
import { queuedNow, queueRowsSql } from '../metadata/metadata.queue';
import { royaltiesAsApi, royaltyFees, RoyaltyRead } from './chain.royalties';

/** Tokens whose tokenURI one round reads: one JSON-RPC batch of eth_calls. */
export const TOKEN_URI_BATCH = 200;

/** A token to read the tokenURI of, and its ERC-2981 royalty unless its collection is known to declare none. */
export interface PendingToken {
  assetId: string;
  tokenAddress: string;
  tokenId: bigint;
  royalty: boolean;
}

/**
 * What reading one tokenURI gave: the URI, `null` when the contract refused for good (the call reverted or
 * the contract has no such function: the asset keeps its placeholder), or `undefined` when the read failed
 * for a reason that may pass (the node did not answer): the token is read again in a later round.
 */
export type TokenUriRead = string | null | undefined;

/** What reading a token gave: its URI, and its royalty (chain.royalties.ts's RoyaltyRead; undefined when not read or not answered: kept as it is). */
export interface TokenRead {
  uri: TokenUriRead;
  royalty: RoyaltyRead;
}

/**
 * One round of reading the tokenURIs of tokens the follower saw minted (chain_token_uris_pending): up to
 * TOKEN_URI_BATCH of the chain's, read together by `read`; each URI read is stored as the asset's
 * `metadata.token_uri` and its document queued for the metadata fetch (docs/metadata.md), and the tokens
 * read for good are taken off the list in the same statement. The token's ERC-2981 royalty, read with it, is
 * kept as the asset's `royalty_fees` where it differs from the collection's (null otherwise: the collection's
 * shows); a token's own royalty set, changed or gone writes `asset.royalties_updated` and counts in
 * gateway_chain_royalties_changed_total. Runs apart from the follower's steps, so a backfill of many mints is not held up by as many calls.
 * Returns how many tokens were taken off the list.
 */
export async function readPendingTokenUris(ds: DataSource, chainId: string, read: (tokens: PendingToken[]) => Promise<TokenRead[]>): Promise<number> {
  const rows: { assetId: string; tokenAddress: string; tokenId: string; royalty: boolean }[] = await ds.query(
    `SELECT p.asset_id AS "assetId", a.token_address AS "tokenAddress", a.token_id::text AS "tokenId", COALESCE(r.supported, true) AS royalty
     FROM chain_token_uris_pending p JOIN assets a ON a.id = p.asset_id LEFT JOIN chain_collection_royalties r ON r.collection_id = a.collection_id
     WHERE p.chain_id = $1 ORDER BY p.asset_id LIMIT $2`,
    [chainId, TOKEN_URI_BATCH],
  );
  if (!rows.length) return 0;
  const reads = await read(rows.map((r) => ({ assetId: r.assetId, tokenAddress: r.tokenAddress, tokenId: BigInt(r.tokenId), royalty: r.royalty })));
  const done = rows.map((r, i) => ({ id: r.assetId, ...reads[i] })).filter((r) => r.uri !== undefined);
  if (!done.length) return 0;
  // Assets a step holds are skipped (read again next round): waiting for it would slow the step, and
  // locking in another order than its id order could deadlock with it.
  const { taken } = await withEvents(ds, async (m, events) => {
    const [result]: { taken: number; changed: { id: string; before: StoredFee[] | null; after: StoredFee[] | null; collection: StoredFee[] | null }[] }[] = await m.query(
      `WITH locked AS (SELECT id FROM assets WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE SKIP LOCKED),
       taken AS (DELETE FROM chain_token_uris_pending p USING locked WHERE p.asset_id = locked.id RETURNING p.asset_id),
       read AS (
         SELECT k.id, k.uri, k.royalty_read, CASE WHEN k.royalty IS NULL OR k.royalty = cr.fees THEN NULL ELSE k.royalty END AS royalty,
           a.royalty_fees AS before, cr.fees AS collection
         FROM unnest($1::uuid[], $2::text[], $3::boolean[], $4::jsonb[]) k(id, uri, royalty_read, royalty) JOIN assets a ON a.id = k.id
           LEFT JOIN chain_collection_royalties cr ON cr.collection_id = a.collection_id
         WHERE k.id IN (SELECT asset_id FROM taken)),
       stored AS (
         UPDATE assets a SET
           metadata = CASE WHEN r.uri <> '' THEN a.metadata || jsonb_build_object('token_uri', r.uri) ELSE a.metadata END,
           metadata_status = CASE WHEN r.uri <> '' THEN 'pending' ELSE a.metadata_status END,
           royalty_fees = CASE WHEN r.royalty_read THEN r.royalty ELSE a.royalty_fees END, updated_at = now()
         FROM read r WHERE a.id = r.id AND (r.uri <> '' OR (r.royalty_read AND r.royalty IS DISTINCT FROM r.before))
         RETURNING a.id, r.uri, r.royalty_read AND r.royalty IS DISTINCT FROM r.before AS royalty_changed, r.before, r.royalty, r.collection),
       queued AS (${queueRowsSql(`(SELECT id AS asset_id, uri FROM stored WHERE uri <> '')`)})
       SELECT (SELECT count(*)::int FROM taken) AS taken,
         COALESCE((SELECT jsonb_agg(jsonb_build_object('id', id, 'before', before, 'after', royalty, 'collection', collection) ORDER BY id)
                   FROM stored WHERE royalty_changed), '[]'::jsonb) AS changed`,
      [
        done.map((r) => r.id),
        done.map((r) => r.uri ?? ''),
        done.map((r) => r.royalty !== undefined),
        // A token whose royaltyInfo reverted has none of its own: the collection's shows.
        done.map((r) => (r.royalty ? JSON.stringify(royaltyFees(r.royalty)) : null)),
      ],
    );
    // A token's own royalty set, changed or gone (its collection's shows again): what it declares now and before.
    for (const c of result.changed) {
      events.add('asset.royalties_updated', 'asset', c.id, { royalties: royaltiesAsApi(c.after ?? c.collection), previous_royalties: royaltiesAsApi(c.before ?? c.collection) });
    }
    if (result.changed.length) events.afterCommit(() => chainRoyaltiesChanged.inc({ chain_id: chainId, subject: 'asset' }, result.changed.length));
    return result;
  });
  if (taken) queuedNow();
  return taken;
}

/** Whether a follower has followed this chain (it keeps a sync row): a refresh then reads tokenURIs from the chain again. */
export async function chainFollowed(q: Pick<DataSource, 'query'>, chainId: string): Promise<boolean> {
  const rows: unknown[] = await q.query('SELECT 1 FROM chain_sync WHERE chain_id = $1', [chainId]);
  return rows.length > 0;
}

/** Lists assets for the follower to read their tokenURI again (a refresh): a URI it reads is stored and its document queued. */
export async function queueTokenUriReads(q: Pick<DataSource, 'query'>, chainId: string, assetIds: readonly string[]): Promise<void> {
  await q.query(`INSERT INTO chain_token_uris_pending (asset_id, chain_id) SELECT unnest($2::uuid[]), $1 ON CONFLICT (asset_id) DO NOTHING`, [chainId, assetIds]);
}
