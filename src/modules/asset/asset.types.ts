import { ArgsType, Field, InputType, ObjectType, registerEnumType } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';
import { PageArgs, PageType } from '../../common/pagination';
import { AddressScalar, PriceScalar, TokenIdScalar } from '../../common/scalars';
import { Asset, AssetStatus } from './asset.entity';

export enum AssetOrderBy {
  CREATED_AT = 'created_at',
  UPDATED_AT = 'updated_at',
  NAME = 'name',
  TOKEN_ID = 'token_id',
  CURRENT_PRICE = 'current_price',
}
registerEnumType(AssetOrderBy, { name: 'AssetOrderBy' });

@ObjectType()
export class AssetPage extends PageType(Asset) {}

const CURRENCY =
  "Only assets whose active listing is in this currency: its address or symbol (each chain's own, as USDC); unlisted assets are left out. " +
  'Sorting by CURRENT_PRICE compares amounts of one currency only when given';

const MIN_PRICE = "Only assets whose active listing's current price is at least this (in the listing's currency: see currency); unlisted assets are left out";
const MAX_PRICE = "Only assets whose active listing's current price is at most this (in the listing's currency: see currency); unlisted assets are left out";

/** Page arguments of a collection's and an account's `assets`. */
@ArgsType()
export class NestedAssetArgs extends PageArgs {
  @Field(() => AssetOrderBy, { defaultValue: AssetOrderBy.CREATED_AT })
  orderBy: AssetOrderBy;

  @Field(() => String, { nullable: true, description: CURRENCY })
  currency?: string | null;

  @Field(() => PriceScalar, { nullable: true, description: MIN_PRICE })
  minPrice?: string | null;

  @Field(() => PriceScalar, { nullable: true, description: MAX_PRICE })
  maxPrice?: string | null;
}

/** The filters of the asset lists (`assets`, `searchAssets`), with the page arguments. */
@ArgsType()
export class AssetFilterArgs extends PageArgs {
  @Field(() => AddressScalar, { nullable: true, description: 'Address of the ERC721 contract' })
  assetContract?: string | null;

  @Field(() => String, { nullable: true, description: 'Collection id (UUID) or contract address' })
  collectionId?: string | null;

  @Field(() => AddressScalar, { nullable: true, description: 'Owner address' })
  ownerId?: string | null;

  @Field(() => AssetStatus, { nullable: true })
  status?: AssetStatus | null;

  @Field(() => String, { nullable: true })
  chainId?: string | null;

  @Field(() => [String], {
    nullable: true,
    description: 'Traits the asset carries, each type:value (Background:Blue): every trait type given must match, with any of its values',
  })
  trait?: string[] | null;

  @Field(() => String, { nullable: true, description: CURRENCY })
  currency?: string | null;

  @Field(() => PriceScalar, { nullable: true, description: MIN_PRICE })
  minPrice?: string | null;

  @Field(() => PriceScalar, { nullable: true, description: MAX_PRICE })
  maxPrice?: string | null;
}

@ArgsType()
export class AssetListArgs extends AssetFilterArgs {
  @Field(() => AssetOrderBy, { defaultValue: AssetOrderBy.CREATED_AT })
  orderBy: AssetOrderBy;

  /** Not an argument: the query of searchAssets, whose results are ranked by relevance (common/name-search.ts). */
  search?: string;
}

/** interface.md's create-asset body. Required fields are checked by the service so that every missing one is named (422). */
@InputType()
export class CreateAssetInput {
  @Field(() => String, { nullable: true, description: 'Collection id (UUID) or contract address; required' })
  collectionId?: string | null;

  @Field(() => String, { nullable: true, description: 'Required' })
  name?: string | null;

  @Field(() => String, { nullable: true, description: 'Required' })
  description?: string | null;

  @Field(() => String, { nullable: true, description: 'URL of the image; required' })
  imageUrl?: string | null;

  @Field(() => String, { nullable: true })
  animationUrl?: string | null;

  @Field(() => String, { nullable: true })
  externalLink?: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'A JSON object; required' })
  metadata?: unknown;

  @Field(() => AddressScalar, { nullable: true, description: "The collection's contract address; required" })
  tokenAddress?: string | null;

  @Field(() => String, { nullable: true, description: "The collection's chain; required" })
  chainId?: string | null;

  @Field(() => AddressScalar, { nullable: true, description: 'Owning account; the caller unless an admin; required' })
  owner?: string | null;

  @Field(() => TokenIdScalar, { nullable: true, description: 'Omit to mint the next id of the contract' })
  tokenId?: string | null;

  @Field(() => String, {
    nullable: true,
    description:
      'The token\'s tokenURI (http(s)://, ipfs://, ar:// or data:application/json): its document is fetched and fills name, description, ' +
      'imageUrl, animationUrl, externalLink, metadata and traits (metadataStatus says how far). With it, name, description, imageUrl and metadata may be omitted',
  })
  tokenUri?: string | null;
}
