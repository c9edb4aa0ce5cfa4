import { Args, Ctx, Info, FieldResolver, ID, Query, Resolver } from 'type-graphql';
import type { GraphQLResolveInfo } from 'graphql';
import { remainingSelected } from '../../common/pagination';
import { Parent } from '../../common/graphql/parent';
import { statisticsNodeId } from '../../common/graphql/node';
import { DecimalScalar } from '../../common/scalars';
import type { Context } from '../../common/request/context';
import { Chain } from '../chain/chain.entity';
import { Collection } from '../collection/collection.entity';
import { listStatistics } from './statistics.service';
import { Asset } from '../asset/asset.entity';
import { FloorListing, StatisticsArgs, StatisticsPage, StatisticsRecord } from './statistics.types';

@Resolver(() => StatisticsRecord)
export class StatisticsResolver {
  @Query(() => StatisticsPage, { description: 'Per-collection market figures for a period, like GET /v1/statistics' })
  statistics(@Args() args: StatisticsArgs, @Ctx() ctx: Context, @Info() info: GraphQLResolveInfo) {
    args.countRemaining = remainingSelected(info);
    return listStatistics(ctx, args);
  }

  @FieldResolver(() => ID, { description: 'Its Node id: of its collection and period' })
  id(@Parent() record: StatisticsRecord): string {
    return statisticsNodeId(record.collectionId, record.period);
  }

  @FieldResolver(() => Collection)
  collection(@Parent() record: StatisticsRecord, @Ctx() ctx: Context) {
    return ctx.loaders.collectionById.get(record.collectionId);
  }

  @FieldResolver(() => DecimalScalar, { nullable: true, description: 'The floor price, exact' })
  floorPriceDecimal(@Parent() record: StatisticsRecord): string | null {
    return record.floorPrice;
  }

  @FieldResolver(() => DecimalScalar, { description: 'The volume, exact' })
  volumeDecimal(@Parent() record: StatisticsRecord): string {
    return record.volume;
  }

  @FieldResolver(() => DecimalScalar, { description: 'The trend window\'s volume, exact' })
  trendVolumeDecimal(@Parent() record: StatisticsRecord): string {
    return record.trendVolume;
  }

  @FieldResolver(() => DecimalScalar, { description: 'The previous window\'s volume, exact' })
  previousVolumeDecimal(@Parent() record: StatisticsRecord): string {
    return record.previousVolume;
  }

  @FieldResolver(() => FloorListing, { nullable: true, description: 'The listing that sets the floor at asOf; null when none is active' })
  floorListing(@Parent() record: StatisticsRecord): FloorListing | null {
    const { floorListingId: id, floorPrice: price, floorAssetId: assetId, floorTokenAddress: tokenAddress, floorTokenId: tokenId } = record;
    if (!id || price === null || !assetId || !tokenAddress || !tokenId) return null;
    return { id, price, assetId, tokenAddress, tokenId };
  }

  @FieldResolver(() => Chain)
  chain(@Parent() record: StatisticsRecord, @Ctx() ctx: Context) {
    return ctx.loaders.chainById.get(record.chainId);
  }
}

@Resolver(() => FloorListing)
export class FloorListingResolver {
  @FieldResolver(() => DecimalScalar, { description: 'The price, exact' })
  priceDecimal(@Parent() listing: FloorListing): string {
    return listing.price;
  }

  @FieldResolver(() => Asset, { description: 'The asset it lists' })
  asset(@Parent() listing: FloorListing, @Ctx() ctx: Context) {
    return ctx.loaders.assetById.load(listing.assetId);
  }
}
