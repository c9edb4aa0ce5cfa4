import { randomUUID } from 'node:crypto';
import { EntityManager } from 'typeorm';
import { ConflictError } from '../../common/errors';
import { updateReturning } from '../../common/sql';
import type { EventLog } from '../event/event.log';
import { OfferKind } from '../offer/offer.types';
import type { Offer } from '../offer/offer.types';
import { settlement } from './settlement.settings';

/** The asset of a sale: the one an item offer names, or the one an owner sells to a collection or trait offer. */
export interface SaleAsset {
  id: string;
  collectionId: string;
  chainId: string;
  tokenAddress: string;
  tokenId: string;
}

/** What a sale needs of the offer it fills. */
export type SaleOffer = Pick<Offer, 'id' | 'kind' | 'taker' | 'price' | 'currencyAddress'>;

/** A buy now: the taker buys the asset's active listing `listingId` at `price`, with no offer (the order's offer is null). */
export interface SaleBuy {
  buy: true;
  listingId: string;
  taker: string;
  price: string;
  /** The listing's currency, which a buy pays in. */
  currencyAddress: string;
}

const isBuy = (taker: SaleOffer | SaleBuy): taker is SaleBuy => 'buy' in taker;

/** How a sale departs from an owner's plain acceptance at the offer's price. */
export interface SaleTerms {
  /** The price paid; the offer's price unless the listing sets it (an offer taken at once pays the listing's price). */
  price?: string;
  /** The moment the offer's window must hold; now unless an english auction's close settles it. */
  offerAt?: Date;
  /** The closed english auction this sale settles: it is sold, not expired, though its closing date has passed. */
  settles?: string;
}

/**
 * The sale of one unit, inside the caller's transaction with the asset row already locked: the offer fills
 * one more unit (and becomes accepted when its quantity is filled), the asset passes to the taker and is
 * unlisted, an active listing is sold (an expired one marked expired), the taker's own other offers on the
 * asset are cancelled (one does not bid for what one owns), so are the other bids of an english auction it
 * ends, and a completed order records price, seller, buyer and unit. The offer's row is updated under its
 * lock, so concurrent acceptances fill each unit once. A buy (SaleBuy) fills no offer: it must sell the
 * listing it names (its order has unit 1, no offer, and that listing). With settlement on chain
 * (SETTLEMENT=chain) the sale is only reserved here (reserveSale): its order is pending until the follower
 * sees the transfer (settlement.ts). Returns the order id.
 */
export async function completeSale(
  m: EntityManager,
  events: EventLog,
  taker: SaleOffer | SaleBuy,
  asset: SaleAsset,
  seller: string,
  now: Date,
  terms: SaleTerms = {},
): Promise<string> {
  const offer = isBuy(taker) ? null : taker;
  if (seller === taker.taker) throw offer ? selfTrade(offer, asset) : selfBuy(taker.taker, asset);
  // The order's id is chosen here so the sale's events can name it (history reads them alone).
  const orderId = randomUUID();
  const price = terms.price ?? taker.price;
  // An offer pays in its own currency (a listing that sets the price is in it, see createOffer); a buy in the listing's.
  const currency = taker.currencyAddress;
  const shown = await saleCurrency(m, asset.chainId, currency);
  if (settlement.onChain) return reserveSale(m, events, { taker, asset, seller, now, terms, orderId, price, currency, shown });
  const sale = { order_id: orderId, price };
  const unit = offer ? await fillOfferUnit(m, events, offer, asset, now, terms, orderId) : 1;
  const [sold] = await closeListing(m, asset.id, now, terms, 'sold');
  const soldListing = sold?.status === 'sold' ? sold : null;
  if (isBuy(taker) && soldListing?.id !== taker.listingId) throw new ConflictError(`listing ${taker.listingId} is no longer active`);
  // The listing's own `currency` stays in its data; the sale's (another one when an owner accepts an offer in it) is beside the price.
  if (soldListing) events.add('listing.sold', 'listing', soldListing.id, { ...sale, sale_currency: shown });
  else if (sold && !sold.swept) events.add('listing.expired', 'listing', sold.id);
  await m.query(`UPDATE assets SET owner = $2, status = 'unlisted', updated_at = $3 WHERE id = $1`, [asset.id, taker.taker, now]);
  events.add('asset.transferred', 'asset', asset.id, {
    previous_owner: seller,
    ...sale,
    currency: shown,
    offer_id: offer?.id ?? null,
    listing_id: soldListing?.id ?? null,
  });
  await endOtherOffers(m, events, asset.id, taker.taker, offer?.id ?? null, soldListing?.orderType ?? null, now);
  await insertOrder(m, { id: orderId, offerId: offer?.id ?? null, unit, listingId: soldListing?.id ?? null, asset, price, currency, seller, buyer: taker.taker, now, deadline: null });
  events.add('order.completed', 'order', orderId);
  return orderId;
}

