import { Arg, Ctx, FieldResolver, ID, Query, Resolver } from 'type-graphql';
import { Parent } from '../../common/graphql/parent';
import type { Context } from '../../common/request/context';
import { Chain } from '../chain/chain.entity';
import { Currency } from './currency.entity';
import { currenciesOfChain } from './currency.service';

@Resolver(() => Currency)
export class CurrencyResolver {
  @Query(() => [Currency], { description: 'The currencies prices may be given in on a chain: its native currency first, then the configured ERC-20 tokens by symbol' })
  currencies(@Ctx() ctx: Context, @Arg('chainId', () => ID, { description: 'EIP-155 chain id, e.g. "1"' }) chainId: string) {
    return currenciesOfChain(ctx, chainId);
  }
}

@Resolver(() => Chain)
export class ChainCurrencyResolver {
  @FieldResolver(() => [Currency], { description: 'The currencies prices may be given in: the native currency first, then the configured ERC-20 tokens by symbol' })
  currencies(@Parent() chain: Chain, @Ctx() ctx: Context) {
    return ctx.loaders.currenciesByChain.get(chain.id);
  }
}
