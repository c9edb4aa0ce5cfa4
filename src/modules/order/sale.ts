import { randomUUID } from 'node:crypto';
import { EntityManager } from 'typeorm';
import { ConflictError } from '../../common/errors';
import { updateReturning } from '../../common/sql';
import type { EventLog } from '../event/event.log';
import { OfferKind } from '../offer/offer.types';
import type { Offer } from '../offer/offer.types';

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
 * listing it names (its order has unit 1, no offer, and that listing). Returns the order id.
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
  const [shown] = await m.query('SELECT address, symbol, decimals FROM currencies WHERE chain_id = $1 AND address = $2', [asset.chainId, currency]);
  const sale = { order_id: orderId, price };
  const unit = offer ? await fillOfferUnit(m, events, offer, asset, now, terms, orderId) : 1;
  // An expired listing's expiry event is written unless the sweeper wrote it already (see expireStaleListings).
  const [sold] = await updateReturning<{ id: string; status: string; swept: boolean; orderType: string }>(
    m,
    `WITH held AS (SELECT id, expiry_swept FROM listings WHERE asset_id = $1 AND status = 'active' FOR UPDATE)
     UPDATE listings l SET status = CASE WHEN l.closing_date <= $2 AND l.id IS DISTINCT FROM $3::uuid THEN 'expired' ELSE 'sold' END,
       expiry_swept = l.expiry_swept OR COALESCE(l.closing_date <= $2, false), updated_at = $2
     FROM held WHERE l.id = held.id RETURNING l.id, l.status, held.expiry_swept AS swept, l.order_type AS "orderType"`,
    [asset.id, now, terms.settles ?? null],
  );
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
  const ownOffers = await updateReturning<{ id: string }>(
    m,
    `UPDATE offers SET status = 'cancelled', updated_at = $3
     WHERE asset_id = $1 AND taker = $2 AND status = 'active' AND end_time > $3 AND id IS DISTINCT FROM $4::uuid RETURNING id`,
    [asset.id, taker.taker, now, offer?.id ?? null],
  );
  for (const own of ownOffers) events.add('offer.cancelled', 'offer', own.id, { reason: 'the taker owns the asset now' });
  if (soldListing?.orderType === 'english_auction') {
    const outbid = await updateReturning<{ id: string }>(
      m,
      `UPDATE offers SET status = 'cancelled', updated_at = $2 WHERE asset_id = $1 AND status = 'active' AND end_time > $2 RETURNING id`,
      [asset.id, now],
    );
    for (const bid of outbid) events.add('offer.cancelled', 'offer', bid.id, { reason: 'the english auction ended in a sale to another bid' });
  }
  const [order] = await m.query(
    `INSERT INTO orders (id, offer_id, unit, listing_id, asset_id, collection_id, chain_id, token_address, token_id, price, seller, buyer, created_at, updated_at, currency)
     VALUES ($13, $1, $2, $3, $4, $5, $6, $7, $8::numeric, $9::numeric, $10, $11, $12, $12, $14) RETURNING id`,
    [offer?.id ?? null, unit, soldListing?.id ?? null, asset.id, asset.collectionId, asset.chainId, asset.tokenAddress, asset.tokenId, price, seller, taker.taker, now, orderId,
      currency],
  );
  events.add('order.completed', 'order', order.id);
  return order.id;
}

/**
 * The offer fills one more unit (accepted when its quantity is filled), under its row lock, so concurrent
 * acceptances fill each unit once; 409 when it is no longer active. Returns the unit filled.
 */
async function fillOfferUnit(m: EntityManager, events: EventLog, offer: SaleOffer, asset: SaleAsset, now: Date, terms: SaleTerms, orderId: string): Promise<number> {
  const [unit] = await updateReturning<{ filled: number; status: string }>(
    m,
    `UPDATE offers SET filled = filled + 1, status = CASE WHEN filled + 1 >= quantity THEN 'accepted' ELSE status END, updated_at = $2
     WHERE id = $1 AND status = 'active' AND end_time > $3 AND start_time <= $3 AND filled < quantity RETURNING filled, status`,
    [offer.id, now, terms.offerAt ?? now],
  );
  if (!unit) throw new ConflictError(`offer ${offer.id} is no longer active`);
  if (offer.kind !== OfferKind.ITEM) events.add('offer.filled', 'offer', offer.id, { unit: unit.filled, asset_id: asset.id, order_id: orderId });
  if (unit.status === 'accepted') events.add('offer.accepted', 'offer', offer.id, { order_id: orderId });
  return unit.filled;
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
