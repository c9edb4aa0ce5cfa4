import { DataSource } from 'typeorm';
import { BadRequestError } from '../../common/errors';
import { clock } from '../../common/clock';
import type { ItemsOf } from '../../common/pagination';
import { Params } from '../../common/sql';
import { CollectionSeries, SeriesBucket, SeriesInterval } from './series.types';

const HOUR_MS = 3600 * 1000;
const STEP_MS: Record<SeriesInterval, number> = { [SeriesInterval.HOUR]: HOUR_MS, [SeriesInterval.DAY]: 24 * HOUR_MS };
/** Without `from`: the last 48 hours, or the last 30 days, the running bucket included. */
const DEFAULT_BUCKETS: Record<SeriesInterval, number> = { [SeriesInterval.HOUR]: 48, [SeriesInterval.DAY]: 30 };
export const MAX_SERIES_BUCKETS = 2000;

/** The buckets a series covers, aligned on UTC hours or days: [from, to), as ISO strings (a loader's key). */
export interface SeriesRange {
  interval: SeriesInterval;
  from: string;
  to: string;
}

const iso = (ms: number) => new Date(ms).toISOString();
/** The moments a bound may be: years 1 to 9999 (beyond them a bucket's bounds would not be ISO moments). */
const EARLIEST = Date.parse('0001-01-01T00:00:00.000Z');
const LATEST = Date.parse('9999-12-30T00:00:00.000Z');

/**
 * The buckets that meet [from, to): the first holds `from`, the last holds the moment just before `to`.
 * `to` defaults to the end of the running bucket (the one holding `now`), `from` to 48 buckets (hours) or
 * 30 (days) before `to`. A range that is empty or longer than MAX_SERIES_BUCKETS is a BAD_REQUEST naming it.
 */
export function seriesRange(interval: SeriesInterval, from: Date | null | undefined, to: Date | null | undefined, now: Date): SeriesRange {
  const step = STEP_MS[interval];
  for (const [field, moment] of [['from', from], ['to', to]] as const) {
    if (moment && (moment.getTime() < EARLIEST || moment.getTime() > LATEST)) {
      const message = `${field} must be a moment from ${iso(EARLIEST)} to ${iso(LATEST)}; got ${moment.toISOString()}`;
      throw new BadRequestError(message, [{ field, message: `from ${iso(EARLIEST)} to ${iso(LATEST)}` }]);
    }
  }
  if (from && to && from.getTime() >= to.getTime()) {
    const message = `from must be before to; got from ${from.toISOString()}, to ${to.toISOString()}`;
    throw new BadRequestError(message, [{ field: 'from', message: 'before to' }]);
  }
  const end = to ? Math.ceil(to.getTime() / step) * step : (Math.floor(now.getTime() / step) + 1) * step;
  const start = from ? Math.floor(from.getTime() / step) * step : end - DEFAULT_BUCKETS[interval] * step;
  if (start < EARLIEST) {
    const message = `from must be a moment from ${iso(EARLIEST)} to ${iso(LATEST)}; got ${iso(start)}, ${DEFAULT_BUCKETS[interval]} buckets before to`;
    throw new BadRequestError(message, [{ field: 'from', message: `from ${iso(EARLIEST)} to ${iso(LATEST)}` }]);
  }
  if (start >= end) {
    const message = `from must be before to; got from ${iso(start)}, after the running bucket, which ends at ${iso(end)}`;
    throw new BadRequestError(message, [{ field: 'from', message: 'before to' }]);
  }
  const buckets = (end - start) / step;
  if (buckets > MAX_SERIES_BUCKETS) {
    const hint = interval === SeriesInterval.HOUR ? ', or use interval 1d' : '';
    const message =
      `from ${iso(start)} to ${iso(end)} at interval ${interval} is ${buckets} buckets; at most ${MAX_SERIES_BUCKETS} ` +
      `(narrow from and to${hint})`;
    throw new BadRequestError(message, [
      { field: 'from', message: `at most ${MAX_SERIES_BUCKETS} buckets to to` },
      { field: 'to', message: `at most ${MAX_SERIES_BUCKETS} buckets from from` },
    ]);
  }
  return { interval, from: iso(start), to: iso(end) };
}

