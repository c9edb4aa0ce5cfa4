import { Args, Ctx, FieldResolver, Query, Resolver, Root } from 'type-graphql';
import type { Context } from '../../context';
import { Chain } from '../chain/chain.entity';
import { Collection } from '../collection/collection.entity';
import { listStatistics } from './statistics.service';
import { StatisticsArgs, StatisticsPage, StatisticsRecord } from './statistics.types';

@Resolver(() => StatisticsRecord)
export class StatisticsResolver {
  @Query(() => StatisticsPage, { description: 'Per-collection market figures for a period, like GET /v1/statistics' })
  statistics(@Args() args: StatisticsArgs, @Ctx() ctx: Context) {
    return listStatistics(ctx, args);
  }

  @FieldResolver(() => Collection)
  collection(@Root() record: StatisticsRecord, @Ctx() ctx: Context) {
    return ctx.loaders.collectionById.load(record.collectionId);
  }

  @FieldResolver(() => Chain)
  chain(@Root() record: StatisticsRecord, @Ctx() ctx: Context) {
    return ctx.loaders.chainById.load(record.chainId);
  }
}