/**
 * The asset's active listing ends with the sale, its row locked: `status` (sold, or pending while the sale
 * awaits the chain), or expired when its closing date has passed (unless it is the english auction the
 * sale settles). Returns it, with whether the expiry sweeper wrote its expiry already.
 */
async function closeListing(m: EntityManager, assetId: string, now: Date, terms: SaleTerms, status: 'sold' | 'pending') {
  return updateReturning<{ id: string; status: string; swept: boolean; orderType: string }>(
    m,
    `WITH held AS (SELECT id, expiry_swept FROM listings WHERE asset_id = $1 AND status = 'active' FOR UPDATE)
     UPDATE listings l SET status = CASE WHEN l.closing_date <= $2 AND l.id IS DISTINCT FROM $3::uuid THEN 'expired' ELSE $4::varchar END,
       expiry_swept = l.expiry_swept OR COALESCE(l.closing_date <= $2, false), updated_at = $2
     FROM held WHERE l.id = held.id RETURNING l.id, l.status, held.expiry_swept AS swept, l.order_type AS "orderType"`,
    [assetId, now, terms.settles ?? null, status],
  );
}

/**
 * What a sale ends besides its listing, once the buyer holds the asset: the buyer's own other offers on it
 * (one does not bid for what one owns), and the other bids of the english auction it sold.
 */
export async function endOtherOffers(m: EntityManager, events: EventLog, assetId: string, buyer: string, offerId: string | null, orderType: string | null, now: Date): Promise<void> {
  const ownOffers = await updateReturning<{ id: string }>(
    m,
    `UPDATE offers SET status = 'cancelled', updated_at = $3
     WHERE asset_id = $1 AND taker = $2 AND status = 'active' AND end_time > $3 AND id IS DISTINCT FROM $4::uuid RETURNING id`,
    [assetId, buyer, now, offerId],
  );
  for (const own of ownOffers) events.add('offer.cancelled', 'offer', own.id, { reason: 'the taker owns the asset now' });
  if (orderType !== 'english_auction') return;
  const outbid = await updateReturning<{ id: string }>(
    m,
    `UPDATE offers SET status = 'cancelled', updated_at = $2 WHERE asset_id = $1 AND status = 'active' AND end_time > $2 AND id IS DISTINCT FROM $3::uuid RETURNING id`,
    [assetId, now, offerId],
  );
  for (const bid of outbid) events.add('offer.cancelled', 'offer', bid.id, { reason: 'the english auction ended in a sale to another bid' });
}

interface NewOrder {
  id: string;
  offerId: string | null;
  unit: number;
  listingId: string | null;
  asset: SaleAsset;
  price: string;
  /** The address of the price's currency (the native one: 0x000…0). */
  currency: string;
  seller: string;
  buyer: string;
  now: Date;
  /** Set for a sale that awaits the chain (the order is pending until then); null for a completed one. */
  deadline: Date | null;
}

