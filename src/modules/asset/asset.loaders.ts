import { DataSource } from 'typeorm';
import { clock } from '../../common/clock';
import { pagesByParent } from '../../common/batch';
import { fetchPagesByParent, ListQuery, Page, PageArgs, SortKey } from '../../common/pagination';
import { columnsFor, Params } from '../../common/sql';
import { currentPriceSql, isActiveListingSql } from '../listing/listing.sql';
import { Asset } from './asset.entity';
import { AssetOrderBy } from './asset.types';

/** `fields`: the GraphQL fields asked of each asset, so only their columns are read (all when absent). */
export type NestedAssetPageArgs = PageArgs & { orderBy: AssetOrderBy; fields?: string[] };

/** Columns every asset row carries whatever is asked: field resolvers (collection, chain, listing, status) use them. */
const ASSET_KEYS = ['id', 'collectionId', 'chainId'];

const SORTS: Record<Exclude<AssetOrderBy, AssetOrderBy.CURRENT_PRICE>, SortKey> = {
  [AssetOrderBy.CREATED_AT]: { expression: 't.created_at', sqlType: 'timestamptz' },
  [AssetOrderBy.UPDATED_AT]: { expression: 't.updated_at', sqlType: 'timestamptz' },
  [AssetOrderBy.NAME]: { expression: 't.name', sqlType: 'text' },
  [AssetOrderBy.TOKEN_ID]: { expression: 't.token_id', sqlType: 'numeric' },
};

/**
 * The FROM clause and sort key of an asset list. Only when the list filters on listed/unlisted or sorts
 * by current price is each asset joined with its active listing now (`l`, at most one by constraint).
 */
export function assetListBase(
  ds: DataSource,
  p: Params,
  args: NestedAssetPageArgs,
  filtersOnListing = false,
): Omit<ListQuery, 'where'> {
  let from = 'assets t';
  let sort: SortKey;
  if (filtersOnListing || args.orderBy === AssetOrderBy.CURRENT_PRICE) {
    const now = p.add(clock.now());
    from += ` LEFT JOIN LATERAL (SELECT l.* FROM listings l WHERE l.asset_id = t.id AND ${isActiveListingSql('l', now)}) l ON true`;
    sort = args.orderBy === AssetOrderBy.CURRENT_PRICE ? { expression: currentPriceSql('l', now), sqlType: 'numeric', nullable: true } : SORTS[args.orderBy];
  } else {
    sort = SORTS[args.orderBy as keyof typeof SORTS];
  }
  return {
    from,
    columns: columnsFor(ds.getMetadata(Asset), 't', args.fields ? new Set(args.fields) : undefined, ASSET_KEYS).sql,
    idExpression: 't.id',
    params: p,
    sort,
    orderBy: args.orderBy,
    args,
  };
}

/** `collection.assets`: one statement for every collection of the request that asks with the same arguments. */
export function assetPagesByCollection(ds: DataSource) {
  return pagesByParent<NestedAssetPageArgs, Page<Asset>>((args, collectionIds) =>
    fetchPagesByParent<Asset>(ds, { ...assetListBase(ds, new Params(), args), where: [] }, {
      column: 't.collection_id',
      ids: collectionIds,
      sqlType: 'uuid',
    }),
  );
}
