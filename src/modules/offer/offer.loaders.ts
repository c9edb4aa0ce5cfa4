import DataLoader from 'dataloader';
import { DataSource } from 'typeorm';
import { byKey, observed } from '../../common/batch';
import { clock } from '../../common/clock';
import { offersByIds } from './offer.sql';
import { Offer } from './offer.types';

declare module '../../common/request/context' {
  interface Loaders {
    offerById: DataLoader<string, Offer | null>;
  }
}

export function createOfferLoaders(ds: DataSource) {
  return {
    offerById: new DataLoader<string, Offer | null>(observed('offerById', async (ids) => byKey(ids, await offersByIds(ds, ids, clock.now()), (o) => o.id))),
  };
}
