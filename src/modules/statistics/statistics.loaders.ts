import DataLoader from 'dataloader';
import { DataSource } from 'typeorm';
import { pagesByParent } from '../../common/batch';
import { statisticsForCollections } from './statistics.service';
import { Period, StatisticsRecord } from './statistics.types';
import { SeriesRange, seriesForCollections } from './series.service';
import { CollectionSeries } from './series.types';

declare module '../../common/request/context' {
  interface Loaders {
    statisticsByCollection: DataLoader<{ parentId: string; args: Period }, StatisticsRecord, string>;
    seriesByCollection: DataLoader<{ parentId: string; args: SeriesRange }, CollectionSeries, string>;
  }
}

export function createStatisticsLoaders(ds: DataSource) {
  return {
    statisticsByCollection: pagesByParent<Period, StatisticsRecord>(
      'statisticsByCollection',
      async (period, ids) => new Map((await statisticsForCollections(ds, ids, period)).map((r) => [r.collectionId, r])),
    ),
    seriesByCollection: pagesByParent<SeriesRange, CollectionSeries>('seriesByCollection', (range, ids) => seriesForCollections(ds, ids, range)),
  };
}
