import { DataSource } from 'typeorm';
import { entitiesById, PeekLoader } from '../../common/batch';
import { Chain } from './chain.entity';

declare module '../../common/request/context' {
  interface Loaders {
    chainById: PeekLoader<string, Chain | null>;
  }
}

export function createChainLoaders(ds: DataSource) {
  return { chainById: entitiesById(ds, Chain) };
}