async function insertOrder(m: EntityManager, o: NewOrder): Promise<void> {
  const { asset } = o;
  await m.query(
    `INSERT INTO orders (id, offer_id, unit, listing_id, asset_id, collection_id, chain_id, token_address, token_id, price, seller, buyer, created_at, updated_at,
       status, settlement_deadline, currency)
     VALUES ($13, $1, $2, $3, $4, $5, $6, $7, $8::numeric, $9::numeric, $10, $11, $12, $12, $14, $15, $16)`,
    [o.offerId, o.unit, o.listingId, asset.id, asset.collectionId, asset.chainId, asset.tokenAddress, asset.tokenId, o.price, o.seller, o.buyer, o.now, o.id,
      o.deadline ? 'pending' : 'completed', o.deadline, o.currency],
  );
}

/**
 * A sale that awaits the chain (SETTLEMENT=chain): the order is written pending until its deadline, the
 * listing is held (`pending`) and a unit of the offer reserved, so nothing sells the asset again; the owner
 * stays the seller until the follower sees the transfer (settlement.ts completes or fails it).
 */
async function reserveSale(
  m: EntityManager,
  events: EventLog,
  sale: { taker: SaleOffer | SaleBuy; asset: SaleAsset; seller: string; now: Date; terms: SaleTerms; orderId: string; price: string; currency: string; shown: unknown },
): Promise<string> {
  const { taker, asset, seller, now, terms, orderId, price, currency, shown } = sale;
  const offer = isBuy(taker) ? null : taker;
  await checkNotReserved(m, asset);
  const unit = offer ? await reserveOfferUnit(m, offer, now, terms) : 1;
  const [closed] = await closeListing(m, asset.id, now, terms, 'pending');
  const held = closed?.status === 'pending' ? closed : null;
  if (isBuy(taker) && held?.id !== taker.listingId) throw new ConflictError(`listing ${taker.listingId} is no longer active`);
  if (held) events.add('listing.pending', 'listing', held.id, { order_id: orderId, price, sale_currency: shown });
  else if (closed && !closed.swept) events.add('listing.expired', 'listing', closed.id);
  await m.query(`UPDATE assets SET status = 'unlisted', updated_at = $2 WHERE id = $1`, [asset.id, now]);
  const deadline = new Date(now.getTime() + settlement.deadlineSeconds * 1000);
  await insertOrder(m, { id: orderId, offerId: offer?.id ?? null, unit, listingId: held?.id ?? null, asset, price, currency, seller, buyer: taker.taker, now, deadline });
  events.add('order.pending', 'order', orderId);
  return orderId;
}

/** A sale's currency as events show it ({address, symbol, decimals}, as the API does). */
export async function saleCurrency(m: EntityManager, chainId: string, address: string): Promise<unknown> {
  const [shown] = await m.query('SELECT address, symbol, decimals FROM currencies WHERE chain_id = $1 AND address = $2', [chainId, address]);
  return shown;
}

/** The pending orders (sales that await their transfer on chain) of these assets, by asset id. */
export async function pendingOrdersOf(m: EntityManager, assetIds: readonly string[]): Promise<Map<string, { id: string; deadline: Date }>> {
  const rows: { assetId: string; id: string; deadline: Date }[] = await m.query(
    `SELECT asset_id AS "assetId", id, settlement_deadline AS deadline FROM orders WHERE asset_id = ANY($1::uuid[]) AND status = 'pending'`,
    [assetIds],
  );
  return new Map(rows.map(({ assetId, ...order }) => [assetId, order]));
}

/** The 409 of an asset reserved by a pending order: neither sold nor listed again until the order completes or fails. */
export function reservedError(asset: Pick<SaleAsset, 'tokenAddress' | 'tokenId'>, waiting: { id: string; deadline: Date }): ConflictError {
  return new ConflictError(
    `asset ${asset.tokenAddress}/${asset.tokenId} is reserved by order ${waiting.id}, which awaits its transfer on chain until ${waiting.deadline.toISOString()}`,
  );
}

/**
 * 409 when a sale of the asset awaits its transfer on chain (an order pending): the asset is reserved for
 * it, neither sold nor listed again until the order completes or fails. Inside the caller's transaction,
 * the asset locked.
 */
