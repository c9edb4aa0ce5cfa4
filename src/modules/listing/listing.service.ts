import { EntityManager } from 'typeorm';
import type { Context } from '../../common/request/context';
import { clock } from '../../common/clock';
import { AppError, ConflictError, ForbiddenError, NotFoundError, Problems, ValidationError } from '../../common/errors';
import { ListQuery } from '../../common/list-query';
import { SqlScope } from '../../common/read-model';
import { filterConditions, sortKey } from '../../common/read-model-sql';
import { Params, updateReturning } from '../../common/sql';
import { UUID, checkText } from '../../common/validate';
import { MAX_LENGTH } from '../../common/limits';
import { checkSignature } from '../../common/eip712';
import { Asset, AssetStatus } from '../asset/asset.entity';
import { setAssetsStatus } from '../asset/asset.status';
import { getAsset, loadAssetByToken } from '../asset/asset.service';
import { royaltyFeesOf } from '../asset/asset.read';
import type { StoredFee } from '../collection/collection.entity';
import { ListingRecord } from './listing.entity';
import { approvalRevokedError, revokedAssets, sellerRevokedSql } from './listing.approval';
import { CreateListingInput, Listing, ListingListArgs, ListingOrderType, ListingStatus, UpdateListingInput } from './listing.types';
import { checkListingDecimals, checkListingTerms, closingDateOf, makerFeesOf } from './listing.rules';
import { activeListingsByAssets, LISTING_READ, LISTINGS_WITH_ASSETS, listingColumns, listingsByIds } from './listing.read';
import { EventLog, withEvents } from '../event/event.log';
import { lockAsset, lockAssets } from './auction';
import { pendingOrdersOf, reservedError } from '../order/sale';
import { settlement } from '../order/settlement.settings';
import { currencyOf, currencyOfRequest } from '../currency/currency.service';
import type { Currency } from '../currency/currency.entity';

/** The asset a listing request names: `assetId`, or `tokenAddress` + `tokenId` (+ `chainId`). */
async function assetOfRequest(ctx: Context, input: CreateListingInput): Promise<Asset> {
  if (input.assetId != null) {
    const asset = UUID.test(input.assetId) ? await ctx.loaders.assetById.load(input.assetId.toLowerCase()) : null;
    if (!asset) throw new NotFoundError(`no asset with id ${input.assetId}`);
    return asset;
  }
  if (input.tokenAddress != null && input.tokenId != null) return loadAssetByToken(ctx, input.tokenAddress, input.tokenId, input.chainId);
  throw new ValidationError([{ field: 'assetId', message: 'name the asset by assetId, or by tokenAddress and tokenId' }]);
}

/**
 * Marks the assets' listings whose closing date has passed as expired, so the one-active-listing constraint frees the
 * asset. The expiry event is written unless the sweeper wrote it already (`expiry_swept`; the row lock
 * taken first makes a concurrent sweep either finish before this reads the flag or skip the row).
 */
async function expireStaleListings(m: EntityManager, events: EventLog, assetIds: string[], now: Date): Promise<void> {
  const expired = await updateReturning<{ id: string; swept: boolean }>(
    m,
    `WITH due AS (SELECT id, expiry_swept FROM listings WHERE asset_id = ANY($1::uuid[]) AND status = 'active' AND closing_date <= $2 FOR UPDATE)
     UPDATE listings l SET status = 'expired', expiry_swept = true, updated_at = $2 FROM due WHERE l.id = due.id
     RETURNING l.id, due.expiry_swept AS swept`,
    [assetIds, now],
  );
  for (const listing of expired) if (!listing.swept) events.add('listing.expired', 'listing', listing.id);
}

/** The listing as it is now, after a write (the request's cached rows are dropped first). */
export async function readListing(ctx: Context, id: string): Promise<Listing> {
  ctx.invalidate();
  const [listing] = await listingsByIds(ctx.ds, [id], clock.now());
  return listing;
}

/** A create request that passed createListing's rules: the asset, and the listing's row as it will be written. */
export interface CheckedListing {
  asset: Asset;
  orderType: ListingOrderType;
  startPrice: string | null;
  acceptPrice: string | null;
  listingTime: Date;
  closingDate: Date | null;
  makerFees: StoredFee[];
  signature: string | null;
  /** The currency of its prices (the chain's native one unless the request named another). */
  currency: Currency;
}

