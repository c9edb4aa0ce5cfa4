import type { DataSource, EntityManager } from 'typeorm';
import { driverErrorOf } from '../../db/faults';
import { floorHour, HOUR_MS } from './statistics.sql';

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

/** The advisory lock between the lows' moves (exclusive) and their trigger (shared, migration 1765800000000). */
const SALES_LOWS_LOCK = `hashtext('nftgw:collection-sales-lows')`;

/** Periods of 6 hours or more keep lows (migration 1765800000000-collection-sales-lows): a shorter one's hours would be none. */
const hasLows = (w: Pick<Window, 'seconds'>) => w.seconds >= LOWS_MIN_SECONDS;
export const LOWS_MIN_SECONDS = 6 * 3600;

/** The hours a period's lows count when its hours start at `since`: [since + 2 h, since + length - 1 h). */
export const lowHours = (seconds: number, since: Date): [Date, Date] => [
  new Date(since.getTime() + 2 * HOUR_MS),
  new Date(since.getTime() + seconds * 1000 - HOUR_MS),
];

/**
 * The hours of a period's trend sums when its hours start at `since` (migration 1765850000000): the trend
 * window's, [since + 1 h, since + length), and the window's before it, [since - length + 1 h, since).
 */
export const keptTrendHours = (seconds: number, since: Date): [Date, Date] => [new Date(since.getTime() + HOUR_MS), new Date(since.getTime() + seconds * 1000)];
export const keptPreviousHours = (seconds: number, since: Date): [Date, Date] => [new Date(since.getTime() - seconds * 1000 + HOUR_MS), since];

/** What a range of hours kept from `since` takes and gives when `since` moves forward: [leaving, entering]. */
function moved(hours: (seconds: number, since: Date) => [Date, Date], w: Window, since: Date): Array<[Date, Date]> {
  const [oldFrom, oldTo] = hours(w.seconds, new Date(w.since));
  const [newFrom, newTo] = hours(w.seconds, since);
  return [
    [oldFrom, new Date(Math.min(newFrom.getTime(), oldTo.getTime()))],
    [new Date(Math.max(oldTo.getTime(), newFrom.getTime())), newTo],
  ];
}

/**
 * The lows and the trend sums of a period whose hours move from `w.since` to `since`: each collection takes
 * the rollups of the hours that enter each range and gives those that leave it (index ranges of the rollups,
 * an hour each when the sweeper keeps up). Under the exclusive lock the rollups' triggers take shared: no
 * change of a rollup is in flight, and those to come read the moved `since`.
 */
async function moveLows(m: EntityManager, w: Window, since: Date): Promise<void> {
  const ranges = [
    { hours: lowHours, volume: 'volume', sales: 'sales', trend: '0', previous: '0' },
    { hours: keptTrendHours, volume: '0', sales: '0', trend: 'volume', previous: '0' },
    { hours: keptPreviousHours, volume: '0', sales: '0', trend: '0', previous: 'volume' },
  ];
  // $1 is the period; each range's hours follow it.
  const params: Array<string | Date> = [w.period];
  const selects = ranges.flatMap((range) =>
    moved(range.hours, w, since).map(([from, to], entering) => {
      params.push(from, to);
      const value = (column: string) => (column === '0' ? '0' : `${entering ? '' : '-'}r.${column}`);
      return `SELECT r.collection_id, ${value(range.volume)} AS volume, ${value(range.sales)} AS sales, ${value(range.trend)} AS trend, ${value(range.previous)} AS previous
        FROM collection_sales_hourly r WHERE r.hour >= $${params.length - 1} AND r.hour < $${params.length}`;
    }),
  );
  await m.query(
    `UPDATE collection_sales_lows l SET volume_low = l.volume_low + d.volume, sales_low = l.sales_low + d.sales,
       trend_volume = l.trend_volume + d.trend, previous_volume = l.previous_volume + d.previous
     FROM (SELECT x.collection_id, sum(x.volume) AS volume, sum(x.sales)::int AS sales, sum(x.trend) AS trend, sum(x.previous) AS previous
           FROM (${selects.join(' UNION ALL ')}) x
           GROUP BY x.collection_id ORDER BY x.collection_id) d
     WHERE l.period = $1 AND l.collection_id = d.collection_id AND (d.volume <> 0 OR d.sales <> 0 OR d.trend <> 0 OR d.previous <> 0)`,
    params,
  );
}

async function moveSalesBounds(ds: DataSource, now: Date): Promise<void> {
  await ds.transaction(async (m) => {
    await m.query(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
    const windows: Window[] = await m.query(`SELECT period, seconds, since FROM collection_sales_bound_windows ORDER BY period FOR UPDATE`);
    const moving = windows.filter((w) => sinceAt(w.seconds, now).getTime() > new Date(w.since).getTime());
    // The lows' changes wait while the hours move (and the move for those in flight): see moveLows.
    if (moving.some(hasLows)) await m.query(`SELECT pg_advisory_xact_lock(${SALES_LOWS_LOCK})`);
    for (const w of moving) {
      const since = sinceAt(w.seconds, now);
      if (hasLows(w)) await moveLows(m, w, since);
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
      if (hasLows(w)) {
        const [from, to] = lowHours(w.seconds, since);
        const [trendFrom, trendTo] = keptTrendHours(w.seconds, since);
        const [previousFrom, previousTo] = keptPreviousHours(w.seconds, since);
        await m.query(
          `UPDATE collection_sales_lows l SET volume_low = COALESCE(x.volume, 0), sales_low = COALESCE(x.sales, 0),
             trend_volume = COALESCE(x.trend, 0), previous_volume = COALESCE(x.previous, 0)
           FROM collection_sales_lows k LEFT JOIN (SELECT r.collection_id,
               sum(r.volume) FILTER (WHERE r.hour >= $2 AND r.hour < $3) AS volume, (sum(r.sales) FILTER (WHERE r.hour >= $2 AND r.hour < $3))::int AS sales,
               sum(r.volume) FILTER (WHERE r.hour >= $4 AND r.hour < $5) AS trend, sum(r.volume) FILTER (WHERE r.hour >= $6 AND r.hour < $7) AS previous
             FROM collection_sales_hourly r WHERE r.hour >= $6 AND r.hour < $5 GROUP BY r.collection_id) x ON x.collection_id = k.collection_id
           WHERE k.period = $1 AND l.period = k.period AND l.collection_id = k.collection_id
             AND (l.volume_low, l.sales_low, l.trend_volume, l.previous_volume)
               IS DISTINCT FROM (COALESCE(x.volume, 0), COALESCE(x.sales, 0), COALESCE(x.trend, 0), COALESCE(x.previous, 0))`,
          [w.period, from, to, trendFrom, trendTo, previousFrom, previousTo],
        );
      }
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
