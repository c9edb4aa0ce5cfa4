import { DataSource, EntityManager } from 'typeorm';
import type { Context } from '../../common/request/context';
import { clock } from '../../common/clock';
import { ConflictError, isUniqueViolation, NotFoundError, Problems, ValidationError } from '../../common/errors';
import { compareDecimals, exactDecimal } from '../../common/decimal';
import { Params } from '../../common/sql';
import { checkPositivePrice, uuidOf } from '../../common/validate';
import { EventLog, withEvents } from '../event/event.log';
import { LockedAsset, lockAsset } from '../listing/auction';
import { currentPriceSql, listingStatusSql } from '../listing/listing.sql';
import { APPROVAL_REVOKED } from '../listing/listing.approval';
import { completeSales, selfBuy } from '../order/sale';
import type { Sale } from '../order/sale.types';

/** Why a buy did not happen; the listing stays as it was. */
export type RefusalReason = 'not_active' | 'english_without_buy_now' | 'own_listing' | 'price_above_max';

export type Refusal = { refused: RefusalReason; price: string | null; message: string };

type BuyOutcome = { orderId: string; price: string } | Refusal;

/** A listing as a purchase reads it behind its asset's lock, at the purchase's moment. */
interface ListingNow {
  id: string;
  seller: string;
  orderType: string;
  status: string;
  inactiveReason: string | null;
  acceptPrice: string | null;
  currencyAddress: string;
  currentPrice: string;
}

/** A listing a purchase can buy now, at `price`: as the sale (completeSales) takes it. */
export interface Purchase {
  listingId: string;
  price: string;
  sale: Sale;
}

/** A listing to buy, and its asset as locked (lockAsset, lockAssets). */
export interface Wanted {
  listingId: string;
  asset: LockedAsset;
}

/**
 * What purchases of these listings find behind their assets' locks at `now`, in two statements at most
 * (the second only for listings no longer active, to name the order that took them): an active fixed-price
 * or dutch listing sells at its current price, an english auction at its buy-now price (accept_price;
 * refused without one); one's own listing is refused. By listing id.
 */
