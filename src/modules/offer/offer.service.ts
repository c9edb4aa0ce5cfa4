import { EntityManager } from 'typeorm';
import type { Context } from '../../common/request/context';
import { clock } from '../../common/clock';
import { ConflictError, ForbiddenError, NotFoundError, Problems, ValidationError, isUniqueViolation } from '../../common/errors';
import { fetchPage, Page, SortKey } from '../../common/pagination';
import { Params, updateReturning } from '../../common/sql';
import { UUID, required } from '../../common/validate';
import { compareDecimals } from '../../common/decimal';
import { chainCondition } from '../collection/collection.service';
import { currentPriceSql, isActiveListingSql } from '../listing/listing.sql';
import { lockAsset } from '../listing/listing.service';
import { EventLog, withEvents } from '../event/event.log';
import { offerColumns, offersByIds, offerStatusSql } from './offer.sql';
import { CreateOfferInput, Offer, OfferListArgs, OfferOrderBy } from './offer.types';

const SORT: Record<OfferOrderBy, SortKey> = {
  [OfferOrderBy.CREATED_AT]: { expression: 'o.created_at', sqlType: 'timestamptz' },
  [OfferOrderBy.PRICE]: { expression: 'o.price', sqlType: 'numeric' },
  [OfferOrderBy.END_TIME]: { expression: 'o.end_time', sqlType: 'timestamptz' },
};

export async function listOffers(ctx: Context, args: OfferListArgs): Promise<Page<Offer>> {
  const p = new Params();
  const now = p.add(clock.now());
  const where: string[] = [];
  const chain = await chainCondition(ctx, p, 'o.chain_id', args.chainId);
  if (chain) where.push(chain);
  if (args.tokenAddress != null) where.push(`o.token_address = ${p.add(args.tokenAddress)}`);
  if (args.tokenId != null) where.push(`o.token_id = ${p.add(args.tokenId)}::numeric`);
  if (args.ownerId != null) where.push(`o.taker = ${p.add(args.ownerId)}`);
  if (args.status != null) where.push(`${offerStatusSql('o', now)} = ${p.add(args.status)}`);
  return fetchPage<Offer>(ctx.ds, {
    from: 'offers o',
    columns: offerColumns(now),
    idExpression: 'o.id',
    where,
    params: p,
    sort: SORT[args.orderBy],
    orderBy: args.orderBy,
    args,
  });
}

export async function getOffer(ctx: Context, id: string): Promise<Offer> {
  const offer = UUID.test(id) ? await ctx.loaders.offerById.load(id.toLowerCase()) : null;
  if (!offer) throw new NotFoundError(`no offer with id ${id}`);
  return offer;
}

/**
 * The sale itself, inside the caller's transaction with the asset row already locked: the offer becomes
 * accepted, the asset passes to the taker and is unlisted, an active listing is sold (an expired one
 * marked expired), the taker's own other offers on the asset are cancelled (one does not bid for what one
 * owns), and a completed order records price, seller and buyer. Returns the order id.
 */
async function completeSale(m: EntityManager, events: EventLog, offer: Offer, seller: string, now: Date): Promise<string> {
  if (seller === offer.taker) throw selfTrade(offer);
  const [accepted] = await updateReturning<{ id: string }>(
    m,
    `UPDATE offers SET status = 'accepted', updated_at = $2 WHERE id = $1 AND status = 'active' AND end_time > $2 AND start_time <= $2 RETURNING id`,
    [offer.id, now],
  );
  if (!accepted) throw new ConflictError(`offer ${offer.id} is no longer active`);
  events.add('offer.accepted', 'offer', offer.id);
  const [sold] = await updateReturning<{ id: string; status: string }>(
    m,
    `UPDATE listings SET status = CASE WHEN closing_date <= $2 THEN 'expired' ELSE 'sold' END, updated_at = $2
     WHERE asset_id = $1 AND status = 'active' RETURNING id, status`,
    [offer.assetId, now],
  );
  if (sold) events.add(sold.status === 'sold' ? 'listing.sold' : 'listing.expired', 'listing', sold.id);
  await m.query(`UPDATE assets SET owner = $2, status = 'unlisted', updated_at = $3 WHERE id = $1`, [offer.assetId, offer.taker, now]);
  events.add('asset.transferred', 'asset', offer.assetId, { previous_owner: seller });
  const ownOffers = await updateReturning<{ id: string }>(
    m,
    `UPDATE offers SET status = 'cancelled', updated_at = $3
     WHERE asset_id = $1 AND taker = $2 AND status = 'active' AND end_time > $3 AND id <> $4 RETURNING id`,
    [offer.assetId, offer.taker, now, offer.id],
  );
  for (const own of ownOffers) events.add('offer.cancelled', 'offer', own.id, { reason: 'the taker owns the asset now' });
  const [order] = await m.query(
    `INSERT INTO orders (offer_id, listing_id, asset_id, collection_id, chain_id, token_address, token_id, price, seller, buyer, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7::numeric, $8::numeric, $9, $10, $11, $11) RETURNING id`,
    [offer.id, sold?.status === 'sold' ? sold.id : null, offer.assetId, offer.collectionId, offer.chainId, offer.tokenAddress, offer.tokenId, offer.price, seller, offer.taker, now],
  );
  events.add('order.completed', 'order', order.id);
  return order.id;
}

/** An owner accepting an offer that the owner made: no sale, no order, no volume. */
function selfTrade(offer: Offer): ConflictError {
  return new ConflictError(
    `offer ${offer.id} was made by ${offer.taker}, who owns asset ${offer.tokenAddress}/${offer.tokenId} now; one cannot sell to oneself`,
  );
}

