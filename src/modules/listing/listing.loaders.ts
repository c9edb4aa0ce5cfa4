import DataLoader from 'dataloader';
import { DataSource } from 'typeorm';
import { byKey, observed, pagesByParent, PeekLoader } from '../../common/batch';
import { clock } from '../../common/clock';
import { Page } from '../../common/pagination';
import { fetchPagesByParent } from '../../common/list-page';
import { Params } from '../../common/sql';
import { floorListingSql } from './listing.sql';
import { pagesOfParent } from '../../common/read-model-sql';
import { activeListingsByAssets, LISTING_READ, listingColumns, listingsByIds } from './listing.read';
import { listingListQuery } from './listing.service';
import { Listing, ListingListArgs } from './listing.types';

type ListingPages = DataLoader<{ parentId: string; args: ListingListArgs }, Page<Listing>, string>;

declare module '../../common/request/context' {
  interface Loaders {
    activeListingByAsset: PeekLoader<string, Listing | null>;
    listingById: DataLoader<string, Listing | null>;
    /** Asset.listings, Collection.listings, Account.listings (as seller). */
    listingPagesByAsset: ListingPages;
    listingPagesByCollection: ListingPages;
    listingPagesBySeller: ListingPages;
    /** Collection.floorListing: the listing that sets the collection's floor now. */
    floorListingByCollection: DataLoader<string, Listing | null>;
  }
}

/** Pages of listings of a parent (`at`, as listing.read.ts's `pagesOf` joins them), one statement per batch (listingListQuery). */
function listingPages(ds: DataSource, name: string, at: string, sqlType: 'uuid' | 'text'): ListingPages {
  const parent = { ...pagesOfParent(LISTING_READ, at), sqlType };
  return pagesByParent<ListingListArgs, Page<Listing>>(name, (args, ids) => fetchPagesByParent<Listing>(ds, listingListQuery(args), { ...parent, ids }));
}

/** The floor listing of each collection now, by the statistics' rule (floorListingSql), in one statement. */
async function floorListings(ds: DataSource, collectionIds: readonly string[]): Promise<Listing[]> {
  const p = new Params();
  const now = p.add(clock.now());
  const ids = p.add(collectionIds);
  return ds.query(
    `SELECT f.* FROM unnest(${ids}::uuid[]) AS c(id)
     CROSS JOIN LATERAL (${floorListingSql('c.id', now, listingColumns(now), ' JOIN assets a ON a.id = l.asset_id')}) f`,
    p.values,
  );
}

export function createListingLoaders(ds: DataSource) {
  return {
    activeListingByAsset: new PeekLoader<string, Listing | null>(
      observed('activeListingByAsset', async (ids) => byKey(ids, await activeListingsByAssets(ds, ids, clock.now()), (l) => l.assetId)),
    ),
    listingById: new DataLoader<string, Listing | null>(observed('listingById', async (ids) => byKey(ids, await listingsByIds(ds, ids, clock.now()), (l) => l.id))),
    listingPagesByAsset: listingPages(ds, 'listingPagesByAsset', 'Asset.listings', 'uuid'),
    listingPagesByCollection: listingPages(ds, 'listingPagesByCollection', 'Collection.listings', 'uuid'),
    listingPagesBySeller: listingPages(ds, 'listingPagesBySeller', 'Account.listings', 'text'),
    floorListingByCollection: new DataLoader<string, Listing | null>(
      observed('floorListingByCollection', async (ids) => byKey(ids, await floorListings(ds, ids), (l) => l.collectionId)),
    ),
  };
}
