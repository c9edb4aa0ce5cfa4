import { Arg, Args, Ctx, FieldResolver, ID, Info, Mutation, Query, Resolver } from 'type-graphql';
import { checkCurrencyFilter } from '../currency/currency.service';
import { Parent } from '../../common/graphql/parent';
import { traitNodeId } from '../../common/graphql/node';
import { whenLoaded } from '../../common/batch';
import type { GraphQLResolveInfo } from 'graphql';
import { nestedPageArgs, remainingSelected } from '../../common/pagination';
import { selectedFields } from '../../common/graphql/selection';
import type { Context } from '../../common/request/context';
import { AddressScalar, TokenIdScalar } from '../../common/scalars';
import { Chain } from '../chain/chain.entity';
import { Collection } from '../collection/collection.entity';
import { Fee, feesOf } from '../collection/fee.type';
import { Listing, ListingListArgs, ListingPage } from '../listing/listing.types';
import { NestedOfferArgs, Offer, OfferPage } from '../offer/offer.types';
import { NestedOrderArgs, OrderPage } from '../order/order.types';
import { Asset, AssetStatus } from './asset.entity';
import { assetRelations } from './asset.loaders';
import { assetStatusOf } from './asset.read';
import { Trait } from './asset.traits';
import { createAsset, getAsset, getAssetById, listAssets } from './asset.service';
import { AssetListArgs, AssetPage, CreateAssetInput } from './asset.types';

@Resolver(() => Asset)
export class AssetResolver {
  @Query(() => AssetPage, { description: 'Assets, filtered and paged like GET /v1/assets' })
  assets(@Args() args: AssetListArgs, @Ctx() ctx: Context, @Info() info: GraphQLResolveInfo) {
    args.countRemaining = remainingSelected(info);
    return listAssets(ctx, args, [...selectedFields(info, 'result')].sort(), assetRelations(info, ['result']));
  }

  @Query(() => Asset, { description: 'The asset with this contract address and token id' })
  asset(
    @Arg('tokenAddress', () => AddressScalar) tokenAddress: string,
    @Arg('tokenId', () => TokenIdScalar) tokenId: string,
    @Arg('chainId', () => String, { nullable: true }) chainId: string | null,
    @Ctx() ctx: Context,
    @Info() info: GraphQLResolveInfo,
  ) {
    // Its collection in the same statement when the selection reads it (look-ahead).
    return getAsset(ctx, tokenAddress, tokenId, chainId, assetRelations(info, []).includes('collection'));
  }

  @Query(() => Asset)
  assetById(@Arg('id', () => ID) id: string, @Ctx() ctx: Context) {
    return getAssetById(ctx, id);
  }

  @Mutation(() => Asset, { description: "Creates an asset in a collection of the caller's, minting the next token id" })
  createAsset(@Arg('input', () => CreateAssetInput) input: CreateAssetInput, @Ctx() ctx: Context) {
    return createAsset(ctx, input);
  }

  // Relations answer synchronously when a list has loaded them for all its items (prefetchAssetRelations).

  @FieldResolver(() => Collection)
  collection(@Parent() asset: Asset, @Ctx() ctx: Context) {
    return ctx.loaders.collectionById.get(asset.collectionId);
  }

  @FieldResolver(() => Chain)
  chain(@Parent() asset: Asset, @Ctx() ctx: Context) {
    return ctx.loaders.chainById.get(asset.chainId);
  }

  @FieldResolver(() => Listing, { nullable: true, description: 'The active listing, if the asset is for sale now' })
  listing(@Parent() asset: Asset, @Ctx() ctx: Context) {
    return ctx.loaders.activeListingByAsset.get(asset.id);
  }

  @FieldResolver(() => AssetStatus, { description: 'listed while it has an active listing (expiry included)' })
  status(@Parent() asset: Asset, @Ctx() ctx: Context) {
    return whenLoaded(ctx.loaders.activeListingByAsset.get(asset.id), (listing) => assetStatusOf(listing != null));
  }

  @FieldResolver(() => [Trait], { description: 'Its traits (metadata.attributes), each with its count and rarity in the collection' })
  traits(@Parent() asset: Asset, @Ctx() ctx: Context) {
    return ctx.loaders.traitsByAssetId.load(asset.id);
  }

  @FieldResolver(() => [Fee], { description: "The royalty fees: its token's own where the contract declares one (ERC-2981, per token), else the collection's" })
  fees(@Parent() asset: Asset, @Ctx() ctx: Context) {
    if (asset.royaltyFees) return feesOf(asset.royaltyFees, 'royalty');
    return whenLoaded(ctx.loaders.collectionById.get(asset.collectionId), (collection) => feesOf(collection?.royaltyFees, 'royalty'));
  }

  // Pages of its market, batched across the request's assets (one statement per list and arguments).

  @FieldResolver(() => OfferPage, {
    description:
      'The offers that can buy it: its item offers, and the collection offers of its collection (kind tells them apart). ' +
      "Trait offers are not included, though some may match it: see its collection's offers(kind: TRAIT).",
  })
  async offers(@Parent() asset: Asset, @Args() args: NestedOfferArgs, @Ctx() ctx: Context, @Info() info: GraphQLResolveInfo) {
    await checkCurrencyFilter(ctx, args.currency);
    return ctx.loaders.offerPagesByAsset.load({ parentId: asset.id, args: nestedPageArgs(args, info) });
  }

  @FieldResolver(() => Offer, {
    nullable: true,
    description:
      'The best offer that could buy it now: of its item offers, its collection offers and the trait offers whose traits it carries, ' +
      "the active one (window started, not made by its owner) of the highest price, the earliest of equal ones; null when none (batched across assets)",
  })
  topOffer(@Parent() asset: Asset, @Ctx() ctx: Context) {
    return ctx.loaders.topOfferByAsset.load(asset.id);
  }

  @FieldResolver(() => OrderPage, { description: 'Its sales' })
  async orders(@Parent() asset: Asset, @Args() args: NestedOrderArgs, @Ctx() ctx: Context, @Info() info: GraphQLResolveInfo) {
    await checkCurrencyFilter(ctx, args.currency);
    return ctx.loaders.orderPagesByAsset.load({ parentId: asset.id, args: nestedPageArgs(args, info) });
  }

  @FieldResolver(() => ListingPage, { description: 'Its listings of every status, past and present (status filters them as read now)' })
  async listings(@Parent() asset: Asset, @Args() args: ListingListArgs, @Ctx() ctx: Context, @Info() info: GraphQLResolveInfo) {
    await checkCurrencyFilter(ctx, args.currency);
    return ctx.loaders.listingPagesByAsset.load({ parentId: asset.id, args: nestedPageArgs(args, info) });
  }
}

@Resolver(() => Trait)
export class TraitResolver {
  @FieldResolver(() => ID, { description: 'Its Node id: the same under Asset.traits and Collection.traits' })
  id(@Parent() trait: Trait): string {
    return traitNodeId(trait.collectionId, trait.traitType, trait.value);
  }
}
