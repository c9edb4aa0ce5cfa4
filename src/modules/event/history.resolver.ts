import type { GraphQLResolveInfo } from 'graphql';
import { Arg, Args, Ctx, FieldResolver, Info, Query, Resolver } from 'type-graphql';
import { Parent } from '../../common/graphql/parent';
import { remainingSelected } from '../../common/pagination';
import type { Context } from '../../common/request/context';
import { AddressScalar, TokenIdScalar } from '../../common/scalars';
import { Asset } from '../asset/asset.entity';
import { getAsset } from '../asset/asset.service';
import { Listing } from '../listing/listing.types';
import { Offer } from '../offer/offer.types';
import { EVENT_TYPES } from './event.log';
import { ASSET_HISTORY_TYPES, HistoryPageArgs, historyTypes } from './history.loaders';
import { HistoryArgs, HistoryPage } from './history.types';

function pageArgs(args: HistoryArgs, info: GraphQLResolveInfo, fallback: readonly string[]): HistoryPageArgs {
  return {
    limit: args.limit,
    page: args.page ?? null,
    direction: args.direction,
    countRemaining: remainingSelected(info),
    types: historyTypes(args.types, fallback),
  };
}

const HISTORY = 'Its history from the event log, newest first unless direction: asc (batched across items)';

@Resolver(() => Asset)
export class AssetHistoryResolver {
  @Query(() => HistoryPage, { description: "An asset's history, like GET /v1/assets/{token_address}/{token_id}/history" })
  async assetHistory(
    @Arg('tokenAddress', () => AddressScalar) tokenAddress: string,
    @Arg('tokenId', () => TokenIdScalar) tokenId: string,
    @Arg('chainId', () => String, { nullable: true }) chainId: string | null,
    @Args() args: HistoryArgs,
    @Ctx() ctx: Context,
    @Info() info: GraphQLResolveInfo,
  ) {
    const asset = await getAsset(ctx, tokenAddress, tokenId, chainId);
    return ctx.loaders.historyByAsset.load({ parentId: asset.id, args: pageArgs(args, info, ASSET_HISTORY_TYPES) });
  }

  @FieldResolver(() => HistoryPage, { description: `${HISTORY}: creation, transfers (with price) and listings unless types say otherwise` })
  history(@Parent() asset: Asset, @Args() args: HistoryArgs, @Ctx() ctx: Context, @Info() info: GraphQLResolveInfo) {
    return ctx.loaders.historyByAsset.load({ parentId: asset.id, args: pageArgs(args, info, ASSET_HISTORY_TYPES) });
  }
}

@Resolver(() => Listing)
export class ListingHistoryResolver {
  @FieldResolver(() => HistoryPage, { description: `${HISTORY}: created, updated, sold, cancelled, expired` })
  history(@Parent() listing: Listing, @Args() args: HistoryArgs, @Ctx() ctx: Context, @Info() info: GraphQLResolveInfo) {
    return ctx.loaders.historyBySubject.load({ parentId: listing.id, args: pageArgs(args, info, EVENT_TYPES) });
  }
}

@Resolver(() => Offer)
export class OfferHistoryResolver {
  @FieldResolver(() => HistoryPage, { description: `${HISTORY}: created, accepted, cancelled, expired` })
  history(@Parent() offer: Offer, @Args() args: HistoryArgs, @Ctx() ctx: Context, @Info() info: GraphQLResolveInfo) {
    return ctx.loaders.historyBySubject.load({ parentId: offer.id, args: pageArgs(args, info, EVENT_TYPES) });
  }
}
