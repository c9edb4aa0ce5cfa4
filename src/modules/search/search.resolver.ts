import { Args, ArgsType, Ctx, Field, Info, Query, Resolver } from 'type-graphql';
import type { GraphQLResolveInfo } from 'graphql';
import { remainingSelected } from '../../common/pagination';
import { selectedFields } from '../../common/graphql/selection';
import { MAX_QUERY_LENGTH, SEARCH_CANDIDATES } from '../../common/name-search';
import type { Context } from '../../common/request/context';
import { AddressScalar } from '../../common/scalars';
import { assetRelations } from '../asset/asset.loaders';
import { listAssets } from '../asset/asset.service';
import { AssetFilterArgs, AssetListArgs, AssetOrderBy, AssetPage } from '../asset/asset.types';
import { CollectionFilterArgs, CollectionListArgs, CollectionOrderBy } from '../collection/collection.inputs';
import { listCollections } from '../collection/collection.service';
import { CollectionPage } from '../collection/collection.resolver';

const QUERY = `Words of the name, in any script (1 to ${MAX_QUERY_LENGTH} characters, case ignored): one or two characters match the names they start; more also match names that hold them anywhere, and similar names (a typo or two)`;
const RANKED = `ranked best first (direction: ASC reverses): the whole name, then names that start with the query, then names that hold it, then similar names; ties by similarity, then id; among the first ${SEARCH_CANDIDATES} matches (names that start with the query first)`;

@ArgsType()
export class AssetSearchArgs extends AssetFilterArgs {
  @Field(() => String, { description: QUERY })
  query: string;
}

@ArgsType()
export class CollectionSearchArgs extends CollectionFilterArgs {
  @Field(() => String, { description: QUERY })
  query: string;

  @Field(() => String, { nullable: true })
  chainId?: string | null;

  @Field(() => AddressScalar, { nullable: true })
  ownerAddress?: string | null;

  @Field(() => Boolean, { defaultValue: false, description: 'When true, each collection has its first assets too' })
  includeAssets: boolean;
}

/** Search by name: the lists `assets` and `collections` with their filters, ranked by relevance (common/name-search.ts). */
@Resolver()
export class SearchResolver {
  @Query(() => AssetPage, { description: `Assets whose name matches query, with the filters of assets(...); ${RANKED}. GET /v1/search/assets` })
  searchAssets(@Args() args: AssetSearchArgs, @Ctx() ctx: Context, @Info() info: GraphQLResolveInfo) {
    const { query, ...rest } = args;
    const list: AssetListArgs = Object.assign(new AssetListArgs(), rest, { orderBy: AssetOrderBy.CREATED_AT, search: query, countRemaining: remainingSelected(info) });
    return listAssets(ctx, list, [...selectedFields(info, 'result')].sort(), assetRelations(info, ['result']));
  }

  @Query(() => CollectionPage, { description: `Collections whose name matches query, with the filters of collections(...); ${RANKED}. GET /v1/search/collections` })
  searchCollections(@Args() args: CollectionSearchArgs, @Ctx() ctx: Context, @Info() info: GraphQLResolveInfo) {
    const { query, ...rest } = args;
    const list: CollectionListArgs = Object.assign(new CollectionListArgs(), rest, {
      orderBy: CollectionOrderBy.CREATED_AT,
      search: query,
      countRemaining: remainingSelected(info),
    });
    return listCollections(ctx, list, selectedFields(info, 'result'));
  }
}
