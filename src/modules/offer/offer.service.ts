import { keyOf } from '../../common/graphql/node';
import type { Context } from '../../common/request/context';
import { clock } from '../../common/clock';
import { ConflictError, ForbiddenError, NotFoundError, Problems, ValidationError, isUniqueViolation } from '../../common/errors';
import { Page, SortKey } from '../../common/pagination';
import { ListQuery } from '../../common/list-query';
import { fetchPage } from '../../common/list-page';
import { Params, updateReturning } from '../../common/sql';
import { UUID, uuidOf, checkPositivePrice, checkText, required } from '../../common/validate';
import { compareDecimals } from '../../common/decimal';
import { checkSignature, SignedTerms } from '../../common/eip712';
import { MAX_LENGTH } from '../../common/limits';
import { chainCondition, findCollectionByRef } from '../collection/collection.service';
import type { Collection } from '../collection/collection.entity';
import type { Asset } from '../asset/asset.entity';
import { getAsset, getAssetById } from '../asset/asset.service';
import { traitFilterOf, traitFilterSql, traitProblems } from '../asset/asset.traits';
import { activeListingTerms } from '../listing/listing.sql';
import { cancelByMaker, MakerCancel } from '../listing/listing.bulk';
import { approvalRevokedError, revokedAssets } from '../listing/listing.approval';
import type { CancelledByMaker } from '../listing/listing.types';
import { AuctionSale, checkBid, lockAsset } from '../listing/auction';
import { withEvents } from '../event/event.log';
import { completeSales, selfTrade } from '../order/sale';
import { checkCurrencyFilter, checkPriceDecimals, currencyOf, currencyOfRequest } from '../currency/currency.service';
import { offersByIds } from './offer.sql';
import { OFFER_READ } from './offer.read';
import { sqlScope } from '../../common/read-model';
import { checkFilters, filterConditions, keptCountSql, keysetLead, rootRows, RootRows, selectList } from '../../common/read-model-sql';
import { CreateOfferInput, Offer, OfferKind, OfferListArgs, OfferOrderBy, OfferPageArgs } from './offer.types';

/** The sorts of offers over their row `o`. */
export const OFFER_SORTS = OFFER_READ.sorts as Record<OfferOrderBy, SortKey>;

/**
 * What a list of offers is: `from` (offers `o`, joined to whatever names their parent), and conditions on them;
 * `written`: which given filters are written as conditions (the root list's rows may be those of a filter's
 * ranges already, rootRows), default every one.
 */
export interface OfferSource {
  from: string;
  where: string[];
  written?: RootRows['written'];
}

/**
 * The list of offers with the filters every offer list takes (offer.read.ts), over `source`: the root
 * list's and each relation's (an asset's, a collection's, an account's, an auction's bids).
 */
export function offerListQuery(args: OfferPageArgs, s = sqlScope(), source: OfferSource = { from: 'offers o', where: [] }): ListQuery {
  checkFilters(OFFER_READ.filters, args);
  const columns = selectList(OFFER_READ, s);
  const where = [...source.where, ...filterConditions(source.written ? OFFER_READ.filters.filter(source.written) : OFFER_READ.filters, s, 'o', args)];
  return { from: source.from, columns, idExpression: 'o.id', where, params: s.p, sort: OFFER_SORTS[args.orderBy], orderBy: args.orderBy, args };
}

export async function listOffers(ctx: Context, args: OfferListArgs): Promise<Page<Offer>> {
  checkFilters([...OFFER_READ.rootFilters, ...OFFER_READ.filters], args);
  await checkCurrencyFilter(ctx, args.currency);
  const s = sqlScope();
  const where: string[] = [];
  const chain = await chainCondition(ctx, s.p, 'o.chain_id', args.chainId);
  if (chain) where.push(chain);
  const collectionId = args.collectionId == null ? null : (await findCollectionByRef(ctx, args.collectionId)).id;
  const rows = rootRows('offers', [...OFFER_READ.rootFilters, ...OFFER_READ.filters], s, 'o', args);
  where.push(...filterConditions(OFFER_READ.rootFilters.filter(rows.written), s, 'o', { ...args, collectionId }));
  // The chain by its EIP-155 id, as its condition names it; written only when the request counts (PostgreSQL
  // refuses a statement with a parameter it does not use).
  const count = () => keptCountSql(OFFER_READ, s, { ...args, chainId: args.chainId == null ? null : keyOf('Chain', args.chainId) });
  const keyset = keysetLead([...OFFER_READ.rootFilters, ...OFFER_READ.filters], OFFER_READ.sorts[args.orderBy], 'o', { ...args, collectionId });
  return fetchPage<Offer>(ctx.ds, { ...offerListQuery(args, s, { from: `${rows.table} o`, where, written: rows.written }), sources: rows.sources, count, keysetLead: keyset });
}