export async function checkNotReserved(m: EntityManager, asset: Pick<SaleAsset, 'id' | 'tokenAddress' | 'tokenId'>): Promise<void> {
  const waiting = (await pendingOrdersOf(m, [asset.id])).get(asset.id);
  if (waiting) throw reservedError(asset, waiting);
}

/**
 * One unit of the offer is reserved for a pending order, under the offer's row lock (409 when it is no
 * longer active or every unit is filled or reserved); the order takes the lowest unit no other live order
 * holds (a failed order's unit is free again).
 */
async function reserveOfferUnit(m: EntityManager, offer: SaleOffer, now: Date, terms: SaleTerms): Promise<number> {
  const [reserved] = await updateReturning<{ id: string }>(
    m,
    `UPDATE offers SET reserved = reserved + 1, updated_at = $2
     WHERE id = $1 AND status = 'active' AND end_time > $3 AND start_time <= $3 AND filled + reserved < quantity RETURNING id`,
    [offer.id, now, terms.offerAt ?? now],
  );
  if (!reserved) throw new ConflictError(`offer ${offer.id} is no longer active, or its units are all filled or reserved by pending orders`);
  const [{ unit }] = await m.query(
    `SELECT min(u)::int AS unit FROM offers o, generate_series(1, o.quantity) u
     WHERE o.id = $1 AND NOT EXISTS (SELECT 1 FROM orders r WHERE r.offer_id = o.id AND r.unit = u AND r.status <> 'failed')`,
    [offer.id],
  );
  return unit;
}

/**
 * The offer fills one more unit (accepted when its quantity is filled), under its row lock, so concurrent
 * acceptances fill each unit once; 409 when it is no longer active. Returns the unit filled.
 */
async function fillOfferUnit(m: EntityManager, events: EventLog, offer: SaleOffer, asset: SaleAsset, now: Date, terms: SaleTerms, orderId: string): Promise<number> {
  const [unit] = await updateReturning<{ filled: number; status: string }>(
    m,
    `UPDATE offers SET filled = filled + 1, status = CASE WHEN filled + 1 >= quantity THEN 'accepted' ELSE status END, updated_at = $2
     WHERE id = $1 AND status = 'active' AND end_time > $3 AND start_time <= $3 AND filled + reserved < quantity RETURNING filled, status`,
    [offer.id, now, terms.offerAt ?? now],
  );
  if (!unit) throw new ConflictError(`offer ${offer.id} is no longer active`);
  offerFilled(events, { offerId: offer.id, kind: offer.kind, unit: unit.filled, status: unit.status, assetId: asset.id, orderId });
  return unit.filled;
}

/** The events of a unit sold to an offer: `offer.filled` (collection and trait offers), `offer.accepted` when its last unit is. */
export function offerFilled(
  events: EventLog,
  fill: { offerId: string; kind: string; unit: number; status: string; assetId: string; orderId: string },
  extra: Record<string, unknown> = {},
): void {
  if (fill.kind !== OfferKind.ITEM) events.add('offer.filled', 'offer', fill.offerId, { unit: fill.unit, asset_id: fill.assetId, order_id: fill.orderId, ...extra });
  if (fill.status === 'accepted') events.add('offer.accepted', 'offer', fill.offerId, { order_id: fill.orderId, ...extra });
}

/** An owner accepting an offer that the owner made: no sale, no order, no volume. */
export function selfTrade(offer: SaleOffer, asset: SaleAsset): ConflictError {
  return new ConflictError(
    `offer ${offer.id} was made by ${offer.taker}, who owns asset ${asset.tokenAddress}/${asset.tokenId} now; one cannot sell to oneself`,
  );
}

/** A buyer buying a listing of an asset the buyer owns: no sale, no order, no volume. */
export function selfBuy(buyer: string, asset: SaleAsset): ConflictError {
  return new ConflictError(`${buyer} owns asset ${asset.tokenAddress}/${asset.tokenId}; one cannot buy one's own listing`);
}
