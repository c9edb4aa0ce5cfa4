import { DataSource } from 'typeorm';
import { Loaders } from '../common/request/context';
import { createAssetLoaders } from '../modules/asset/asset.loaders';
import { createCatalogLoaders } from '../modules/catalog/catalog.loaders';
import { createChainLoaders } from '../modules/chain/chain.loaders';
import { createCurrencyLoaders } from '../modules/currency/currency.loaders';
import { createCollectionLoaders } from '../modules/collection/collection.loaders';
import { createListingLoaders } from '../modules/listing/listing.loaders';
import { createOfferLoaders } from '../modules/offer/offer.loaders';
import { createOrderLoaders } from '../modules/order/order.loaders';
import { createHistoryLoaders } from '../modules/event/history.loaders';
import { createStatisticsLoaders } from '../modules/statistics/statistics.loaders';
import { createNodeLoaders } from '../modules/node/node.loaders';

/** The loaders of one request, gathered from every module: each nested relation goes through one of them. */
export function createLoaders(ds: DataSource): Loaders {
  const loaders: Loaders = {
    ...createChainLoaders(ds),
    ...createCurrencyLoaders(ds),
    ...createCatalogLoaders(ds),
    ...createCollectionLoaders(ds),
    ...createAssetLoaders(ds, () => loaders),
    ...createListingLoaders(ds),
    ...createOfferLoaders(ds),
    ...createOrderLoaders(ds),
    ...createStatisticsLoaders(ds),
    ...createHistoryLoaders(ds),
    ...createNodeLoaders(ds, () => loaders),
  };
  return loaders;
}