export async function getOffer(ctx: Context, id: string, field = 'id'): Promise<Offer> {
  const offer = await ctx.loaders.offerById.load(uuidOf(field, id, 'an offer'));
  if (!offer) throw new NotFoundError(`no offer with id ${id}`);
  return offer;
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
  if (required(problems, 'price', input.price)) checkPositivePrice(problems, 'price', input.price);
  required(problems, 'startTime', input.startTime);
  required(problems, 'endTime', input.endTime);
  problems.throwIfAny();
  const target = await offerTarget(ctx, problems, input);
  const chainId = target && (target.kind === OfferKind.ITEM ? target.asset.chainId : target.collection.chainId);
  const currency = chainId ? await currencyOfRequest(ctx, problems, 'currency', chainId, input.currency) : null;
  checkPriceDecimals(problems, 'price', input.price, currency);
  const now = clock.now();
  if (input.endTime! <= input.startTime!) problems.add('endTime', 'must be after startTime');
  else if (input.endTime! <= now) problems.add('endTime', 'must be in the future');
  if (target?.kind === OfferKind.ITEM && target.asset.owner === caller.address) {
    problems.add('assetId', 'you own this asset; one cannot make an offer on one\'s own asset');
  }
  checkText(problems, 'signature', input.signature, { max: MAX_LENGTH.signature });
  problems.throwIfAny();
  // An item offer signs an Offer; a collection or trait offer a CollectionOffer (docs/signatures.md).
  const window = { taker: caller.address, price: input.price!, startTime: input.startTime!, endTime: input.endTime!, currency: currency! };
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
        `INSERT INTO offers (kind, quantity, traits, asset_id, collection_id, chain_id, token_address, token_id, taker, price, start_time, end_time, signature, currency)
         VALUES ($1, $2, $3::jsonb, NULL, $4, $5, $6, NULL, $7, $8::numeric, $9, $10, $11, $12) RETURNING id`,
        [target!.kind, quantity, traits.length ? JSON.stringify(traits) : null, collection.id, collection.chainId, collection.contractAddress,
          caller.address, input.price, input.startTime, input.endTime, signature, currency!.address],
      );
      events.add('offer.created', 'offer', id);
      return id as string;
    }
    const asset = target!.asset;
    const locked = await lockAsset(m, events, asset.id, now);
    if (locked.owner === caller.address) throw new ValidationError([{ field: 'assetId', message: 'you own this asset now' }]);
    const listing = await activeListingTerms(m, asset.id, now);
    // A listing's price is in its currency: an offer in another one does not meet it, and is no bid on an auction.
    const inListingCurrency = listing?.currencyAddress === currency!.address;
    if (listing?.orderType === 'english_auction' && !inListingCurrency) {
      const auctionCurrency = await currencyOf(ctx, asset.chainId, listing.currencyAddress);
      throw new ValidationError([
        { field: 'currency', message: `a bid on this english auction is in its currency, ${auctionCurrency?.symbol ?? listing.currencyAddress} (${listing.currencyAddress}); got ${currency!.symbol}` },
      ]);
    }
    // An offer at or above the active listing's price (fixed: its price; dutch: its current price; english:
    // its buy-now price), in its currency, whose window has started is taken at once, at that price.
    const fillPrice =
      listing && inListingCurrency && input.startTime! <= now ? (listing.orderType === 'dutch_auction' ? listing.currentPrice : listing.acceptPrice) : null;
    const takes = fillPrice !== null && compareDecimals(input.price!, fillPrice) >= 0;
    if (listing?.orderType === 'english_auction' && !takes) {
      checkBid(problems, input.price!, listing, ctx.policy.auctionMinIncrementPercent);
      problems.throwIfAny();
    }
    const [{ id }] = await m.query(
      `INSERT INTO offers (asset_id, collection_id, chain_id, token_address, token_id, taker, price, start_time, end_time, signature, currency)
       VALUES ($1, $2, $3, $4, $5::numeric, $6, $7::numeric, $8, $9, $10, $11) RETURNING id`,
      [asset.id, asset.collectionId, asset.chainId, asset.tokenAddress, asset.tokenId, caller.address, input.price, input.startTime, input.endTime, signature,
        currency!.address],
    );
    events.add('offer.created', 'offer', id);
    if (takes) {
      const offer = { id, kind: OfferKind.ITEM, taker: caller.address, price: input.price!, currencyAddress: currency!.address };
      await completeSales(m, events, [{ taker: offer, asset, seller: locked.owner, terms: { price: fillPrice! } }], now);
    }
    return id as string;
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
 * On a followed chain with an operator set, an owner who revoked the operator (listing.approval.ts) gets 409.
 */
