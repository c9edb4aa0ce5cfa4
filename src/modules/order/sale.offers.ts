import { EntityManager } from 'typeorm';
import { ConflictError } from '../../common/errors';
import { updateReturning } from '../../common/sql';
import { OfferKind } from '../offer/offer.types';
import type { EventSink, Selling } from './sale.types';

/**
 * What sales do to offers: each sale to an offer fills one of its units, or reserves one while the sale
 * awaits the chain, under the offer's row lock; and a sale ends the offers it makes pointless (the buyer's
 * own on the asset, the other bids of an english auction it sells).
 */

/** What one sale ends besides its listing (endOtherOffers). */
export interface SaleEnding {
  assetId: string;
  buyer: string;
  /** The offer the sale filled, which stays as the sale left it. */
  offerId: string | null;
  /** The type of the listing it sold: an english auction's other bids end with it. */
  orderType: string | null;
  events: EventSink;
}

/**
 * What sales end besides their listings, once the buyers hold the assets, in one statement: each buyer's
 * own other offers on the asset (one does not bid for what one owns), and the other bids of an english
 * auction sold. Each sale's `offer.cancelled` events go to its own sink, its buyer's offers first.
 */
export async function endOtherOffers(m: EntityManager, endings: readonly SaleEnding[], now: Date): Promise<void> {
  if (!endings.length) return;
  const cancelled = await updateReturning<{ id: string; n: number; own: boolean }>(
    m,
    `UPDATE offers o SET status = 'cancelled', updated_at = $1
     FROM unnest($2::uuid[], $3::text[], $4::uuid[], $5::boolean[]) WITH ORDINALITY v(asset_id, buyer, offer_id, ends_auction, n)
     WHERE o.asset_id = v.asset_id AND o.status = 'active' AND o.end_time > $1 AND o.id IS DISTINCT FROM v.offer_id AND (o.taker = v.buyer OR v.ends_auction)
     RETURNING o.id, v.n::int AS n, o.taker = v.buyer AS own`,
    [now, endings.map((e) => e.assetId), endings.map((e) => e.buyer), endings.map((e) => e.offerId), endings.map((e) => e.orderType === 'english_auction')],
  );
  for (const own of [true, false]) {
    for (const offer of cancelled.filter((c) => c.own === own).sort((a, b) => a.n - b.n)) {
      const reason = own ? 'the taker owns the asset now' : 'the english auction ended in a sale to another bid';
      endings[offer.n - 1].events.add('offer.cancelled', 'offer', offer.id, { reason });
    }
  }
}

/** The offers of the batch's sales, with the moment each offer's window must hold. */
function offersOf(batch: readonly Selling[], now: Date): { sales: Selling[]; ids: string[]; at: Date[] } {
  const sales = batch.filter((s) => s.offer);
  return { sales, ids: sales.map((s) => s.offer!.id), at: sales.map((s) => s.terms?.offerAt ?? now) };
}

/** The condition of an offer `o` that can still fill or reserve a unit at `v.at`. */
const OFFER_OPEN = `o.status = 'active' AND o.end_time > v.at AND o.start_time <= v.at AND o.filled + o.reserved < o.quantity`;

/**
 * One unit of each offer is reserved for a pending order, under the offer's row lock (409 when one is no
 * longer active or every unit is filled or reserved); each order takes the lowest unit no other live order
 * holds (a failed order's unit is free again). By order id.
 */
export async function reserveOfferUnits(m: EntityManager, batch: readonly Selling[], now: Date): Promise<Map<string, number>> {
  const offers = offersOf(batch, now);
  if (!offers.sales.length) return new Map();
  const reserved = await updateReturning<{ id: string }>(
    m,
    `UPDATE offers o SET reserved = o.reserved + 1, updated_at = $1 FROM unnest($2::uuid[], $3::timestamptz[]) v(id, at)
     WHERE o.id = v.id AND ${OFFER_OPEN} RETURNING o.id`,
    [now, offers.ids, offers.at],
  );
  const missing = offers.ids.find((id) => !reserved.some((r) => r.id === id));
  if (missing) throw new ConflictError(`offer ${missing} is no longer active, or its units are all filled or reserved by pending orders`);
  // A statement of its own, after the locks: it sees the orders that racing reservations committed meanwhile.
  const units: { id: string; unit: number }[] = await m.query(
    `SELECT o.id, min(u)::int AS unit FROM offers o, generate_series(1, o.quantity) u
     WHERE o.id = ANY($1::uuid[]) AND NOT EXISTS (SELECT 1 FROM orders r WHERE r.offer_id = o.id AND r.unit = u AND r.status <> 'failed') GROUP BY o.id`,
    [offers.ids],
  );
  const byOffer = new Map(units.map((u) => [u.id, u.unit]));
  return new Map(offers.sales.map((s) => [s.orderId, byOffer.get(s.offer!.id)!]));
}

/**
 * Each offer fills one more unit (accepted when its quantity is filled), under its row lock, so concurrent
 * acceptances fill each unit once; 409 when one is no longer active. The units filled, by order id.
 */
export async function fillOfferUnits(m: EntityManager, batch: readonly Selling[], now: Date): Promise<Map<string, number>> {
  const offers = offersOf(batch, now);
  if (!offers.sales.length) return new Map();
  const filled = await updateReturning<{ id: string; filled: number; status: string }>(
    m,
    `UPDATE offers o SET filled = o.filled + 1, status = CASE WHEN o.filled + 1 >= o.quantity THEN 'accepted' ELSE o.status END, updated_at = $1
     FROM unnest($2::uuid[], $3::timestamptz[]) v(id, at)
     WHERE o.id = v.id AND ${OFFER_OPEN} RETURNING o.id, o.filled, o.status`,
    [now, offers.ids, offers.at],
  );
  const byOffer = new Map(filled.map((f) => [f.id, f]));
  const units = new Map<string, number>();
  for (const s of offers.sales) {
    const unit = byOffer.get(s.offer!.id);
    if (!unit) throw new ConflictError(`offer ${s.offer!.id} is no longer active`);
    offerFilled(s.events, { offerId: s.offer!.id, kind: s.offer!.kind, unit: unit.filled, status: unit.status, assetId: s.asset.id, orderId: s.orderId });
    units.set(s.orderId, unit.filled);
  }
  return units;
}

/** The events of a unit sold to an offer: `offer.filled` (collection and trait offers), `offer.accepted` when its last unit is. */
export function offerFilled(
  events: EventSink,
  fill: { offerId: string; kind: string; unit: number; status: string; assetId: string; orderId: string },
  extra: Record<string, unknown> = {},
): void {
  if (fill.kind !== OfferKind.ITEM) events.add('offer.filled', 'offer', fill.offerId, { unit: fill.unit, asset_id: fill.assetId, order_id: fill.orderId, ...extra });
  if (fill.status === 'accepted') events.add('offer.accepted', 'offer', fill.offerId, { order_id: fill.orderId, ...extra });
}
