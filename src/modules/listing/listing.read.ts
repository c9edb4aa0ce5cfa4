import { DataSource, EntityManager } from 'typeorm';
import { equalsFilter, ReadModel } from '../../common/read-model';
import { selectList, withJoins } from '../../common/read-model-sql';
import { Params } from '../../common/sql';
import { feesRelation } from '../collection/fee.type';
import { currencyFilterSql } from '../currency/currency.service';
import { currencyRelation } from '../currency/currency.read';
import { currentPriceSql, isActiveListingSql, listingStatusSql } from './listing.sql';
import { Listing, ListingOrderBy } from './listing.types';

/**
 * How listings are read: by listing.service.ts and its loaders (fields, and the filters and sorts of the
 * lists of an asset's, a collection's and a seller's listings), and by the SQL plans (a listing inside its
 * asset, and those lists). A listing is read with its asset, joined as `asset` (the name, token and chain
 * are the asset's). Its status and current price are read at the moment.
 */
export const LISTING_READ: ReadModel = {
  type: 'Listing',
  table: 'listings',
  alias: 'l',
  fields: {
    id: { sql: 'id', kind: 'text' },
    assetId: { sql: 'asset_id', kind: 'text' },
    collectionId: { sql: 'collection_id', kind: 'text', serviceOnly: true },
    seller: { sql: 'seller', kind: 'value' },
    orderType: { sql: 'order_type', kind: 'enum' },
    status: { sql: (l, s) => listingStatusSql(l, s.now()), kind: 'enum' },
    inactiveReason: { sql: 'inactive_reason', kind: 'value' },
    startPrice: { sql: 'start_price', kind: 'decimal' },
    acceptPrice: { sql: 'accept_price', kind: 'decimal' },
    currentPrice: { sql: (l, s) => `(${currentPriceSql(l, s.now())})`, kind: 'decimal' },
    listingTime: { sql: 'listing_time', kind: 'timestamp' },
    closingDate: { sql: 'closing_date', kind: 'timestamp' },
    makerFees: { sql: 'maker_fees', kind: 'value', serviceOnly: true },
    signature: { sql: 'signature', kind: 'value' },
    currencyAddress: { sql: 'currency', kind: 'value', serviceOnly: true },
    name: { sql: 'name', on: 'asset', kind: 'value' },
    tokenAddress: { sql: 'token_address', on: 'asset', kind: 'value' },
    tokenId: { sql: 'token_id', on: 'asset', kind: 'text' },
    chainId: { sql: 'chain_id', on: 'asset', kind: 'value', serviceOnly: true },
    createdAt: { sql: 'created_at', kind: 'timestamp' },
    updatedAt: { sql: 'updated_at', kind: 'timestamp' },
  },
  filters: [
    // As read now: an active listing past its closing date is expired.
    { arg: 'status', type: 'ListingStatus', plan: 'sql', where: (s, l, status: string) => `${listingStatusSql(l, s.now())} = ${s.p.add(status)}` },
    equalsFilter('orderType', 'ListingOrderType', 'order_type'),
    // The resolvers check that the currency exists first; a listing's chain is its asset's.
    { arg: 'currency', type: 'String', plan: 'aside', where: (s, l, given: string) => currencyFilterSql(s.p, `${l}.currency`, `${s.joined!.asset}.chain_id`, given) },
  ],
  rootFilters: [],
  sorts: {
    [ListingOrderBy.CREATED_AT]: { expression: 'l.created_at', sqlType: 'timestamptz' },
    [ListingOrderBy.LISTING_TIME]: { expression: 'l.listing_time', sqlType: 'timestamptz' },
    // The price as read at the statement's moment.
    [ListingOrderBy.CURRENT_PRICE]: { expression: (l, s) => currentPriceSql(l, s.now()), sqlType: 'numeric' },
  },
  relations: {
    // Its asset's chain; inside collection.assets, the collection's (read once per collection) when it is the asset's.
    chain: { kind: 'byId', type: 'Chain', table: 'chains', key: 'chain_id', on: 'asset', sharedWith: 'Collection' },
    // The royalty fees: its token's own where the contract declares one, else the collection's (the collection row's
    // own when read within it); then the listing's maker fees.
    fees: feesRelation((l, s) => {
      const collection = `(SELECT x.fees FROM collections x WHERE x.id = ${l}.collection_id)`;
      const c = s.within?.('Collection');
      const collectionFees = c ? `CASE WHEN ${l}.collection_id = ${c}.id THEN ${c}.fees ELSE ${collection} END` : collection;
      return [`COALESCE((SELECT x.royalty_fees FROM assets x WHERE x.id = ${l}.asset_id), ${collectionFees})`, `${l}.maker_fees`];
    }),
    // On its asset's chain.
    currency: currencyRelation((_l, s) => `${s.joined!.asset}.chain_id`),
  },
  with: { asset: { table: 'assets', key: 'asset_id' } },
  rest: {
    shape: [
      'id',
      'assetId',
      'status',
      'inactiveReason',
      'orderType',
      'closingDate',
      'fees',
      'acceptPrice',
      'startPrice',
      'currentPrice',
      'currency',
      'listingTime',
      'name',
      'tokenAddress',
      'tokenId',
      'chain',
      'seller',
      'signature',
      'createdAt',
      'updatedAt',
    ],
  },
  pagesOf: {
    'Asset.listings': (l, a) => `${l}.asset_id = ${a}.id`,
    'Collection.listings': (l, c) => `${l}.collection_id = ${c}.id`,
    // As seller.
    'Account.listings': (l, account) => `${l}.seller = ${account}.id`,
  },
};

/** Listings `l` with their assets `a`, as the service reads them. */
export const LISTINGS_WITH_ASSETS = `listings l${withJoins(LISTING_READ, 'l', { asset: 'a' })}`;

/** A listing's columns (LISTING_READ) over `listings l` joined to its asset `a`, at the moment `now` (a parameter). */
export function listingColumns(now: string): string {
  return selectList(LISTING_READ, { p: new Params(), now: () => now, joined: { asset: 'a' } });
}

/** Listings by id, with their computed figures. */
export async function listingsByIds(db: DataSource | EntityManager, ids: readonly string[], now: Date): Promise<Listing[]> {
  const p = new Params();
  const nowParam = p.add(now);
  return db.query(
    `SELECT ${listingColumns(nowParam)} FROM ${LISTINGS_WITH_ASSETS} WHERE l.id = ANY(${p.add(ids)}::uuid[])`,
    p.values,
  );
}

/** The active listing of each asset, if it has one now. */
export async function activeListingsByAssets(db: DataSource | EntityManager, assetIds: readonly string[], now: Date): Promise<Listing[]> {
  const p = new Params();
  const nowParam = p.add(now);
  return db.query(
    `SELECT ${listingColumns(nowParam)} FROM ${LISTINGS_WITH_ASSETS}
     WHERE l.asset_id = ANY(${p.add(assetIds)}::uuid[]) AND ${isActiveListingSql('l', nowParam)}`,
    p.values,
  );
}
