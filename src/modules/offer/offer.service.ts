import { randomUUID } from 'node:crypto';
import { EntityManager } from 'typeorm';
import type { Context } from '../../common/request/context';
import { clock } from '../../common/clock';
import { ConflictError, ForbiddenError, NotFoundError, Problems, ValidationError, isUniqueViolation } from '../../common/errors';
import { fetchPage, Page, SortKey } from '../../common/pagination';
import { Params, updateReturning } from '../../common/sql';
import { UUID, checkText, required } from '../../common/validate';
import { compareDecimals } from '../../common/decimal';
import { checkSignature, SignedTerms } from '../../common/eip712';
import { MAX_LENGTH } from '../../common/limits';
import { chainCondition, findCollectionByRef } from '../collection/collection.service';
import type { Collection } from '../collection/collection.entity';
import type { Asset } from '../asset/asset.entity';
import { getAsset, getAssetById } from '../asset/asset.service';
import { traitFilterOf, traitFilterSql, traitProblems } from '../asset/asset.traits';
import { currentPriceSql, isActiveListingSql } from '../listing/listing.sql';
import { lockAsset } from '../listing/listing.service';
import { EventLog, withEvents } from '../event/event.log';
import { offerColumns, offersByIds, offerStatusSql } from './offer.sql';
import { CreateOfferInput, Offer, OfferKind, OfferListArgs, OfferOrderBy } from './offer.types';

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
  if (args.collectionId != null) where.push(`o.collection_id = ${p.add((await findCollectionByRef(ctx, args.collectionId)).id)}`);
  if (args.kind != null) where.push(`o.kind = ${p.add(args.kind)}`);
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

/** The asset of a sale: the one an item offer names, or the one an owner sells to a collection or trait offer. */
interface SaleAsset {
  id: string;
  collectionId: string;
  chainId: string;
  tokenAddress: string;
  tokenId: string;
}

/**
 * The sale of one unit, inside the caller's transaction with the asset row already locked: the offer fills
 * one more unit (and becomes accepted when its quantity is filled), the asset passes to the taker and is
 * unlisted, an active listing is sold (an expired one marked expired), the taker's own other offers on the
 * asset are cancelled (one does not bid for what one owns), and a completed order records price, seller,
 * buyer and unit. The offer's row is updated under its lock, so concurrent acceptances fill each unit once.
 * Returns the order id.
 */
async function completeSale(m: EntityManager, events: EventLog, offer: Offer, asset: SaleAsset, seller: string, now: Date): Promise<string> {
  if (seller === offer.taker) throw selfTrade(offer, asset);
  const [unit] = await updateReturning<{ filled: number; status: string }>(
    m,
    `UPDATE offers SET filled = filled + 1, status = CASE WHEN filled + 1 >= quantity THEN 'accepted' ELSE status END, updated_at = $2
     WHERE id = $1 AND status = 'active' AND end_time > $2 AND start_time <= $2 AND filled < quantity RETURNING filled, status`,
    [offer.id, now],
  );
  if (!unit) throw new ConflictError(`offer ${offer.id} is no longer active`);
  // The order's id is chosen here so the sale's events can name it (history reads them alone).
  const orderId = randomUUID();
  const sale = { order_id: orderId, price: offer.price };
  if (offer.kind !== OfferKind.ITEM) events.add('offer.filled', 'offer', offer.id, { unit: unit.filled, asset_id: asset.id, order_id: orderId });
  if (unit.status === 'accepted') events.add('offer.accepted', 'offer', offer.id, { order_id: orderId });
  // An expired listing's expiry event is written unless the sweeper wrote it already (see expireStaleListings).
  const [sold] = await updateReturning<{ id: string; status: string; swept: boolean }>(
    m,
    `WITH held AS (SELECT id, expiry_swept FROM listings WHERE asset_id = $1 AND status = 'active' FOR UPDATE)
     UPDATE listings l SET status = CASE WHEN l.closing_date <= $2 THEN 'expired' ELSE 'sold' END,
       expiry_swept = l.expiry_swept OR COALESCE(l.closing_date <= $2, false), updated_at = $2
     FROM held WHERE l.id = held.id RETURNING l.id, l.status, held.expiry_swept AS swept`,
    [asset.id, now],
  );
  if (sold?.status === 'sold') events.add('listing.sold', 'listing', sold.id, sale);
  else if (sold && !sold.swept) events.add('listing.expired', 'listing', sold.id);
  await m.query(`UPDATE assets SET owner = $2, status = 'unlisted', updated_at = $3 WHERE id = $1`, [asset.id, offer.taker, now]);
  events.add('asset.transferred', 'asset', asset.id, {
    previous_owner: seller,
    ...sale,
    offer_id: offer.id,
    listing_id: sold?.status === 'sold' ? sold.id : null,
  });
  const ownOffers = await updateReturning<{ id: string }>(
    m,
    `UPDATE offers SET status = 'cancelled', updated_at = $3
     WHERE asset_id = $1 AND taker = $2 AND status = 'active' AND end_time > $3 AND id <> $4 RETURNING id`,
    [asset.id, offer.taker, now, offer.id],
  );
  for (const own of ownOffers) events.add('offer.cancelled', 'offer', own.id, { reason: 'the taker owns the asset now' });
  const [order] = await m.query(
    `INSERT INTO orders (id, offer_id, unit, listing_id, asset_id, collection_id, chain_id, token_address, token_id, price, seller, buyer, created_at, updated_at)
     VALUES ($13, $1, $2, $3, $4, $5, $6, $7, $8::numeric, $9::numeric, $10, $11, $12, $12) RETURNING id`,
    [offer.id, unit.filled, sold?.status === 'sold' ? sold.id : null, asset.id, asset.collectionId, asset.chainId, asset.tokenAddress, asset.tokenId, offer.price, seller, offer.taker, now, orderId],
  );
  events.add('order.completed', 'order', order.id);
  return order.id;
}

