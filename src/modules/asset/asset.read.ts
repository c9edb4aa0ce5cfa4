import { equalsFilter, priceRangeFilters, ReadModel, SqlScope } from '../../common/read-model';
import { keptCountSql } from '../../common/read-model-sql';
import { SortDirection } from '../../common/pagination';
import { currencyFilterSql } from '../currency/currency.service';
import { listedCountSql } from '../listing/listed-counts';
import { assetTotalSql } from './asset-counts';
import { currentPriceSql, isActiveListingSql } from '../listing/listing.sql';
import { feesRelation } from '../collection/fee.type';
import { collectionIdFilter } from '../collection/collection.read';
import { AssetStatus } from './asset.entity';
import type { StoredFee } from '../collection/collection.entity';
import { parseTraitParams, traitFilterSql, traitRaritySql } from './asset.traits';
import { AssetOrderBy } from './asset.types';

/** A collection's assets as collection_asset_counts keeps them (migration 1765000000000). */
export const assetCountSql = (collectionId: string) => `COALESCE((SELECT x.assets FROM collection_asset_counts x WHERE x.collection_id = ${collectionId}), 0)`;

/**
 * The current price of asset `a`'s active listing at `now` (a parameter); null while it has none (at most
 * one listing of an asset is active: ux_listings_one_active_per_asset).
 */
export const assetPriceSql = (a: string, now: string) =>
  `(SELECT ${currentPriceSql('ap', now)} FROM listings ap WHERE ap.asset_id = ${a}.id AND ${isActiveListingSql('ap', now)})`;

/**
 * Joins asset `t`'s active listing at `now` as `l` (at most one by constraint; null when none). `fence`
 * (' OFFSET 0') keeps the join a nested loop by key, whatever the planner estimates.
 */
export function activeListingJoin(t: string, l: string, now: string, fence = ''): string {
  return `LEFT JOIN LATERAL (SELECT ${l}.* FROM listings ${l} WHERE ${l}.asset_id = ${t}.id AND ${isActiveListingSql(l, now)}${fence}) ${l} ON true`;
}

/** GraphQL's Asset.status: listed while the asset has an active listing (expiry included), as read now. */
export const assetStatusOf = (hasActiveListing: boolean): AssetStatus => (hasActiveListing ? AssetStatus.LISTED : AssetStatus.UNLISTED);

/** An asset's collection's stored fees (collections.fees): the collection row's own when the asset is read within it. */
export const collectionFeesSql = (a: string, s: SqlScope) => {
  const c = s.within?.('Collection');
  return c ? `${c}.fees` : `(SELECT x.fees FROM collections x WHERE x.id = ${a}.collection_id)`;
};

/** An asset's royalty fees: its token's own (royalty_fees, where the contract declares one that differs), else its collection's. */
export const assetRoyaltyFeesSql = (a: string, s: SqlScope) => `COALESCE(${a}.royalty_fees, ${collectionFeesSql(a, s)})`;

/** The royalty fees of an asset read by the service: its token's own, else its collection's (as assetRoyaltyFeesSql). */
export const royaltyFeesOf = (asset: { royaltyFees?: StoredFee[] | null }, collection: { royaltyFees: StoredFee[] } | null | undefined): StoredFee[] =>
  asset.royaltyFees ?? collection?.royaltyFees ?? [];

/**
 * How assets are read: by asset.service.ts and its loaders, and by the SQL plans. The stored `status` is
 * the service's; GraphQL's Asset.status is read from the active listing (asset.resolver.ts, the plans).
 * Filters on the listing (status, currency) and the sort by current price join the active listing `l`.
 */
