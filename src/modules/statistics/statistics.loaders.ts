import DataLoader from 'dataloader';
import { DataSource } from 'typeorm';
import { observed, pagesByParent } from '../../common/batch';
import { clock } from '../../common/clock';
import { statisticsForCollections } from './statistics.service';
import { Period, StatisticsRecord } from './statistics.types';
import { SeriesRange, seriesForCollections } from './series.service';
import { CollectionSeries } from './series.types';
import { priceDepthForCollections, traitFloorsForCollections } from './depth.service';
import { PriceDepthBucket, TraitFloor } from './depth.types';

declare module '../../common/request/context' {
  interface Loaders {
    statisticsByCollection: DataLoader<{ parentId: string; args: Period }, StatisticsRecord, string>;
    seriesByCollection: DataLoader<{ parentId: string; args: SeriesRange }, CollectionSeries, string>;
    traitFloorsByCollection: DataLoader<string, TraitFloor[]>;
    priceDepthByCollection: DataLoader<{ parentId: string; args: number }, PriceDepthBucket[], string>;
  }
}

export function createStatisticsLoaders(ds: DataSource) {
  return {
    statisticsByCollection: pagesByParent<Period, StatisticsRecord>(
      'statisticsByCollection',
      async (period, ids) => new Map((await statisticsForCollections(ds, ids, period)).map((r) => [r.collectionId, r])),
    ),
    seriesByCollection: pagesByParent<SeriesRange, CollectionSeries>('seriesByCollection', (range, ids) => seriesForCollections(ds, ids, range)),
    traitFloorsByCollection: new DataLoader<string, TraitFloor[]>(
      observed('traitFloorsByCollection', async (ids) => {
        const floors = await traitFloorsForCollections(ds, ids, clock.now());
        return ids.map((id) => floors.get(id) ?? []);
      }),
    ),
    priceDepthByCollection: pagesByParent<number, PriceDepthBucket[]>('priceDepthByCollection', (buckets, ids) =>
      priceDepthForCollections(ds, ids, buckets, clock.now()),
    ),
  };
}
