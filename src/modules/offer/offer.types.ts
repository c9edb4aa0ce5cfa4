import { ArgsType, Field, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { PageArgs, PageType } from '../../common/pagination';
import { TokenListArgs } from '../../common/token-args';
import { AddressScalar, PriceScalar, TokenIdScalar } from '../../common/scalars';
import { Node } from '../../common/graphql/node';

export enum OfferStatus {
  ACTIVE = 'active',
  ACCEPTED = 'accepted',
  CANCELLED = 'cancelled',
  EXPIRED = 'expired',
}
registerEnumType(OfferStatus, { name: 'OfferStatus' });

/** What an offer is for: one asset, any asset of a collection, or any asset of a collection carrying given traits. */
export enum OfferKind {
  ITEM = 'item',
  COLLECTION = 'collection',
  TRAIT = 'trait',
}
registerEnumType(OfferKind, { name: 'OfferKind' });

/** A trait a trait offer asks for (the metadata.attributes convention). */
@ObjectType({ simpleResolvers: true })
export class OfferTrait {
  @Field(() => String)
  traitType: string;

  @Field(() => String)
  value: string;
}

@InputType()
export class TraitInput {
  @Field(() => String)
  traitType: string;

  @Field(() => String)
  value: string;
}

export enum OfferOrderBy {
  CREATED_AT = 'created_at',
  PRICE = 'price',
  END_TIME = 'end_time',
}
registerEnumType(OfferOrderBy, { name: 'OfferOrderBy' });

/** An account's part in an offer (Account.offers). */
export enum OfferRole {
  MADE = 'made',
  RECEIVED = 'received',
}
registerEnumType(OfferRole, {
  name: 'OfferRole',
  description: 'MADE: the account is the taker; RECEIVED: item offers of others on assets the account owns now',
});

/** A price offered for an asset by its would-be taker. `status` is `expired` once `endTime` has passed. */
@ObjectType({ simpleResolvers: true, implements: Node })
export class Offer {
  @Field(() => ID)
  id: string;

  @Field(() => OfferKind, { description: 'item: one asset; collection: any asset of the collection; trait: any asset of it carrying `traits`' })
  kind: OfferKind;

  @Field(() => ID, { nullable: true, description: 'The asset of an item offer; null for collection and trait offers' })
  assetId: string | null;

  @Field(() => ID)
  collectionId: string;

  @Field(() => String)
  chainId: string;

  @Field(() => AddressScalar, { description: "The asset's contract (the collection's, for collection and trait offers)" })
  tokenAddress: string;

  @Field(() => TokenIdScalar, { nullable: true, description: 'The token of an item offer; null for collection and trait offers' })
  tokenId: string | null;

  @Field(() => Int, { description: 'How many assets the taker will buy (1 for item offers)' })
  quantity: number;

  @Field(() => Int, { description: 'How many have been sold to it; the offer is accepted when filled = quantity' })
  filled: number;

  @Field(() => Int, { description: 'Units sold to it whose sale awaits its transfer on chain (SETTLEMENT=chain); no acceptance takes them. 0 otherwise' })
  reserved: number;

  @Field(() => [OfferTrait], { description: 'What a trait offer asks for: every trait type listed, with any of its values; [] for other kinds' })
  traits: OfferTrait[];

  @Field(() => AddressScalar, { description: 'The account that made the offer and takes the asset if it is accepted' })
  taker: string;

  @Field(() => PriceScalar)
  price: string;

  /** The address of the currency of its price (Offer.currency). */
  currencyAddress: string;

  @Field(() => Date)
  startTime: Date;

  @Field(() => Date)
  endTime: Date;

  @Field(() => OfferStatus)
  status: OfferStatus;

  @Field(() => Date)
  createdAt: Date;

  @Field(() => Date)
  updatedAt: Date;

  @Field(() => String, { nullable: true, description: "The taker's EIP-712 signature of the offer, when one was given (docs/signatures.md)" })
  signature: string | null;
}

@ObjectType()
export class OfferPage extends PageType(Offer) {}

/** The arguments of every nested list of offers; an auction's bids (Listing.offers), all item offers, take only these. */
@ArgsType()
export class OfferPageArgs extends PageArgs {
  @Field(() => OfferOrderBy, { defaultValue: OfferOrderBy.CREATED_AT })
  orderBy: OfferOrderBy;

  @Field(() => OfferStatus, { nullable: true })
  status?: OfferStatus | null;

  @Field(() => PriceScalar, { nullable: true, description: 'Only those priced at least this (in their own currency: see currency)' })
  minPrice?: string | null;

  @Field(() => PriceScalar, { nullable: true, description: 'Only those priced at most this (in their own currency: see currency)' })
  maxPrice?: string | null;
}

/** The arguments of an asset's, a collection's or an account's offers. */
@ArgsType()
export class NestedOfferArgs extends OfferPageArgs {
  @Field(() => OfferKind, { nullable: true })
  kind?: OfferKind | null;

  @Field(() => String, {
    nullable: true,
    description: "Only offers in this currency: its address or symbol (each chain's own, as USDC). Sorting by price compares amounts of one currency only when given",
  })
  currency?: string | null;
}

@ArgsType()
export class OfferListArgs extends TokenListArgs {
  @Field(() => OfferOrderBy, { defaultValue: OfferOrderBy.CREATED_AT })
  orderBy: OfferOrderBy;

  @Field(() => AddressScalar, { nullable: true, description: 'The taker (maker of the offer)' })
  ownerId?: string | null;

  @Field(() => OfferStatus, { nullable: true })
  status?: OfferStatus | null;

  @Field(() => String, { nullable: true, description: 'Collection id (UUID) or contract address: offers of every kind on its assets' })
  collectionId?: string | null;

  @Field(() => OfferKind, { nullable: true })
  kind?: OfferKind | null;

  @Field(() => String, {
    nullable: true,
    description: "Only offers in this currency: its address or symbol (each chain's own, as USDC). Sorting by price compares amounts of one currency only when given",
  })
  currency?: string | null;

  @Field(() => PriceScalar, { nullable: true, description: 'Only those priced at least this (in their own currency: see currency)' })
  minPrice?: string | null;

  @Field(() => PriceScalar, { nullable: true, description: 'Only those priced at most this (in their own currency: see currency)' })
  maxPrice?: string | null;
}

@InputType()
export class CreateOfferInput {
  @Field(() => ID, { nullable: true, description: 'The asset offered for (an item offer); or give collectionId' })
  assetId?: string | null;

  @Field(() => String, { nullable: true, description: 'Collection id (UUID) or contract address: a collection offer, or a trait offer with traits' })
  collectionId?: string | null;

  @Field(() => [TraitInput], { nullable: true, description: 'With collectionId: only assets carrying these traits (every type listed, any of its values)' })
  traits?: TraitInput[] | null;

  @Field(() => Int, { nullable: true, description: 'How many assets to buy, 1 to 1000 (collection and trait offers); default 1' })
  quantity?: number | null;

  @Field(() => PriceScalar, { nullable: true, description: 'Required, greater than 0' })
  price?: string | null;

  @Field(() => String, {
    nullable: true,
    description: "The currency of its price: the address or symbol of a currency of the chain (Chain.currencies); default the native currency. A bid on an english auction is in the auction's currency",
  })
  currency?: string | null;

  @Field(() => Date, { nullable: true, description: 'Required' })
  startTime?: Date | null;

  @Field(() => Date, { nullable: true, description: 'Required; after startTime and in the future' })
  endTime?: Date | null;

  @Field(() => String, { nullable: true, description: "The taker's EIP-712 signature of the offer (docs/signatures.md); verified unless SIGNATURES=off" })
  signature?: string | null;
}
