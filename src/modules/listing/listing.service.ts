import { EntityManager } from 'typeorm';
import type { Context } from '../../common/request/context';
import { clock } from '../../common/clock';
import { ConflictError, ForbiddenError, NotFoundError, Problems, ValidationError, isUniqueViolation } from '../../common/errors';
import { updateReturning } from '../../common/sql';
import { ADDRESS, UUID, checkText } from '../../common/validate';
import { MAX_LENGTH } from '../../common/limits';
import { Asset } from '../asset/asset.entity';
import { getAsset } from '../asset/asset.service';
import { StoredFee } from '../collection/collection.entity';
import { CreateListingInput, ExpirationInput, Listing, ListingOrderType, UpdateListingInput } from './listing.types';
import { activeListingsByAssets, listingsByIds } from './listing.sql';

const MAX_LISTING_SECONDS = 10 * 365 * 24 * 3600;

/** The asset a listing request names: `assetId`, or `tokenAddress` + `tokenId` (+ `chainId`). */
async function assetOfRequest(ctx: Context, input: CreateListingInput): Promise<Asset> {
  if (input.assetId != null) {
    const asset = UUID.test(input.assetId) ? await ctx.loaders.assetById.load(input.assetId.toLowerCase()) : null;
    if (!asset) throw new NotFoundError(`no asset with id ${input.assetId}`);
    return asset;
  }
  if (input.tokenAddress != null && input.tokenId != null) return getAsset(ctx, input.tokenAddress, input.tokenId, input.chainId);
  throw new ValidationError([{ field: 'assetId', message: 'name the asset by assetId, or by tokenAddress and tokenId' }]);
}

