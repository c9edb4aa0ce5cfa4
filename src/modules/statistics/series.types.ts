import { Field, Int, ObjectType, registerEnumType } from 'type-graphql';
import { DecimalScalar, PriceScalar } from '../../common/scalars';

/** A chart's bucket length; REST keeps the documented spellings (1h, 1d), which are its values. */
export enum SeriesInterval {
  HOUR = '1h',
  DAY = '1d',
}
registerEnumType(SeriesInterval, { name: 'SeriesInterval', description: 'HOUR or DAY (REST: 1h, 1d): UTC hours or UTC days' });

/** One bucket of a collection's chart: its sales in [startTime, startTime + interval). */
@ObjectType({ simpleResolvers: true, description: 'One bucket of a chart. Prices in the chain\'s native currency: listings, offers and sales in an ERC-20 currency are not counted (docs/market.md)' })
export class SeriesBucket {
  @Field(() => Date, { description: 'Start of the bucket (inclusive), on the UTC hour or UTC midnight' })
  startTime: Date;

  @Field(() => PriceScalar, { description: 'Sum of the prices of the sales in the bucket; 0 without one' })
  volume: string;

  @Field(() => DecimalScalar, { description: 'The volume, exact' })
  volumeDecimal: string;

  @Field(() => Int, { description: 'Completed sales in the bucket' })
  sales: number;

  @Field(() => PriceScalar, { nullable: true, description: 'volume / sales, rounded to 18 decimals; null without a sale' })
  averagePrice: string | null;

  @Field(() => DecimalScalar, { nullable: true, description: 'The average price, exact' })
  averagePriceDecimal: string | null;

  @Field(() => PriceScalar, {
    nullable: true,
    description:
      'The lowest sale price in the bucket (the sales floor); null without a sale. Not the lowest listing price of the time: ' +
      'past listing prices are not kept (docs/api.md, Charts)',
  })
  floorPrice: string | null;

  @Field(() => DecimalScalar, { nullable: true, description: 'The floor price, exact' })
  floorPriceDecimal: string | null;
}

/** A collection's chart: every bucket from `from` to `to`, empty ones included. */
@ObjectType({ simpleResolvers: true })
export class CollectionSeries {
  @Field(() => SeriesInterval)
  interval: SeriesInterval;

  @Field(() => Date, { description: 'Start of the first bucket (inclusive)' })
  from: Date;

  @Field(() => Date, { description: 'End of the last bucket (exclusive); the last bucket may still be running' })
  to: Date;

  @Field(() => [SeriesBucket], { description: 'One per interval, oldest first, without gaps' })
  buckets: SeriesBucket[];
}