export async function createOffer(ctx: Context, input: CreateOfferInput): Promise<Offer> {
  const caller = await ctx.requireCaller();
  const problems = new Problems();
  required(problems, 'assetId', input.assetId);
  if (required(problems, 'price', input.price) && compareDecimals(input.price!, '0') <= 0) problems.add('price', `must be greater than 0, got ${input.price}`);
  required(problems, 'startTime', input.startTime);
  required(problems, 'endTime', input.endTime);
  problems.throwIfAny();
  const asset = UUID.test(input.assetId!) ? await ctx.loaders.assetById.load(input.assetId!.toLowerCase()) : null;
  if (!asset) throw new NotFoundError(`no asset with id ${input.assetId}`);
  const now = clock.now();
  if (input.endTime! <= input.startTime!) problems.add('endTime', 'must be after startTime');
  else if (input.endTime! <= now) problems.add('endTime', 'must be in the future');
  if (asset.owner === caller.address) problems.add('assetId', 'you own this asset; one cannot make an offer on one\'s own asset');
  problems.throwIfAny();

  const offerId = await withEvents(ctx.ds, async (m, events) => {
    const locked = await lockAsset(m, asset.id);
    if (locked.owner === caller.address) throw new ValidationError([{ field: 'assetId', message: 'you own this asset now' }]);
    const [{ id }] = await m.query(
      `INSERT INTO offers (asset_id, collection_id, chain_id, token_address, token_id, taker, price, start_time, end_time)
       VALUES ($1, $2, $3, $4, $5::numeric, $6, $7::numeric, $8, $9) RETURNING id`,
      [asset.id, asset.collectionId, asset.chainId, asset.tokenAddress, asset.tokenId, caller.address, input.price, input.startTime, input.endTime],
    );
    const [offer] = await offersByIds(m, [id], now);
    events.add('offer.created', 'offer', id);
    // An offer at or above the active listing's accept price (a dutch auction: its current price) is taken at once.
    const q = new Params();
    const qNow = q.add(now);
    const [listing] = await m.query(
      `SELECT l.accept_price::text AS "acceptPrice", l.order_type AS "orderType", ${currentPriceSql('l', qNow)}::text AS "currentPrice"
       FROM listings l WHERE l.asset_id = ${q.add(asset.id)} AND ${isActiveListingSql('l', qNow)}`,
      q.values,
    );
    if (listing && offer.startTime <= now) {
      const threshold = listing.orderType === 'dutch_auction' ? listing.currentPrice : listing.acceptPrice;
      if (threshold !== null) {
        const [{ takes }] = await m.query('SELECT $1::numeric >= $2::numeric AS takes', [offer.price, threshold]);
        if (takes) await completeSale(m, events, offer, locked.owner, now);
      }
    }
    return offer.id;
  });
  ctx.invalidate();
  const [created] = await offersByIds(ctx.ds, [offerId], clock.now());
  return created;
}

/** The owner of the asset accepts an offer; exactly one of any concurrent acceptances on one asset wins. */
export async function acceptOffer(ctx: Context, offerId: string): Promise<string> {
  const caller = await ctx.requireCaller();
  const offer = await getOffer(ctx, offerId);
  const asset = await ctx.loaders.assetById.load(offer.assetId);
  if (!asset || asset.owner !== caller.address) {
    // One who sold the asset since the offer was made lost a race (or is late): a conflict, not a stranger.
    const [sale] = await ctx.ds.query(
      'SELECT id FROM orders WHERE asset_id = $1 AND seller = $2 AND created_at >= $3 LIMIT 1',
      [offer.assetId, caller.address, offer.createdAt],
    );
    if (sale) throw new ConflictError(`asset ${offer.tokenAddress}/${offer.tokenId} was sold meanwhile (order ${sale.id})`);
    throw new ForbiddenError(`only the owner of asset ${offer.tokenAddress}/${offer.tokenId} may accept offers on it`);
  }
  const now = clock.now();
  if (offer.status !== 'active') throw new ConflictError(`offer ${offer.id} is ${offer.status}, not active`);
  if (offer.taker === caller.address) throw selfTrade(offer);
  if (offer.startTime > now) {
    throw new ValidationError([{ field: 'offerId', message: `the offer's window starts at ${offer.startTime.toISOString()}` }]);
  }
  try {
    const orderId = await withEvents(ctx.ds, async (m, events) => {
      const locked = await lockAsset(m, offer.assetId);
      if (locked.owner !== caller.address) {
        throw new ConflictError(`asset ${offer.tokenAddress}/${offer.tokenId} changed owner while this acceptance waited`);
      }
      return completeSale(m, events, offer, caller.address, now);
    });
    ctx.invalidate();
    return orderId;
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError(`offer ${offer.id} has already been accepted`);
    throw err;
  }
}

/** The maker withdraws an active offer. */
export async function cancelOffer(ctx: Context, id: string): Promise<Offer> {
  const caller = await ctx.requireCaller();
  const offer = await getOffer(ctx, id);
  if (offer.taker !== caller.address) throw new ForbiddenError(`offer ${offer.id} was made by ${offer.taker}; only its maker may cancel it`);
  const now = clock.now();
  await withEvents(ctx.ds, async (m, events) => {
    await lockAsset(m, offer.assetId);
    const [changed] = await updateReturning(
      m,
      `UPDATE offers SET status = 'cancelled', updated_at = $2 WHERE id = $1 AND status = 'active' AND end_time > $2 RETURNING id`,
      [offer.id, now],
    );
    if (!changed) throw new ConflictError(`offer ${offer.id} is no longer active`);
    events.add('offer.cancelled', 'offer', offer.id);
  });
  ctx.invalidate();
  const [cancelled] = await offersByIds(ctx.ds, [offer.id], clock.now());
  return cancelled;
}
