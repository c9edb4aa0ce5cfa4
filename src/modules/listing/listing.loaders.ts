import { DataSource } from 'typeorm';
import { byKey, observed, PeekLoader } from '../../common/batch';
import { clock } from '../../common/clock';
import { activeListingsByAssets } from './listing.sql';
import { Listing } from './listing.types';

declare module '../../common/request/context' {
  interface Loaders {
    activeListingByAsset: PeekLoader<string, Listing | null>;
  }
}

export function createListingLoaders(ds: DataSource) {
  return {
    activeListingByAsset: new PeekLoader<string, Listing | null>(
      observed('activeListingByAsset', async (ids) => byKey(ids, await activeListingsByAssets(ds, ids, clock.now()), (l) => l.assetId)),
    ),
  };
}
