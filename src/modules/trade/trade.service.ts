import { DataSource, EntityManager } from 'typeorm';
import type { Context } from '../../common/request/context';
import { clock } from '../../common/clock';
import { ConflictError, isUniqueViolation, NotFoundError, Problems, ValidationError } from '../../common/errors';
import { compareDecimals, exactDecimal, fromUnits, toUnits } from '../../common/decimal';
import { Params } from '../../common/sql';
import { UUID } from '../../common/validate';
import { findCollectionByRef } from '../collection/collection.service';
import { TraitFilter, traitFilterOf, traitFilterSql, traitProblems } from '../asset/asset.traits';
import { EventLog, withEvents } from '../event/event.log';
import { lockAsset } from '../listing/auction';
import { currentPriceSql, isActiveListingSql, listingStatusSql } from '../listing/listing.sql';
import { MAX_OFFER_TRAITS } from '../offer/offer.service';
import { completeSale, selfBuy } from '../order/sale';
import { ordersByIds } from '../order/order.service';
import { currencyOfRequest } from '../currency/currency.service';
import { SweepCollectionInput, SweepResult, SweepSkip, SweepSkipReason } from './trade.types';

export const MAX_SWEEP_COUNT = 50;
/** A sweep reads this many listings beyond what it still needs, so that a few skipped ones cost no further read. */
const SWEEP_LOOKAHEAD = 10;
/** A partial sweep reads again after listings were sold meanwhile; at most this many times. */
const MAX_SWEEP_ROUNDS = 10;

/** Why a buy did not happen; the listing stays as it was. */
type RefusalReason = 'not_active' | 'english_without_buy_now' | 'own_listing' | 'price_above_max';

type BuyOutcome = { orderId: string; price: string } | { refused: RefusalReason; price: string | null; message: string };

/**
 * Buys the listing now, inside the caller's transaction: behind the asset's lock (lockAsset: a due english
 * auction is settled first) the listing is read again at `now`; an active fixed-price or dutch listing
 * sells at its current price, an english auction at its buy-now price (accept_price; refused without one),
 * through completeSale (the order has no offer and names the listing). A refusal writes nothing.
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
  const p = new Params();
  const at = p.add(now);
  const [row] = await m.query(
    `SELECT l.seller, l.order_type AS "orderType", ${listingStatusSql('l', at)} AS status, l.accept_price::text AS "acceptPrice", l.currency AS "currencyAddress",
       ${currentPriceSql('l', at)}::text AS "currentPrice"
     FROM listings l WHERE l.id = ${p.add(listing.id)}`,
    p.values,
  );
  if (row.status !== 'active' || row.seller !== asset.owner) {
    const [order] = await m.query(`SELECT id, status FROM orders WHERE listing_id = $1 AND status <> 'failed' LIMIT 1`, [listing.id]);
    const sold = order && (order.status === 'pending' ? `is held by order ${order.id}, which awaits its transfer on chain` : `was sold meanwhile (order ${order.id})`);
    const why = sold || (row.status !== 'active' ? `is ${row.status}, not active` : 'is no longer active: its seller no longer owns the asset');
    return { refused: 'not_active', price: null, message: `listing ${listing.id} ${why}` };
  }
  if (row.orderType === 'english_auction' && row.acceptPrice === null) {
    return {
      refused: 'english_without_buy_now',
      price: null,
      message: `listing ${listing.id} is an english auction without a buy-now price (accept_price): bid on it with an offer instead`,
    };
  }
  const price: string = row.orderType === 'english_auction' ? row.acceptPrice : row.currentPrice;
  if (buyer === row.seller) return { refused: 'own_listing', price, message: selfBuy(buyer, asset).message };
  if (maxPrice !== null && compareDecimals(price, maxPrice) > 0) {
    return { refused: 'price_above_max', price, message: `listing ${listing.id} costs ${exactDecimal(price)} now, above the most you would pay (${exactDecimal(maxPrice)})` };
  }
  const orderId = await completeSale(m, events, { buy: true, listingId: listing.id, taker: buyer, price, currencyAddress: row.currencyAddress }, asset, row.seller, now, {
    price,
  });
  return { orderId, price };
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
  const listing = UUID.test(listingId) ? await ctx.loaders.listingById.load(listingId.toLowerCase()) : null;
  if (!listing) throw new NotFoundError(`no listing with id ${listingId}`);
  const outcome = await buyAlone(ctx.ds, listing, caller.address, clock.now(), maxPrice);
  ctx.invalidate();
  if ('orderId' in outcome) return outcome.orderId;
  if (outcome.refused === 'english_without_buy_now') throw new ValidationError([{ field: 'listingId', message: outcome.message }]);
  throw new ConflictError(outcome.message);
}

/** A listing a sweep may buy: active, fixed-price or dutch, with its current price as read. */
interface Candidate {
  id: string;
  assetId: string;
  seller: string;
  price: string;
}

