import { Arg, Args, Ctx, FieldResolver, ID, Info, Mutation, Query, Resolver } from 'type-graphql';
import { Parent } from '../../graphql/parent';
import type { GraphQLResolveInfo } from 'graphql';
import { remainingSelected } from '../../common/pagination';
import { selectedFields } from '../../graphql/selection';
import type { Context } from '../../context';
import { AddressScalar, TokenIdScalar } from '../../common/scalars';
import { Chain } from '../chain/chain.entity';
import { Collection } from '../collection/collection.entity';
import { Fee, feesOf } from '../collection/fee.type';
import { Listing } from '../listing/listing.types';
import { Asset, AssetStatus } from './asset.entity';
import { createAsset, getAsset, getAssetById, listAssets } from './asset.service';
import { AssetListArgs, AssetPage, CreateAssetInput } from './asset.types';

@Resolver(() => Asset)
export class AssetResolver {
  @Query(() => AssetPage, { description: 'Assets, filtered and paged like GET /v1/assets' })
  assets(@Args() args: AssetListArgs, @Ctx() ctx: Context, @Info() info: GraphQLResolveInfo) {
    args.countRemaining = remainingSelected(info);
    return listAssets(ctx, args, [...selectedFields(info, 'result')].sort());
  }

  @Query(() => Asset, { description: 'The asset with this contract address and token id' })
  asset(
    @Arg('tokenAddress', () => AddressScalar) tokenAddress: string,
    @Arg('tokenId', () => TokenIdScalar) tokenId: string,
    @Arg('chainId', () => String, { nullable: true }) chainId: string | null,
    @Ctx() ctx: Context,
  ) {
    return getAsset(ctx, tokenAddress, tokenId, chainId);
  }

  @Query(() => Asset)
  assetById(@Arg('id', () => ID) id: string, @Ctx() ctx: Context) {
    return getAssetById(ctx, id);
  }

  @Mutation(() => Asset, { description: "Creates an asset in a collection of the caller's, minting the next token id" })
  createAsset(@Arg('input', () => CreateAssetInput) input: CreateAssetInput, @Ctx() ctx: Context) {
    return createAsset(ctx, input);
  }

  @FieldResolver(() => Collection)
  async collection(@Parent() asset: Asset, @Ctx() ctx: Context) {
    return ctx.loaders.collectionById.load(asset.collectionId);
  }

  @FieldResolver(() => Chain)
  chain(@Parent() asset: Asset, @Ctx() ctx: Context) {
    return ctx.loaders.chainById.load(asset.chainId);
  }

  @FieldResolver(() => Listing, { nullable: true, description: 'The active listing, if the asset is for sale now' })
  listing(@Parent() asset: Asset, @Ctx() ctx: Context) {
    return ctx.loaders.activeListingByAsset.load(asset.id);
  }

  @FieldResolver(() => AssetStatus, { description: 'listed while it has an active listing (expiry included)' })
  async status(@Parent() asset: Asset, @Ctx() ctx: Context) {
    return (await ctx.loaders.activeListingByAsset.load(asset.id)) ? AssetStatus.LISTED : AssetStatus.UNLISTED;
  }

  @FieldResolver(() => [Fee], { description: "The collection's royalty fees" })
  async fees(@Parent() asset: Asset, @Ctx() ctx: Context) {
    const collection = await ctx.loaders.collectionById.load(asset.collectionId);
    return feesOf(collection?.royaltyFees, 'royalty');
  }
}
