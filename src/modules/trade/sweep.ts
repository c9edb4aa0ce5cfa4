import { EntityManager } from 'typeorm';
import type { Context } from '../../common/request/context';
import { clock } from '../../common/clock';
import { ConflictError, isUniqueViolation, Problems } from '../../common/errors';
import { fromUnits, toUnits } from '../../common/decimal';
import { Params } from '../../common/sql';
import { checkPositivePrice } from '../../common/validate';
import { findCollectionByRef } from '../collection/collection.service';
import { TraitFilter, traitFilterOf, traitFilterSql, traitProblems } from '../asset/asset.traits';
import { EventLog, withEvents } from '../event/event.log';
import { lockAssets } from '../listing/auction';
import { currentPriceSql, isActiveListingSql } from '../listing/listing.sql';
import { MAX_OFFER_TRAITS } from '../offer/offer.service';
import { completeSales } from '../order/sale';
import { ordersByIds } from '../order/order.service';
import { currencyOfRequest } from '../currency/currency.service';
import { findPurchases, Purchase, Refusal } from './trade.service';
import { SweepCollectionInput, SweepResult, SweepSkip, SweepSkipReason } from './trade.types';

export const MAX_SWEEP_COUNT = 50;
/** A sweep reads this many listings beyond what it still needs, so that a few skipped ones cost no further read. */
const SWEEP_LOOKAHEAD = 10;
/** A partial sweep reads again after listings were sold meanwhile; at most this many times. */
const MAX_SWEEP_ROUNDS = 10;

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

/** What a sweep has done so far; a round that fails is taken back to it. */
interface SweepState {
  bought: { orderId: string; price: bigint }[];
  skipped: SweepSkip[];
  seen: string[];
  total: bigint;
  done: boolean;
}

/** A sweep under way: its limits, what it bought and what it passed by. */
class Sweep {
  state: SweepState = { bought: [], skipped: [], seen: [], total: 0n, done: false };
  /** The purchases of the round under way, made together when it ends. */
  private taking = 0;

  constructor(
    readonly buyer: string,
    readonly count: number,
    readonly maxTotal: bigint,
    readonly maxUnitPrice: bigint,
  ) {}

  /** Set when the sweep has what it wants, or met a listing above a limit (every further one costs as much or more). */
  get full(): boolean {
    return this.state.done || this.state.bought.length + this.taking >= this.count;
  }

  /** How many more listings a round reads: what the sweep still needs, and a few more. */
  get readLimit(): number {
    return this.count - this.state.bought.length + SWEEP_LOOKAHEAD;
  }

  save(): SweepState {
    const { bought, skipped, seen } = this.state;
    return { ...this.state, bought: [...bought], skipped: [...skipped], seen: [...seen] };
  }

  skip(listing: Candidate, reason: SweepSkipReason, message: string, price = listing.price): void {
    this.state.skipped.push({ listingId: listing.id, assetId: listing.assetId, reason, price, priceDecimal: price, message });
    if (reason === SweepSkipReason.PRICE_ABOVE_MAX || reason === SweepSkipReason.TOTAL_REACHED) this.state.done = true;
  }

  /** Whether `price` breaks maxUnitPrice, or what is left of maxTotal after `total`. */
  private breaks(price: bigint, total: bigint): boolean {
    return price > this.maxUnitPrice || total + price > this.maxTotal;
  }

  /** Records the limit a listing's price breaks, if any: maxUnitPrice, then what is left of maxTotal. */
  limitBroken(listing: Candidate, price: bigint): boolean {
    if (price > this.maxUnitPrice) {
      this.skip(listing, SweepSkipReason.PRICE_ABOVE_MAX, `its price ${fromUnits(price)} is above the most per listing, ${fromUnits(this.maxUnitPrice)}`, fromUnits(price));
      return true;
    }
    if (this.state.total + price > this.maxTotal) {
      this.skip(
        listing,
        SweepSkipReason.TOTAL_REACHED,
        `its price ${fromUnits(price)} would bring the total to ${fromUnits(this.state.total + price)}, above the most in all, ${fromUnits(this.maxTotal)}`,
        fromUnits(price),
      );
      return true;
    }
    return false;
  }

