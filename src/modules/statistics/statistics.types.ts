import type { Category } from '../catalog/category.entity';
import type { Chain } from '../chain/chain.entity';
import type { Collection } from '../collection/collection.entity';
import { ArgsType, Field, Float, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { PageArgs, PageType } from '../../common/pagination';
import { AddressScalar, PriceScalar, TokenIdScalar } from '../../common/scalars';
import { Node } from '../../common/graphql/node';

export const PERIODS = { '1h': 3600, '6h': 6 * 3600, '24h': 24 * 3600, '7d': 7 * 86400, '30d': 30 * 86400, all: null } as const;
export type Period = keyof typeof PERIODS;

/** The periods as a GraphQL enum; REST keeps the documented spellings (1h ... all), which are its values. */
export enum StatisticsPeriod {
  H1 = '1h',
  H6 = '6h',
  H24 = '24h',
  D7 = '7d',
  D30 = '30d',
  ALL = 'all',
}
registerEnumType(StatisticsPeriod, { name: 'StatisticsPeriod', description: 'H1, H6, H24, D7, D30 or ALL (REST: 1h, 6h, 24h, 7d, 30d, all)' });

export enum StatisticsOrderBy {
  VOLUME = 'volume',
  FLOOR_PRICE = 'floor_price',
  TOTAL_HOLDERS = 'total_holders',
  TOTAL_TRANSACTIONS = 'total_transactions',
}
registerEnumType(StatisticsOrderBy, { name: 'StatisticsOrderBy' });

/** One collection's market figures for a period, exact at the moment of the request, with how they were computed. */
@ObjectType({ simpleResolvers: true, implements: Node, description: 'A collection\'s market figures for a period. Prices in the chain\'s native currency: listings, offers and sales in an ERC-20 currency are not counted (docs/market.md)' })
export class StatisticsRecord {
  @Field(() => ID)
  collectionId: string;

  chainId: string;

  @Field(() => PriceScalar, { nullable: true, description: 'Lowest current price among active listings now; null when none' })
  floorPrice: string | null;

  @Field(() => ID, { nullable: true, description: 'The listing that sets the floor' })
  floorListingId: string | null;

  @Field(() => ID, { nullable: true, description: 'The asset of that listing' })
  floorAssetId: string | null;

  floorTokenAddress: string | null;

  floorTokenId: string | null;

  @Field(() => PriceScalar, { description: 'Sum of completed order prices in the period' })
  volume: string;

  @Field(() => Int, { description: 'Distinct owners of its assets now' })
  totalHolders: number;

  @Field(() => Int, { description: 'Completed orders in the period' })
  totalTransactions: number;

  @Field(() => StatisticsPeriod)
  period: string;

  @Field(() => Int, { description: '1 when the trend window\'s volume is above 0 and at least 1.5x the window before it, else 0' })
  isTrending: number;

  @Field(() => Date, { nullable: true, description: 'Start of the period (inclusive); null for all' })
  periodStart: Date | null;

  @Field(() => Date, { description: 'End of the period (exclusive): asOf. Periods are half-open, [periodStart, periodEnd)' })
  periodEnd: Date;

  @Field(() => Date, { description: 'The moment every figure of the record holds for: when its page was computed (at most STATISTICS_MAX_AGE_MS before the request)' })
  asOf: Date;

  @Field(() => Float, {
    description: 'trendVolume / (trendVolume + previousVolume), 0 when both are 0; isTrending is 1 exactly when trendVolume > 0 and the score >= 0.6 (trendVolume >= 1.5 x previousVolume)',
  })
  trendingScore: number;

  @Field(() => PriceScalar, { description: 'Volume of the trend window (the period; for all, the last 24 h)' })
  trendVolume: string;

  @Field(() => PriceScalar, { description: 'Volume of the window of equal length before it' })
  previousVolume: string;

  /**
   * The collection's row, and its chain's and category's, read in the page's own statement: `collection`,
   * `chain` and `collection.category` cost no statement of their own.
   */
  collectionRow?: Collection;
  chainRow?: Chain;
  categoryRow?: Category | null;
}

/** The listing that sets a record's floor, at the record's asOf. */
@ObjectType({ simpleResolvers: true })
export class FloorListing {
  @Field(() => ID)
  id: string;

  @Field(() => PriceScalar, { description: 'Its current price at asOf (the floor price)' })
  price: string;

  @Field(() => ID)
  assetId: string;

  @Field(() => AddressScalar, { description: 'The contract of its asset' })
  tokenAddress: string;

  @Field(() => TokenIdScalar, { description: 'The token id of its asset' })
  tokenId: string;
}

@ObjectType()
export class StatisticsPage extends PageType(StatisticsRecord) {}

@ArgsType()
export class StatisticsArgs extends PageArgs {
  @Field(() => StatisticsOrderBy, { defaultValue: StatisticsOrderBy.VOLUME })
  orderBy: StatisticsOrderBy;

  @Field(() => String, { nullable: true })
  chainId?: string | null;

  @Field(() => StatisticsPeriod, { defaultValue: StatisticsPeriod.H24 })
  period: StatisticsPeriod;

  @Field(() => Int, { nullable: true, description: '1: only trending collections, 0: only the others' })
  isTrending?: number | null;
}
