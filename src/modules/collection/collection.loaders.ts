import { DataSource } from 'typeorm';
import { PeekLoader, rowsById } from '../../common/batch';
import { Collection } from './collection.entity';

declare module '../../common/request/context' {
  interface Loaders {
    collectionById: PeekLoader<string, Collection | null>;
  }
}

export function createCollectionLoaders(ds: DataSource) {
  return { collectionById: rowsById(ds, Collection, 'uuid') };
}