function closingDateOf(problems: Problems, expiration: ExpirationInput | null | undefined, listingTime: Date): Date | null {
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

function makerFeesOf(problems: Problems, raw: Record<string, unknown> | null | undefined): StoredFee[] {
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

interface ListingTerms {
  orderType: ListingOrderType;
  startPrice: string | null | undefined;
  acceptPrice: string | null | undefined;
  listingTime: Date;
  closingDate: Date | null;
}

/** The price and time rules of decisions.md for a listing's terms; returns the accept price to store. */
function checkTerms(problems: Problems, terms: ListingTerms, now: Date): string | null {
  const { orderType, startPrice, listingTime, closingDate } = terms;
  let acceptPrice = terms.acceptPrice ?? null;
  if (startPrice == null) problems.add('startPrice', 'is required');
  else if (Number(startPrice) <= 0) problems.add('startPrice', `must be greater than 0, got ${startPrice}`);
  if (acceptPrice != null && Number(acceptPrice) <= 0) problems.add('acceptPrice', `must be greater than 0, got ${acceptPrice}`);
  if (closingDate) {
    if (closingDate <= listingTime) problems.add('expirationTime', 'must be after the listing time');
    else if (closingDate <= now) problems.add('expirationTime', 'must be in the future');
  }
  if (orderType === ListingOrderType.FIXED_PRICE) acceptPrice ??= startPrice ?? null;
  if (orderType === ListingOrderType.DUTCH_AUCTION) {
    if (acceptPrice == null || startPrice == null || !(Number(acceptPrice) < Number(startPrice))) {
      problems.add('acceptPrice', 'a dutch auction needs an acceptPrice below its startPrice');
    }
    if (!closingDate) problems.add('expirationTime', 'a dutch auction needs an expiration');
  }
  return acceptPrice;
}

/** Locks the asset row for the rest of the transaction; every change of owner or listing goes through it. */
export async function lockAsset(m: EntityManager, assetId: string): Promise<{ id: string; owner: string; collectionId: string }> {
  const [row] = await m.query('SELECT id, owner, collection_id AS "collectionId" FROM assets WHERE id = $1 FOR UPDATE', [assetId]);
  if (!row) throw new NotFoundError(`no asset with id ${assetId}`);
  return row;
}

/** Marks listings whose closing date has passed as expired, so the one-active-listing constraint frees the asset. */
async function expireStaleListings(m: EntityManager, assetId: string, now: Date): Promise<void> {
  await m.query(
    `UPDATE listings SET status = 'expired', updated_at = $2 WHERE asset_id = $1 AND status = 'active' AND closing_date <= $2`,
    [assetId, now],
  );
}

/** The listing as it is now, after a write (the request's cached rows are dropped first). */
export async function readListing(ctx: Context, id: string): Promise<Listing> {
  ctx.invalidate();
  const [listing] = await listingsByIds(ctx.ds, [id], clock.now());
  return listing;
}

export async function createListing(ctx: Context, input: CreateListingInput): Promise<Listing> {
  const caller = await ctx.requireCaller();
  const asset = await assetOfRequest(ctx, input);
  const now = clock.now();
  const problems = new Problems();
  const listingTime = input.listingTime ?? now;
  const closingDate = closingDateOf(problems, input.expirationTime, listingTime);
  const orderType = input.orderType ?? ListingOrderType.FIXED_PRICE;
  const acceptPrice = checkTerms(problems, { orderType, startPrice: input.startPrice, acceptPrice: input.acceptPrice, listingTime, closingDate }, now);
  const makerFees = makerFeesOf(problems, input.makerFees);
  checkText(problems, 'signature', input.signature, { max: MAX_LENGTH.signature });
  const collection = await ctx.loaders.collectionById.load(asset.collectionId);
  const total = [...(collection?.royaltyFees ?? []), ...makerFees].reduce((sum, f) => sum + f.basisPoints, 0);
  if (total > 10000) problems.add('makerFees', `with the collection's royalties the fees add up to ${total} basis points; at most 10000`);
  problems.throwIfAny();

  let listingId: string;
  try {
    listingId = await ctx.ds.transaction(async (m) => {
      const locked = await lockAsset(m, asset.id);
      if (locked.owner !== caller.address) {
        throw new ForbiddenError(`asset ${asset.tokenAddress}/${asset.tokenId} belongs to ${locked.owner}; only its owner may list it`);
      }
      await expireStaleListings(m, asset.id, now);
      const [row] = await m.query(
        `INSERT INTO listings (asset_id, collection_id, seller, order_type, start_price, accept_price, listing_time, closing_date, maker_fees, signature)
         VALUES ($1, $2, $3, $4, $5::numeric, $6::numeric, $7, $8, $9::jsonb, $10) RETURNING id`,
        [asset.id, asset.collectionId, caller.address, orderType, input.startPrice, acceptPrice, listingTime, closingDate, JSON.stringify(makerFees), input.signature ?? null],
      );
      await m.query(`UPDATE assets SET status = 'listed', updated_at = $2 WHERE id = $1`, [asset.id, now]);
      return row.id as string;
    });
  } catch (err) {
    if (isUniqueViolation(err)) {
      throw new ConflictError(`asset ${asset.tokenAddress}/${asset.tokenId} already has an active listing; change it with PUT /v1/assets/listing/{token_address}/{token_id} (updateListing)`);
    }
    throw err;
  }
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

export async function updateListing(
  ctx: Context,
  tokenAddress: string,
  tokenId: string,
  chainId: string | null | undefined,
  input: UpdateListingInput,
): Promise<Listing> {
  const { asset, listing } = await activeListingFor(ctx, tokenAddress, tokenId, chainId);
  const now = clock.now();
  const problems = new Problems();
  const listingTime = input.listingTime ?? listing.listingTime;
  const closingDate = input.expirationTime !== undefined ? closingDateOf(problems, input.expirationTime, listingTime) : listing.closingDate;
  const startPrice = input.startPrice ?? listing.startPrice;
  const acceptPrice = checkTerms(
    problems,
    { orderType: listing.orderType, startPrice, acceptPrice: input.acceptPrice ?? listing.acceptPrice, listingTime, closingDate },
    now,
  );
  problems.throwIfAny();
  await ctx.ds.transaction(async (m) => {
    await lockAsset(m, asset.id);
    const [changed] = await updateReturning(
      m,
      `UPDATE listings SET start_price = $2::numeric, accept_price = $3::numeric, listing_time = $4, closing_date = $5, updated_at = $6
       WHERE id = $1 AND status = 'active' RETURNING id`,
      [listing.id, startPrice, acceptPrice, listingTime, closingDate, now],
    );
    if (!changed) throw new ConflictError('the listing was sold or cancelled meanwhile');
  });
  return readListing(ctx, listing.id);
}

export async function cancelListing(ctx: Context, tokenAddress: string, tokenId: string, chainId: string | null | undefined): Promise<Listing> {
  const { asset, listing } = await activeListingFor(ctx, tokenAddress, tokenId, chainId);
  const now = clock.now();
  await ctx.ds.transaction(async (m) => {
    await lockAsset(m, asset.id);
    const [changed] = await updateReturning(
      m,
      `UPDATE listings SET status = 'cancelled', updated_at = $2 WHERE id = $1 AND status = 'active' RETURNING id`,
      [listing.id, now],
    );
    if (!changed) throw new ConflictError('the listing was sold or cancelled meanwhile');
    await m.query(`UPDATE assets SET status = 'unlisted', updated_at = $2 WHERE id = $1`, [asset.id, now]);
  });
  return readListing(ctx, listing.id);
}
