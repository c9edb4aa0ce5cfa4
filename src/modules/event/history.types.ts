import { ArgsType, Field, ID, ObjectType } from 'type-graphql';
import { PageArgs, PageType } from '../../common/pagination';
import { AddressScalar, DecimalScalar, PriceScalar } from '../../common/scalars';

/** One change in the life of an asset, a listing or an offer: an event of the log, with the fields that matter. */
@ObjectType({ simpleResolvers: true })
export class HistoryEntry {
  @Field(() => ID, { description: 'The event\'s position in the log (as in the `events` feed)' })
  id: string;

  @Field(() => String, { description: 'The event type, e.g. asset.created, asset.transferred, listing.created, offer.accepted' })
  type: string;

  @Field(() => Date)
  occurredAt: Date;

  @Field(() => ID, { nullable: true })
  assetId: string | null;

  @Field(() => PriceScalar, {
    nullable: true,
    description: 'A sale\'s price (transfers, orders, a sold listing, an accepted offer), else the listing\'s start price or the offer\'s price',
  })
  price: string | null;

  @Field(() => DecimalScalar, { nullable: true, description: 'The price, exact' })
  priceDecimal: string | null;

  @Field(() => AddressScalar, { nullable: true, description: 'The owner before a transfer (the seller of an order)' })
  from: string | null;

  @Field(() => AddressScalar, { nullable: true, description: 'The owner after a transfer (the buyer of an order; the first owner at creation)' })
  to: string | null;

  @Field(() => ID, { nullable: true, description: 'The listing the event is about, or that a sale sold' })
  listingId: string | null;

  @Field(() => ID, { nullable: true, description: 'The offer the event is about, or that a sale accepted' })
  offerId: string | null;

  @Field(() => ID, { nullable: true, description: 'The order of a sale' })
  orderId: string | null;
}

@ObjectType()
export class HistoryPage extends PageType(HistoryEntry) {}

@ArgsType()
export class HistoryArgs extends PageArgs {
  @Field(() => [String], {
    nullable: true,
    description: 'Only these event types; an asset\'s history shows its creation, transfers and listings unless asked for others',
  })
  types?: string[] | null;
}
