import { equalsFilter, priceRangeFilters, ReadModel } from '../../common/read-model';
import { countedSum, groupConditions, priceRangeCount } from '../trade/list-counts';
import { currencyFilterSql } from '../currency/currency.service';
import { currencyRelation } from '../currency/currency.read';
import { collectionIdFilter } from '../collection/collection.read';
import { OrderOrderBy, OrderRole } from './order.types';

/** How orders are read: by order.service.ts and its loaders, and by the SQL plans. */
export const ORDER_READ: ReadModel = {
  type: 'Order',
  list: 'orders',
  table: 'orders',
  alias: 'r',
  fields: {
    id: { sql: 'id', kind: 'text' },
    offerId: { sql: 'offer_id', kind: 'text' },
    listingId: { sql: 'listing_id', kind: 'text' },
    assetId: { sql: 'asset_id', kind: 'text' },
    collectionId: { sql: 'collection_id', kind: 'text' },
    chainId: { sql: 'chain_id', kind: 'value' },
    tokenAddress: { sql: 'token_address', kind: 'value' },
    tokenId: { sql: 'token_id', kind: 'text' },
    price: { sql: 'price', kind: 'decimal' },
    currencyAddress: { sql: 'currency', kind: 'value', serviceOnly: true },
    seller: { sql: 'seller', kind: 'value' },
    buyer: { sql: 'buyer', kind: 'value' },
    status: { sql: 'status', kind: 'enum' },
    unit: { sql: 'unit', kind: 'value' },
    createdAt: { sql: 'created_at', kind: 'timestamp' },
    updatedAt: { sql: 'updated_at', kind: 'timestamp' },
    settlementDeadline: { sql: 'settlement_deadline', kind: 'timestamp' },
    settlementTransactionHash: { sql: 'settlement_tx_hash', kind: 'value' },
    settlementBlockNumber: { sql: 'settlement_block_number', kind: 'float' },
  },
  filters: [
    equalsFilter('status', 'OrderStatus', 'status'),
    // The resolvers check that the currency exists first.
    { arg: 'currency', type: 'String', note: 'address or symbol: sorting by price compares amounts of one currency only when it is given', plan: 'aside', where: (s, r, given: string) => currencyFilterSql(s.p, `${r}.currency`, `${r}.chain_id`, given) },
    ...priceRangeFilters((row) => `${row}.price`),
  ],
  rootFilters: [
    // The resolvers check that the chain exists (order.service.ts writes its condition).
    { arg: 'chainId', type: 'String', plan: 'aside' },
    collectionIdFilter(),
    equalsFilter('tokenAddress', 'Address', 'token_address'),
    equalsFilter('tokenId', 'TokenId', 'token_id', 'numeric'),
    {
      arg: 'ownerId',
      type: 'Address',
      note: 'seller or buyer',
      plan: 'sql',
      where: (s, r, owner: string) => {
        const o = s.p.add(owner);
        return `(${r}.seller = ${o} OR ${r}.buyer = ${o})`;
      },
      // Its sales, then its purchases (of others): each a range of an index by seller or buyer (migration 1765760000300).
      ranges: (s, r, owner: string) => {
        const o = s.p.add(owner);
        return [`${r}.seller = ${o}`, `${r}.buyer = ${o} AND ${r}.seller <> ${o}`];
      },
    },
  ],
  sorts: {
    // ledBy: the indexes ix_orders_{token_address,collection,token_id}_created(_id) and ix_orders_collection_price (column, sort, id).
    [OrderOrderBy.CREATED_AT]: { expression: 'r.created_at', sqlType: 'timestamptz', ledBy: ['tokenAddress', 'collectionId', 'tokenId'] },
    [OrderOrderBy.PRICE]: { expression: 'r.price', sqlType: 'numeric', ledBy: ['collectionId'] },
  },
  relations: {
    asset: { kind: 'byId', type: 'Asset', table: 'assets', key: 'asset_id' },
    currency: currencyRelation((r) => `${r}.chain_id`),
  },
  pagesOf: {
    // An account's, by its part in them: as buyer, as seller, or either: its sales, then its purchases of others,
    // each a range of an index by seller or buyer (migration 1765760000300), as the root list's ownerId.
    'Account.orders': {
      arg: 'role',
      by: {
        [OrderRole.BOUGHT]: (r, account) => `${r}.buyer = ${account}.id`,
        [OrderRole.SOLD]: (r, account) => `${r}.seller = ${account}.id`,
        [OrderRole.ANY]: (r, account) => [`${r}.seller = ${account}.id`, `${r}.buyer = ${account}.id AND ${r}.seller <> ${account}.id`],
      },
    },
  },
  // With its offer (Order.offer).
  rest: {
    shape: [
      'id',
      { field: 'offer', of: 'Offer' },
      'status',
      'price',
      'currency',
      'seller',
      'buyer',
      'unit',
      'assetId',
      'listingId',
      'settlementDeadline',
      'settlementTransactionHash',
      'settlementBlockNumber',
      'createdAt',
      'updatedAt',
    ],
    omits: ['offerId', 'collectionId', 'chainId', 'tokenAddress', 'tokenId'],
  },
  // From trade_list_counts; within a price range, from trade_price_counts and the edges' orders (priceRangeCount).
  count: {
    filters: ['status', 'chainId', 'currency', 'minPrice', 'maxPrice'],
    sql: (s, args) => {
      const of = (row: string) => [...groupConditions(s, row, args), ...(args.status == null ? [] : [`${row}.status = ${s.p.add(args.status)}`])];
      return priceRangeCount(s, 'orders', (span) => countedSum('orders', of('k'), span), of, args);
    },
  },
};
