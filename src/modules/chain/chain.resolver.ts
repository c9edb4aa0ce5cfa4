import { Ctx, Query, Resolver } from 'type-graphql';
import { keyedNodeResolver } from '../../common/graphql/node';
import type { Context } from '../../common/request/context';
import { Chain } from './chain.entity';

@Resolver(() => Chain)
export class ChainResolver {
  @Query(() => [Chain], { description: 'The supported chains (EIP-155 ids)' })
  chains(@Ctx() ctx: Context) {
    return ctx.ds.getRepository(Chain).find({ order: { name: 'ASC' } });
  }
}

export const ChainNodeResolver = keyedNodeResolver('Chain', Chain, { name: 'chainId', description: 'EIP-155 chain id, e.g. "1" for Ethereum' });
