import { DataSource } from 'typeorm';
import { entitiesById, PeekLoader } from '../../common/batch';
import { Category } from './category.entity';
import { Tag } from './tag.entity';

declare module '../../common/request/context' {
  interface Loaders {
    categoryById: PeekLoader<string, Category | null>;
    tagById: PeekLoader<string, Tag | null>;
  }
}

export function createCatalogLoaders(ds: DataSource) {
  return { categoryById: entitiesById(ds, Category), tagById: entitiesById(ds, Tag) };
}
