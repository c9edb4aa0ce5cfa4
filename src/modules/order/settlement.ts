import { DataSource, EntityManager } from 'typeorm';
import { PendingSettlements, settlementsCompleted, settlementsFailed, settlementsReopened } from '../../common/metrics';
import { updateReturning } from '../../common/sql';
import { AssetStatus } from '../asset/asset.entity';
import { setAssetsStatus } from '../asset/asset.status';
import type { EventLog } from '../event/event.log';
import { APPROVAL_REVOKED, sellerRevokedSql } from '../listing/listing.approval';
import { saleCurrency } from './sale';
import { endOtherOffers, offerFilled } from './sale.offers';
import { settlement } from './settlement.settings';

/**
 * Settlement on chain (SETTLEMENT=chain, docs/chain.md "Settlement on chain"): a pending order is completed
 * by the transfer of its token from seller to buyer that the follower applies, fails at its deadline or when
 * the token goes elsewhere, and goes back to pending when a reorg undoes the transfer that completed it.
 * Each function works inside the caller's transaction (the follower's step, the sweeper's), with its events.
 */

/** A transfer the follower applied (or a reorg undid), as settlement reads it (addresses in lower case). */
export interface SettlingTransfer {
  assetId: string;
  from: string;
  to: string;
  blockNumber: string;
  txHash: string;
  logIndex: number;
}

/** Why a pending order failed (`order.failed`'s `reason`). */
export type FailureReason = 'deadline_passed' | 'transferred_elsewhere';

interface PendingOrder {
  id: string;
  offerId: string | null;
  listingId: string | null;
  assetId: string;
  chainId: string;
  unit: number;
  price: string;
  currencyAddress: string;
  seller: string;
  buyer: string;
}

const ORDER_COLUMNS = `r.id, r.offer_id AS "offerId", r.listing_id AS "listingId", r.asset_id AS "assetId", r.chain_id AS "chainId", r.unit,
  r.price::text AS price, r.currency AS "currencyAddress", r.seller, r.buyer`;

const onChainOf = (t: SettlingTransfer) => ({ block_number: t.blockNumber, transaction_hash: t.txHash, log_index: t.logIndex });

/**
 * After a step's transfers are applied (in chain order): a pending order of a token they moved is completed
 * by a transfer from its seller to its buyer, and fails by a transfer to anyone else (a transfer to the
 * seller leaves it waiting). One statement when no order waits.
 */
export async function settleByTransfers(m: EntityManager, events: EventLog, applied: readonly SettlingTransfer[], now: Date): Promise<void> {
  if (!applied.length) return;
  const pending: PendingOrder[] = await m.query(
    `SELECT ${ORDER_COLUMNS} FROM orders r WHERE r.status = 'pending' AND r.asset_id = ANY($1::uuid[]) FOR UPDATE`,
    [[...new Set(applied.map((t) => t.assetId))]],
  );
  const waiting = new Map(pending.map((o) => [o.assetId, o]));
  for (const t of applied) {
    const order = waiting.get(t.assetId);
    if (!order || t.to === order.seller) continue;
    waiting.delete(t.assetId);
    if (t.from === order.seller && t.to === order.buyer) await completeOrder(m, events, order, t, now);
    else await failOrder(m, events, order, now, 'transferred_elsewhere', onChainOf(t));
  }
}

/**
 * The transfer from seller to buyer is on chain: the order is completed (with the transfer), its listing
 * sold and its offer's unit filled, and the buyer's other offers on the asset (and an english auction's
 * other bids) end, as an offchain sale does at once. The follower has moved the owner already.
 */
