import DataLoader from 'dataloader';
import { DataSource } from 'typeorm';
import { byKey, observed, pagesByParent } from '../../common/batch';
import { Page } from '../../common/pagination';
import { fetchPagesByParent, PageParent } from '../../common/list-page';
import { pagesOfParent } from '../../common/read-model-sql';
import { orderListQuery, ordersByIds } from './order.service';
import { ORDER_READ } from './order.read';
import { NestedOrderArgs, Order, OrderRole } from './order.types';

/** The arguments of an account's orders: its part in them besides the list's own. */
export type AccountOrderPageArgs = NestedOrderArgs & { role: OrderRole };

type OrderPages<A> = DataLoader<{ parentId: string; args: A }, Page<Order>, string>;

declare module '../../common/request/context' {
  interface Loaders {
    orderById: DataLoader<string, Order | null>;
    orderPagesByAsset: OrderPages<NestedOrderArgs>;
    orderPagesByCollection: OrderPages<NestedOrderArgs>;
    /** Account.orders, by the account's address (order.read.ts `pagesOf`). */
    orderPagesByAccount: OrderPages<AccountOrderPageArgs>;
  }
}

/** Pages of orders of many parents, one statement per batch (orderListQuery). */
function orderPages<A extends NestedOrderArgs>(ds: DataSource, name: string, parent: (args: A) => PageParent & { sqlType: 'uuid' | 'text' }) {
  return pagesByParent<A, Page<Order>>(name, (args, ids) => fetchPagesByParent<Order>(ds, orderListQuery(args), { ...parent(args), ids }));
}

export function createOrderLoaders(ds: DataSource) {
  return {
    orderById: new DataLoader<string, Order | null>(observed('orderById', async (ids) => byKey(ids, await ordersByIds(ds, ids), (o) => o.id))),
    orderPagesByAsset: orderPages<NestedOrderArgs>(ds, 'orderPagesByAsset', () => ({ column: 'r.asset_id', sqlType: 'uuid' })),
    orderPagesByCollection: orderPages<NestedOrderArgs>(ds, 'orderPagesByCollection', () => ({ column: 'r.collection_id', sqlType: 'uuid' })),
    orderPagesByAccount: orderPages<AccountOrderPageArgs>(ds, 'orderPagesByAccount', (args) => ({ ...pagesOfParent(ORDER_READ, 'Account.orders', args), sqlType: 'text' })),
  };
}
