import { Args, Ctx, Info, FieldResolver, Query, Resolver } from 'type-graphql';
import type { GraphQLResolveInfo } from 'graphql';
import { remainingSelected } from '../../common/pagination';
import { Parent } from '../../common/graphql/parent';
import type { Context } from '../../common/request/context';
import { Chain } from '../chain/chain.entity';
import { Collection } from '../collection/collection.entity';
import { listStatistics } from './statistics.service';
import { StatisticsArgs, StatisticsPage, StatisticsRecord } from './statistics.types';

@Resolver(() => StatisticsRecord)
export class StatisticsResolver {
  @Query(() => StatisticsPage, { description: 'Per-collection market figures for a period, like GET /v1/statistics' })
  statistics(@Args() args: StatisticsArgs, @Ctx() ctx: Context, @Info() info: GraphQLResolveInfo) {
    args.countRemaining = remainingSelected(info);
    return listStatistics(ctx, args);
  }

  @FieldResolver(() => Collection)
  collection(@Parent() record: StatisticsRecord, @Ctx() ctx: Context) {
    return ctx.loaders.collectionById.get(record.collectionId);
  }

  @FieldResolver(() => Chain)
  chain(@Parent() record: StatisticsRecord, @Ctx() ctx: Context) {
    return ctx.loaders.chainById.get(record.chainId);
  }
}
