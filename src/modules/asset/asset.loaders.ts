import type { GraphQLResolveInfo } from 'graphql';
import DataLoader from 'dataloader';
import { DataSource } from 'typeorm';
import type { PeekLoader } from '../../common/batch';
import type { Chain } from '../chain/chain.entity';
import type { Collection } from '../collection/collection.entity';
import type { Listing } from '../listing/listing.types';
import { selectedFields } from '../../common/graphql/selection';
import type { Loaders } from '../../common/request/context';
import { clock } from '../../common/clock';
import { observed, pagesByParent, rowsById } from '../../common/batch';
import { fetchPagesByParent, ListQuery, Page, PageArgs, SortDirection, SortKey } from '../../common/pagination';
import { columnsFor, Params, selectColumns } from '../../common/sql';
import { currentPriceSql, isActiveListingSql, listedByPriceSql } from '../listing/listing.sql';
import { currencyFilterSql } from '../currency/currency.service';
import { Asset, AssetStatus } from './asset.entity';
import { AssetOrderBy } from './asset.types';
import { createTraitLoaders } from './asset.traits';

/**
 * `fields`: the GraphQL fields asked of each asset, so only their columns are read (all when absent);
 * `relations`: what the page loads for all its assets at once before it is returned.
 */
export type NestedAssetPageArgs = PageArgs & {
  orderBy: AssetOrderBy;
  status?: AssetStatus | null;
  currency?: string | null;
  fields?: string[];
  relations?: AssetRelation[];
};

/** The rows an asset's field resolvers read besides its own: its collection, its chain, its active listing. */
export type AssetRelation = 'chain' | 'collection' | 'listing';

declare module '../../common/request/context' {
  interface Loaders {
    assetById: PeekLoader<string, Asset | null>;
    /** The assets of a token (several when it exists on several chains and no chain is named), by chain. */
    assetsByToken: DataLoader<TokenRef, Asset[], string>;
    assetPagesByCollection: DataLoader<{ parentId: string; args: NestedAssetPageArgs }, Page<Asset>, string>;
    /** An account's assets (Account.assets), by its address. */
    assetPagesByOwner: DataLoader<{ parentId: string; args: NestedAssetPageArgs }, Page<Asset>, string>;
  }
}

/** An asset named by its token: contract, token id, and its chain when the contract is on several. */
export interface TokenRef {
  tokenAddress: string;
  tokenId: string;
  chainId: string | null;
}

/** Each reference's assets in one statement, by chain (getAsset's order). */
function assetsByToken(ds: DataSource): DataLoader<TokenRef, Asset[], string> {
  return new DataLoader(
    observed('assetsByToken', async (refs: readonly TokenRef[]) => {
      const p = new Params();
      const rows: (Asset & { n: string })[] = await ds.query(
        `SELECT k.n::text AS n, ${selectColumns(ds.getMetadata(Asset), 't')}
         FROM unnest(${p.add(refs.map((r) => r.tokenAddress))}::varchar[], ${p.add(refs.map((r) => r.tokenId))}::numeric[],
                     ${p.add(refs.map((r) => r.chainId))}::varchar[]) WITH ORDINALITY AS k(address, token, chain, n)
         JOIN assets t ON t.token_address = k.address AND t.token_id = k.token AND (k.chain IS NULL OR t.chain_id = k.chain)
         ORDER BY k.n, t.chain_id`,
        p.values,
      );
      const found = refs.map((): Asset[] => []);
      for (const { n, ...asset } of rows) found[Number(n) - 1].push(asset as Asset);
      return found;
    }),
    { cacheKeyFn: (r) => `${r.chainId ?? ''}/${r.tokenAddress}/${r.tokenId}` },
  );
}

/** The loaders of the relations (those of the request's context). */
export interface RelationLoaders {
  collectionById: PeekLoader<string, Collection | null>;
  chainById: PeekLoader<string, Chain | null>;
  activeListingByAsset: PeekLoader<string, Listing | null>;
}

/** `all`: the request's whole set of loaders, which a page of assets fills for its relations. */
export function createAssetLoaders(ds: DataSource, all: () => Loaders) {
  return {
    assetById: rowsById(ds, Asset, 'uuid'),
    assetsByToken: assetsByToken(ds),
    assetPagesByCollection: assetPagesByParent(ds, all, 'assetPagesByCollection', { column: 't.collection_id', sqlType: 'uuid' }),
    assetPagesByOwner: assetPagesByParent(ds, all, 'assetPagesByOwner', { column: 't.owner', sqlType: 'text' }),
    ...createTraitLoaders(ds),
  };
}

/** The relations a selection of assets will read; `through` leads from the field being resolved to the asset's fields. */
export function assetRelations(info: GraphQLResolveInfo, through: string[]): AssetRelation[] {
  const fields = selectedFields(info, through);
  const wanted = new Set<AssetRelation>();
  if (fields.has('collection') || fields.has('fees')) wanted.add('collection');
  if (fields.has('chain')) wanted.add('chain');
  if (fields.has('status') || fields.has('listing')) wanted.add('listing');
  if (fields.has('listing')) {
    // A listing's chain and royalty fees are its asset's.
    const listing = selectedFields(info, [...through, 'listing']);
    if (listing.has('chain')) wanted.add('chain');
    if (listing.has('fees')) wanted.add('collection');
  }
  return [...wanted].sort();
}

/**
 * Loads the relations of a page's assets in one go (the same batched statements the field resolvers
 * would cause, at once instead of in waves), so that each asset's relation fields answer synchronously.
 */
