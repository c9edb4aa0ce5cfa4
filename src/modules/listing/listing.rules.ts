import { Problems } from '../../common/errors';
import { ADDRESS, checkPositivePrice } from '../../common/validate';
import { compareDecimals } from '../../common/decimal';
import type { StoredFee } from '../collection/collection.entity';
import { checkPriceDecimals } from '../currency/currency.service';
import type { Currency } from '../currency/currency.entity';
import { ExpirationInput, ListingOrderType } from './listing.types';

/**
 * The rules a listing request's prices, times and fees follow (README, "Listing prices"), for a create and
 * an update alike: each broken one is added to the request's problems, named by its field.
 */

/** Each price a listing request gives has at most its currency's decimals. */
export function checkListingDecimals(problems: Problems, input: { startPrice?: string | null; acceptPrice?: string | null }, currency: Currency | null): void {
  checkPriceDecimals(problems, 'startPrice', input.startPrice, currency);
  checkPriceDecimals(problems, 'acceptPrice', input.acceptPrice, currency);
}

const MAX_LISTING_SECONDS = 10 * 365 * 24 * 3600;

/** The closing date a request's expiration gives (an instant, or seconds after the listing time); null without one. */
export function closingDateOf(problems: Problems, expiration: ExpirationInput | null | undefined, listingTime: Date): Date | null {
  if (!expiration) return null;
  const hasAt = expiration.at != null;
  const hasDuration = expiration.durationSeconds != null;
  if (hasAt === hasDuration) {
    problems.add('expirationTime', 'give exactly one of at (ISO-8601) or durationSeconds');
    return null;
  }
  if (hasDuration) {
    const seconds = expiration.durationSeconds!;
    if (seconds < 1 || seconds > MAX_LISTING_SECONDS) {
      problems.add('expirationTime.durationSeconds', `must be from 1 to ${MAX_LISTING_SECONDS} seconds, got ${seconds}`);
      return null;
    }
    return new Date(listingTime.getTime() + seconds * 1000);
  }
  return expiration.at!;
}

/** The maker's fees a request gives ({address: basis points}), each checked; none without them. */
export function makerFeesOf(problems: Problems, raw: Record<string, unknown> | null | undefined): StoredFee[] {
  if (!raw) return [];
  const fees: StoredFee[] = [];
  for (const [address, bps] of Object.entries(raw)) {
    if (!ADDRESS.test(address)) problems.add(`makerFees.${address}`, 'keys must be addresses ("0x" + 40 hex digits)');
    else if (typeof bps !== 'number' || !Number.isInteger(bps) || bps < 0 || bps > 10000) {
      problems.add(`makerFees.${address}`, `basis points must be an integer from 0 to 10000, got ${JSON.stringify(bps)}`);
    } else fees.push({ address: address.toLowerCase(), basisPoints: bps });
  }
  return fees;
}

/** The terms a create or update request gives, its times resolved. */
interface RequestedTerms {
  orderType: ListingOrderType;
  /** The prices the request gives (null or undefined: not given). */
  startPrice: string | null | undefined;
  acceptPrice: string | null | undefined;
  listingTime: Date;
  closingDate: Date | null;
}

export interface ListingPrices {
  startPrice: string | null;
  acceptPrice: string | null;
}

/**
 * The price and time rules of each order type (README, "Listing prices"); returns the prices to store.
 * `stored`: the listing's prices before an update, for the ones the request leaves out.
 * - fixed_price has one price: start and accept price are equal. Given one, the other follows it; given
 *   both, they must be equal.
 * - dutch_auction falls from its start price to an accept price below it, by a closing date it must have.
 * - english_auction opens at its start price; an accept price, if any, is a buy-now price at or above it.
 */
export function checkListingTerms(problems: Problems, terms: RequestedTerms, now: Date, stored?: ListingPrices): ListingPrices {
  const { orderType, listingTime, closingDate } = terms;
  for (const field of ['startPrice', 'acceptPrice'] as const) {
    checkPositivePrice(problems, field, terms[field]);
  }
  if (closingDate) {
    if (closingDate <= listingTime) problems.add('expirationTime', 'must be after the listing time');
    else if (closingDate <= now) problems.add('expirationTime', 'must be in the future');
  }
  if (orderType === ListingOrderType.FIXED_PRICE) {
    if (terms.startPrice != null && terms.acceptPrice != null && compareDecimals(terms.startPrice, terms.acceptPrice) !== 0) {
      problems.add('acceptPrice', `a fixed-price listing has one price: give startPrice alone, or acceptPrice equal to it (got ${terms.startPrice} and ${terms.acceptPrice})`);
    }
    const price = terms.startPrice ?? terms.acceptPrice ?? stored?.startPrice ?? null;
    if (price == null) problems.add('startPrice', 'is required');
    return { startPrice: price, acceptPrice: price };
  }
  const startPrice = terms.startPrice ?? stored?.startPrice ?? null;
  const acceptPrice = terms.acceptPrice ?? stored?.acceptPrice ?? null;
  if (startPrice == null) problems.add('startPrice', 'is required');
  if (orderType === ListingOrderType.DUTCH_AUCTION) {
    if (acceptPrice == null || startPrice == null || compareDecimals(acceptPrice, startPrice) >= 0) {
      problems.add('acceptPrice', 'a dutch auction needs an acceptPrice below its startPrice');
    }
    if (!closingDate) problems.add('expirationTime', 'a dutch auction needs an expiration');
  }
  if (orderType === ListingOrderType.ENGLISH_AUCTION && acceptPrice != null && startPrice != null && compareDecimals(acceptPrice, startPrice) < 0) {
    problems.add('acceptPrice', `an english auction's acceptPrice (a buy-now price) must be at or above its startPrice, got ${acceptPrice} below ${startPrice}`);
  }
  return { startPrice, acceptPrice };
}