/** What a sweep reads: the collection's listings in one currency, of assets carrying the traits. */
interface SweepScope {
  collectionId: string;
  currency: string;
  traits: TraitFilter;
}

/**
 * The scope's cheapest active fixed-price and dutch listings at `now` (current price, then id), leaving
 * out those already seen.
 */
async function cheapestListings(db: EntityManager, scope: SweepScope, now: Date, seen: readonly string[], limit: number): Promise<Candidate[]> {
  const p = new Params();
  const at = p.add(now);
  const price = currentPriceSql('l', at);
  const where = [
    `l.collection_id = ${p.add(scope.collectionId)}`,
    `l.currency = ${p.add(scope.currency)}`,
    isActiveListingSql('l', at),
    `l.order_type IN ('fixed_price', 'dutch_auction')`,
  ];
  where.push(...traitFilterSql(p, 'l.asset_id', scope.traits));
  if (seen.length) where.push(`l.id <> ALL(${p.add(seen)}::uuid[])`);
  return db.query(
    `SELECT l.id, l.asset_id AS "assetId", l.seller, ${price}::text AS price FROM listings l
     WHERE ${where.join(' AND ')} ORDER BY ${price}, l.id LIMIT ${p.add(limit)}`,
    p.values,
  );
}

/** A sweep under way: its limits, what it bought and what it passed by. */
class Sweep {
  readonly bought: { orderId: string; price: bigint }[] = [];
  readonly skipped: SweepSkip[] = [];
  readonly seen: string[] = [];
  total = 0n;
  /** Set when a listing above a limit was met: every further one costs as much or more. */
  done = false;

  constructor(
    readonly buyer: string,
    readonly count: number,
    readonly maxTotal: bigint,
    readonly maxUnitPrice: bigint,
  ) {}

  get full(): boolean {
    return this.done || this.bought.length >= this.count;
  }

  skip(listing: Candidate, reason: SweepSkipReason, message: string, price = listing.price): void {
    this.skipped.push({ listingId: listing.id, assetId: listing.assetId, reason, price, priceDecimal: price, message });
    if (reason === SweepSkipReason.PRICE_ABOVE_MAX || reason === SweepSkipReason.TOTAL_REACHED) this.done = true;
  }

  /** The limit a listing's price breaks, if any: maxUnitPrice, then what is left of maxTotal. */
  limitBroken(listing: Candidate, price: bigint): boolean {
    if (price > this.maxUnitPrice) {
      this.skip(listing, SweepSkipReason.PRICE_ABOVE_MAX, `its price ${fromUnits(price)} is above maxUnitPrice ${fromUnits(this.maxUnitPrice)}`, fromUnits(price));
      return true;
    }
    if (this.total + price > this.maxTotal) {
      this.skip(
        listing,
        SweepSkipReason.TOTAL_REACHED,
        `its price ${fromUnits(price)} would bring the total to ${fromUnits(this.total + price)}, above maxTotal ${fromUnits(this.maxTotal)}`,
        fromUnits(price),
      );
      return true;
    }
    return false;
  }

  /** Walks the candidates cheapest first, buying each that fits (`buy`), until the sweep is full. */
  async walk(candidates: Candidate[], buy: (listing: Candidate, maxPrice: string) => Promise<BuyOutcome>): Promise<void> {
    for (const listing of candidates) {
      if (this.full) return;
      this.seen.push(listing.id);
      if (this.limitBroken(listing, toUnits(listing.price))) return;
      if (listing.seller === this.buyer) {
        this.skip(listing, SweepSkipReason.OWN_LISTING, 'you listed it; one cannot buy one\'s own listing');
        continue;
      }
      const cap = this.maxTotal - this.total < this.maxUnitPrice ? this.maxTotal - this.total : this.maxUnitPrice;
      const outcome = await buy(listing, fromUnits(cap));
      if ('orderId' in outcome) {
        this.bought.push({ orderId: outcome.orderId, price: toUnits(outcome.price) });
        this.total += toUnits(outcome.price);
      } else if (outcome.refused === 'price_above_max') {
        this.limitBroken(listing, toUnits(outcome.price!));
      } else if (outcome.refused === 'own_listing') {
        this.skip(listing, SweepSkipReason.OWN_LISTING, outcome.message);
      } else {
        this.skip(listing, SweepSkipReason.SOLD_MEANWHILE, outcome.message);
      }
    }
  }
}