async function completeOrder(m: EntityManager, events: EventLog, order: PendingOrder, t: SettlingTransfer, now: Date): Promise<void> {
  const onChain = onChainOf(t);
  await m.query(
    `UPDATE orders SET status = 'completed', settlement_tx_hash = $2, settlement_block_number = $3, settlement_log_index = $4, updated_at = $5 WHERE id = $1`,
    [order.id, t.txHash, t.blockNumber, t.logIndex, now],
  );
  let orderType: string | null = null;
  if (order.listingId) {
    const [sold] = await updateReturning<{ orderType: string }>(
      m,
      `UPDATE listings SET status = 'sold', updated_at = $2 WHERE id = $1 AND status = 'pending' RETURNING order_type AS "orderType"`,
      [order.listingId, now],
    );
    if (sold) {
      orderType = sold.orderType;
      const shown = await saleCurrency(m, order.chainId, order.currencyAddress);
      events.add('listing.sold', 'listing', order.listingId, { order_id: order.id, price: order.price, sale_currency: shown, ...onChain });
    }
  }
  if (order.offerId) {
    const [fill] = await updateReturning<{ kind: string; status: string }>(
      m,
      `UPDATE offers SET reserved = reserved - 1, filled = filled + 1,
         status = CASE WHEN filled + 1 >= quantity AND status = 'active' THEN 'accepted' ELSE status END, updated_at = $2
       WHERE id = $1 RETURNING kind, status`,
      [order.offerId, now],
    );
    offerFilled(events, { offerId: order.offerId, kind: fill.kind, unit: order.unit, status: fill.status, assetId: order.assetId, orderId: order.id }, onChain);
  }
  await endOtherOffers(m, [{ assetId: order.assetId, buyer: order.buyer, offerId: order.offerId, orderType, events }], now);
  events.add('order.completed', 'order', order.id, onChain);
  events.afterCommit(() => settlementsCompleted.inc());
}

/**
 * The order fails: its offer's unit is free again (`offer.released` when the offer can still be accepted),
 * and its listing is active again when its seller still owns the token, its closing date is ahead, the
 * asset has no other active listing and the seller has not revoked the chain's operator (listing.approval.ts);
 * expired when it closed meanwhile, inactive (with its reason) otherwise.
 */
async function failOrder(m: EntityManager, events: EventLog, order: PendingOrder, now: Date, reason: FailureReason, extra: Record<string, unknown>): Promise<void> {
  await m.query(`UPDATE orders SET status = 'failed', updated_at = $2 WHERE id = $1`, [order.id, now]);
  const why = { order_id: order.id, reason, ...extra };
  if (order.offerId) {
    const [offer] = await updateReturning<{ open: boolean }>(
      m,
      `UPDATE offers SET reserved = reserved - 1, updated_at = $2 WHERE id = $1 RETURNING status = 'active' AND end_time > $2 AS open`,
      [order.offerId, now],
    );
    if (offer.open) events.add('offer.released', 'offer', order.offerId, why);
  }
  if (order.listingId) await releaseListing(m, events, order.listingId, now, why);
  events.add('order.failed', 'order', order.id, { reason, ...extra });
  events.afterCommit(() => settlementsFailed.inc({ reason }));
}

async function releaseListing(m: EntityManager, events: EventLog, listingId: string, now: Date, why: Record<string, unknown>): Promise<void> {
  const relisted = `EXISTS (SELECT 1 FROM listings o WHERE o.asset_id = l.asset_id AND o.status = 'active')`;
  // A seller who revoked the operator meanwhile could not deliver: inactive as the follower would have made it.
  const revoked = `EXISTS (SELECT 1 FROM chain_sync s WHERE s.chain_id = a.chain_id AND ${sellerRevokedSql('l.seller')})`;
  const [released] = await updateReturning<{ status: string; assetId: string }>(
    m,
    `UPDATE listings l SET
       status = CASE WHEN l.closing_date <= $2 THEN 'expired' WHEN l.seller <> a.owner OR ${relisted} OR ${revoked} THEN 'inactive' ELSE 'active' END,
       inactive_reason = CASE WHEN l.closing_date <= $2 THEN NULL WHEN l.seller <> a.owner THEN 'owner_changed' WHEN ${relisted} THEN 'relisted'
         WHEN ${revoked} THEN $3 END,
       expiry_swept = l.expiry_swept OR COALESCE(l.closing_date <= $2, false), updated_at = $2
     FROM assets a WHERE l.id = $1 AND l.status = 'pending' AND a.id = l.asset_id RETURNING l.status, l.asset_id AS "assetId"`,
    [listingId, now, APPROVAL_REVOKED],
  );
  if (!released) return;
  if (released.status === 'active') {
    await setAssetsStatus(m, [released.assetId], AssetStatus.LISTED, now);
    events.add('listing.reactivated', 'listing', listingId, why);
  } else if (released.status === 'inactive') {
    events.add('listing.inactivated', 'listing', listingId, why);
  } else {
    events.add('listing.expired', 'listing', listingId, why);
  }
}