/** An owner accepting an offer that the owner made: no sale, no order, no volume. */
function selfTrade(offer: Offer, asset: SaleAsset): ConflictError {
  return new ConflictError(
    `offer ${offer.id} was made by ${offer.taker}, who owns asset ${asset.tokenAddress}/${asset.tokenId} now; one cannot sell to oneself`,
  );
}

/** What an offer is for, from the create input: one asset, or a collection (with traits, a trait offer). */
type OfferTarget =
  | { kind: OfferKind.ITEM; asset: Asset }
  | { kind: OfferKind.COLLECTION | OfferKind.TRAIT; collection: Collection; traits: { trait_type: string; value: string }[]; quantity: number };

export const MAX_OFFER_QUANTITY = 1000;
export const MAX_OFFER_TRAITS = 20;

async function offerTarget(ctx: Context, problems: Problems, input: CreateOfferInput): Promise<OfferTarget | null> {
  if (input.quantity != null && (!Number.isInteger(input.quantity) || input.quantity < 1 || input.quantity > MAX_OFFER_QUANTITY)) {
    problems.add('quantity', `must be an integer from 1 to ${MAX_OFFER_QUANTITY}, got ${input.quantity}`);
  }
  if (input.assetId != null) {
    if (input.collectionId != null) problems.add('collectionId', 'give assetId (an item offer) or collectionId (a collection or trait offer), not both');
    if (input.traits?.length) problems.add('traits', 'traits need collectionId instead of assetId');
    if (input.quantity != null && input.quantity !== 1) problems.add('quantity', 'an item offer is for one asset: quantity must be 1');
    const asset = UUID.test(input.assetId) ? await ctx.loaders.assetById.load(input.assetId.toLowerCase()) : null;
    if (!asset) throw new NotFoundError(`no asset with id ${input.assetId}`);
    return { kind: OfferKind.ITEM, asset };
  }
  if (input.collectionId == null) {
    problems.add('assetId', 'required: assetId for an item offer, or collectionId for a collection or trait offer');
    return null;
  }
  const collection = await findCollectionByRef(ctx, input.collectionId);
  const traits = input.traits ?? [];
  if (traits.length > MAX_OFFER_TRAITS) problems.add('traits', `at most ${MAX_OFFER_TRAITS} traits, got ${traits.length}`);
  for (const problem of traitProblems(traits, 'traits')) problems.add(problem.field!, problem.message);
  return {
    kind: traits.length ? OfferKind.TRAIT : OfferKind.COLLECTION,
    collection,
    traits: traits.map((t) => ({ trait_type: t.traitType, value: t.value })),
    quantity: input.quantity ?? 1,
  };
}