function sweepProblems(input: SweepCollectionInput): Problems {
  const problems = new Problems();
  if (!Number.isInteger(input.count) || input.count < 1 || input.count > MAX_SWEEP_COUNT) {
    problems.add('count', `must be an integer from 1 to ${MAX_SWEEP_COUNT}, got ${input.count}`);
  }
  if (compareDecimals(input.maxTotal, '0') <= 0) problems.add('maxTotal', `must be greater than 0, got ${input.maxTotal}`);
  if (compareDecimals(input.maxUnitPrice, '0') <= 0) problems.add('maxUnitPrice', `must be greater than 0, got ${input.maxUnitPrice}`);
  const traits = input.traits ?? [];
  if (traits.length > MAX_OFFER_TRAITS) problems.add('traits', `at most ${MAX_OFFER_TRAITS} traits, got ${traits.length}`);
  for (const problem of traitProblems(traits, 'traits')) problems.add(problem.field, problem.message);
  return problems;
}

/**
 * A sweep: buys up to `count` of the collection's cheapest active fixed-price and dutch listings (by
 * current price at one moment, then id; only assets with the traits when given), each at most
 * maxUnitPrice and together at most maxTotal, stopping at the first listing above either limit. The
 * caller's own listings and those sold meanwhile are skipped and the next ones read.
 * partial (default): each purchase is its own transaction, as buyListing's, so concurrent sweeps and
 * buys sell each listing once and a sweep buys what it can. partial false: one transaction that locks
 * the assets of the listings it read (in id order, so concurrent sweeps cannot deadlock) and buys all
 * `count` or nothing (409 naming why).
 */
export async function sweepCollection(ctx: Context, input: SweepCollectionInput): Promise<SweepResult> {
  const caller = await ctx.requireCaller();
  const problems = sweepProblems(input);
  problems.throwIfAny();
  const collection = await findCollectionByRef(ctx, input.collectionId);
  const currency = await currencyOfRequest(ctx, problems, 'currency', collection.chainId, input.currency);
  problems.throwIfAny();
  const scope: SweepScope = { collectionId: collection.id, currency: currency!.address, traits: traitFilterOf(input.traits ?? []) };
  const now = clock.now();
  const sweep = new Sweep(caller.address, input.count, toUnits(input.maxTotal), toUnits(input.maxUnitPrice));
  const read = (m: EntityManager) => cheapestListings(m, scope, now, sweep.seen, input.count - sweep.bought.length + SWEEP_LOOKAHEAD);
  // Absent or null (a REST body without it) is the default, true.
  if (input.partial !== false) {
    for (let round = 0; round < MAX_SWEEP_ROUNDS && !sweep.full; round += 1) {
      const candidates = await read(ctx.ds.manager);
      if (!candidates.length) break;
      await sweep.walk(candidates, (listing, maxPrice) => buyAlone(ctx.ds, listing, caller.address, now, maxPrice));
    }
  } else {
    await sweepAllOrNothing(ctx.ds, sweep, read, now);
  }
  ctx.invalidate();
  const orders = await ordersByIds(ctx.ds, sweep.bought.map((b) => b.orderId));
  const byId = new Map(orders.map((o) => [o.id, o]));
  const total = fromUnits(sweep.total);
  return { orders: sweep.bought.map((b) => byId.get(b.orderId)!), skipped: sweep.skipped, total, totalDecimal: total, currency: currency! };
}

/** One transaction: the listings read are locked by their assets first, then bought; fewer than `count` is a 409 and a rollback. */
async function sweepAllOrNothing(ds: DataSource, sweep: Sweep, read: (m: EntityManager) => Promise<Candidate[]>, now: Date): Promise<void> {
  try {
    await withEvents(ds, async (m, events) => {
      const candidates = await read(m);
      await m.query('SELECT id FROM assets WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE', [candidates.map((c) => c.assetId)]);
      await sweep.walk(candidates, (listing, maxPrice) => buyInTransaction(m, events, listing, sweep.buyer, now, maxPrice));
      if (sweep.bought.length < sweep.count) {
        const why = sweep.skipped.length ? `: ${sweep.skipped.map((s) => `listing ${s.listingId} ${s.reason} (${s.message})`).join('; ')}` : '';
        throw new ConflictError(
          `partial is false and only ${sweep.bought.length} of ${sweep.count} listings could be bought${why}${candidates.length < sweep.count ? `; the collection has ${candidates.length} such listings` : ''}; nothing was bought`,
        );
      }
    });
  } catch (err) {
    if (isUniqueViolation(err) || (err as { driverError?: { code?: string } }).driverError?.code === '40P01') {
      throw new ConflictError('partial is false and a listing of this sweep was bought meanwhile; nothing was bought, try again');
    }
    throw err;
  }
}
