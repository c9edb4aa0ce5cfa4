import { randomUUID } from 'node:crypto';
import { EntityManager } from 'typeorm';
import { ConflictError } from '../../common/errors';
import { Params, updateReturning } from '../../common/sql';
import type { EventLog } from '../event/event.log';
import { currentPriceSql, listingStatusSql } from '../listing/listing.sql';

/** A listing a sweep may buy, as read before any lock: active, fixed-price or dutch, with its current price. */
export interface SweepCandidate {
  id: string;
  assetId: string;
  seller: string;
  price: string;
}

/** A candidate as it stands behind the locks of its asset and itself. */
export interface HeldListing {
  id: string;
  assetId: string;
  /** Its status at the sweep's moment (an active listing past its closing date reads expired). */
  status: string;
  seller: string;
  price: string;
  owner: string;
  collectionId: string;
  chainId: string;
  tokenAddress: string;
  tokenId: string;
}

/** A sale of a sweep: the held listing, its order id (chosen before writing, so events can name it) and its price. */
export interface SweepSale {
  orderId: string;
  listing: HeldListing;
  price: string;
}

export const newSale = (listing: HeldListing, price: string): SweepSale => ({ orderId: randomUUID(), listing, price });

/**
 * Locks the candidates' assets and listings in one statement, in asset id order (concurrent sweeps lock in
 * the same order, so they wait for each other instead of deadlocking), and reads them as they stand then: a
 * row that another transaction changed meanwhile is read again at its newest version once its lock is
 * granted, so a listing sold by a sweep that committed first reads as sold. By listing id.
 */
export async function holdCandidates(m: EntityManager, candidates: readonly SweepCandidate[], now: Date): Promise<Map<string, HeldListing>> {
  if (!candidates.length) return new Map();
  const p = new Params();
  const at = p.add(now);
  const rows: HeldListing[] = await m.query(
    `SELECT l.id, l.asset_id AS "assetId", ${listingStatusSql('l', at)} AS status, l.seller, ${currentPriceSql('l', at)}::text AS price,
       a.owner, a.collection_id AS "collectionId", a.chain_id AS "chainId", a.token_address AS "tokenAddress", a.token_id::text AS "tokenId"
     FROM assets a JOIN listings l ON l.asset_id = a.id
     WHERE a.id = ANY(${p.add(candidates.map((c) => c.assetId))}::uuid[]) AND l.id = ANY(${p.add(candidates.map((c) => c.id))}::uuid[])
     ORDER BY a.id FOR UPDATE`,
    p.values,
  );
  return new Map(rows.map((r) => [r.id, r]));
}

/**
 * Sells held listings to `buyer` at `now`, as completeSale sells one buy (order/sale.ts), with the same
 * writes and events, in a constant number of statements whatever their number: the listings are sold, the
 * assets pass to the buyer unlisted, the buyer's own active offers on them are cancelled, and one completed
 * order per listing (unit 1, no offer, naming the listing) records price, seller and buyer. Only fixed-price
 * and dutch listings (no english auction: no bids to cancel). The rows are locked (holdCandidates).
 */
export async function sellHeld(m: EntityManager, events: EventLog, buyer: string, sales: readonly SweepSale[], now: Date): Promise<void> {
  if (!sales.length) return;
  const listingIds = sales.map((s) => s.listing.id);
  const assetIds = sales.map((s) => s.listing.assetId);
  const sold = await updateReturning<{ id: string }>(
    m,
    `UPDATE listings SET status = 'sold', updated_at = $2 WHERE id = ANY($1::uuid[]) AND status = 'active' RETURNING id`,
    [listingIds, now],
  );
  if (sold.length !== sales.length) throw new ConflictError('a listing of this sweep was sold meanwhile; try again');
  await m.query(`UPDATE assets SET owner = $2, status = 'unlisted', updated_at = $3 WHERE id = ANY($1::uuid[])`, [assetIds, buyer, now]);
  const ownOffers = await updateReturning<{ id: string; assetId: string }>(
    m,
    `UPDATE offers SET status = 'cancelled', updated_at = $3
     WHERE asset_id = ANY($1::uuid[]) AND taker = $2 AND status = 'active' AND end_time > $3 RETURNING id, asset_id AS "assetId"`,
    [assetIds, buyer, now],
  );
  const column = <K extends keyof HeldListing>(key: K) => sales.map((s) => s.listing[key]);
  await m.query(
    `INSERT INTO orders (id, unit, listing_id, asset_id, collection_id, chain_id, token_address, token_id, price, seller, buyer, created_at, updated_at)
     SELECT o.id, 1, o.listing_id, o.asset_id, o.collection_id, o.chain_id, o.token_address, o.token_id::numeric, o.price::numeric, o.seller, $10, $11, $11
     FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[])
       AS o(id, listing_id, asset_id, collection_id, chain_id, token_address, token_id, price, seller)`,
    [
      sales.map((s) => s.orderId),
      listingIds,
      assetIds,
      column('collectionId'),
      column('chainId'),
      column('tokenAddress'),
      column('tokenId'),
      sales.map((s) => s.price),
      column('seller'),
      buyer,
      now,
    ],
  );
  for (const { orderId, listing, price } of sales) {
    const sale = { order_id: orderId, price };
    events.add('listing.sold', 'listing', listing.id, sale);
    events.add('asset.transferred', 'asset', listing.assetId, { previous_owner: listing.seller, ...sale, offer_id: null, listing_id: listing.id });
    for (const own of ownOffers) if (own.assetId === listing.assetId) events.add('offer.cancelled', 'offer', own.id, { reason: 'the taker owns the asset now' });
    events.add('order.completed', 'order', orderId);
  }
}
