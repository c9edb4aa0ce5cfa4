import type { GraphQLResolveInfo } from 'graphql';
import DataLoader from 'dataloader';
import { DataSource } from 'typeorm';
import type { PeekLoader } from '../../common/batch';
import type { Chain } from '../chain/chain.entity';
import type { Collection } from '../collection/collection.entity';
import type { Listing } from '../listing/listing.types';
import { selectedFields } from '../../common/graphql/selection';
import type { Loaders } from '../../common/request/context';
import { observed, pagesByParent, rowsById } from '../../common/batch';
import { Page, PageArgs } from '../../common/pagination';
import { ListQuery } from '../../common/list-query';
import { fetchPagesByParent } from '../../common/list-page';
import { Params } from '../../common/sql';
import { SqlScope, sqlScope } from '../../common/read-model';
import { checkFilters, filterConditions, fromWithJoins, joinAliases, modelColumns, pagesOfParent, selectList, sortKey } from '../../common/read-model-sql';
import { listedByPriceSql, listedUpToSql } from '../listing/listing.sql';
import { Asset, AssetStatus } from './asset.entity';
import { activeListingJoin, ASSET_READ } from './asset.read';
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
  minPrice?: string | null;
  maxPrice?: string | null;
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
        `SELECT k.n::text AS n, ${modelColumns(ASSET_READ)}
         FROM unnest(${p.add(refs.map((r) => r.tokenAddress))}::varchar[], ${p.add(refs.map((r) => r.tokenId))}::numeric[],
                     ${p.add(refs.map((r) => r.chainId))}::varchar[]) WITH ORDINALITY AS k(address, token, chain, n)
         JOIN assets t ON t.token_address = k.address AND t.token_id = k.token AND (k.chain IS NULL OR t.chain_id = k.chain)
         ORDER BY k.n, ${ASSET_READ.one!.order!('t')}`,
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
    assetById: rowsById(ds, Asset, 'uuid', modelColumns(ASSET_READ)),
    assetsByToken: assetsByToken(ds),
    assetPagesByCollection: assetPagesByParent(ds, all, 'assetPagesByCollection', 'Collection.assets', 'uuid'),
    assetPagesByOwner: assetPagesByParent(ds, all, 'assetPagesByOwner', 'Account.assets', 'text'),
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

/** Fields every asset row carries whatever is asked: field resolvers (collection, chain, listing, status) use them. */
const ASSET_KEYS = ['id', 'collectionId', 'chainId'];

/**
 * An asset list with the filters every asset list takes (asset.read.ts `filters`) and the conditions in
 * `where` (over `assets t`, in `s`): the root list's and each relation's. The active listing is joined
 * (`l`) only when a given filter or the sort reads it; `fields`: only their columns are read. Assets by
 * current price read their page from the listings' price indexes (listedByPrice; `walk.collection`: the
 * list's collection as SQL, which picks an index; `walk.market`: the list is the root list of every asset).
 */
export function assetListQuery<A extends NestedAssetPageArgs>(
  args: A,
  s = sqlScope(undefined, undefined, joinAliases(ASSET_READ)),
  where: string[] = [],
  filters = ASSET_READ.filters,
  walk: { collection?: () => string; market?: boolean } = {},
): ListQuery {
  checkFilters(filters, args);
  const sort = ASSET_READ.sorts[args.orderBy];
  const from = fromWithJoins(ASSET_READ, s, 't', filters, args, sort);
  return {
    from,
    ...listedByPrice(args, s, from, walk),
    // Fees read the token's own royalty first.
    columns: selectList(ASSET_READ, s, 't', args.fields && new Set(args.fields), args.fields?.includes('fees') ? [...ASSET_KEYS, 'royaltyFees'] : ASSET_KEYS),
    idExpression: 't.id',
    where: [...where, ...filterConditions(filters, s, 't', args)],
    params: s.p,
    sort: sortKey(sort, s, 't'),
    orderBy: args.orderBy,
    args,
  };
}

/** The filters a walk by price of every asset (listed or not) may have besides a collection's: a chain. */
const MARKET_WALK_FILTERS = ['collectionId', 'chainId'];

/**
 * Assets by current price read their page from the listings' price indexes (listedByPriceSql): listed assets
 * only (`status: LISTED` or a `currency`); a collection's assets (`walk.collection`: its id as SQL, added
 * when written), and every asset of the market or of a chain (`walk.market`, no other filter), whose unlisted
 * ones come after the listed, by id. So are the candidates of the count of the rows up to a cursor
 * (listedUpToSql, when the list has a kept count; after a cursor among the unlisted, the list's own `from`).
 * Then each candidate's asset and active listing by their keys (OFFSET 0 keeps the joins nested loops,
 * whatever the estimate of candidates; the listing's join is asset.read.ts's `listing`, fenced so).
 */
function listedByPrice(args: NestedAssetPageArgs, s: SqlScope, from: string, walk: { collection?: () => string; market?: boolean }): Pick<ListQuery, 'pageFrom' | 'countFrom'> {
  if (args.orderBy !== AssetOrderBy.CURRENT_PRICE) return {};
  const listedOnly = args.status === AssetStatus.LISTED || args.currency != null;
  const given = (arg: string) => (args as unknown as Record<string, unknown>)[arg] != null;
  const everyAsset = walk.market === true && [...ASSET_READ.filters, ...ASSET_READ.rootFilters].every((f) => !given(f.arg) || MARKET_WALK_FILTERS.includes(f.arg));
  if (!listedOnly && (args.status != null || (walk.collection === undefined && !everyAsset))) return {};
  // Parameters are added only when a relation is written (an unused parameter is an error in PostgreSQL).
  const of = () => ({ now: s.now(), collection: walk.collection?.(), currency: args.currency });
  const assetsOf = (candidates: string) =>
    `${candidates} c CROSS JOIN LATERAL (SELECT * FROM assets t WHERE t.id = c.asset_id OFFSET 0) t ${activeListingJoin('t', 'l', s.now(), ' OFFSET 0')}`;
  return {
    pageFrom: (filters, { after, rows, direction }) => assetsOf(listedByPriceSql(s.p, { ...of(), direction, filters, after, rows, unlisted: !listedOnly })),
    countFrom: ({ after, direction, kept }) => (!kept || !after ? undefined : !listedOnly && after.value === null ? from : assetsOf(listedUpToSql(s.p, { ...of(), direction, after }))),
  };
}

/**
 * Pages of assets by a parent (`collection.assets`, `account.assets`: `at`, as asset.read.ts's `pagesOf`
 * joins them), one statement for every parent of the request that asks with the same arguments.
 */
function assetPagesByParent(ds: DataSource, loaders: () => RelationLoaders, name: string, at: 'Collection.assets' | 'Account.assets', sqlType: 'uuid' | 'text') {
  // A collection's page by current price walks the listings of its collection, the parent's id (`p.id`, fetchPagesByParent).
  const walk = at === 'Collection.assets' ? { collection: () => 'p.id' } : {};
  const parent = { ...pagesOfParent(ASSET_READ, at), sqlType };
  return pagesByParent<NestedAssetPageArgs, Page<Asset>>(name, async (args, parentIds) => {
    const s = sqlScope(undefined, undefined, joinAliases(ASSET_READ));
    const pages = await fetchPagesByParent<Asset>(ds, assetListQuery(args, s, [], ASSET_READ.filters, walk), { ...parent, ids: parentIds });
    await prefetchAssetRelations(loaders(), [...pages.values()].flatMap((page) => page.result), args.relations);
    return pages;
  });
}
