import DataLoader from 'dataloader';
import { DataSource } from 'typeorm';
import { pagesByParent, PeekLoader, rowsById } from '../../common/batch';
import { Page } from '../../common/pagination';
import { fetchPagesByParent } from '../../common/list-page';
import { Params } from '../../common/sql';
import { Collection } from './collection.entity';
import { NestedCollectionArgs } from './collection.inputs';
import { fixedSort, pagesOfParent } from '../../common/read-model-sql';
import { COLLECTION_READ, collectionColumns } from './collection.read';
import { collectionConditions } from './collection.service';

declare module '../../common/request/context' {
  interface Loaders {
    collectionById: PeekLoader<string, Collection | null>;
    /** Account.collections, by the owner's address. */
    collectionPagesByOwner: DataLoader<{ parentId: string; args: NestedCollectionArgs }, Page<Collection>, string>;
  }
}

/** Pages of collections of many owners in one statement, whole rows (they go to collectionById). */
function collectionPagesByOwner(ds: DataSource, collectionById: PeekLoader<string, Collection | null>) {
  return pagesByParent<NestedCollectionArgs, Page<Collection>>('collectionPagesByOwner', async (args, owners) => {
    const p = new Params();
    const pages = await fetchPagesByParent<Collection>(
      ds,
      {
        from: 'collections t',
        columns: collectionColumns(),
        idExpression: 't.id',
        where: collectionConditions(p, args),
        params: p,
        sort: fixedSort(COLLECTION_READ, args.orderBy)!,
        orderBy: args.orderBy,
        args,
      },
      { ...pagesOfParent(COLLECTION_READ, 'Account.collections'), ids: owners, sqlType: 'text' },
    );
    for (const page of pages.values()) for (const c of page.result) collectionById.prime(c.id, c);
    return pages;
  });
}

export function createCollectionLoaders(ds: DataSource) {
  const collectionById = rowsById(ds, Collection, 'uuid', collectionColumns());
  return { collectionById, collectionPagesByOwner: collectionPagesByOwner(ds, collectionById) };
}