export async function acceptOffer(ctx: Context, offerId: string, ref: AssetRef = {}): Promise<string> {
  const caller = await ctx.requireCaller();
  const offer = await getOffer(ctx, offerId, 'offerId');
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
    const sale = await withEvents(ctx.ds, async (m, events) => {
      const locked = await lockAsset(m, events, asset.id, now);
      // An auction that closed meanwhile is settled and kept, whatever becomes of this acceptance.
      if (locked.settled) return locked.settled;
      if (locked.owner !== caller.address) {
        throw new ConflictError(`asset ${asset.tokenAddress}/${asset.tokenId} changed owner while this acceptance waited`);
      }
      // On a followed chain with an operator, a seller who revoked it could not deliver the token.
      const operator = (await revokedAssets(m, caller.address, [asset.id])).get(asset.id);
      if (operator !== undefined) throw approvalRevokedError(caller.address, operator, asset, `the sale to offer ${offer.id}`);
      const [orderId] = await completeSales(m, events, [{ taker: offer, asset, seller: caller.address }], now);
      return { orderId };
    });
    ctx.invalidate();
    if ('offerId' in sale && sale.offerId !== offer.id) throw auctionClosed(asset, sale);
    return sale.orderId;
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError(`offer ${offer.id} has already been accepted`);
    throw err;
  }
}

/** A write on an asset came after its english auction closed: the close decided the sale. */
function auctionClosed(asset: { tokenAddress: string; tokenId: string }, sale: AuctionSale): ConflictError {
  return new ConflictError(
    `the english auction of asset ${asset.tokenAddress}/${asset.tokenId} closed at ${sale.closingDate.toISOString()}; its best bid, offer ${sale.offerId}, bought it (order ${sale.orderId})`,
  );
}

/** The maker withdraws an active offer. */
export async function cancelOffer(ctx: Context, id: string): Promise<Offer> {
  const caller = await ctx.requireCaller();
  const offer = await getOffer(ctx, id);
  if (offer.taker !== caller.address) throw new ForbiddenError(`offer ${offer.id} was made by ${offer.taker}; only its maker may cancel it`);
  const now = clock.now();
  const settled = await withEvents(ctx.ds, async (m, events) => {
    const locked = offer.assetId ? await lockAsset(m, events, offer.assetId, now) : null;
    // An auction that closed meanwhile is settled and kept: its bids were final at its close.
    if (locked?.settled) return { ...locked.settled, asset: locked };
    const [changed] = await updateReturning(
      m,
      `UPDATE offers SET status = 'cancelled', updated_at = $2 WHERE id = $1 AND status = 'active' AND end_time > $2 RETURNING id`,
      [offer.id, now],
    );
    if (!changed) throw new ConflictError(`offer ${offer.id} is no longer active`);
    events.add('offer.cancelled', 'offer', offer.id);
    return null;
  });
  ctx.invalidate();
  if (settled) throw auctionClosed(settled.asset, settled);
  const [cancelled] = await offersByIds(ctx.ds, [offer.id], clock.now());
  return cancelled;
}

const OFFERS_CANCEL: MakerCancel = {
  noun: 'offers',
  event: 'offer.cancelled',
  subject: 'offer',
  select: `SELECT o.id, o.asset_id AS "assetId" FROM offers o
           WHERE o.taker = $1 AND o.status = 'active' AND o.end_time > $2 AND ($3::uuid IS NULL OR o.collection_id = $3::uuid)
           ORDER BY o.created_at, o.id`,
  // The single cancel's condition; a bid that won an auction settled behind the locks is accepted now and left out.
  cancel: `UPDATE offers SET status = 'cancelled', updated_at = $2 WHERE id = ANY($1::uuid[]) AND status = 'active' AND end_time > $2
           RETURNING id, asset_id AS "assetId"`,
};

/** Cancels all of the maker's (the taker's) active offers, of every kind (of one collection, when named). */
export function cancelOffers(ctx: Context, maker: string, collection: string | null | undefined): Promise<CancelledByMaker> {
  return cancelByMaker(ctx, maker, collection, OFFERS_CANCEL);
}
