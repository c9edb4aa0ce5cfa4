import { Arg, Ctx, ID, Query, Resolver } from 'type-graphql';
import { keyedNodeResolver } from '../../common/graphql/node';
import type { Context } from '../../common/request/context';
import { Chain } from './chain.entity';
import { ChainSync, chainSync } from './chain.sync';

@Resolver(() => Chain)
export class ChainResolver {
  @Query(() => [Chain], { description: 'The supported chains (EIP-155 ids)' })
  chains(@Ctx() ctx: Context) {
    return ctx.ds.getRepository(Chain).find({ order: { name: 'ASC' } });
  }

  @Query(() => ChainSync, { description: 'How far the gateway has followed a chain: head, confirmed and applied blocks, lag, last error (docs/chain.md)' })
  chainSync(@Ctx() ctx: Context, @Arg('chainId', () => ID) chainId: string) {
    return chainSync(ctx, chainId);
  }
}

export const ChainNodeResolver = keyedNodeResolver('Chain', Chain, { name: 'chainId', description: 'EIP-155 chain id, e.g. "1" for Ethereum' });