export async function prefetchAssetRelations(loaders: RelationLoaders, assets: readonly Asset[], relations: readonly AssetRelation[] = []): Promise<void> {
  if (!assets.length || !relations.length) return;
  const distinct = (keys: string[]) => [...new Set(keys)];
  await Promise.all(
    relations.map((relation) => {
      if (relation === 'collection') return loaders.collectionById.loadMany(distinct(assets.map((a) => a.collectionId)));
      if (relation === 'chain') return loaders.chainById.loadMany(distinct(assets.map((a) => a.chainId)));
      return loaders.activeListingByAsset.loadMany(assets.map((a) => a.id));
    }),
  );
}

/** Columns every asset row carries whatever is asked: field resolvers (collection, chain, listing, status) use them. */
const ASSET_KEYS = ['id', 'collectionId', 'chainId'];

/** The sort keys of asset lists (by current price, the list joins the active listing: assetListBase). */
export const ASSET_SORTS: Record<Exclude<AssetOrderBy, AssetOrderBy.CURRENT_PRICE>, SortKey> = {
  [AssetOrderBy.CREATED_AT]: { expression: 't.created_at', sqlType: 'timestamptz' },
  [AssetOrderBy.UPDATED_AT]: { expression: 't.updated_at', sqlType: 'timestamptz' },
  [AssetOrderBy.NAME]: { expression: 't.name', sqlType: 'text', defaultDirection: SortDirection.ASC },
  [AssetOrderBy.TOKEN_ID]: { expression: 't.token_id', sqlType: 'numeric' },
};

/**
 * The FROM clause and sort key of an asset list. Only when the list filters on listed/unlisted or on the
 * listing's currency, or sorts by current price, is each asset joined with its active listing now (`l`,
 * at most one by constraint). Listed assets by current price read their page from the listings' price
 * indexes (listedByPriceSql; `collection`: the parameter of the list's collection, which picks an index).
 */
export function assetListBase(
  ds: DataSource,
  p: Params,
  args: NestedAssetPageArgs,
  filtersOnListing = false,
  collection?: string,
): Omit<ListQuery, 'where'> {
  let from = 'assets t';
  let sort: SortKey;
  let pageFrom: ListQuery['pageFrom'];
  if (filtersOnListing || args.currency != null || args.orderBy === AssetOrderBy.CURRENT_PRICE) {
    const now = p.add(clock.now());
    const listing = (fence = '') => ` LEFT JOIN LATERAL (SELECT l.* FROM listings l WHERE l.asset_id = t.id AND ${isActiveListingSql('l', now)}${fence}) l ON true`;
    from += listing();
    sort = args.orderBy === AssetOrderBy.CURRENT_PRICE ? { expression: currentPriceSql('l', now), sqlType: 'numeric', nullable: true } : ASSET_SORTS[args.orderBy];
    // Listed assets only: the page's few candidates come from the listings' price indexes.
    if (args.orderBy === AssetOrderBy.CURRENT_PRICE && (args.status === AssetStatus.LISTED || args.currency != null)) {
      // Each candidate's asset and listing by their keys (OFFSET 0 keeps the joins nested loops, whatever the estimate of candidates).
      pageFrom = (filters, { after, rows, direction }) =>
        `${listedByPriceSql(p, { now, direction, filters, collection, currency: args.currency, after, rows })} c ` +
        `CROSS JOIN LATERAL (SELECT * FROM assets t WHERE t.id = c.asset_id OFFSET 0) t${listing(' OFFSET 0')}`;
    }
  } else {
    sort = ASSET_SORTS[args.orderBy as keyof typeof ASSET_SORTS];
  }
  return {
    from,
    pageFrom,
    columns: columnsFor(ds.getMetadata(Asset), 't', args.fields ? new Set(args.fields) : undefined, ASSET_KEYS).sql,
    idExpression: 't.id',
    params: p,
    sort,
    orderBy: args.orderBy,
    args,
  };
}

/** The condition of an asset list's `status` filter, over the active listing `l` that assetListBase joins for it. */
function assetStatusSql(status: AssetStatus): string {
  return status === AssetStatus.LISTED ? 'l.id IS NOT NULL' : 'l.id IS NULL';
}

/**
 * The conditions of an asset list's `status` and `currency` filters, over the active listing `l` that
 * assetListBase joins for them: with a currency, only assets listed in it (an unlisted asset has no price
 * to rank), so that a sort by current price compares amounts of one currency.
 */
export function assetListingFilters(p: Params, args: { status?: AssetStatus | null; currency?: string | null }): string[] {
  const where = args.status != null ? [assetStatusSql(args.status)] : [];
  if (args.currency != null) where.push(currencyFilterSql(p, 'l.currency', 't.chain_id', args.currency));
  return where;
}

/**
 * Pages of assets by a parent (`collection.assets`, `account.assets`): one statement for every parent of
 * the request that asks with the same arguments.
 */
function assetPagesByParent(ds: DataSource, loaders: () => RelationLoaders, name: string, parent: { column: string; sqlType: 'uuid' | 'text' }) {
  return pagesByParent<NestedAssetPageArgs, Page<Asset>>(name, async (args, parentIds) => {
    const p = new Params();
    const where = assetListingFilters(p, args);
    const pages = await fetchPagesByParent<Asset>(ds, { ...assetListBase(ds, p, args, args.status != null), where }, { ...parent, ids: parentIds });
    await prefetchAssetRelations(loaders(), [...pages.values()].flatMap((page) => page.result), args.relations);
    return pages;
  });
}