/**
 * Makes an offer of any kind; the caller is the taker. An item offer at or above the asset's active
 * listing's accept price (a dutch auction: its current price) is accepted in the same transaction;
 * collection and trait offers wait for owners to accept them.
 */
export async function createOffer(ctx: Context, input: CreateOfferInput): Promise<Offer> {
  const caller = await ctx.requireCaller();
  const problems = new Problems();
  if (required(problems, 'price', input.price) && compareDecimals(input.price!, '0') <= 0) problems.add('price', `must be greater than 0, got ${input.price}`);
  required(problems, 'startTime', input.startTime);
  required(problems, 'endTime', input.endTime);
  problems.throwIfAny();
  const target = await offerTarget(ctx, problems, input);
  const now = clock.now();
  if (input.endTime! <= input.startTime!) problems.add('endTime', 'must be after startTime');
  else if (input.endTime! <= now) problems.add('endTime', 'must be in the future');
  if (target?.kind === OfferKind.ITEM && target.asset.owner === caller.address) {
    problems.add('assetId', 'you own this asset; one cannot make an offer on one\'s own asset');
  }
  checkText(problems, 'signature', input.signature, { max: MAX_LENGTH.signature });
  problems.throwIfAny();
  // An item offer signs an Offer; a collection or trait offer a CollectionOffer (docs/signatures.md).
  const window = { taker: caller.address, price: input.price!, startTime: input.startTime!, endTime: input.endTime! };
  const signed: SignedTerms =
    target!.kind === OfferKind.ITEM
      ? { kind: 'Offer', chainId: target!.asset.chainId, terms: { ...window, tokenAddress: target!.asset.tokenAddress, tokenId: target!.asset.tokenId } }
      : {
          kind: 'CollectionOffer',
          chainId: target!.collection.chainId,
          terms: {
            ...window,
            tokenAddress: target!.collection.contractAddress,
            quantity: target!.quantity,
            traits: target!.traits.map((t) => ({ traitType: t.trait_type, value: t.value })),
          },
        };
  const signature = await checkSignature(problems, ctx.policy.signatures, input.signature, signed);
  problems.throwIfAny();

  const offerId = await withEvents(ctx.ds, async (m, events) => {
    if (target!.kind !== OfferKind.ITEM) {
      const { collection, traits, quantity } = target!;
      const [{ id }] = await m.query(
        `INSERT INTO offers (kind, quantity, traits, asset_id, collection_id, chain_id, token_address, token_id, taker, price, start_time, end_time, signature)
         VALUES ($1, $2, $3::jsonb, NULL, $4, $5, $6, NULL, $7, $8::numeric, $9, $10, $11) RETURNING id`,
        [target!.kind, quantity, traits.length ? JSON.stringify(traits) : null, collection.id, collection.chainId, collection.contractAddress,
          caller.address, input.price, input.startTime, input.endTime, signature],
      );
      events.add('offer.created', 'offer', id);
      return id as string;
    }
    const asset = target!.asset;
    const locked = await lockAsset(m, asset.id);
    if (locked.owner === caller.address) throw new ValidationError([{ field: 'assetId', message: 'you own this asset now' }]);
    const [{ id }] = await m.query(
      `INSERT INTO offers (asset_id, collection_id, chain_id, token_address, token_id, taker, price, start_time, end_time, signature)
       VALUES ($1, $2, $3, $4, $5::numeric, $6, $7::numeric, $8, $9, $10) RETURNING id`,
      [asset.id, asset.collectionId, asset.chainId, asset.tokenAddress, asset.tokenId, caller.address, input.price, input.startTime, input.endTime, signature],
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
        if (takes) await completeSale(m, events, offer, asset, locked.owner, now);
      }
    }
    return offer.id;
  });
  ctx.invalidate();
  const [created] = await offersByIds(ctx.ds, [offerId], clock.now());
  return created;
}

/** The asset an acceptance sells: named by id or by token (chainId when needed). */
export interface AssetRef {
  assetId?: string | null;
  tokenAddress?: string | null;
  tokenId?: string | null;
  chainId?: string | null;
}

/**
 * The asset an acceptance sells, checked against the offer: an item offer's own asset (a named asset must
 * be it), or the named asset of the offer's collection carrying the offer's traits (422 otherwise).
 */
