import type { GraphQLResolveInfo } from 'graphql';
import { checkCurrencyFilter } from '../currency/currency.service';
import { Arg, Args, Ctx, FieldResolver, Info, Query, Resolver } from 'type-graphql';
import { Parent } from '../../common/graphql/parent';
import { selectedFields } from '../../common/graphql/selection';
import { nestedPageArgs } from '../../common/pagination';
import type { Context } from '../../common/request/context';
import { AddressScalar } from '../../common/scalars';
import { assetRelations } from '../asset/asset.loaders';
import { AssetPage } from '../asset/asset.types';
import { NestedCollectionArgs } from '../collection/collection.inputs';
import { CollectionPage } from '../collection/collection.resolver';
import { ListingListArgs, ListingPage } from '../listing/listing.types';
import { OfferPage } from '../offer/offer.types';
import { OrderPage } from '../order/order.types';
import { Account, AccountAssetArgs, AccountOfferArgs, AccountOrderArgs } from './account.types';

/** An address's assets, collections, listings, offers and orders: each list batched across the request's accounts. */
@Resolver(() => Account)
export class AccountResolver {
  @Query(() => Account, { description: 'An address and its part in the market; an address with nothing is an empty account, not NOT_FOUND' })
  account(@Arg('address', () => AddressScalar) address: string): Account {
    return { address };
  }

  @FieldResolver(() => AssetPage, { description: 'The assets it owns now' })
  async assets(@Parent() account: Account, @Args() args: AccountAssetArgs, @Ctx() ctx: Context, @Info() info: GraphQLResolveInfo) {
    await checkCurrencyFilter(ctx, args.currency);
    const fields = [...selectedFields(info, 'result')].sort();
    return ctx.loaders.assetPagesByOwner.load({
      parentId: account.address,
      args: { ...nestedPageArgs(args, info), fields, relations: assetRelations(info, ['result']) },
    });
  }

  @FieldResolver(() => CollectionPage, { description: 'The collections it owns' })
  collections(@Parent() account: Account, @Args() args: NestedCollectionArgs, @Ctx() ctx: Context, @Info() info: GraphQLResolveInfo) {
    return ctx.loaders.collectionPagesByOwner.load({ parentId: account.address, args: nestedPageArgs(args, info) });
  }

  @FieldResolver(() => ListingPage, { description: 'Its listings as seller, of every status unless status says' })
  async listings(@Parent() account: Account, @Args() args: ListingListArgs, @Ctx() ctx: Context, @Info() info: GraphQLResolveInfo) {
    await checkCurrencyFilter(ctx, args.currency);
    return ctx.loaders.listingPagesBySeller.load({ parentId: account.address, args: nestedPageArgs(args, info) });
  }

  @FieldResolver(() => OfferPage, {
    description:
      'MADE (default): the offers it made, as taker, of every kind. RECEIVED: the item offers of others on the assets it owns now; ' +
      'collection and trait offers are made to a collection, not to an account: find them in its assets\' offers or their collections\' offers',
  })
  async offers(@Parent() account: Account, @Args() args: AccountOfferArgs, @Ctx() ctx: Context, @Info() info: GraphQLResolveInfo) {
    await checkCurrencyFilter(ctx, args.currency);
    return ctx.loaders.offerPagesByAccount.load({ parentId: account.address, args: nestedPageArgs(args, info) });
  }

  @FieldResolver(() => OrderPage, { description: 'Its orders: BOUGHT as buyer, SOLD as seller, ANY (default) either' })
  async orders(@Parent() account: Account, @Args() args: AccountOrderArgs, @Ctx() ctx: Context, @Info() info: GraphQLResolveInfo) {
    await checkCurrencyFilter(ctx, args.currency);
    return ctx.loaders.orderPagesByAccount.load({ parentId: account.address, args: nestedPageArgs(args, info) });
  }
}
