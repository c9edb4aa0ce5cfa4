import { Context } from '../../common/request/context';
import { ConflictError, RateLimitedError } from '../../common/errors';
import { Asset } from '../asset/asset.entity';
import { getAsset } from '../asset/asset.service';
import { findCollectionByAddress } from '../collection/collection.service';
import { assertSpeaksFor } from '../collection/collection.claim';
import { chainFollowed, queueTokenUriReads } from '../chain/chain.token-uris';
import { queueCollectionTokenUriReads } from '../chain/chain.metadata-updates';
import { royaltyReadDue } from '../chain/chain.royalties';
import { queueFetches, queuedNow } from './metadata.queue';

/** How often a key may refresh one asset or collection, when the deployment does not say (METADATA_REFRESH_INTERVAL_S). */
export const DEFAULT_REFRESH_INTERVAL_S = 60;

/**
 * The caller's key may refresh `targetId` now (its last refresh of it is at least the interval old): the
 * time is taken in the same statement; otherwise 429 saying when it may.
 */
async function takeRefreshTurn(ctx: Context, keyId: string, targetId: string, what: string): Promise<void> {
  const interval = ctx.policy.metadataRefreshIntervalS ?? DEFAULT_REFRESH_INTERVAL_S;
  const [row]: { taken: boolean; waitS: number }[] = await ctx.ds.query(
    `WITH taken AS (
       INSERT INTO metadata_refreshes (api_key_id, target_id, requested_at) VALUES ($1, $2, now())
       ON CONFLICT (api_key_id, target_id) DO UPDATE SET requested_at = now()
         WHERE metadata_refreshes.requested_at <= now() - $3 * interval '1 second'
       RETURNING 1)
     SELECT EXISTS (SELECT 1 FROM taken) AS taken,
       COALESCE((SELECT ceil(extract(epoch FROM r.requested_at + $3 * interval '1 second' - now()))::int
                 FROM metadata_refreshes r WHERE r.api_key_id = $1 AND r.target_id = $2), 0) AS "waitS"`,
    [keyId, targetId, interval],
  );
  if (!row.taken) {
    const wait = Math.max(1, row.waitS);
    throw new RateLimitedError(`${what} was refreshed by this API key less than ${interval} s ago; try again in ${wait} s`, wait);
  }
}

/**
 * Queues the fetch of an asset's tokenURI document again (any API key; once per key and asset per
 * METADATA_REFRESH_INTERVAL_S), and on a followed chain the read of its tokenURI(id) from the chain (a URI
 * that changed is stored and fetched in its place). 409 when the asset has no tokenURI and its chain is not
 * followed. Returns the asset, pending.
 */
export async function refreshAssetMetadata(ctx: Context, tokenAddress: string, tokenId: string, chainId: string | null): Promise<Asset> {
  const caller = await ctx.requireCaller();
  const asset = await getAsset(ctx, tokenAddress, tokenId, chainId);
  const uri = (asset.metadata as { token_uri?: unknown })?.token_uri;
  const followed = await chainFollowed(ctx.ds, asset.chainId);
  if ((typeof uri !== 'string' || uri === '') && !followed) {
    throw new ConflictError(`asset ${tokenAddress}/${tokenId} has no tokenURI (metadata.token_uri) to fetch`);
  }
  await takeRefreshTurn(ctx, caller.keyId, asset.id, `asset ${tokenAddress}/${tokenId}`);
  await ctx.ds.transaction(async (m) => {
    await queueFetches(m, [asset.id]);
    if (followed) await queueTokenUriReads(m, asset.chainId, [asset.id]);
  });
  queuedNow();
  ctx.invalidate();
  return getAsset(ctx, tokenAddress, tokenId, asset.chainId);
}

/**
 * Queues the fetch of the tokenURI documents of every asset of a collection that has one (its owner or an
 * admin; once per key and collection per METADATA_REFRESH_INTERVAL_S); on a followed chain also the read of
 * every token's tokenURI from the chain (as one range, chain.metadata-updates.ts) and of the contract's
 * ERC-2981 royalty. Returns how many documents were queued.
 */
export async function refreshCollectionMetadata(ctx: Context, address: string, chainId: string | null): Promise<number> {
  const caller = await ctx.requireCaller();
  const collection = await findCollectionByAddress(ctx, address, chainId);
  await assertSpeaksFor(ctx, caller, collection);
  await takeRefreshTurn(ctx, caller.keyId, collection.id, `collection ${collection.contractAddress}`);
  const queued = await ctx.ds.transaction(async (m) => {
    const rows: { id: string }[] = await m.query(`SELECT id FROM assets WHERE collection_id = $1 AND metadata->>'token_uri' <> ''`, [collection.id]);
    await royaltyReadDue(m, [collection.id]);
    if (await chainFollowed(m, collection.chainId)) await queueCollectionTokenUriReads(m, collection.chainId, collection.id);
    return queueFetches(m, rows.map((r) => r.id));
  });
  queuedNow();
  return queued;
}
