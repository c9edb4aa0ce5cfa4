import { EntityManager } from 'typeorm';
import { Params } from '../../common/sql';
import { isNativeSql } from '../currency/currency.entity';

/** Microseconds from `from` to `to`, as an exact integer (numeric). */
const micros = (from: string, to: string) => `round(EXTRACT(EPOCH FROM (${to} - ${from})) * 1000000)`;

/**
 * The highest bid of an english auction standing at moment `t`: an item offer on its asset, active, at or
 * above its start price (a bid below it is refused, docs/api.md "Auctions") and in its currency, its window
 * holding `t`. Null without one.
 */
export function bestBidSql(l: string, t: string): string {
  return `(SELECT max(o.price) FROM offers o WHERE o.asset_id = ${l}.asset_id AND o.status = 'active' AND o.currency = ${l}.currency
    AND o.price >= ${l}.start_price AND o.start_time <= ${t} AND o.end_time > ${t})`;
}

/**
 * SQL for a listing's figures that depend on the moment of reading; `now` is a parameter (the clock).
 * A dutch auction falls linearly from start price at listing_time to accept price at closing_date, in
 * exact integer arithmetic on the 18-decimal unit (wei): the fall is rounded up to a whole unit, so the
 * price is rounded down to 18 decimals, and then down to its currency's decimals (USDC: 6). An english auction stands at its best bid, or its start price
 * without one.
 */
export function currentPriceSql(l: string, now: string): string {
  const total = micros(`${l}.listing_time`, `${l}.closing_date`);
  const elapsed = `LEAST(${total}, GREATEST(0, ${micros(`${l}.listing_time`, `${now}::timestamptz`)}))`;
  const fallWei = `div((${l}.start_price - ${l}.accept_price) * 1000000000000000000 * ${elapsed} + ${total} - 1, ${total})`;
  return `(CASE ${l}.order_type
    WHEN 'dutch_auction' THEN trunc(${l}.start_price - ${fallWei} * 0.000000000000000001, ${l}.currency_decimals)
    WHEN 'english_auction' THEN COALESCE(${bestBidSql(l, `${now}::timestamptz`)}, ${l}.start_price)
    ELSE ${l}.start_price END)`;
}

/** Active now: not sold or cancelled, and its closing date (if any) still ahead. */
export function isActiveListingSql(l: string, now: string): string {
  return `(${l}.status = 'active' AND (${l}.closing_date IS NULL OR ${l}.closing_date > ${now}::timestamptz))`;
}

/** A listing's status as read now: an active listing whose closing date has passed reads as expired. */
export function listingStatusSql(l: string, now: string): string {
  return `(CASE WHEN ${l}.status = 'active' AND ${l}.closing_date <= ${now}::timestamptz THEN 'expired' ELSE ${l}.status END)`;
}

/**
 * The floor of the collection `collectionId` (an SQL expression) now: its active listing in the native
 * currency (statistics are native, docs/market.md) of the lowest current price, the lowest id of equal ones, as a one-row subquery over `listings l` (`joins` may add
 * its asset `a`) selecting `columns`. The statistics' floor and `Collection.floorListing` both read it.
 */
export function floorListingSql(collectionId: string, now: string, columns: string, joins = ''): string {
  return `SELECT ${columns} FROM listings l${joins} WHERE l.collection_id = ${collectionId} AND ${isActiveListingSql('l', now)} AND ${isNativeSql('l')}
    ORDER BY ${currentPriceSql('l', now)} ASC, l.id LIMIT 1`;
}


/** The prices an offer on the asset meets, from its active listing now (none without one). */
export interface ListingTerms {
  orderType: string;
  /** The currency of its prices (an offer in another one neither takes it nor bids on it). */
  currencyAddress: string;
  /** Its currency's decimals: a bid's minimum is rounded up to them. */
  currencyDecimals: number;
  startPrice: string;
  acceptPrice: string | null;
  currentPrice: string;
  /** An english auction's best bid now; null without one (and for other order types). */
  bestBid: string | null;
}

export async function activeListingTerms(m: EntityManager, assetId: string, now: Date): Promise<ListingTerms | undefined> {
  const p = new Params();
  const nowParam = p.add(now);
  const [terms] = await m.query(
    `SELECT l.order_type AS "orderType", l.currency AS "currencyAddress", l.currency_decimals AS "currencyDecimals", l.start_price::text AS "startPrice", l.accept_price::text AS "acceptPrice",
       ${currentPriceSql('l', nowParam)}::text AS "currentPrice",
       CASE WHEN l.order_type = 'english_auction' THEN ${bestBidSql('l', `${nowParam}::timestamptz`)}::text END AS "bestBid"
     FROM listings l WHERE l.asset_id = ${p.add(assetId)} AND ${isActiveListingSql('l', nowParam)}`,
    p.values,
  );
  return terms;
}