/** The buckets series(interval, from, to) has now (the cost estimate counts a chart by them: common/pagination.ts ItemsOf). */
export const SERIES_ITEMS: ItemsOf = {
  max: MAX_SERIES_BUCKETS,
  count: ({ interval, from, to }) => {
    const range = seriesRange(interval as SeriesInterval, from as Date | null, to as Date | null, clock.now());
    return (Date.parse(range.to) - Date.parse(range.from)) / STEP_MS[range.interval];
  },
};

/** A bucket with sales (a row of the rollups' sums): the others are empty. */
interface SoldBucket {
  collectionId: string;
  start: Date;
  volume: string;
  sales: number;
  averagePrice: string | null;
  floorPrice: string | null;
}

/**
 * The series of each collection over `range`, in one statement: the hourly rollups of the range summed per
 * bucket (`date_bin` from the range's start, which is on the UTC hour or midnight). Whole hours only, so the
 * rollups answer all of it (no order is read), by the rollup's primary key. Only the buckets with sales come
 * from PostgreSQL; the empty ones (a 30-day chart of hours has 721 buckets, most of them empty) are made
 * here: 721 rows read, parsed and copied cost Node 11 ms per chart, against 0.7 ms for the statement.
 */
export async function seriesForCollections(ds: DataSource, ids: readonly string[], range: SeriesRange): Promise<Map<string, CollectionSeries>> {
  const p = new Params();
  const idsP = p.add(ids);
  const fromP = p.add(range.from);
  const toP = p.add(range.to);
  const stepP = p.add(`${STEP_MS[range.interval] / 1000} seconds`);
  const sold: SoldBucket[] = await ds.query(
    `SELECT r.collection_id AS "collectionId", r.start, COALESCE(r.volume, 0)::text AS volume, COALESCE(r.sales, 0)::int AS sales,
       round(r.volume / r.sales, 18)::text AS "averagePrice", r.floor::text AS "floorPrice"
     FROM (
       SELECT h.collection_id, date_bin(${stepP}::interval, h.hour, ${fromP}::timestamptz) AS start,
         sum(h.volume) AS volume, sum(h.sales) AS sales, min(h.min_price) AS floor
       FROM collection_sales_hourly h
       WHERE h.collection_id = ANY(${idsP}::uuid[]) AND h.hour >= ${fromP}::timestamptz AND h.hour < ${toP}::timestamptz
       GROUP BY 1, 2
     ) r`,
    p.values,
  );
  const from = new Date(range.from);
  const to = new Date(range.to);
  const step = STEP_MS[range.interval];
  const count = (to.getTime() - from.getTime()) / step;
  const soldOf = new Map<string, Map<number, SoldBucket>>();
  for (const bucket of sold) {
    let one = soldOf.get(bucket.collectionId);
    if (!one) soldOf.set(bucket.collectionId, (one = new Map()));
    one.set((bucket.start.getTime() - from.getTime()) / step, bucket);
  }
  const series = new Map<string, CollectionSeries>();
  for (const id of ids) {
    const ofCollection = soldOf.get(id);
    const buckets: SeriesBucket[] = new Array(count);
    for (let i = 0; i < count; i += 1) {
      const startTime = new Date(from.getTime() + i * step);
      const b = ofCollection?.get(i);
      buckets[i] = b
        ? {
            startTime,
            volume: b.volume,
            volumeDecimal: b.volume,
            sales: b.sales,
            averagePrice: b.averagePrice,
            averagePriceDecimal: b.averagePrice,
            floorPrice: b.floorPrice,
            floorPriceDecimal: b.floorPrice,
          }
        : { startTime, volume: '0', volumeDecimal: '0', sales: 0, averagePrice: null, averagePriceDecimal: null, floorPrice: null, floorPriceDecimal: null };
    }
    series.set(id, { interval: range.interval, from, to, buckets });
  }
  return series;
}
