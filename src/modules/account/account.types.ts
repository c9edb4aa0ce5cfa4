import { ArgsType, Field, ObjectType } from 'type-graphql';
import { AddressScalar } from '../../common/scalars';
import { AssetStatus } from '../asset/asset.entity';
import { NestedAssetArgs } from '../asset/asset.types';
import { NestedOfferArgs, OfferRole } from '../offer/offer.types';
import { NestedOrderArgs, OrderRole } from '../order/order.types';

/** An address and its part in the market. Every address is an account: one with nothing has empty lists. */
@ObjectType({ simpleResolvers: true, description: 'An address and its part in the market; an address with nothing is an empty account' })
export class Account {
  @Field(() => AddressScalar)
  address: string;
}

@ArgsType()
export class AccountAssetArgs extends NestedAssetArgs {
  @Field(() => AssetStatus, { nullable: true })
  status?: AssetStatus | null;
}

@ArgsType()
export class AccountOfferArgs extends NestedOfferArgs {
  @Field(() => OfferRole, { defaultValue: OfferRole.MADE })
  role: OfferRole;
}

@ArgsType()
export class AccountOrderArgs extends NestedOrderArgs {
  @Field(() => OrderRole, { defaultValue: OrderRole.ANY })
  role: OrderRole;
}