async function assetSold(ctx: Context, offer: Offer, ref: AssetRef): Promise<Asset> {
  const named = ref.assetId != null || ref.tokenAddress != null || ref.tokenId != null;
  if (named && ref.assetId == null && (ref.tokenAddress == null || ref.tokenId == null)) {
    throw new ValidationError([{ field: ref.tokenAddress == null ? 'tokenAddress' : 'tokenId', message: 'name the asset sold by tokenAddress and tokenId together' }]);
  }
  let asset: Asset | null = null;
  if (named) asset = ref.assetId != null ? await getAssetById(ctx, ref.assetId) : await getAsset(ctx, ref.tokenAddress!, ref.tokenId!, ref.chainId);
  if (offer.kind === OfferKind.ITEM) {
    if (asset && asset.id !== offer.assetId) {
      throw new ValidationError([{ field: 'tokenId', message: `offer ${offer.id} is for asset ${offer.tokenAddress}/${offer.tokenId}, not ${asset.tokenAddress}/${asset.tokenId}` }]);
    }
    return asset ?? (await getAssetById(ctx, offer.assetId!));
  }
  if (!asset) {
    throw new ValidationError([{ field: 'tokenId', message: `offer ${offer.id} is a ${offer.kind} offer: name the asset you sell by tokenAddress and tokenId` }]);
  }
  if (asset.collectionId !== offer.collectionId) {
    throw new ValidationError([{ field: 'tokenAddress', message: `asset ${asset.tokenAddress}/${asset.tokenId} is not in the collection of offer ${offer.id} (${offer.tokenAddress})` }]);
  }
  if (offer.kind === OfferKind.TRAIT) {
    const p = new Params();
    const assetId = p.add(asset.id);
    const [{ matches }] = await ctx.ds.query(`SELECT (${traitFilterSql(p, `${assetId}::uuid`, traitFilterOf(offer.traits)).join(' AND ')}) AS matches`, p.values);
    if (!matches) {
      const wanted = offer.traits.map((t) => `${t.traitType}:${t.value}`).join(', ');
      throw new ValidationError([{ field: 'tokenId', message: `asset ${asset.tokenAddress}/${asset.tokenId} does not carry the traits offer ${offer.id} asks for (${wanted})` }]);
    }
  }
  return asset;
}

/**
 * The owner of an asset accepts an offer for it, selling one unit. Of concurrent acceptances touching one
 * asset exactly one wins; of concurrent acceptances of one offer, exactly `quantity` win. The losers get 409.
 */
export async function acceptOffer(ctx: Context, offerId: string, ref: AssetRef = {}): Promise<string> {
  const caller = await ctx.requireCaller();
  const offer = await getOffer(ctx, offerId);
  const asset = await assetSold(ctx, offer, ref);
  if (asset.owner !== caller.address) {
    // One who sold the asset since the offer was made lost a race (or is late): a conflict, not a stranger.
    const [sale] = await ctx.ds.query(
      'SELECT id FROM orders WHERE asset_id = $1 AND seller = $2 AND created_at >= $3 LIMIT 1',
      [asset.id, caller.address, offer.createdAt],
    );
    if (sale) throw new ConflictError(`asset ${asset.tokenAddress}/${asset.tokenId} was sold meanwhile (order ${sale.id})`);
    throw new ForbiddenError(`only the owner of asset ${asset.tokenAddress}/${asset.tokenId} may accept offers on it`);
  }
  const now = clock.now();
  if (offer.status !== 'active') throw new ConflictError(`offer ${offer.id} is ${offer.status}, not active`);
  if (offer.taker === caller.address) throw selfTrade(offer, asset);
  if (offer.startTime > now) {
    throw new ValidationError([{ field: 'offerId', message: `the offer's window starts at ${offer.startTime.toISOString()}` }]);
  }
  try {
    const orderId = await withEvents(ctx.ds, async (m, events) => {
      const locked = await lockAsset(m, asset.id);
      if (locked.owner !== caller.address) {
        throw new ConflictError(`asset ${asset.tokenAddress}/${asset.tokenId} changed owner while this acceptance waited`);
      }
      return completeSale(m, events, offer, asset, caller.address, now);
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
    if (offer.assetId) await lockAsset(m, offer.assetId);
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
