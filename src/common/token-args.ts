import { ArgsType, Field } from 'type-graphql';
import { PageArgs } from './pagination';
import { AddressScalar, TokenIdScalar } from './scalars';

/** List arguments that pick records of one token (offers, orders): its chain, contract and id. */
@ArgsType()
export class TokenListArgs extends PageArgs {
  @Field(() => String, { nullable: true })
  chainId?: string | null;

  @Field(() => AddressScalar, { nullable: true })
  tokenAddress?: string | null;

  @Field(() => TokenIdScalar, { nullable: true })
  tokenId?: string | null;
}