export async function findPurchases(m: EntityManager, wanted: readonly Wanted[], buyer: string, now: Date): Promise<Map<string, Purchase | Refusal>> {
  const p = new Params();
  const at = p.add(now);
  const rows: ListingNow[] = await m.query(
    `SELECT l.id, l.seller, l.order_type AS "orderType", ${listingStatusSql('l', at)} AS status, l.inactive_reason AS "inactiveReason", l.accept_price::text AS "acceptPrice",
       l.currency AS "currencyAddress", ${currentPriceSql('l', at)}::text AS "currentPrice"
     FROM listings l WHERE l.id = ANY(${p.add(wanted.map((w) => w.listingId))}::uuid[])`,
    p.values,
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  const found = new Map<string, Purchase | Refusal>();
  const lost: { listing: ListingNow; owner: string }[] = [];
  for (const { listingId, asset } of wanted) {
    const listing = byId.get(listingId)!;
    if (listing.status !== 'active' || listing.seller !== asset.owner) {
      lost.push({ listing, owner: asset.owner });
    } else if (listing.orderType === 'english_auction' && listing.acceptPrice === null) {
      found.set(listingId, {
        refused: 'english_without_buy_now',
        price: null,
        message: `listing ${listingId} is an english auction without a buy-now price (accept_price): bid on it with an offer instead`,
      });
    } else {
      const price = listing.orderType === 'english_auction' ? listing.acceptPrice! : listing.currentPrice;
      if (buyer === listing.seller) {
        found.set(listingId, { refused: 'own_listing', price, message: selfBuy(buyer, asset).message });
      } else {
        const taker = { buy: true as const, listingId, taker: buyer, price, currencyAddress: listing.currencyAddress };
        found.set(listingId, { listingId, price, sale: { taker, asset, seller: listing.seller, terms: { price } } });
      }
    }
  }
  for (const [listingId, message] of await whyNoLongerActive(m, lost)) found.set(listingId, { refused: 'not_active', price: null, message });
  return found;
}

/** Why each listing can no longer be bought, naming the order that took it (sold, or held while its sale awaits the chain). */
async function whyNoLongerActive(m: EntityManager, lost: readonly { listing: ListingNow; owner: string }[]): Promise<Map<string, string>> {
  if (!lost.length) return new Map();
  const orders: { listingId: string; id: string; status: string }[] = await m.query(
    `SELECT DISTINCT ON (listing_id) listing_id AS "listingId", id, status FROM orders WHERE listing_id = ANY($1::uuid[]) AND status <> 'failed' ORDER BY listing_id, id`,
    [lost.map((l) => l.listing.id)],
  );
  const orderOf = new Map(orders.map((o) => [o.listingId, o]));
  return new Map(
    lost.map(({ listing }) => {
      const order = orderOf.get(listing.id);
      const sold = order && (order.status === 'pending' ? `is held by order ${order.id}, which awaits its transfer on chain` : `was sold meanwhile (order ${order.id})`);
      const revoked = listing.status === 'inactive' && listing.inactiveReason === APPROVAL_REVOKED;
      const why =
        sold ||
        (revoked
          ? `is inactive (${APPROVAL_REVOKED}): its seller no longer approves the marketplace operator on chain; it can be bought again once the seller approves the operator`
          : listing.status !== 'active'
            ? `is ${listing.status}, not active`
            : 'is no longer active: its seller no longer owns the asset');
      return [listing.id, `listing ${listing.id} ${why}`];
    }),
  );
}

/**
 * Buys the listing now, inside the caller's transaction: behind the asset's lock (lockAsset: a due english
 * auction is settled first) the listing is read again at `now` (findPurchases) and sold through the one sale
 * path (completeSales, one sale: the order has no offer and names the listing). A refusal writes nothing.
 */
async function buyInTransaction(
  m: EntityManager,
  events: EventLog,
  listing: { id: string; assetId: string },
  buyer: string,
  now: Date,
  maxPrice: string | null,
): Promise<BuyOutcome> {
  const asset = await lockAsset(m, events, listing.assetId, now);
  const found = (await findPurchases(m, [{ listingId: listing.id, asset }], buyer, now)).get(listing.id)!;
  if ('refused' in found) return found;
  if (maxPrice !== null && compareDecimals(found.price, maxPrice) > 0) {
    return {
      refused: 'price_above_max',
      price: found.price,
      message: `listing ${listing.id} costs ${exactDecimal(found.price)} now, above the most you would pay (${exactDecimal(maxPrice)})`,
    };
  }
  const [orderId] = await completeSales(m, events, [found.sale], now);
  return { orderId, price: found.price };
}

/** A buy's transaction; a lost race on the order's unique listing is a 409. */
async function buyAlone(ds: DataSource, listing: { id: string; assetId: string }, buyer: string, now: Date, maxPrice: string | null): Promise<BuyOutcome> {
  try {
    return await withEvents(ds, (m, events) => buyInTransaction(m, events, listing, buyer, now, maxPrice));
  } catch (err) {
    if (isUniqueViolation(err)) return { refused: 'not_active', price: null, message: `listing ${listing.id} was sold meanwhile` };
    throw err;
  }
}

/**
 * Buy now: the caller buys an active listing at its current price (fixed: its price; dutch: its price at
 * this moment; english: its buy-now price, 422 without one), at most `maxPrice` (409 above it). Of
 * concurrent buys of one listing exactly one wins; the others get 409 naming the order that won. Buying
 * one's own listing is a 409, as selling to oneself is. Returns the order id.
 */
export async function buyListing(ctx: Context, listingId: string, maxPrice: string | null): Promise<string> {
  const caller = await ctx.requireCaller();
  const id = uuidOf('listingId', listingId, 'a listing');
  const problems = new Problems();
  checkPositivePrice(problems, 'maxPrice', maxPrice);
  problems.throwIfAny();
  const listing = await ctx.loaders.listingById.load(id);
  if (!listing) throw new NotFoundError(`no listing with id ${listingId}`);
  const outcome = await buyAlone(ctx.ds, listing, caller.address, clock.now(), maxPrice);
  ctx.invalidate();
  if ('orderId' in outcome) return outcome.orderId;
  if (outcome.refused === 'english_without_buy_now') throw new ValidationError([{ field: 'listingId', message: outcome.message }]);
  throw new ConflictError(outcome.message);
}
