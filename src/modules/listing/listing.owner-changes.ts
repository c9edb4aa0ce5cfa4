import { EntityManager } from 'typeorm';
import { updateReturning } from '../../common/sql';
import { AssetStatus } from '../asset/asset.entity';
import { setAssetsStatus } from '../asset/asset.status';
import type { EventLog } from '../event/event.log';

/**
 * What changes of owner seen on chain do to listings (docs/chain.md): a listing whose seller no longer owns
 * the token becomes `inactive`, and active again when a reorg takes the transfer back.
 */

/** Why a listing is `inactive` (in `listing.inactivated`). */
export const INACTIVE_REASON = 'the seller no longer owns the token';

/** An active listing that a change of owner on chain may make inactive. */
export interface InactivatableListing {
  id: string;
  assetId: string;
  seller: string;
}

/**
 * The listings that changes of owner seen on chain can make inactive: the active ones of these assets whose
 * closing date is ahead (a listing past it is left to the expiry sweeper), oldest first. With the assets locked.
 */
export async function inactivatableListings(m: EntityManager, assetIds: readonly string[], now: Date): Promise<InactivatableListing[]> {
  if (!assetIds.length) return [];
  return m.query(
    `SELECT id, asset_id AS "assetId", seller FROM listings
     WHERE asset_id = ANY($1::uuid[]) AND status = 'active' AND (closing_date IS NULL OR closing_date > $2) ORDER BY created_at, id`,
    [assetIds, now],
  );
}

/**
 * These listings' sellers no longer own their tokens (transfers seen on chain): they can no longer be filled
 * and become `inactive`, and their assets read unlisted; two statements whatever their number. The caller
 * says so in `listing.inactivated` (with INACTIVE_REASON), in the order of the transfers. With the assets locked.
 */
export async function inactivateListings(m: EntityManager, listings: readonly InactivatableListing[], now: Date): Promise<void> {
  if (!listings.length) return;
  await m.query(`UPDATE listings SET status = 'inactive', inactive_reason = 'owner_changed', updated_at = $2 WHERE id = ANY($1::uuid[])`, [listings.map((l) => l.id), now]);
  await setAssetsStatus(m, [...new Set(listings.map((l) => l.assetId))], AssetStatus.UNLISTED, now);
}

/**
 * The undoing of inactivateListings (a reorg took back the transfer): each of these listings
 * that is still inactive becomes active again when its seller owns the asset again, its closing date is
 * ahead and the asset has no other active listing. Inside the caller's transaction, with the asset locked.
 */
export async function reactivateListings(
  m: EntityManager,
  events: EventLog,
  assetId: string,
  listingIds: string[],
  owner: string,
  now: Date,
  extra: Record<string, unknown>,
): Promise<void> {
  if (!listingIds.length) return;
  const active = await updateReturning<{ id: string }>(
    m,
    `UPDATE listings SET status = 'active', inactive_reason = NULL, updated_at = $4
     WHERE id = (SELECT id FROM listings WHERE id = ANY($2::uuid[]) AND asset_id = $1 AND status = 'inactive' AND seller = $3
                   AND (closing_date IS NULL OR closing_date > $4) ORDER BY created_at DESC LIMIT 1)
       AND NOT EXISTS (SELECT 1 FROM listings WHERE asset_id = $1 AND status = 'active') RETURNING id`,
    [assetId, listingIds, owner, now],
  );
  if (!active.length) return;
  await setAssetsStatus(m, [assetId], AssetStatus.LISTED, now);
  for (const { id } of active) events.add('listing.reactivated', 'listing', id, { reason: 'the transfer that made it inactive was undone by a reorg', ...extra });
}
