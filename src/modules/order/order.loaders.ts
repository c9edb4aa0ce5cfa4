import DataLoader from 'dataloader';
import { DataSource } from 'typeorm';
import { byKey, observed } from '../../common/batch';
import { ordersByIds } from './order.service';
import { Order } from './order.types';

declare module '../../common/request/context' {
  interface Loaders {
    orderById: DataLoader<string, Order | null>;
  }
}

export function createOrderLoaders(ds: DataSource) {
  return { orderById: new DataLoader<string, Order | null>(observed('orderById', async (ids) => byKey(ids, await ordersByIds(ds, ids), (o) => o.id))) };
}
