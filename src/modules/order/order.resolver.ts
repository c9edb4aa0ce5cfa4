import { Arg, Args, Ctx, Info, FieldResolver, ID, Query, Resolver } from 'type-graphql';
import type { GraphQLResolveInfo } from 'graphql';
import { remainingSelected } from '../../common/pagination';
import { Parent } from '../../common/graphql/parent';
import { DecimalScalar } from '../../common/scalars';
import type { Context } from '../../common/request/context';
import { Asset } from '../asset/asset.entity';
import { Currency } from '../currency/currency.entity';
import { currencyOf } from '../currency/currency.service';
import { Listing } from '../listing/listing.types';
import { Offer } from '../offer/offer.types';
import { getOrder, listOrders } from './order.service';
import { Order, OrderListArgs, OrderPage } from './order.types';

@Resolver(() => Order)
export class OrderResolver {
  @Query(() => OrderPage, { description: 'Orders, filtered and paged like GET /v1/orders' })
  orders(@Args() args: OrderListArgs, @Ctx() ctx: Context, @Info() info: GraphQLResolveInfo) {
    args.countRemaining = remainingSelected(info);
    return listOrders(ctx, args);
  }

  @Query(() => Order)
  order(@Arg('id', () => ID) id: string, @Ctx() ctx: Context) {
    return getOrder(ctx, id);
  }

  @FieldResolver(() => Offer, { nullable: true, description: 'The offer the sale filled; null for a buy now, whose listing is `listing`' })
  offer(@Parent() order: Order, @Ctx() ctx: Context) {
    return order.offerId ? ctx.loaders.offerById.load(order.offerId) : null;
  }

  @FieldResolver(() => Currency, { description: 'The currency of its price' })
  currency(@Parent() order: Order, @Ctx() ctx: Context) {
    return currencyOf(ctx, order.chainId, order.currencyAddress);
  }

  @FieldResolver(() => DecimalScalar, { description: 'The price, exact' })
  priceDecimal(@Parent() order: Order): string {
    return order.price;
  }

  @FieldResolver(() => Asset)
  asset(@Parent() order: Order, @Ctx() ctx: Context) {
    return ctx.loaders.assetById.load(order.assetId);
  }

  @FieldResolver(() => Listing, { nullable: true, description: 'The listing the sale closed (listingId); null when the asset was not listed' })
  listing(@Parent() order: Order, @Ctx() ctx: Context) {
    return order.listingId ? ctx.loaders.listingById.load(order.listingId) : null;
  }
}
