import { Arg, Args, Ctx, FieldResolver, Info, Mutation, Resolver } from 'type-graphql';
import type { GraphQLResolveInfo } from 'graphql';
import { nestedPageArgs } from '../../common/pagination';
import { Parent } from '../../common/graphql/parent';
import { whenLoaded } from '../../common/batch';
import type { Context } from '../../common/request/context';
import { AddressScalar, DecimalScalar, TokenIdScalar } from '../../common/scalars';
import { Asset } from '../asset/asset.entity';
import { Chain } from '../chain/chain.entity';
import { Fee, feesOf } from '../collection/fee.type';
import { royaltyFeesOf } from '../asset/asset.read';
import { OfferPage, OfferPageArgs } from '../offer/offer.types';
import { Currency } from '../currency/currency.entity';
import { currencyOf } from '../currency/currency.service';
import { cancelListing, createListing, updateListing } from './listing.service';
import { cancelListings, createListings } from './listing.bulk';
import { CancelledByMaker, CreatedListings, CreateListingInput, CreateListingsArgs, Listing, MAX_BULK_LISTINGS, UpdateListingInput } from './listing.types';

@Resolver(() => Listing)
export class ListingResolver {
  @Mutation(() => Listing, { description: 'Lists an asset of the caller for sale (one active listing per asset)' })
  createListing(@Arg('input', () => CreateListingInput) input: CreateListingInput, @Ctx() ctx: Context) {
    return createListing(ctx, input);
  }

  @Mutation(() => CreatedListings, {
    description:
      `Lists up to ${MAX_BULK_LISTINGS} assets of the caller at once, each item as createListing takes it, all or none: when any item is refused ` +
      'nothing is written and the error lists every refused item in its details (index, code, field, message); its code is the first of ' +
      'VALIDATION_FAILED, NOT_FOUND, FORBIDDEN, CONFLICT that an item has',
  })
  createListings(@Args() args: CreateListingsArgs, @Ctx() ctx: Context) {
    return createListings(ctx, args.input);
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

  @Mutation(() => CancelledByMaker, {
    description:
      "Cancels all of the maker's active listings (of one collection, when given), all in one transaction; only the maker. " +
      'Listings sold meanwhile are left as they are.',
  })
  cancelListings(
    @Arg('maker', () => AddressScalar, { description: "The seller whose listings are cancelled: the caller's own address" }) maker: string,
    @Arg('collection', () => String, { nullable: true, description: 'Only the listings of this collection: its id, contract address or slug' })
    collection: string | null,
    @Ctx() ctx: Context,
  ) {
    return cancelListings(ctx, maker, collection);
  }

  @FieldResolver(() => [Fee], { description: "The royalty fees (its token's own where the contract declares one, else the collection's) and the listing's maker fees" })
  fees(@Parent() listing: Listing, @Ctx() ctx: Context) {
    return whenLoaded(ctx.loaders.assetById.get(listing.assetId), (asset) =>
      whenLoaded(ctx.loaders.collectionById.get(listing.collectionId), (collection) => [
        ...feesOf(royaltyFeesOf(asset ?? {}, collection), 'royalty'),
        ...feesOf(listing.makerFees, 'maker'),
      ]),
    );
  }

  @FieldResolver(() => Chain)
  chain(@Parent() listing: Listing, @Ctx() ctx: Context) {
    return ctx.loaders.chainById.get(listing.chainId);
  }

  @FieldResolver(() => Currency, { description: 'The currency of its prices (set when it is listed; cancel and list again to change it)' })
  currency(@Parent() listing: Listing, @Ctx() ctx: Context) {
    return currencyOf(ctx, listing.chainId, listing.currencyAddress);
  }

  @FieldResolver(() => DecimalScalar, { description: 'The start price, exact' })
  startPriceDecimal(@Parent() listing: Listing): string {
    return listing.startPrice;
  }

  @FieldResolver(() => DecimalScalar, { nullable: true, description: 'The accept price, exact' })
  acceptPriceDecimal(@Parent() listing: Listing): string | null {
    return listing.acceptPrice;
  }

  @FieldResolver(() => DecimalScalar, { description: 'The current price, exact (a dutch auction\'s rounded down to its currency\'s decimals)' })
  currentPriceDecimal(@Parent() listing: Listing): string {
    return listing.currentPrice;
  }

  @FieldResolver(() => Asset)
  asset(@Parent() listing: Listing, @Ctx() ctx: Context) {
    return ctx.loaders.assetById.load(listing.assetId);
  }

  @FieldResolver(() => OfferPage, {
    description:
      'The bids of an english auction: the item offers on its asset made while it stood (from its creation to its close, sale or cancellation), ' +
      'of every status; empty for other order types (batched across listings)',
  })
  offers(@Parent() listing: Listing, @Args() args: OfferPageArgs, @Ctx() ctx: Context, @Info() info: GraphQLResolveInfo) {
    return ctx.loaders.bidPagesByListing.load({ parentId: listing.id, args: nestedPageArgs(args, info) });
  }
}
