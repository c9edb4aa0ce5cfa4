import { ArgsType, Field, InputType, Int, registerEnumType } from 'type-graphql';
import { GraphQLJSON, GraphQLSafeInt } from 'graphql-scalars';
import { AddressScalar } from '../../common/scalars';
import { PageArgs } from '../../common/pagination';
import { CollectionStatus } from './collection.entity';

export enum CollectionOrderBy {
  CREATED_AT = 'created_at',
  NAME = 'name',
  TOTAL_SUPPLY = 'total_supply',
}
registerEnumType(CollectionOrderBy, { name: 'CollectionOrderBy' });

/** The filters of every collection list (an account's, the root's, the search's), with the page arguments. */
@ArgsType()
export class CollectionFilterArgs extends PageArgs {
  @Field(() => String, { nullable: true })
  categoryId?: string | null;

  @Field(() => CollectionStatus, { nullable: true })
  status?: CollectionStatus | null;
}

/** The arguments of an account's collections; the root list's add theirs. */
@ArgsType()
export class NestedCollectionArgs extends CollectionFilterArgs {
  @Field(() => CollectionOrderBy, { defaultValue: CollectionOrderBy.CREATED_AT })
  orderBy: CollectionOrderBy;
}

@ArgsType()
export class CollectionListArgs extends NestedCollectionArgs {
  @Field(() => String, { nullable: true })
  chainId?: string | null;

  @Field(() => AddressScalar, { nullable: true })
  ownerAddress?: string | null;

  @Field(() => Boolean, { defaultValue: true, description: 'When false, `assets` of each collection is null' })
  includeAssets: boolean;

  /** Not an argument: the query of searchCollections, whose results are ranked by relevance (common/name-search.ts). */
  search?: string;
}

@InputType()
export class FeeInput {
  @Field(() => AddressScalar)
  address: string;

  @Field(() => Int, { description: '0 to 10000; the fees of one collection or listing add up to at most 10000' })
  basisPoints: number;

  @Field(() => String, { nullable: true, description: 'Implied by where the fee is given: royalty or maker' })
  type?: string | null;
}

/** The profile of a collection: what both creating and updating it may set. */
@InputType('CollectionProfileInput')
export abstract class CollectionProfileInput {
  @Field(() => String, { nullable: true })
  name?: string | null;

  @Field(() => GraphQLJSON, { nullable: true })
  description?: unknown;

  @Field(() => String, { nullable: true })
  imageUrl?: string | null;

  @Field(() => String, { nullable: true })
  discordUrl?: string | null;

  @Field(() => String, { nullable: true })
  telegramUrl?: string | null;

  @Field(() => String, { nullable: true })
  externalUrl?: string | null;

  @Field(() => String, { nullable: true })
  twitterUsername?: string | null;

  @Field(() => String, { nullable: true })
  instagramUsername?: string | null;
}

/** Collection fields a client may set; contractAddress and chainId are required (422 when missing); name defaults to the address. */
@InputType()
export class CreateCollectionInput extends CollectionProfileInput {
  @Field(() => String, { nullable: true, description: 'Defaults to the contract address' })
  declare name?: string | null;

  @Field(() => AddressScalar, { nullable: true })
  contractAddress?: string | null;

  @Field(() => String, { nullable: true, description: 'EIP-155 chain id of all assets of this collection' })
  chainId?: string | null;

  @Field(() => Int, { nullable: true })
  totalSupply?: number | null;

  @Field(() => GraphQLSafeInt, { nullable: true, description: "The block from which a followed chain's transfers of the contract are read (docs/chain.md); from block 0 when absent" })
  startBlock?: number | null;

  @Field(() => [FeeInput], { nullable: true, description: 'Royalty fees' })
  fees?: FeeInput[] | null;

  @Field(() => String, { nullable: true })
  categoryId?: string | null;
}

@InputType()
export class UpdateCollectionInput extends CollectionProfileInput {
  @Field(() => CollectionStatus, { nullable: true, description: 'Only an admin key may change it' })
  status?: CollectionStatus | null;
}

/** A claim by proof (docs/chain.md "Who may speak for a collection"): an EIP-191 signature by the contract's owner() of the claim message. */
@InputType()
export class ClaimCollectionInput {
  @Field(() => String, { nullable: true, description: "EIP-191 personal_sign signature, by the contract's owner(), of the claim message (docs/chain.md); without one the caller must be owner()" })
  signature?: string | null;

  @Field(() => String, { nullable: true, description: 'In the signed message: 8 to 100 letters, digits, _ or -, good for one claim of the collection' })
  nonce?: string | null;

  @Field(() => Date, { nullable: true, description: 'In the signed message (as ISO 8601 with milliseconds, UTC): the claim is refused after it; at most an hour ahead' })
  expiresAt?: Date | null;
}
