import { Ctx, Query, Resolver } from 'type-graphql';
import type { Context } from '../../common/request/context';
import { Chain } from './chain.entity';

@Resolver(() => Chain)
export class ChainResolver {
  @Query(() => [Chain], { description: 'The supported chains (EIP-155 ids)' })
  chains(@Ctx() ctx: Context) {
    return ctx.ds.getRepository(Chain).find({ order: { name: 'ASC' } });
  }
}