export const ASSET_READ: ReadModel = {
  type: 'Asset',
  list: 'assets',
  search: 'searchAssets',
  table: 'assets',
  alias: 't',
  fields: {
    id: { sql: 'id', kind: 'text' },
    collectionId: { sql: 'collection_id', kind: 'text' },
    chainId: { sql: 'chain_id', kind: 'value' },
    tokenAddress: { sql: 'token_address', kind: 'value' },
    tokenId: { sql: 'token_id', kind: 'text' },
    name: { sql: 'name', kind: 'value' },
    description: { sql: 'description', kind: 'value' },
    imageUrl: { sql: 'image_url', kind: 'value' },
    animationUrl: { sql: 'animation_url', kind: 'value' },
    externalLink: { sql: 'external_link', kind: 'value' },
    metadata: { sql: 'metadata', kind: 'value' },
    metadataStatus: { sql: 'metadata_status', kind: 'enum' },
    metadataError: { sql: 'metadata_error', kind: 'value' },
    metadataFetchedAt: { sql: 'metadata_fetched_at', kind: 'timestamp' },
    owner: { sql: 'owner', kind: 'value' },
    status: { sql: 'status', kind: 'enum', serviceOnly: true },
    royaltyFees: { sql: 'royalty_fees', kind: 'value', serviceOnly: true },
    createdAt: { sql: 'created_at', kind: 'timestamp' },
    updatedAt: { sql: 'updated_at', kind: 'timestamp' },
  },
  filters: [
    {
      arg: 'status',
      type: 'AssetStatus',
      note: 'listed: with an active listing',
      plan: 'aside',
      joins: ['listing'],
      where: (s, _t, status: AssetStatus) => `${s.joined!.listing}.id IS ${status === assetStatusOf(true) ? 'NOT ' : ''}NULL`,
    },
    // The resolvers check that the currency exists first. Only assets listed in it: an unlisted asset has no price to rank.
    {
      arg: 'currency',
      type: 'String',
      note: 'address or symbol: only assets listed in it; sorting by current_price compares amounts of one currency only when it is given',
      plan: 'aside',
      joins: ['listing'],
      where: (s, t, given: string) => currencyFilterSql(s.p, `${s.joined!.listing}.currency`, `${t}.chain_id`, given),
    },
    // The current price of the active listing (in its currency: with `currency`, amounts of that one); an unlisted asset is in no range.
    ...priceRangeFilters((t, s) => assetPriceSql(t, s.now())),
  ],
  rootFilters: [
    equalsFilter('assetContract', 'Address', 'token_address'),
    // An id is read by plans; an address (or an unknown id) is looked up by the service.
    collectionIdFilter('id or contract address'),
    { ...equalsFilter('ownerId', 'Address', 'owner'), bounds: true },
    // The resolvers check that the chain exists (asset.service.ts writes its condition).
    { arg: 'chainId', type: 'String', plan: 'aside' },
    {
      arg: 'trait',
      type: '[String!]',
      note: 'type:value, repeated: every type given must match, with any of its values',
      plan: 'aside',
      where: (s, t, values: string[]) => traitFilterSql(s.p, `${t}.id`, parseTraitParams(values)).join(' AND ') || 'true',
    },
  ],
  sorts: {
    [AssetOrderBy.CREATED_AT]: { expression: 't.created_at', sqlType: 'timestamptz' },
    [AssetOrderBy.UPDATED_AT]: { expression: 't.updated_at', sqlType: 'timestamptz' },
    // A name reads A to Z unless a direction is given.
    [AssetOrderBy.NAME]: { expression: 't.name', sqlType: 'text', defaultDirection: SortDirection.ASC },
    [AssetOrderBy.TOKEN_ID]: { expression: 't.token_id', sqlType: 'numeric' },
    // Unlisted assets (no price) come last either way.
    [AssetOrderBy.CURRENT_PRICE]: { expression: (_t, s) => currentPriceSql(s.joined!.listing, s.now()), sqlType: 'numeric', nullable: true, joins: ['listing'] },
  },
  joins: {
    listing: {
      alias: 'l',
      sql: (t, l, s) => activeListingJoin(t, l, s.now()),
    },
  },
  relations: {
    // Inside collection.assets the collection is the page's own parent row.
    collection: { kind: 'byId', type: 'Collection', table: 'collections', key: 'collection_id', sameAs: 'Collection' },
    // Inside collection.assets, the collection's chain (read once per collection) when it is the asset's.
    chain: { kind: 'byId', type: 'Chain', table: 'chains', key: 'chain_id', sharedWith: 'Collection' },
    // Its token's royalty fees where the contract declares its own, else the collection's.
    fees: feesRelation((a, s) => [assetRoyaltyFeesSql(a, s)]),
    // Its active listing now, or null (at most one listing of an asset is active: ux_listings_one_active_per_asset).
    listing: {
      kind: 'one',
      type: 'Listing',
      table: 'listings',
      where: (l, a, s) => `${l}.asset_id = ${a}.id AND ${isActiveListingSql(l, s.now())}`,
      joinedAs: 'asset',
    },
    status: { kind: 'presence', of: 'listing', value: assetStatusOf },
    // Its traits (asset.traits.ts's traitsByAssetId): its asset_traits rows with their collection_traits counts.
    traits: {
      kind: 'rows',
      type: 'Trait',
      from: (ct, a) =>
        `asset_traits ${ct}_a JOIN collection_traits ${ct} ON ${ct}.collection_id = ${ct}_a.collection_id AND ${ct}.trait_type = ${ct}_a.trait_type AND ${ct}.value = ${ct}_a.value WHERE ${ct}_a.asset_id = ${a}.id ORDER BY ${ct}.trait_type, ${ct}.value`,
      joinedAs: 'asset',
      fields: {
        traitType: { sql: 'trait_type', kind: 'value' },
        value: { sql: 'value', kind: 'value' },
        count: { sql: 'asset_count', kind: 'value' },
        // Of the collection's number of assets: within collection.assets, the parent collection's (read once per collection).
        rarity: {
          sql: (ct, s) => {
            const c = s.within?.('Collection');
            return traitRaritySql(ct, assetCountSql(c ? `${c}.id` : `${s.joined!.asset}.collection_id`));
          },
          kind: 'ratio',
        },
      },
    },
  },
  pagesOf: {
    'Collection.assets': (t, c) => `${t}.collection_id = ${c}.id`,
    // The assets an account owns now.
    'Account.assets': (t, account) => `${t}.owner = ${account}.id`,
  },
  // As getAsset finds it: by token, on the chain given (on several chains without one: the resolver's error).
  one: {
    field: 'asset',
    args: ['tokenAddress', 'tokenId', 'chainId'],
    where: (s, t, args) => {
      const where = [`${t}.token_address = ${s.p.add(args.tokenAddress)}`, `${t}.token_id = ${s.p.add(args.tokenId)}::numeric`];
      if (args.chainId != null) where.push(`${t}.chain_id = ${s.p.add(args.chainId)}`);
      return where;
    },
    order: (t) => `${t}.chain_id`,
  },
  counts: {
    pagesOf: { 'Collection.assets': (c) => assetCountSql(`${c}.id`) },
    byFilter: { collectionId: (id) => assetCountSql(id) },
  },
  // Its chain as `chain`; its traits on the routes of one asset (asset.traits, one statement more).
  rest: {
    shape: [
      'id',
      'collectionId',
      { field: 'collection', shape: ['imageUrl', 'name', 'contractAddress'] },
      'createdAt',
      'updatedAt',
      'description',
      'fees',
      'imageUrl',
      'animationUrl',
      'externalLink',
      'metadata',
      'metadataStatus',
      'metadataError',
      'metadataFetchedAt',
      'name',
      'status',
      'tokenAddress',
      'tokenId',
      'chain',
      'owner',
      'listing',
    ],
    omits: ['chainId'],
  },
  // Every asset, or a chain's (asset_counts); the other kept counts are keptAssetCountSql's.
  count: { filters: ['chainId'], sql: (s, args) => assetTotalSql(s, args.chainId as string | null | undefined) },
};

