import { DataSource } from 'typeorm';
import { checkCurrencyFilter, currencyFilterSql } from '../currency/currency.service';
import type { Context } from '../../common/request/context';
import { NotFoundError } from '../../common/errors';
import { fetchPage, ListQuery, Page, SortKey } from '../../common/pagination';
import { Params } from '../../common/sql';
import { uuidOf } from '../../common/validate';
import { chainCondition, findCollectionByRef } from '../collection/collection.service';
import { NestedOrderArgs, Order, OrderListArgs, OrderOrderBy } from './order.types';

export const ORDER_COLUMNS = `r.id, r.offer_id AS "offerId", r.listing_id AS "listingId", r.asset_id AS "assetId",
  r.collection_id AS "collectionId", r.chain_id AS "chainId", r.token_address AS "tokenAddress", r.token_id::text AS "tokenId",
  r.price::text AS price, r.currency AS "currencyAddress", r.seller, r.buyer, r.status, r.unit, r.created_at AS "createdAt", r.updated_at AS "updatedAt",
  r.settlement_deadline AS "settlementDeadline", r.settlement_tx_hash AS "settlementTransactionHash", r.settlement_block_number::float8 AS "settlementBlockNumber"`;

/** The sorts of orders over their row `r` (SQL plans read them too). */
export const ORDER_SORTS: Record<OrderOrderBy, SortKey> = {
  [OrderOrderBy.CREATED_AT]: { expression: 'r.created_at', sqlType: 'timestamptz' },
  [OrderOrderBy.PRICE]: { expression: 'r.price', sqlType: 'numeric' },
};

export async function ordersByIds(ds: DataSource, ids: readonly string[]): Promise<Order[]> {
  return ds.query(`SELECT ${ORDER_COLUMNS} FROM orders r WHERE r.id = ANY($1::uuid[])`, [ids]);
}

/**
 * The list of orders with the filters every order list takes (status), over `orders r` plus `where`: the
 * root list's and each relation's (an asset's, a collection's, an account's).
 */
export function orderListQuery(args: NestedOrderArgs, p = new Params(), where: string[] = []): ListQuery {
  const conditions = [...where];
  if (args.status != null) conditions.push(`r.status = ${p.add(args.status)}`);
  if (args.currency != null) conditions.push(currencyFilterSql(p, 'r.currency', 'r.chain_id', args.currency));
  return { from: 'orders r', columns: ORDER_COLUMNS, idExpression: 'r.id', where: conditions, params: p, sort: ORDER_SORTS[args.orderBy], orderBy: args.orderBy, args };
}

export async function listOrders(ctx: Context, args: OrderListArgs): Promise<Page<Order>> {
  await checkCurrencyFilter(ctx, args.currency);
  const p = new Params();
  const where: string[] = [];
  const chain = await chainCondition(ctx, p, 'r.chain_id', args.chainId);
  if (chain) where.push(chain);
  if (args.collectionId != null) where.push(`r.collection_id = ${p.add((await findCollectionByRef(ctx, args.collectionId)).id)}`);
  if (args.tokenAddress != null) where.push(`r.token_address = ${p.add(args.tokenAddress)}`);
  if (args.tokenId != null) where.push(`r.token_id = ${p.add(args.tokenId)}::numeric`);
  if (args.ownerId != null) {
    const owner = p.add(args.ownerId);
    where.push(`(r.seller = ${owner} OR r.buyer = ${owner})`);
  }
  return fetchPage<Order>(ctx.ds, orderListQuery(args, p, where));
}

export async function getOrder(ctx: Context, id: string): Promise<Order> {
  const order = await ctx.loaders.orderById.load(uuidOf('id', id, 'an order'));
  if (!order) throw new NotFoundError(`no order with id ${id}`);
  return order;
}