/**
 * The rules of a create, for the caller's listing (`maker`): the asset named (404 unknown), prices and
 * times by order type, fees, the signature; a 422 naming every broken field. Reads go through the
 * request's loaders, so the checks of many requests at once share their statements (a bulk create).
 */
export async function checkListing(ctx: Context, maker: string, input: CreateListingInput, now: Date): Promise<CheckedListing> {
  const asset = await assetOfRequest(ctx, input);
  const problems = new Problems();
  const listingTime = input.listingTime ?? now;
  const closingDate = closingDateOf(problems, input.expirationTime, listingTime);
  const orderType = input.orderType ?? ListingOrderType.FIXED_PRICE;
  const { startPrice, acceptPrice } = checkListingTerms(problems, { orderType, startPrice: input.startPrice, acceptPrice: input.acceptPrice, listingTime, closingDate }, now);
  const makerFees = makerFeesOf(problems, input.makerFees);
  const currency = await currencyOfRequest(ctx, problems, 'currency', asset.chainId, input.currency);
  checkListingDecimals(problems, input, currency);
  checkText(problems, 'signature', input.signature, { max: MAX_LENGTH.signature });
  const collection = await ctx.loaders.collectionById.load(asset.collectionId);
  const total = [...royaltyFeesOf(asset, collection), ...makerFees].reduce((sum, f) => sum + f.basisPoints, 0);
  if (total > 10000) problems.add('makerFees', `with the royalties the fees add up to ${total} basis points; at most 10000`);
  let signature = input.signature ?? null;
  // An unknown currency is a problem already: there are no terms to check a signature against.
  if (ctx.policy.signatures !== 'off' && startPrice != null && currency) {
    // The signature fixes the listing time, so a signed listing must name it rather than take the server's clock.
    if (signature != null && input.listingTime == null) problems.add('listingTime', 'is required with a signature: the signed message fixes it');
    else {
      const terms = { maker, tokenAddress: asset.tokenAddress, tokenId: asset.tokenId, orderType, startPrice, acceptPrice, listingTime, closingDate, currency };
      signature = await checkSignature(problems, ctx.policy.signatures, signature, { kind: 'Listing', chainId: asset.chainId, terms });
    }
  }
  problems.throwIfAny();
  return { asset, orderType, startPrice, acceptPrice, listingTime, closingDate, makerFees, signature, currency: currency! };
}

/**
 * Writes checked listings of `seller` inside the caller's transaction, behind the locks of their assets
 * (lockAssets), in a constant number of statements whatever their count. Per item: the new listing's id,
 * or the error that refuses it: 403 when the seller does not own the asset, 409 when the asset has an
 * active listing (or an earlier item lists it too) or when the follower saw the seller revoke the chain's
 * operator (docs/chain.md "Approvals": the listing could not be filled). Nothing else is written when any item is refused:
 * the caller then rolls the transaction back.
 */
