import { Arg, Args, Ctx, Info, FieldResolver, ID, Mutation, Query, Resolver } from 'type-graphql';
import type { GraphQLResolveInfo } from 'graphql';
import { Parent } from '../../common/graphql/parent';
import type { Context } from '../../common/request/context';
import { Page, remainingSelected } from '../../common/pagination';
import { AddressScalar, DecimalScalar, TokenIdScalar } from '../../common/scalars';
import { Asset } from '../asset/asset.entity';
import { Currency } from '../currency/currency.entity';
import { currencyOf } from '../currency/currency.service';
import { AssetPage } from '../asset/asset.types';
import { Order } from '../order/order.types';
import { getOrder } from '../order/order.service';
import { acceptOffer, cancelOffer, cancelOffers, createOffer, getOffer, listOffers } from './offer.service';
import { CancelledByMaker } from '../listing/listing.types';
import { CreateOfferInput, Offer, OfferListArgs, OfferPage } from './offer.types';

@Resolver(() => Offer)
export class OfferResolver {
  @Query(() => OfferPage, { description: 'Offers, filtered and paged like GET /v1/offers' })
  offers(@Args() args: OfferListArgs, @Ctx() ctx: Context, @Info() info: GraphQLResolveInfo) {
    args.countRemaining = remainingSelected(info);
    return listOffers(ctx, args);
  }

  @Query(() => Offer)
  offer(@Arg('id', () => ID) id: string, @Ctx() ctx: Context) {
    return getOffer(ctx, id);
  }

  @Mutation(() => Offer, {
    description: "Offers a price for an asset; the caller is the taker. At or above the listing's accept price it is accepted at once.",
  })
  createOffer(@Arg('input', () => CreateOfferInput) input: CreateOfferInput, @Ctx() ctx: Context) {
    return createOffer(ctx, input);
  }

  @Mutation(() => Order, {
    description:
      "The asset's owner accepts an offer: the asset passes to the taker and an order is completed. " +
      'A collection or trait offer needs the asset sold (assetId, or tokenAddress and tokenId); each acceptance fills one unit.',
  })
  async acceptOffer(
    @Arg('offerId', () => ID) offerId: string,
    @Arg('assetId', () => ID, { nullable: true, description: 'The asset sold, by id' }) assetId: string | null,
    @Arg('tokenAddress', () => AddressScalar, { nullable: true, description: 'The asset sold: its contract' }) tokenAddress: string | null,
    @Arg('tokenId', () => TokenIdScalar, { nullable: true, description: 'The asset sold: its token id' }) tokenId: string | null,
    @Arg('chainId', () => String, { nullable: true, description: 'The asset sold: its chain, when its contract is on several' }) chainId: string | null,
    @Ctx() ctx: Context,
  ) {
    return getOrder(ctx, await acceptOffer(ctx, offerId, { assetId, tokenAddress, tokenId, chainId }));
  }

  @Mutation(() => Offer, { description: 'The maker withdraws an active offer' })
  cancelOffer(@Arg('id', () => ID) id: string, @Ctx() ctx: Context) {
    return cancelOffer(ctx, id);
  }

  @Mutation(() => CancelledByMaker, {
    description:
      "Cancels all of the maker's active offers, of every kind (of one collection, when given), all in one transaction; only the maker. " +
      'Offers accepted meanwhile are left as they are.',
  })
  cancelOffers(
    @Arg('maker', () => AddressScalar, { description: "The taker whose offers are cancelled: the caller's own address" }) maker: string,
    @Arg('collection', () => String, { nullable: true, description: 'Only the offers of this collection: its id, contract address or slug' })
    collection: string | null,
    @Ctx() ctx: Context,
  ) {
    return cancelOffers(ctx, maker, collection);
  }

  @FieldResolver(() => AssetPage, { description: 'The asset offered for, as a page (interface.md 2.8); empty for collection and trait offers' })
  async assets(@Parent() offer: Offer, @Ctx() ctx: Context): Promise<Page<Asset>> {
    const asset = offer.assetId ? await ctx.loaders.assetById.load(offer.assetId) : null;
    return { cursor: null, remaining: 0, result: asset ? [asset] : [] };
  }

  @FieldResolver(() => Currency, { description: 'The currency of its price' })
  currency(@Parent() offer: Offer, @Ctx() ctx: Context) {
    return currencyOf(ctx, offer.chainId, offer.currencyAddress);
  }

  @FieldResolver(() => DecimalScalar, { description: 'The price, exact' })
  priceDecimal(@Parent() offer: Offer): string {
    return offer.price;
  }

  @FieldResolver(() => Asset, { nullable: true, description: 'The asset of an item offer; null for collection and trait offers' })
  asset(@Parent() offer: Offer, @Ctx() ctx: Context) {
    return offer.assetId ? ctx.loaders.assetById.load(offer.assetId) : null;
  }
}