/**
 * Pending orders whose deadline has passed fail (the expiry sweeper, up to `limit`, the earliest first).
 * Orders whose asset or row another transaction holds are skipped: the follower may be completing them.
 */
export async function failOverdueSettlements(m: EntityManager, events: EventLog, now: Date, limit: number): Promise<number> {
  const due: PendingOrder[] = await m.query(
    `SELECT ${ORDER_COLUMNS} FROM orders r JOIN assets a ON a.id = r.asset_id
     WHERE r.status = 'pending' AND r.settlement_deadline <= $1 ORDER BY r.settlement_deadline LIMIT $2 FOR UPDATE OF r, a SKIP LOCKED`,
    [now, limit],
  );
  for (const order of due) await failOrder(m, events, order, now, 'deadline_passed', {});
  return due.length;
}

/**
 * A reorg undid these transfers (the follower restored the owners): an order one of them completed is
 * pending again (`order.pending` with `reason: reorg` and the undone transfer), its listing held again and
 * its offer's unit reserved again, until the transfer is seen on the new branch or its deadline, which is
 * at least SETTLEMENT_DEADLINE from now.
 */
export async function unsettleByTransfers(m: EntityManager, events: EventLog, chainId: string, undone: readonly SettlingTransfer[], now: Date): Promise<void> {
  if (!undone.length) return;
  const completed: (PendingOrder & { txHash: string; logIndex: number })[] = await m.query(
    `SELECT ${ORDER_COLUMNS}, r.settlement_tx_hash AS "txHash", r.settlement_log_index AS "logIndex" FROM orders r
     WHERE r.chain_id = $1 AND r.settlement_tx_hash = ANY($2::text[]) AND r.status = 'completed' FOR UPDATE`,
    [chainId, undone.map((t) => t.txHash)],
  );
  const deadline = new Date(now.getTime() + settlement.deadlineSeconds * 1000);
  for (const order of completed) {
    const t = undone.find((u) => u.txHash === order.txHash && u.logIndex === order.logIndex);
    if (!t) continue;
    const why = { reason: 'reorg', ...onChainOf(t) };
    await m.query(
      `UPDATE orders SET status = 'pending', settlement_tx_hash = NULL, settlement_block_number = NULL, settlement_log_index = NULL,
         settlement_deadline = GREATEST(settlement_deadline, $2), updated_at = $3 WHERE id = $1`,
      [order.id, deadline, now],
    );
    if (order.listingId) {
      const held = await updateReturning<{ id: string }>(m, `UPDATE listings SET status = 'pending', updated_at = $2 WHERE id = $1 AND status = 'sold' RETURNING id`, [
        order.listingId,
        now,
      ]);
      if (held.length) events.add('listing.pending', 'listing', order.listingId, { order_id: order.id, ...why });
    }
    if (order.offerId) {
      await m.query(
        `UPDATE offers SET filled = filled - 1, reserved = reserved + 1, status = CASE WHEN status = 'accepted' THEN 'active' ELSE status END, updated_at = $2
         WHERE id = $1`,
        [order.offerId, now],
      );
    }
    events.add('order.pending', 'order', order.id, why);
    events.afterCommit(() => settlementsReopened.inc());
  }
}

/** The pending orders of the database, for /metrics: how many, and when the oldest was written. One statement. */
export async function pendingSettlements(ds: DataSource): Promise<PendingSettlements> {
  const [row] = await ds.query(`SELECT count(*)::int AS pending, min(created_at) AS oldest FROM orders WHERE status = 'pending'`);
  return { pending: row.pending, oldestCreatedAt: row.oldest ? new Date(row.oldest) : null };
}
