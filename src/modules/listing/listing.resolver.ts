import { Arg, Ctx, FieldResolver, Mutation, Resolver } from 'type-graphql';
import { Parent } from '../../common/graphql/parent';
import { whenLoaded } from '../../common/batch';
import type { Context } from '../../common/request/context';
import { AddressScalar, TokenIdScalar } from '../../common/scalars';
import { Asset } from '../asset/asset.entity';
import { Chain } from '../chain/chain.entity';
import { Fee, feesOf } from '../collection/fee.type';
import { cancelListing, createListing, updateListing } from './listing.service';
import { CreateListingInput, Listing, UpdateListingInput } from './listing.types';

@Resolver(() => Listing)
export class ListingResolver {
  @Mutation(() => Listing, { description: 'Lists an asset of the caller for sale (one active listing per asset)' })
  createListing(@Arg('input', () => CreateListingInput) input: CreateListingInput, @Ctx() ctx: Context) {
    return createListing(ctx, input);
  }

  @Mutation(() => Listing, { description: "Changes the asset's active listing (its lister only)" })
  updateListing(
    @Arg('tokenAddress', () => AddressScalar) tokenAddress: string,
    @Arg('tokenId', () => TokenIdScalar) tokenId: string,
    @Arg('chainId', () => String, { nullable: true }) chainId: string | null,
    @Arg('input', () => UpdateListingInput) input: UpdateListingInput,
    @Ctx() ctx: Context,
  ) {
    return updateListing(ctx, tokenAddress, tokenId, chainId, input);
  }

  @Mutation(() => Listing, { description: "Cancels the asset's active listing (its lister only)" })
  cancelListing(
    @Arg('tokenAddress', () => AddressScalar) tokenAddress: string,
    @Arg('tokenId', () => TokenIdScalar) tokenId: string,
    @Arg('chainId', () => String, { nullable: true }) chainId: string | null,
    @Ctx() ctx: Context,
  ) {
    return cancelListing(ctx, tokenAddress, tokenId, chainId);
  }

  @FieldResolver(() => [Fee], { description: "The collection's royalty fees and the listing's maker fees" })
  fees(@Parent() listing: Listing, @Ctx() ctx: Context) {
    return whenLoaded(ctx.loaders.collectionById.get(listing.collectionId), (collection) => [
      ...feesOf(collection?.royaltyFees, 'royalty'),
      ...feesOf(listing.makerFees, 'maker'),
    ]);
  }

  @FieldResolver(() => Chain)
  chain(@Parent() listing: Listing, @Ctx() ctx: Context) {
    return ctx.loaders.chainById.get(listing.chainId);
  }

  @FieldResolver(() => Asset)
  asset(@Parent() listing: Listing, @Ctx() ctx: Context) {
    return ctx.loaders.assetById.load(listing.assetId);
  }
}