  /**
   * The candidates a walk reaches by their prices as read: up to the one that fills the sweep, or the first
   * above a limit (included: behind its lock it may fit, when a cheaper one was sold meanwhile). Only these
   * are locked, so concurrent sweeps lock no more than they may buy.
   */
  reach(candidates: readonly Candidate[]): Candidate[] {
    let taken = this.state.bought.length;
    let total = this.state.total;
    for (let i = 0; i < candidates.length; i += 1) {
      if (taken >= this.count) return candidates.slice(0, i);
      const price = toUnits(candidates[i].price);
      if (this.breaks(price, total)) return candidates.slice(0, i + 1);
      if (candidates[i].seller !== this.buyer) {
        taken += 1;
        total += price;
      }
    }
    return [...candidates];
  }

  /**
   * Walks the candidates cheapest first with what their locks show (`found`: each one's purchase, or why it
   * cannot be bought), until the sweep is full: records the skips and returns the purchases to make, which
   * count as bought once `bought` records their orders. Whether a listing was lost to a race is in `lost`.
   */
  walk(candidates: readonly Candidate[], found: ReadonlyMap<string, Purchase | Refusal>): { purchases: Purchase[]; lost: boolean } {
    const purchases: Purchase[] = [];
    let lost = false;
    for (const listing of candidates) {
      if (this.full) break;
      this.state.seen.push(listing.id);
      if (this.limitBroken(listing, toUnits(listing.price))) break;
      if (listing.seller === this.buyer) {
        this.skip(listing, SweepSkipReason.OWN_LISTING, 'you listed it; one cannot buy one\'s own listing');
        continue;
      }
      const purchase = found.get(listing.id) ?? { refused: 'not_active', price: null, message: `listing ${listing.id} is no longer active` };
      if ('refused' in purchase) {
        if (purchase.refused === 'own_listing') {
          this.skip(listing, SweepSkipReason.OWN_LISTING, purchase.message);
        } else {
          lost = true;
          this.skip(listing, SweepSkipReason.SOLD_MEANWHILE, purchase.message);
        }
        continue;
      }
      // Its price behind the lock is the one paid: a change since the read is checked against the limits again.
      const price = toUnits(purchase.price);
      if (this.limitBroken(listing, price)) break;
      purchases.push(purchase);
      this.state.total += price;
      this.taking += 1;
    }
    return { purchases, lost };
  }

  /** The round's purchases are made: their orders count as bought. */
  bought(purchases: readonly Purchase[], orderIds: readonly string[]): void {
    purchases.forEach((p, i) => this.state.bought.push({ orderId: orderIds[i], price: toUnits(p.price) }));
    this.taking = 0;
  }

  /** A round that failed is taken back. */
  restore(saved: SweepState): void {
    this.state = saved;
    this.taking = 0;
  }
}

function sweepProblems(input: SweepCollectionInput): Problems {
  const problems = new Problems();
  if (!Number.isInteger(input.count) || input.count < 1 || input.count > MAX_SWEEP_COUNT) {
    problems.add('count', `must be an integer from 1 to ${MAX_SWEEP_COUNT}, got ${input.count}`);
  }
  checkPositivePrice(problems, 'maxTotal', input.maxTotal);
  checkPositivePrice(problems, 'maxUnitPrice', input.maxUnitPrice);
  const traits = input.traits ?? [];
  if (traits.length > MAX_OFFER_TRAITS) problems.add('traits', `at most ${MAX_OFFER_TRAITS} traits, got ${traits.length}`);
  for (const problem of traitProblems(traits, 'traits')) problems.add(problem.field, problem.message);
  return problems;
}

/** What a round read: whether it read every listing left in scope, and whether one it reached was lost to a race. */
interface Round {
  exhausted: boolean;
  lost: boolean;
  candidates: number;
}

/**
 * One round of a sweep, in the caller's transaction, its statements the same whatever it buys: the
 * cheapest listings not seen yet are read; the assets of those the walk reaches (`lockAll`: of all read)
 * are locked in id order (lockAssets: concurrent sweeps wait on each other, never in a cycle); the listings
 * are read again behind the locks (findPurchases), the walk picks what fits, and the purchases are made
 * together through the one sale path (completeSales).
 */
