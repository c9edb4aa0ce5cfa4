import type { DataSource } from 'typeorm';
import { driverErrorOf } from '../../db/faults';
import { floorHour } from './statistics.sql';

/**
 * The upkeep of `collection_sales_bounds` (migration 1765760000000-collection-sales-bounds): per period, its
 * `since` moves forward once an hour, and the hours that leave are taken from the bounds of the collections
 * that sold in them, so a bound stays within about an hour's sales of its figure (statistics.sales-walk.ts
 * walks them). The writes raise the bounds (a trigger on the rollups); nothing here ever makes one too low.
 */

/**
 * How long after the hour `since` moves: a reader whose clock is up to this much behind the sweeper's still
 * finds its period inside the bounds (`since` at or before its start).
 */
export const SALES_BOUND_MARGIN_MS = 60_000;

/** How long the move waits for a bound row a sale holds before giving up until the next try: never a sale's wait. */
const LOCK_TIMEOUT = '200ms';

/** The hour of `now` less the margin: `since` of every period is that hour less its length. Moves are due when it changes. */
export const salesBoundsHour = (now: Date): number => floorHour(new Date(now.getTime() - SALES_BOUND_MARGIN_MS)).getTime();

/** The hour from which the bounds of a period of `seconds` count sales at `now`. */
const sinceAt = (seconds: number, now: Date) => new Date(salesBoundsHour(now) - seconds * 1000);

interface Window {
  period: string;
  seconds: number;
  since: Date;
}

/**
 * Moves each period's `since` forward to its hour at `now` (never back), taking the rollups of the hours
 * that leave from the bounds of their collections, in one transaction that holds the periods' rows (one
 * process moves them at a time). What a sale adds meanwhile is in the bounds or not in the rollups this
 * statement reads, never taken without having been added. A bound row held by a sale for longer than
 * LOCK_TIMEOUT makes the move give up (lock_not_available, rolled back: false), for the next try: a sale
 * never waits long for it, and never deadlocks with it. True once every period is at its hour.
 */
export async function advanceSalesBounds(ds: DataSource, now: Date): Promise<boolean> {
  return moveSalesBounds(ds, now).then(
    () => true,
    (err) => (driverErrorOf(err)?.code === LOCK_NOT_AVAILABLE ? false : Promise.reject(err)),
  );
}

const LOCK_NOT_AVAILABLE = '55P03';

async function moveSalesBounds(ds: DataSource, now: Date): Promise<void> {
  await ds.transaction(async (m) => {
    await m.query(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
    const windows: Window[] = await m.query(`SELECT period, seconds, since FROM collection_sales_bound_windows ORDER BY period FOR UPDATE`);
    for (const w of windows) {
      const since = sinceAt(w.seconds, now);
      if (since.getTime() <= new Date(w.since).getTime()) continue;
      await m.query(
        `UPDATE collection_sales_bounds b SET volume_high = b.volume_high - d.volume, sales_high = b.sales_high - d.sales
         FROM (SELECT r.collection_id, sum(r.volume) AS volume, sum(r.sales)::int AS sales FROM collection_sales_hourly r
               WHERE r.hour >= $2 AND r.hour < $3 GROUP BY r.collection_id ORDER BY r.collection_id) d
         WHERE b.period = $1 AND b.collection_id = d.collection_id`,
        [w.period, w.since, since],
      );
      await m.query(`UPDATE collection_sales_bound_windows SET since = $2 WHERE period = $1`, [w.period, since]);
    }
  });
}

/**
 * Sets every bound to its collection's sales from `since` at `now` exactly (and `since` there, back or
 * forward), with the rollups locked against writes for the while (SHARE: the sales wait). For tests and
 * operators; the sweeper's moves keep the bounds without it.
 */
export async function recountSalesBounds(ds: DataSource, now: Date): Promise<void> {
  await ds.transaction(async (m) => {
    await m.query(`LOCK TABLE collection_sales_hourly IN SHARE MODE`);
    const windows: Window[] = await m.query(`SELECT period, seconds, since FROM collection_sales_bound_windows ORDER BY period FOR UPDATE`);
    for (const w of windows) {
      const since = sinceAt(w.seconds, now);
      await m.query(`UPDATE collection_sales_bound_windows SET since = $2 WHERE period = $1`, [w.period, since]);
      await m.query(
        `UPDATE collection_sales_bounds b SET volume_high = 0, sales_high = 0
         WHERE b.period = $1 AND (b.volume_high <> 0 OR b.sales_high <> 0)
           AND NOT EXISTS (SELECT 1 FROM collection_sales_hourly r WHERE r.collection_id = b.collection_id AND r.hour >= $2)`,
        [w.period, since],
      );
      await m.query(
        `UPDATE collection_sales_bounds b SET volume_high = x.volume, sales_high = x.sales
         FROM (SELECT r.collection_id, sum(r.volume) AS volume, sum(r.sales)::int AS sales FROM collection_sales_hourly r WHERE r.hour >= $2 GROUP BY r.collection_id) x
         WHERE b.period = $1 AND b.collection_id = x.collection_id AND (b.volume_high, b.sales_high) IS DISTINCT FROM (x.volume, x.sales)`,
        [w.period, since],
      );
    }
  });
}