/** The filters of the root list that counts of listed assets are kept by (listed-counts.ts). */
const LISTED_COUNTED = ['status', 'currency', 'collectionId', 'chainId'];

/**
 * The count of the root list's assets from the counts the writes keep, when its filters allow: every asset
 * (asset_counts), on a chain, or of a collection (collection_asset_counts); listed assets (`status: LISTED`,
 * or a `currency`), of the whole market or of a collection, on a chain, in a currency; unlisted ones (all
 * less the listed), of the market, on a chain, or of a collection; undefined otherwise (counted row by row).
 * `collectionId` is the collection's id, `chainId` the chain's EIP-155 id, both checked.
 */
export function keptAssetCountSql(s: SqlScope, args: Record<string, unknown> & { status?: AssetStatus | null; collectionId?: string | null; chainId?: string | null; currency?: string | null }): string | undefined {
  const given = [...ASSET_READ.filters, ...ASSET_READ.rootFilters].filter((f) => args[f.arg] != null).map((f) => f.arg);
  if (args.search !== undefined || given.some((arg) => !LISTED_COUNTED.includes(arg))) return undefined;
  if (args.status === AssetStatus.LISTED || (args.status == null && args.currency != null)) return listedCountSql(s, args);
  if (args.currency != null || (args.collectionId != null && args.chainId != null)) return undefined;
  const all = args.collectionId != null ? assetCountSql(`${s.p.add(args.collectionId)}::uuid`) : keptCountSql(ASSET_READ, s, { chainId: args.chainId })!;
  if (args.status == null) return all;
  return `(${all} - ${listedCountSql(s, { collectionId: args.collectionId, chainId: args.chainId })})`;
}
