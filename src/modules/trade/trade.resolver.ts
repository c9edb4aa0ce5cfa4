import { Arg, Ctx, ID, Mutation, Resolver } from 'type-graphql';
import type { Context } from '../../common/request/context';
import { PriceScalar } from '../../common/scalars';
import { Order } from '../order/order.types';
import { getOrder } from '../order/order.service';
import { buyListing } from './trade.service';
import { sweepCollection } from './sweep';
import { SweepCollectionInput, SweepResult } from './trade.types';

/** Buying: a listing now (buy now), or a collection's cheapest listings (a sweep). */
@Resolver()
export class TradeResolver {
  @Mutation(() => Order, {
    description:
      'Buy now: the caller buys an active listing at its current price (fixed: its price; dutch: its price at this moment; english: its buy-now ' +
      'accept price, refused without one). The order is completed, names the listing and has no offer. 409 when it is no longer active, ' +
      'when its price is above maxPrice, or when it is the caller\'s own listing.',
  })
  async buyListing(
    @Arg('listingId', () => ID) listingId: string,
    @Arg('maxPrice', () => PriceScalar, { nullable: true, description: "The most the caller pays, in the listing's currency: a dutch price above it (it falls with time) is refused" })
    maxPrice: string | null,
    @Ctx() ctx: Context,
  ) {
    return getOrder(ctx, await buyListing(ctx, listingId, maxPrice ?? null));
  }

  @Mutation(() => SweepResult, {
    description:
      "A sweep: buys up to `count` of the collection's cheapest active fixed-price and dutch listings (optionally of assets with the traits), " +
      'each at most maxUnitPrice, together at most maxTotal; the answer lists the orders and the listings skipped, with why.',
  })
  sweepCollection(@Arg('input', () => SweepCollectionInput) input: SweepCollectionInput, @Ctx() ctx: Context) {
    return sweepCollection(ctx, input);
  }
}