export async function insertListings(m: EntityManager, events: EventLog, seller: string, items: readonly CheckedListing[], now: Date): Promise<(string | AppError)[]> {
  const locked = await lockAssets(m, events, [...new Set(items.map((i) => i.asset.id))], now);
  const outcomes: (string | AppError | null)[] = items.map(() => null);
  const firstOf = new Map<string, number>();
  // SETTLEMENT=chain: an asset whose sale awaits its transfer is reserved for it (docs/chain.md).
  const reserved = settlement.onChain ? await pendingOrdersOf(m, [...locked.keys()]) : new Map<string, { id: string; deadline: Date }>();
  items.forEach(({ asset }, i) => {
    const owner = locked.get(asset.id)?.owner;
    const waiting = reserved.get(asset.id);
    if (owner !== seller) {
      outcomes[i] = new ForbiddenError(`asset ${asset.tokenAddress}/${asset.tokenId} belongs to ${owner}; only its owner may list it`);
    } else if (waiting) {
      outcomes[i] = reservedError(asset, waiting);
    } else if (firstOf.has(asset.id)) {
      outcomes[i] = new ConflictError(`asset ${asset.tokenAddress}/${asset.tokenId} is listed by item ${firstOf.get(asset.id)} of this request already`);
    } else firstOf.set(asset.id, i);
  });
  const written = items.filter((_, i) => outcomes[i] === null);
  if (written.length) {
    await expireStaleListings(m, events, written.map((i) => i.asset.id), now);
    const column = <T>(value: (item: CheckedListing) => T) => written.map(value);
    // The unique index of active listings (one per asset) refuses the assets listed meanwhile: those rows are not returned.
    const rows: { id: string; assetId: string }[] = await m.query(
      `INSERT INTO listings (asset_id, collection_id, seller, order_type, start_price, accept_price, listing_time, closing_date, maker_fees, signature,
         currency, currency_decimals)
       SELECT asset_id, collection_id, $3, order_type, start_price, accept_price, listing_time, closing_date, maker_fees, signature, currency, currency_decimals
       FROM unnest($1::uuid[], $2::uuid[], $4::varchar[], $5::numeric[], $6::numeric[], $7::timestamptz[], $8::timestamptz[], $9::jsonb[], $10::text[],
           $11::varchar[], $12::int[])
         AS i(asset_id, collection_id, order_type, start_price, accept_price, listing_time, closing_date, maker_fees, signature, currency, currency_decimals)
       WHERE NOT EXISTS (SELECT 1 FROM assets a JOIN chain_sync s ON s.chain_id = a.chain_id WHERE a.id = i.asset_id AND ${sellerRevokedSql('$3::varchar')})
       ON CONFLICT (asset_id) WHERE status = 'active' DO NOTHING
       RETURNING id, asset_id AS "assetId"`,
      [
        column((i) => i.asset.id),
        column((i) => i.asset.collectionId),
        seller,
        column((i) => i.orderType),
        column((i) => i.startPrice),
        column((i) => i.acceptPrice),
        column((i) => i.listingTime),
        column((i) => i.closingDate),
        column((i) => JSON.stringify(i.makerFees)),
        column((i) => i.signature),
        column((i) => i.currency.address),
        column((i) => i.currency.decimals),
      ],
    );
    const idOf = new Map(rows.map((r) => [r.assetId, r.id]));
    const revoked = rows.length < written.length ? await revokedAssets(m, seller, written.map((i) => i.asset.id).filter((id) => !idOf.has(id))) : new Map<string, string>();
    items.forEach(({ asset }, i) => {
      if (outcomes[i] !== null) return;
      const operator = revoked.get(asset.id);
      outcomes[i] =
        idOf.get(asset.id) ??
        (operator !== undefined
          ? approvalRevokedError(seller, operator, asset, 'a listing')
          : null) ??
        new ConflictError(`asset ${asset.tokenAddress}/${asset.tokenId} already has an active listing; change it with PUT /v1/assets/listing/{token_address}/{token_id} (updateListing)`);
    });
  }
  if (outcomes.every((o) => typeof o === 'string')) {
    await setAssetsStatus(m, [...firstOf.keys()], AssetStatus.LISTED, now);
    for (const id of outcomes as string[]) events.add('listing.created', 'listing', id);
  }
  return outcomes as (string | AppError)[];
}

export async function createListing(ctx: Context, input: CreateListingInput): Promise<Listing> {
  const caller = await ctx.requireCaller();
  const now = clock.now();
  const checked = await checkListing(ctx, caller.address, input, now);
  const listingId = await withEvents(ctx.ds, async (m, events) => {
    const [outcome] = await insertListings(m, events, caller.address, [checked], now);
    if (typeof outcome !== 'string') throw outcome;
    return outcome;
  });
  return readListing(ctx, listingId);
}

/** The active listing of an asset named by token, for changing it; 404 when there is none, 403 unless the caller listed it. */
async function activeListingFor(ctx: Context, tokenAddress: string, tokenId: string, chainId: string | null | undefined) {
  const caller = await ctx.requireCaller();
  const asset = await getAsset(ctx, tokenAddress, tokenId, chainId);
  const [listing] = await activeListingsByAssets(ctx.ds, [asset.id], clock.now());
  if (!listing) throw new NotFoundError(`asset ${tokenAddress}/${tokenId} has no active listing`);
  if (listing.seller !== caller.address) throw new ForbiddenError(`the listing of ${tokenAddress}/${tokenId} belongs to ${listing.seller}`);
  return { asset, listing };
}

const UPDATABLE_LISTING_FIELDS = ['startPrice', 'acceptPrice', 'listingTime', 'expirationTime', 'signature'] as const;

