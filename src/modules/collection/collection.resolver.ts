import { Arg, Args, Ctx, Extensions, FieldResolver, Info, Int, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import { checkCurrencyFilter } from '../currency/currency.service';
import { Parent } from '../../common/graphql/parent';
import type { GraphQLResolveInfo } from 'graphql';
import { selectedFields } from '../../common/graphql/selection';
import type { Context } from '../../common/request/context';
import { nestedPageArgs, PageType, remainingSelected } from '../../common/pagination';
import { AddressScalar } from '../../common/scalars';
import { assetRelations } from '../asset/asset.loaders';
import { AssetPage, NestedAssetArgs } from '../asset/asset.types';
import { Trait } from '../asset/asset.traits';
import { Category } from '../catalog/category.entity';
import { Chain } from '../chain/chain.entity';
import { Listing, ListingListArgs, ListingPage } from '../listing/listing.types';
import { NestedOfferArgs, Offer, OfferPage } from '../offer/offer.types';
import { NestedOrderArgs, OrderPage } from '../order/order.types';
import { Collection } from './collection.entity';
import { ClaimCollectionInput, CollectionListArgs, CreateCollectionInput, UpdateCollectionInput } from './collection.inputs';
import {
  OMIT_ASSETS,
  claimNamedCollection,
  createCollection,
  getCollection,
  listCollections,
  showingAssets,
  updateCollection,
} from './collection.service';
import { Fee, feesOf } from './fee.type';
import { checkPeriod } from '../statistics/statistics.service';
import { StatisticsPeriod, StatisticsRecord } from '../statistics/statistics.types';
import { SERIES_ITEMS, seriesRange } from '../statistics/series.service';
import { CollectionSeries, SeriesInterval } from '../statistics/series.types';
import { checkDepthBuckets, DEPTH_ITEMS } from '../statistics/depth.service';
import { PriceDepthBucket, TraitFloor } from '../statistics/depth.types';
import { clock } from '../../common/clock';

@ObjectType()
export class CollectionPage extends PageType(Collection) {}

@Resolver(() => Collection)
export class CollectionResolver {
  @Query(() => CollectionPage, { description: 'Collections, filtered and paged like GET /v1/collections' })
  collections(@Args() args: CollectionListArgs, @Ctx() ctx: Context, @Info() info: GraphQLResolveInfo) {
    args.countRemaining = remainingSelected(info);
    return listCollections(ctx, args, selectedFields(info, 'result'));
  }

  @Query(() => Collection, {
    description: 'The collection named by id (its UUID, contract address or slug) or by address (one of them; chainId when the address is on several chains)',
  })
  collection(
    @Arg('address', () => AddressScalar, { nullable: true }) address: string | null,
    @Arg('id', () => String, { nullable: true, description: "The collection's UUID, contract address or slug" }) id: string | null,
    @Arg('chainId', () => String, { nullable: true }) chainId: string | null,
    @Arg('includeAssets', () => Boolean, { defaultValue: true, description: 'When false, `assets` is null' })
    includeAssets: boolean,
    @Ctx() ctx: Context,
  ) {
    return getCollection(ctx, { address, id }, chainId, includeAssets);
  }

  @Mutation(() => Collection, { description: 'Creates a collection owned by the caller (needs an API key)' })
  async createCollection(
    @Arg('input', () => CreateCollectionInput) input: CreateCollectionInput,
    @Arg('includeAssets', () => Boolean, { defaultValue: true, description: 'When false, `assets` is null' })
    includeAssets: boolean,
    @Ctx() ctx: Context,
  ) {
    return showingAssets(await createCollection(ctx, input), includeAssets);
  }

  @Mutation(() => Collection, { description: 'Updates a collection named by id (its UUID, contract address or slug) or by address; only its owner or an admin' })
  async updateCollection(
    @Arg('address', () => AddressScalar, { nullable: true }) address: string | null,
    @Arg('id', () => String, { nullable: true, description: "The collection's UUID, contract address or slug" }) id: string | null,
    @Arg('chainId', () => String, { nullable: true }) chainId: string | null,
    @Arg('input', () => UpdateCollectionInput) input: UpdateCollectionInput,
    @Arg('includeAssets', () => Boolean, { defaultValue: true, description: 'When false, `assets` is null' })
    includeAssets: boolean,
    @Ctx() ctx: Context,
  ) {
    return showingAssets(await updateCollection(ctx, { address, id }, chainId, input), includeAssets);
  }

  @Mutation(() => Collection, {
    description:
      "Takes the claim of a collection on a followed chain whose contract answers ERC-173 owner(): for a caller acting for owner(), or with an EIP-191 " +
      'signature by owner() of the claim message naming the caller (docs/chain.md, "Who may speak for a collection")',
  })
  async claimCollection(
    @Arg('address', () => AddressScalar, { nullable: true }) address: string | null,
    @Arg('id', () => String, { nullable: true, description: "The collection's UUID, contract address or slug" }) id: string | null,
    @Arg('chainId', () => String, { nullable: true }) chainId: string | null,
    @Arg('input', () => ClaimCollectionInput, { nullable: true }) input: ClaimCollectionInput | null,
    @Arg('includeAssets', () => Boolean, { defaultValue: true, description: 'When false, `assets` is null' })
    includeAssets: boolean,
    @Ctx() ctx: Context,
  ) {
    return showingAssets(await claimNamedCollection(ctx, { address, id }, chainId, input), includeAssets);
  }

  @FieldResolver(() => Chain)
  chain(@Parent() collection: Collection, @Ctx() ctx: Context) {
    return ctx.loaders.chainById.get(collection.chainId);
  }

  @FieldResolver(() => Category, { nullable: true })
  category(@Parent() collection: Collection, @Ctx() ctx: Context) {
    return collection.categoryId ? ctx.loaders.categoryById.get(collection.categoryId) : null;
  }

  @FieldResolver(() => [Fee], { description: 'Royalty fees' })
  fees(@Parent() collection: Collection) {
    return feesOf(collection.royaltyFees, 'royalty');
  }

  @FieldResolver(() => AssetPage, { nullable: true, description: 'Null when the collection was read with includeAssets: false' })
  async assets(
    @Parent() collection: Collection & { [OMIT_ASSETS]?: boolean },
    @Args() args: NestedAssetArgs,
    @Ctx() ctx: Context,
    @Info() info: GraphQLResolveInfo,
  ) {
    if (collection[OMIT_ASSETS]) return null;
    await checkCurrencyFilter(ctx, args.currency);
    return ctx.loaders.assetPagesByCollection.load({
      parentId: collection.id,
      args: { ...nestedPageArgs(args, info), fields: [...selectedFields(info, 'result')].sort(), relations: assetRelations(info, ['result']) },
    });
  }

  @FieldResolver(() => [Trait], { description: 'Each trait type and value its assets carry, with how many carry it (kept current on create and import)' })
  traits(@Parent() collection: Collection, @Ctx() ctx: Context) {
    return ctx.loaders.traitCountsByCollectionId.load(collection.id);
  }

  @FieldResolver(() => StatisticsRecord, { description: "This collection's market figures for a period (batched across collections)" })
  statistics(
    @Parent() collection: Collection,
    @Arg('period', () => StatisticsPeriod, { defaultValue: StatisticsPeriod.H24 }) period: StatisticsPeriod,
    @Ctx() ctx: Context,
  ) {
    return ctx.loaders.statisticsByCollection.load({ parentId: collection.id, args: checkPeriod(period) });
  }

  @FieldResolver(() => CollectionSeries, {
    description:
      'Its chart: volume, sales, average and lowest sale price per UTC hour or day, every bucket from `from` to `to` (empty ones too); ' +
      'by default the last 48 hours or 30 days, the running bucket last; at most 2000 buckets (batched across collections)',
  })
  @Extensions({ itemsOf: SERIES_ITEMS })
  series(
    @Parent() collection: Collection,
    @Arg('interval', () => SeriesInterval, { defaultValue: SeriesInterval.DAY }) interval: SeriesInterval,
    @Arg('from', () => Date, { nullable: true, description: 'The first bucket is the one holding this moment' }) from: Date | null,
    @Arg('to', () => Date, { nullable: true, description: 'The last bucket is the one holding the moment before this (exclusive)' }) to: Date | null,
    @Ctx() ctx: Context,
  ) {
    return ctx.loaders.seriesByCollection.load({ parentId: collection.id, args: seriesRange(interval, from, to, clock.now()) });
  }

  @FieldResolver(() => [TraitFloor], {
    description:
      'Each trait value of its assets with its floor now: the cheapest active listing of an asset carrying it (the rule of floorListing), ' +
      'and how many such assets are listed; ordered by type and value (batched across collections)',
  })
  traitFloors(@Parent() collection: Collection, @Ctx() ctx: Context) {
    return ctx.loaders.traitFloorsByCollection.load(collection.id);
  }

  @FieldResolver(() => [PriceDepthBucket], {
    description:
      'Its order book now in equal price ranges from the lowest to the highest price: active listings (current price) and active offers ' +
      'per range; empty when it has neither (batched across collections)',
  })
  @Extensions({ itemsOf: DEPTH_ITEMS })
  priceDepth(
    @Parent() collection: Collection,
    @Arg('buckets', () => Int, { defaultValue: 10, description: 'How many ranges, 1 to 100' }) buckets: number,
    @Ctx() ctx: Context,
  ) {
    return ctx.loaders.priceDepthByCollection.load({ parentId: collection.id, args: checkDepthBuckets(buckets) });
  }

  // Pages of its market, batched across the request's collections (one statement per list and arguments).

  @FieldResolver(() => OfferPage, { description: 'Offers of every kind on its assets, like offers(collectionId)' })
  async offers(@Parent() collection: Collection, @Args() args: NestedOfferArgs, @Ctx() ctx: Context, @Info() info: GraphQLResolveInfo) {
    await checkCurrencyFilter(ctx, args.currency);
    return ctx.loaders.offerPagesByCollection.load({ parentId: collection.id, args: nestedPageArgs(args, info) });
  }

  @FieldResolver(() => ListingPage, { description: 'Listings of its assets, of every status unless status says' })
  async listings(@Parent() collection: Collection, @Args() args: ListingListArgs, @Ctx() ctx: Context, @Info() info: GraphQLResolveInfo) {
    await checkCurrencyFilter(ctx, args.currency);
    return ctx.loaders.listingPagesByCollection.load({ parentId: collection.id, args: nestedPageArgs(args, info) });
  }

  @FieldResolver(() => OrderPage, { description: 'Sales of its assets, like orders(collectionId)' })
  async orders(@Parent() collection: Collection, @Args() args: NestedOrderArgs, @Ctx() ctx: Context, @Info() info: GraphQLResolveInfo) {
    await checkCurrencyFilter(ctx, args.currency);
    return ctx.loaders.orderPagesByCollection.load({ parentId: collection.id, args: nestedPageArgs(args, info) });
  }

  @FieldResolver(() => Listing, {
    nullable: true,
    description: "The cheapest active listing in the native currency now (by current price, then id): the listing that sets the statistics' floor; null when none is active",
  })
  floorListing(@Parent() collection: Collection, @Ctx() ctx: Context) {
    return ctx.loaders.floorListingByCollection.load(collection.id);
  }

  @FieldResolver(() => Offer, {
    nullable: true,
    description:
      'The best collection offer that could buy any of its assets now: active, its window started, in the native currency, the highest price (the earliest of equal ones). ' +
      'Item and trait offers are not counted: they cannot buy every asset. Null when there is none.',
  })
  topOffer(@Parent() collection: Collection, @Ctx() ctx: Context) {
    return ctx.loaders.topOfferByCollection.load(collection.id);
  }
}
