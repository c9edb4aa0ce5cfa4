import type { Context } from '../../common/request/context';
import { clock } from '../../common/clock';
import { AppError, ForbiddenError, ItemProblem, ItemsError, itemProblems, ValidationError } from '../../common/errors';
import { updateReturning } from '../../common/sql';
import { AssetStatus } from '../asset/asset.entity';
import { setAssetsStatus } from '../asset/asset.status';
import { findCollectionByRef } from '../collection/collection.service';
import { EventLog, EventType, withEvents } from '../event/event.log';
import { lockAssets } from './auction';
import { checkListing, CheckedListing, insertListings } from './listing.service';
import { isActiveListingSql } from './listing.sql';
import { listingsByIds } from './listing.read';
import { CancelledByMaker, CreatedListings, CreateListingInput, MAX_BULK_LISTINGS } from './listing.types';
import type { EntityManager } from 'typeorm';

/** The field an item's error is about when it names none: how the item names its asset. */
const assetField = (input: CreateListingInput) => (input.assetId != null ? 'assetId' : 'tokenId');

/**
 * A bulk create: every item is checked by createListing's rules (checkListing, the reads of all items
 * batched) and written by its write (insertListings) in one transaction, all or none. When any item is
 * refused nothing is written and the error lists every refused item (ItemsError: index, code, field,
 * message); items refused by the checks do not stop the others from being tried in the transaction, so
 * that their conflicts are listed too.
 */
export async function createListings(ctx: Context, inputs: CreateListingInput[]): Promise<CreatedListings> {
  const caller = await ctx.requireCaller();
  if (inputs.length < 1 || inputs.length > MAX_BULK_LISTINGS) {
    throw new ValidationError([{ field: 'input', message: `must hold 1 to ${MAX_BULK_LISTINGS} listings, got ${inputs.length}` }]);
  }
  const now = clock.now();
  const problems: ItemProblem[] = [];
  const refuse = (index: number, err: unknown) => {
    if (!(err instanceof AppError)) throw err;
    problems.push(...itemProblems(index, err, assetField(inputs[index])));
  };
  const checked = await Promise.all(
    inputs.map((input, index) =>
      checkListing(ctx, caller.address, input, now).then(
        (item): { index: number; item: CheckedListing } | null => ({ index, item }),
        (err: unknown) => {
          refuse(index, err);
          return null;
        },
      ),
    ),
  );
  const valid = checked.filter((c) => c !== null);
  const refused = () => new ItemsError(problems.sort((a, b) => a.index - b.index), inputs.length, 'listings');
  if (!valid.length) throw refused();
  const ids = await withEvents(ctx.ds, async (m, events) => {
    const outcomes = await insertListings(m, events, caller.address, valid.map((v) => v.item), now);
    outcomes.forEach((outcome, k) => {
      if (typeof outcome !== 'string') refuse(valid[k].index, outcome);
    });
    if (problems.length) throw refused();
    return outcomes as string[];
  });
  ctx.invalidate();
  const byId = new Map((await listingsByIds(ctx.ds, ids, clock.now())).map((l) => [l.id, l]));
  return { listings: ids.map((id) => byId.get(id)!), count: ids.length };
}

/** The SQL of one kind of bulk cancel: what it reads and what it writes. */
export interface MakerCancel {
  noun: 'listings' | 'offers';
  event: EventType;
  subject: 'listing' | 'offer';
  /** The maker's rows to cancel as read at $2 (maker $1, collection id $3 or null): id and "assetId" (null for collection offers), oldest first. */
  select: string;
  /** Cancels the rows of ids $1 that are still cancellable at $2; RETURNING id and "assetId". */
  cancel: string;
  /** More writes of the same transaction, on what was cancelled. */
  after?: (m: EntityManager, cancelled: { id: string; assetId: string | null }[], now: Date) => Promise<void>;
}

/**
 * A bulk cancel: all of the maker's active listings or offers, or those of one collection, cancelled in one
 * transaction behind their assets' locks (lockAssets: taken in id order, settling auctions due), each
 * with the event the single cancel writes. Only the maker may (403 otherwise, as the single cancel). What
 * was sold, accepted or expired meanwhile is not cancelled and is no error: the update re-reads each row
 * under the locks, so a concurrent sale either finished before (its row is left out) or waits and then
 * finds the listing cancelled. The statements do not depend on how many rows are cancelled.
 */
export async function cancelByMaker(ctx: Context, maker: string, collectionRef: string | null | undefined, plan: MakerCancel): Promise<CancelledByMaker> {
  const caller = await ctx.requireCaller();
  if (caller.address !== maker) throw new ForbiddenError(`only ${maker} may cancel the ${plan.noun} of ${maker}; this key is ${caller.address}'s`);
  const collection = collectionRef != null ? await findCollectionByRef(ctx, collectionRef) : null;
  const now = clock.now();
  const ids = await withEvents(ctx.ds, async (m, events: EventLog) => {
    const rows: { id: string; assetId: string | null }[] = await m.query(plan.select, [maker, now, collection?.id ?? null]);
    if (!rows.length) return [];
    await lockAssets(m, events, [...new Set(rows.flatMap((r) => (r.assetId ? [r.assetId] : [])))], now);
    const cancelled = await updateReturning<{ id: string; assetId: string | null }>(m, plan.cancel, [rows.map((r) => r.id), now]);
    const done = new Set(cancelled.map((c) => c.id));
    const ordered = rows.filter((r) => done.has(r.id));
    await plan.after?.(m, ordered, now);
    for (const { id } of ordered) events.add(plan.event, plan.subject, id);
    return ordered.map((r) => r.id);
  });
  ctx.invalidate();
  return { ids, count: ids.length };
}

const LISTINGS_CANCEL: MakerCancel = {
  noun: 'listings',
  event: 'listing.cancelled',
  subject: 'listing',
  select: `SELECT l.id, l.asset_id AS "assetId" FROM listings l
           WHERE l.seller = $1 AND ${isActiveListingSql('l', '$2')} AND ($3::uuid IS NULL OR l.collection_id = $3::uuid)
           ORDER BY l.created_at, l.id`,
  cancel: `UPDATE listings l SET status = 'cancelled', updated_at = $2 WHERE l.id = ANY($1::uuid[]) AND ${isActiveListingSql('l', '$2')}
           RETURNING l.id, l.asset_id AS "assetId"`,
  after: async (m, cancelled, now) => {
    if (cancelled.length) await setAssetsStatus(m, cancelled.flatMap((c) => (c.assetId ? [c.assetId] : [])), AssetStatus.UNLISTED, now);
  },
};

/** Cancels all of the maker's active listings (of one collection, when named). */
export function cancelListings(ctx: Context, maker: string, collection: string | null | undefined): Promise<CancelledByMaker> {
  return cancelByMaker(ctx, maker, collection, LISTINGS_CANCEL);
}
