import { DataSource } from 'typeorm';
import { checkCurrencyFilter } from '../currency/currency.service';
import { keyOf } from '../../common/graphql/node';
import type { Context } from '../../common/request/context';
import { NotFoundError } from '../../common/errors';
import { Page, SortKey } from '../../common/pagination';
import { ListQuery } from '../../common/list-query';
import { fetchPage } from '../../common/list-page';
import { sqlScope } from '../../common/read-model';
import { checkFilters, filterConditions, keptCountSql, keysetLead, rootRows, RootRows, selectList } from '../../common/read-model-sql';
import { uuidOf } from '../../common/validate';
import { chainCondition, findCollectionByRef } from '../collection/collection.service';
import { NestedOrderArgs, Order, OrderListArgs, OrderOrderBy } from './order.types';
import { ORDER_READ } from './order.read';

/** The sorts of orders over their row `r`. */
export const ORDER_SORTS = ORDER_READ.sorts as Record<OrderOrderBy, SortKey>;

export async function ordersByIds(ds: DataSource, ids: readonly string[]): Promise<Order[]> {
  const s = sqlScope();
  return ds.query(`SELECT ${selectList(ORDER_READ, s)} FROM orders r WHERE r.id = ANY(${s.p.add(ids)}::uuid[])`, s.p.values);
}

/**
 * The list of orders with the filters every order list takes (order.read.ts), over `orders r` plus
 * `where`: the root list's and each relation's (an asset's, a collection's, an account's); the root list's
 * rows as `root` says (rootRows: those of a filter's ranges).
 */
export function orderListQuery(args: NestedOrderArgs, s = sqlScope(), where: string[] = [], root?: RootRows): ListQuery {
  checkFilters(ORDER_READ.filters, args);
  const conditions = [...where, ...filterConditions(root ? ORDER_READ.filters.filter(root.written) : ORDER_READ.filters, s, 'r', args)];
  return { from: `${root?.table ?? 'orders'} r`, columns: selectList(ORDER_READ, s), idExpression: 'r.id', where: conditions, params: s.p, sort: ORDER_SORTS[args.orderBy], orderBy: args.orderBy, args };
}

export async function listOrders(ctx: Context, args: OrderListArgs): Promise<Page<Order>> {
  checkFilters([...ORDER_READ.rootFilters, ...ORDER_READ.filters], args);
  await checkCurrencyFilter(ctx, args.currency);
  const s = sqlScope();
  const where: string[] = [];
  const chain = await chainCondition(ctx, s.p, 'r.chain_id', args.chainId);
  if (chain) where.push(chain);
  const collectionId = args.collectionId == null ? null : (await findCollectionByRef(ctx, args.collectionId)).id;
  const root = rootRows('orders', [...ORDER_READ.rootFilters, ...ORDER_READ.filters], s, 'r', args);
  where.push(...filterConditions(ORDER_READ.rootFilters.filter(root.written), s, 'r', { ...args, collectionId }));
  // The chain by its EIP-155 id, as its condition names it; written only when the request counts (PostgreSQL
  // refuses a statement with a parameter it does not use).
  const count = () => keptCountSql(ORDER_READ, s, { ...args, chainId: args.chainId == null ? null : keyOf('Chain', args.chainId) });
  const keyset = keysetLead([...ORDER_READ.rootFilters, ...ORDER_READ.filters], ORDER_READ.sorts[args.orderBy], 'r', { ...args, collectionId });
  return fetchPage<Order>(ctx.ds, { ...orderListQuery(args, s, where, root), count, keysetLead: keyset });
}

export async function getOrder(ctx: Context, id: string): Promise<Order> {
  const order = await ctx.loaders.orderById.load(uuidOf('id', id, 'an order'));
  if (!order) throw new NotFoundError(`no order with id ${id}`);
  return order;
}
