import DataLoader from 'dataloader';
import { DataSource } from 'typeorm';
import { clock } from './common/clock';
import { pagesByParent, PeekLoader, rowsById } from './common/batch';
import { Asset } from './modules/asset/asset.entity';
import { assetPagesByCollection, RelationLoaders } from './modules/asset/asset.loaders';
import { Category } from './modules/catalog/category.entity';
import { Chain } from './modules/chain/chain.entity';
import { Collection } from './modules/collection/collection.entity';
import { activeListingsByAssets } from './modules/listing/listing.sql';
import { Listing } from './modules/listing/listing.types';
import { offersByIds } from './modules/offer/offer.sql';
import { Offer } from './modules/offer/offer.types';
import { ordersByIds } from './modules/order/order.service';
import { Order } from './modules/order/order.types';
import { statisticsForCollections } from './modules/statistics/statistics.service';
import { Period, StatisticsRecord } from './modules/statistics/statistics.types';

function byKey<K, V>(keys: readonly K[], rows: V[], keyOf: (row: V) => K): (V | null)[] {
  const map = new Map(rows.map((row) => [keyOf(row), row]));
  return keys.map((key) => map.get(key) ?? null);
}

/** The loaders of one request: every nested relation goes through one of them. */
export function createLoaders(ds: DataSource) {
  const loaders = {
    chainById: rowsById(ds, Chain, 'text'),
    categoryById: rowsById(ds, Category, 'text'),
    collectionById: rowsById(ds, Collection, 'uuid'),
    assetById: rowsById(ds, Asset, 'uuid'),
    assetPagesByCollection: assetPagesByCollection(ds, (): RelationLoaders => loaders),
    activeListingByAsset: new PeekLoader<string, Listing | null>(async (ids) =>
      byKey(ids, await activeListingsByAssets(ds, ids, clock.now()), (l) => l.assetId),
    ),
    offerById: new DataLoader<string, Offer | null>(async (ids) => byKey(ids, await offersByIds(ds, ids, clock.now()), (o) => o.id)),
    statisticsByCollection: pagesByParent<Period, StatisticsRecord>(
      async (period, ids) => new Map((await statisticsForCollections(ds, ids, period)).map((r) => [r.collectionId, r])),
    ),
    orderById: new DataLoader<string, Order | null>(async (ids) => byKey(ids, await ordersByIds(ds, ids), (o) => o.id)),
  };
  return loaders;
}

export type Loaders = ReturnType<typeof createLoaders>;