async function sweepRound(m: EntityManager, events: EventLog, sweep: Sweep, scope: SweepScope, now: Date, lockAll: boolean): Promise<Round> {
  const limit = sweep.readLimit;
  const candidates = await cheapestListings(m, scope, now, sweep.state.seen, limit);
  const reached = lockAll ? candidates : sweep.reach(candidates);
  const locked = await lockAssets(m, events, reached.map((c) => c.assetId), now);
  const wanted = reached.flatMap((c) => {
    const asset = locked.get(c.assetId);
    return asset ? [{ listingId: c.id, asset }] : [];
  });
  const found = await findPurchases(m, wanted, sweep.buyer, now);
  const { purchases, lost } = sweep.walk(reached, found);
  const orderIds = await completeSales(m, events, purchases.map((p) => p.sale), now);
  sweep.bought(purchases, orderIds);
  return { exhausted: candidates.length < limit, lost, candidates: candidates.length };
}

/** A transaction that lost to another: a deadlock the database broke, or a unique order taken meanwhile. */
function lostRace(err: unknown): boolean {
  return isUniqueViolation(err) || (err as { driverError?: { code?: string } }).driverError?.code === '40P01';
}

/**
 * A sweep: buys up to `count` of the collection's cheapest active fixed-price and dutch listings (by
 * current price at one moment, then id; only assets with the traits when given), each at most
 * maxUnitPrice and together at most maxTotal, stopping at the first listing above either limit. The
 * caller's own listings and those sold meanwhile are skipped and the next ones read.
 * partial (default): a round (sweepRound) buys what fits in one transaction; listings lost to concurrent
 * buyers are skipped (sold_meanwhile) and the next round reads on, so a sweep buys what it can while others
 * buy, and each listing sells once. Without races one round does it all: the statements do not grow with
 * `count`. partial false: one round that locks the assets of every listing it read and buys all `count`
 * or nothing (409 naming why).
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
  // Absent or null (a REST body without it) is the default, true.
  if (input.partial !== false) {
    for (let round = 0; round < MAX_SWEEP_ROUNDS && !sweep.full; round += 1) {
      const saved = sweep.save();
      try {
        const read = await withEvents(ctx.ds, (m, events) => sweepRound(m, events, sweep, scope, now, false));
        if (!read.candidates || (read.exhausted && !read.lost)) break;
      } catch (err) {
        if (!lostRace(err)) throw err;
        sweep.restore(saved);
      }
    }
  } else {
    await sweepAllOrNothing(ctx, sweep, scope, now);
  }
  ctx.invalidate();
  const { bought, skipped, total } = sweep.state;
  const orders = await ordersByIds(ctx.ds, bought.map((b) => b.orderId));
  const byId = new Map(orders.map((o) => [o.id, o]));
  const sum = fromUnits(total);
  return { orders: bought.map((b) => byId.get(b.orderId)!), skipped, total: sum, totalDecimal: sum, currency: currency! };
}

/** One round that locks every listing it reads; fewer than `count` bought is a 409 and a rollback. */
async function sweepAllOrNothing(ctx: Context, sweep: Sweep, scope: SweepScope, now: Date): Promise<void> {
  try {
    await withEvents(ctx.ds, async (m, events) => {
      const read = await sweepRound(m, events, sweep, scope, now, true);
      const { bought, skipped } = sweep.state;
      if (bought.length < sweep.count) {
        const why = skipped.length ? `: ${skipped.map((s) => `listing ${s.listingId} ${s.reason} (${s.message})`).join('; ')}` : '';
        throw new ConflictError(
          `partial is false and only ${bought.length} of ${sweep.count} listings could be bought${why}${read.candidates < sweep.count ? `; the collection has ${read.candidates} such listings` : ''}; nothing was bought`,
        );
      }
    });
  } catch (err) {
    if (lostRace(err)) throw new ConflictError('partial is false and a listing of this sweep was bought meanwhile; nothing was bought, try again');
    throw err;
  }
}
