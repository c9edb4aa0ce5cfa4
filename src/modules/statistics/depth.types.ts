import { Field, ID, Int, ObjectType } from 'type-graphql';
import { DecimalScalar, PriceScalar } from '../../common/scalars';

/** A trait value of a collection with its floor: the cheapest active listing of an asset carrying it. */
@ObjectType({ simpleResolvers: true, description: 'A trait value with its floor. Prices in the chain\'s native currency: listings, offers and sales in an ERC-20 currency are not counted (docs/market.md)' })
export class TraitFloor {
  @Field(() => String)
  traitType: string;

  @Field(() => String)
  value: string;

  @Field(() => PriceScalar, { nullable: true, description: 'The lowest current price among the active listings of assets with this trait; null when none is listed' })
  floorPrice: string | null;

  @Field(() => DecimalScalar, { nullable: true, description: 'The floor price, exact' })
  floorPriceDecimal: string | null;

  @Field(() => ID, { nullable: true, description: 'The listing that sets it (the lowest id of equal prices)' })
  floorListingId: string | null;

  @Field(() => Int, { description: 'Assets with this trait that have an active listing' })
  listedCount: number;

  @Field(() => Int, { description: 'Assets of the collection with this trait' })
  assetCount: number;
}

/** A price range of a collection's order book: [minPrice, maxPrice), the last one closed. */
@ObjectType({ simpleResolvers: true, description: 'A price range of the order book. Prices in the chain\'s native currency: listings, offers and sales in an ERC-20 currency are not counted (docs/market.md)' })
export class PriceDepthBucket {
  @Field(() => PriceScalar)
  minPrice: string;

  @Field(() => DecimalScalar, { description: 'The bucket\'s lower bound, exact' })
  minPriceDecimal: string;

  @Field(() => PriceScalar)
  maxPrice: string;

  @Field(() => DecimalScalar, { description: 'The bucket\'s upper bound, exact' })
  maxPriceDecimal: string;

  @Field(() => Int, { description: 'Active listings whose current price is in the bucket' })
  listings: number;

  @Field(() => Int, { description: 'Active offers on the collection (item, collection and trait offers) whose price is in the bucket' })
  offers: number;
}
