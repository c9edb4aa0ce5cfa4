import { ArgsType, Field, ID, InputType, ObjectType, registerEnumType } from 'type-graphql';
import { PageType } from '../../common/pagination';
import { TokenListArgs } from '../../common/token-args';
import { AddressScalar, PriceScalar, TokenIdScalar } from '../../common/scalars';

export enum OfferStatus {
  ACTIVE = 'active',
  ACCEPTED = 'accepted',
  CANCELLED = 'cancelled',
  EXPIRED = 'expired',
}
registerEnumType(OfferStatus, { name: 'OfferStatus' });

export enum OfferOrderBy {
  CREATED_AT = 'created_at',
  PRICE = 'price',
  END_TIME = 'end_time',
}
registerEnumType(OfferOrderBy, { name: 'OfferOrderBy' });

/** A price offered for an asset by its would-be taker. `status` is `expired` once `endTime` has passed. */
@ObjectType({ simpleResolvers: true })
export class Offer {
  @Field(() => ID)
  id: string;

  @Field(() => ID)
  assetId: string;

  collectionId: string;

  @Field(() => String)
  chainId: string;

  @Field(() => AddressScalar)
  tokenAddress: string;

  @Field(() => TokenIdScalar)
  tokenId: string;

  @Field(() => AddressScalar, { description: 'The account that made the offer and takes the asset if it is accepted' })
  taker: string;

  @Field(() => PriceScalar)
  price: string;

  @Field(() => Date)
  startTime: Date;

  @Field(() => Date)
  endTime: Date;

  @Field(() => OfferStatus)
  status: OfferStatus;

  @Field(() => Date)
  createdAt: Date;

  @Field(() => Date)
  updatedAt: Date;
}

@ObjectType()
export class OfferPage extends PageType(Offer) {}

@ArgsType()
export class OfferListArgs extends TokenListArgs {
  @Field(() => OfferOrderBy, { defaultValue: OfferOrderBy.CREATED_AT })
  orderBy: OfferOrderBy;

  @Field(() => AddressScalar, { nullable: true, description: 'The taker (maker of the offer)' })
  ownerId?: string | null;

  @Field(() => OfferStatus, { nullable: true })
  status?: OfferStatus | null;
}

@InputType()
export class CreateOfferInput {
  @Field(() => ID, { nullable: true, description: 'The asset offered for; required' })
  assetId?: string | null;

  @Field(() => PriceScalar, { nullable: true, description: 'Required, greater than 0' })
  price?: string | null;

  @Field(() => Date, { nullable: true, description: 'Required' })
  startTime?: Date | null;

  @Field(() => Date, { nullable: true, description: 'Required; after startTime and in the future' })
  endTime?: Date | null;
}
