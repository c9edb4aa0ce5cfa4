import { DataSource } from 'typeorm';
import { PeekLoader, rowsById } from '../../common/batch';
import { Chain } from './chain.entity';

declare module '../../common/request/context' {
  interface Loaders {
    chainById: PeekLoader<string, Chain | null>;
  }
}

export function createChainLoaders(ds: DataSource) {
  return { chainById: rowsById(ds, Chain, 'text') };
}
