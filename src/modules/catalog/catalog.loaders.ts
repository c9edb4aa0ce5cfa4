import { DataSource } from 'typeorm';
import { PeekLoader, rowsById } from '../../common/batch';
import { Category } from './category.entity';

declare module '../../common/request/context' {
  interface Loaders {
    categoryById: PeekLoader<string, Category | null>;
  }
}

export function createCatalogLoaders(ds: DataSource) {
  return { categoryById: rowsById(ds, Category, 'text') };
}
