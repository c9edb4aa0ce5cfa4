import { Field, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { DecimalScalar, PriceScalar } from '../../common/scalars';
import { TraitInput } from '../offer/offer.types';
import { Order } from '../order/order.types';
import { Currency } from '../currency/currency.entity';

/** Why a sweep passed a listing by (each skipped listing says which). */
export enum SweepSkipReason {
  PRICE_ABOVE_MAX = 'price_above_max',
  TOTAL_REACHED = 'total_reached',
  SOLD_MEANWHILE = 'sold_meanwhile',
  OWN_LISTING = 'own_listing',
}
registerEnumType(SweepSkipReason, {
  name: 'SweepSkipReason',
  description:
    'PRICE_ABOVE_MAX: its price is above maxUnitPrice (the sweep stops there: the rest cost as much or more); ' +
    'TOTAL_REACHED: buying it would pass maxTotal (the sweep stops there); ' +
    'SOLD_MEANWHILE: sold, cancelled or expired after the sweep read it; OWN_LISTING: the caller listed it',
});

@InputType({ description: "A sweep: buy up to `count` of a collection's cheapest active fixed-price and dutch listings" })
export class SweepCollectionInput {
  @Field(() => String, { description: 'The collection: its id (UUID), contract address or slug' })
  collectionId: string;

  @Field(() => Int, { description: 'How many listings to buy at most: 1 to 50' })
  count: number;

  @Field(() => PriceScalar, { description: 'The most the bought listings may cost together' })
  maxTotal: string;

  @Field(() => PriceScalar, { description: 'The most one listing may cost' })
  maxUnitPrice: string;

  @Field(() => [TraitInput], { nullable: true, description: 'Only assets carrying these traits (every type listed, any of its values), as assets(trait:)' })
  traits?: TraitInput[] | null;

  @Field(() => String, {
    nullable: true,
    description: "Only listings priced in this currency (the address or symbol of a currency of the collection's chain); default the native currency. maxTotal and maxUnitPrice are in it",
  })
  currency?: string | null;

  @Field(() => Boolean, {
    defaultValue: true,
    description: 'true: buy as many as fit; false: all `count` or nothing (409 CONFLICT, nothing bought, when they do not all fit)',
  })
  partial: boolean;
}

/** A listing the sweep did not buy, and why. */
@ObjectType({ simpleResolvers: true })
export class SweepSkip {
  @Field(() => ID)
  listingId: string;

  @Field(() => ID)
  assetId: string;

  @Field(() => SweepSkipReason)
  reason: SweepSkipReason;

  @Field(() => PriceScalar, { description: 'Its current price as the sweep read it' })
  price: string;

  @Field(() => DecimalScalar, { description: 'The price, exact' })
  priceDecimal: string;

  @Field(() => String, { description: 'The reason in words' })
  message: string;
}

/** What a sweep bought (orders, cheapest first) and what it passed by. */
@ObjectType({ simpleResolvers: true })
export class SweepResult {
  @Field(() => [Order], { description: 'The orders of the listings bought, in the order they were bought (cheapest first)' })
  orders: Order[];

  @Field(() => [SweepSkip])
  skipped: SweepSkip[];

  @Field(() => PriceScalar, { description: 'What the bought listings cost together' })
  total: string;

  @Field(() => DecimalScalar, { description: 'The total, exact' })
  totalDecimal: string;

  @Field(() => Currency, { description: 'The currency of every price of the sweep: of the listings it considered, its limits and its total' })
  currency: Currency;
}