export async function updateListing(
  ctx: Context,
  tokenAddress: string,
  tokenId: string,
  chainId: string | null | undefined,
  input: UpdateListingInput,
): Promise<Listing> {
  // An update that changes nothing would still bump updated_at and send listing.updated to every webhook.
  const changes = UPDATABLE_LISTING_FIELDS.filter((field) => input[field] !== undefined);
  if (!changes.length) {
    throw new ValidationError([{ field: 'input', message: `give at least one field to change: ${UPDATABLE_LISTING_FIELDS.join(', ')}` }]);
  }
  const { asset, listing } = await activeListingFor(ctx, tokenAddress, tokenId, chainId);
  const now = clock.now();
  const problems = new Problems();
  const listingTime = input.listingTime ?? listing.listingTime;
  const closingDate = input.expirationTime !== undefined ? closingDateOf(problems, input.expirationTime, listingTime) : listing.closingDate;
  const { startPrice, acceptPrice } = checkListingTerms(
    problems,
    { orderType: listing.orderType, startPrice: input.startPrice, acceptPrice: input.acceptPrice, listingTime, closingDate },
    now,
    listing,
  );
  const currency = await currencyOf(ctx, asset.chainId, listing.currencyAddress);
  checkListingDecimals(problems, input, currency);
  checkText(problems, 'signature', input.signature, { max: MAX_LENGTH.signature });
  // New terms need a new signature: the old one signed the old terms, so without a new one it is dropped.
  let signature = input.signature ?? (ctx.policy.signatures === 'off' ? listing.signature : null);
  if (ctx.policy.signatures !== 'off' && startPrice != null && currency) {
    const terms = {
      maker: listing.seller,
      tokenAddress: asset.tokenAddress,
      tokenId: asset.tokenId,
      orderType: listing.orderType,
      startPrice,
      acceptPrice,
      listingTime,
      closingDate,
      currency,
    };
    signature = await checkSignature(problems, ctx.policy.signatures, signature, { kind: 'Listing', chainId: asset.chainId, terms });
  }
  problems.throwIfAny();
  await withEvents(ctx.ds, async (m, events) => {
    await lockAsset(m, events, asset.id, now);
    const [changed] = await updateReturning(
      m,
      `UPDATE listings SET start_price = $2::numeric, accept_price = $3::numeric, listing_time = $4, closing_date = $5, updated_at = $6, signature = $7,
         expiry_swept = expiry_swept AND closing_date IS NOT DISTINCT FROM $5
       WHERE id = $1 AND status = 'active' RETURNING id`,
      [listing.id, startPrice, acceptPrice, listingTime, closingDate, now, signature],
    );
    if (!changed) throw new ConflictError('the listing was sold or cancelled meanwhile');
    events.add('listing.updated', 'listing', listing.id);
  });
  return readListing(ctx, listing.id);
}

export async function cancelListing(ctx: Context, tokenAddress: string, tokenId: string, chainId: string | null | undefined): Promise<Listing> {
  const { asset, listing } = await activeListingFor(ctx, tokenAddress, tokenId, chainId);
  const now = clock.now();
  await withEvents(ctx.ds, async (m, events) => {
    await lockAsset(m, events, asset.id, now);
    const { affected } = await m
      .getRepository(ListingRecord)
      .update({ id: listing.id, status: ListingStatus.ACTIVE }, { status: ListingStatus.CANCELLED, updatedAt: now });
    if (!affected) throw new ConflictError('the listing was sold or cancelled meanwhile');
    await setAssetsStatus(m, [asset.id], AssetStatus.UNLISTED, now);
    events.add('listing.cancelled', 'listing', listing.id);
  });
  return readListing(ctx, listing.id);
}

/**
 * The list of listings, every status, each with its figures as read now: the one list that an asset's, a
 * collection's and a seller's listings page (the caller names the parent); its filters and sorts are
 * LISTING_READ's, over `listings l` joined to its asset `a`.
 */
export function listingListQuery(args: ListingListArgs, p = new Params()): ListQuery {
  const now = p.add(clock.now());
  const s: SqlScope = { p, now: () => now, joined: { asset: 'a' } };
  return {
    from: LISTINGS_WITH_ASSETS,
    columns: listingColumns(now),
    idExpression: 'l.id',
    where: filterConditions(LISTING_READ.filters, s, 'l', args),
    params: p,
    sort: sortKey(LISTING_READ.sorts[args.orderBy], s, 'l'),
    orderBy: args.orderBy,
    args,
  };
}
