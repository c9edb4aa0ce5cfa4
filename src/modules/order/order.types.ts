import { ArgsType, Field, Float, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { PageArgs, PageType } from '../../common/pagination';
import { TokenListArgs } from '../../common/token-args';
import { AddressScalar, PriceScalar, TokenIdScalar } from '../../common/scalars';
import { Node } from '../../common/graphql/node';

export enum OrderStatus {
  PENDING = 'pending',
  COMPLETED = 'completed',
  FAILED = 'failed',
}
registerEnumType(OrderStatus, {
  name: 'OrderStatus',
  description: 'completed: the sale is done; pending: it awaits its transfer on chain (SETTLEMENT=chain) until settlementDeadline; failed: the transfer was not seen in time, or the token went elsewhere',
});

export enum OrderOrderBy {
  CREATED_AT = 'created_at',
  PRICE = 'price',
}
registerEnumType(OrderOrderBy, { name: 'OrderOrderBy' });

/** An account's part in an order (Account.orders). */
export enum OrderRole {
  BOUGHT = 'bought',
  SOLD = 'sold',
  ANY = 'any',
}
registerEnumType(OrderRole, { name: 'OrderRole', description: 'BOUGHT: the account is the buyer; SOLD: the seller; ANY: either' });

/** The record of a sale: an accepted offer or a bought listing, with price, seller and buyer. Never written by clients. */
@ObjectType({ simpleResolvers: true, implements: Node })
export class Order {
  @Field(() => ID)
  id: string;

  @Field(() => ID, { nullable: true, description: 'The offer the sale filled; null for a buy now (buyListing, a sweep), which names its listing' })
  offerId: string | null;

  @Field(() => ID, { nullable: true, description: 'The listing the sale closed, if the asset was listed' })
  listingId: string | null;

  @Field(() => ID)
  assetId: string;

  @Field(() => ID)
  collectionId: string;

  @Field(() => String)
  chainId: string;

  @Field(() => AddressScalar)
  tokenAddress: string;

  @Field(() => TokenIdScalar)
  tokenId: string;

  @Field(() => PriceScalar)
  price: string;

  /** The address of the currency of its price (Order.currency): the offer's, or for a buy the listing's. */
  currencyAddress: string;

  @Field(() => AddressScalar)
  seller: string;

  @Field(() => AddressScalar)
  buyer: string;

  @Field(() => OrderStatus)
  status: OrderStatus;

  @Field(() => Date, { nullable: true, description: 'A sale settled on chain: the moment a pending order fails unless its transfer is seen; null for one completed at once' })
  settlementDeadline: Date | null;

  @Field(() => String, { nullable: true, description: 'The transaction whose transfer of the token from seller to buyer completed the order (settled on chain); null otherwise' })
  settlementTransactionHash: string | null;

  @Field(() => Float, { nullable: true, description: 'The block of that transaction' })
  settlementBlockNumber: number | null;

  @Field(() => Int, {
    description: 'Which unit of its offer this sale filled: 1 for an item offer; 1 to quantity for a collection or trait offer, in the order they were filled',
  })
  unit: number;

  @Field(() => Date)
  createdAt: Date;

  @Field(() => Date)
  updatedAt: Date;
}

@ObjectType()
export class OrderPage extends PageType(Order) {}

/** The arguments of an asset's, a collection's or an account's orders. */
@ArgsType()
export class NestedOrderArgs extends PageArgs {
  @Field(() => OrderOrderBy, { defaultValue: OrderOrderBy.CREATED_AT })
  orderBy: OrderOrderBy;

  @Field(() => OrderStatus, { nullable: true })
  status?: OrderStatus | null;

  @Field(() => String, { nullable: true, description: "Only sales in this currency: its address or symbol (each chain's own, as USDC). Sorting by price compares amounts of one currency only when given" })
  currency?: string | null;

  @Field(() => PriceScalar, { nullable: true, description: 'Only those priced at least this (in their own currency: see currency)' })
  minPrice?: string | null;

  @Field(() => PriceScalar, { nullable: true, description: 'Only those priced at most this (in their own currency: see currency)' })
  maxPrice?: string | null;
}

@ArgsType()
export class OrderListArgs extends TokenListArgs {
  @Field(() => OrderOrderBy, { defaultValue: OrderOrderBy.CREATED_AT })
  orderBy: OrderOrderBy;

  @Field(() => String, { nullable: true, description: 'Collection id (UUID) or contract address' })
  collectionId?: string | null;

  @Field(() => AddressScalar, { nullable: true, description: 'Seller or buyer' })
  ownerId?: string | null;

  @Field(() => OrderStatus, { nullable: true })
  status?: OrderStatus | null;

  @Field(() => String, { nullable: true, description: "Only sales in this currency: its address or symbol (each chain's own, as USDC). Sorting by price compares amounts of one currency only when given" })
  currency?: string | null;

  @Field(() => PriceScalar, { nullable: true, description: 'Only those priced at least this (in their own currency: see currency)' })
  minPrice?: string | null;

  @Field(() => PriceScalar, { nullable: true, description: 'Only those priced at most this (in their own currency: see currency)' })
  maxPrice?: string | null;
}
