import { ArgsType, Extensions, Field, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';
import { PageArgs, PageType } from '../../common/pagination';
import { AddressScalar, PriceScalar, TokenIdScalar } from '../../common/scalars';
import { StoredFee } from '../collection/collection.entity';
import { Node } from '../../common/graphql/node';

export enum ListingOrderType {
  FIXED_PRICE = 'fixed_price',
  DUTCH_AUCTION = 'dutch_auction',
  ENGLISH_AUCTION = 'english_auction',
}
registerEnumType(ListingOrderType, { name: 'ListingOrderType' });

export enum ListingStatus {
  ACTIVE = 'active',
  /** Its sale awaits the transfer on chain (SETTLEMENT=chain, docs/chain.md): held, neither sold nor for sale. */
  PENDING = 'pending',
  SOLD = 'sold',
  CANCELLED = 'cancelled',
  EXPIRED = 'expired',
  /** Its seller no longer owns the token (a transfer seen on chain, docs/chain.md): it is never filled. */
  INACTIVE = 'inactive',
}
registerEnumType(ListingStatus, { name: 'ListingStatus' });

/** An asset's offer for sale. Status and current price are computed at the moment of reading. */
@ObjectType({ simpleResolvers: true, implements: Node })
export class Listing {
  @Field(() => ID)
  id: string;

  @Field(() => ID)
  assetId: string;

  collectionId: string;

  @Field(() => AddressScalar, { description: 'The owner who listed the asset' })
  seller: string;

  @Field(() => ListingOrderType)
  orderType: ListingOrderType;

  @Field(() => ListingStatus, {
    description:
      'active until sold, cancelled, or its closing date passes; pending while its sale awaits the transfer on chain; inactive when its seller no longer owns the token on chain',
  })
  status: ListingStatus;

  @Field(() => String, {
    nullable: true,
    description: 'Why an inactive listing is inactive: owner_changed (its seller no longer owns the token), relisted (another listing of the asset became active while its sale awaited the chain); null otherwise',
  })
  inactiveReason: string | null;

  @Field(() => PriceScalar)
  startPrice: string;

  @Field(() => PriceScalar, { nullable: true, description: 'An offer at or above it is accepted at once, at this price (english: a buy-now price)' })
  acceptPrice: string | null;

  @Field(() => PriceScalar, { description: 'fixed: start price; dutch: falls linearly to the accept price; english: its best bid standing now, else its start price' })
  currentPrice: string;

  @Field(() => Date)
  listingTime: Date;

  @Field(() => Date, { nullable: true })
  closingDate: Date | null;

  makerFees: StoredFee[];

  @Field(() => String, { nullable: true })
  signature: string | null;

  @Field(() => String, { description: 'Name of the asset' })
  name: string;

  @Field(() => AddressScalar)
  tokenAddress: string;

  @Field(() => TokenIdScalar)
  tokenId: string;

  chainId: string;

  /** The address of the currency of its prices (Listing.currency). */
  currencyAddress: string;

  @Field(() => Date)
  createdAt: Date;

  @Field(() => Date)
  updatedAt: Date;
}

@ObjectType()
export class ListingPage extends PageType(Listing) {}

export enum ListingOrderBy {
  CREATED_AT = 'created_at',
  LISTING_TIME = 'listing_time',
  CURRENT_PRICE = 'current_price',
}
registerEnumType(ListingOrderBy, { name: 'ListingOrderBy' });

/** The arguments of a list of listings (an asset's, a collection's, a seller's). */
@ArgsType()
export class ListingListArgs extends PageArgs {
  @Field(() => ListingOrderBy, { defaultValue: ListingOrderBy.CREATED_AT })
  orderBy: ListingOrderBy;

  @Field(() => ListingStatus, { nullable: true, description: 'As read now: an active listing past its closing date is expired' })
  status?: ListingStatus | null;

  @Field(() => ListingOrderType, { nullable: true })
  orderType?: ListingOrderType | null;

  @Field(() => String, {
    nullable: true,
    description: "Only listings in this currency: its address or symbol (each chain's own, as USDC). Sorting by price compares amounts of one currency only when given",
  })
  currency?: string | null;
}

@InputType({ description: 'Either `at` or `durationSeconds` (counted from the listing time)' })
export class ExpirationInput {
  @Field(() => Date, { nullable: true })
  at?: Date | null;

  @Field(() => Int, { nullable: true })
  durationSeconds?: number | null;
}

@InputType()
export class CreateListingInput {
  @Field(() => ID, { nullable: true, description: 'The asset, by id; or give tokenAddress and tokenId' })
  assetId?: string | null;

  @Field(() => AddressScalar, { nullable: true })
  tokenAddress?: string | null;

  @Field(() => TokenIdScalar, { nullable: true })
  tokenId?: string | null;

  @Field(() => String, { nullable: true })
  chainId?: string | null;

  @Field(() => Date, { nullable: true, description: 'Defaults to now' })
  listingTime?: Date | null;

  @Field(() => ExpirationInput, { nullable: true, description: 'Becomes the closing date; required for a dutch auction' })
  expirationTime?: ExpirationInput | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Recipient address -> basis points' })
  makerFees?: Record<string, unknown> | null;

  @Field(() => ListingOrderType, { nullable: true, defaultValue: ListingOrderType.FIXED_PRICE })
  orderType?: ListingOrderType | null;

  @Field(() => PriceScalar, { nullable: true })
  acceptPrice?: string | null;

  @Field(() => PriceScalar, { nullable: true, description: 'Required' })
  startPrice?: string | null;

  @Field(() => String, {
    nullable: true,
    description: "The currency of its prices: the address or symbol of a currency of the asset's chain (Chain.currencies); default the native currency",
  })
  currency?: string | null;

  @Field(() => PriceScalar, { nullable: true, description: 'Ignored: the current price is computed from the order type' })
  currentPrice?: string | null;

  @Field(() => String, { nullable: true, description: "The seller's EIP-712 signature of the listing (docs/signatures.md); verified unless SIGNATURES=off" })
  signature?: string | null;
}

@InputType()
export class UpdateListingInput {
  @Field(() => Date, { nullable: true })
  listingTime?: Date | null;

  @Field(() => ExpirationInput, { nullable: true })
  expirationTime?: ExpirationInput | null;

  @Field(() => PriceScalar, { nullable: true })
  acceptPrice?: string | null;

  @Field(() => PriceScalar, { nullable: true })
  startPrice?: string | null;

  @Field(() => String, {
    nullable: true,
    description: "The seller's EIP-712 signature of the listing's new terms (docs/signatures.md); without one, the old signature is dropped",
  })
  signature?: string | null;
}

/** The most listings one bulk create takes (createListings, POST /v1/listings/bulk). */
export const MAX_BULK_LISTINGS = 100;

@ArgsType()
export class CreateListingsArgs {
  @Field(() => [CreateListingInput], {
    description: `The listings, each as createListing takes it: 1 to ${MAX_BULK_LISTINGS}, all created or none`,
  })
  // The cost estimate counts the answer's selection once per item (docs/graphql-protections.md).
  @Extensions({ listedItems: MAX_BULK_LISTINGS })
  input: CreateListingInput[];
}

/** What a bulk create made: the listings, in the order of the request's items. */
@ObjectType({ simpleResolvers: true })
export class CreatedListings {
  @Field(() => [Listing], { description: "The new listings, in the request's order" })
  listings: Listing[];

  @Field(() => Int)
  count: number;
}

/** What a bulk cancel cancelled: the ids of the listings or offers, and how many. */
@ObjectType({ simpleResolvers: true })
export class CancelledByMaker {
  @Field(() => [ID], { description: 'The ids of what was cancelled, oldest first (then by id)' })
  ids: string[];

  @Field(() => Int)
  count: number;
}
