import type { DataSource } from 'typeorm';
import { rootDataSource } from '../../common/request/scope';
import type { Page } from '../../common/pagination';
import type { StatisticsRecord } from './statistics.types';

/**
 * Statistics pages computed at most once per database state and STATISTICS_MAX_AGE_MS.
 *
 * A page is kept with the database snapshot it was computed under (`pg_current_snapshot()`: the
 * transactions committed, in progress and not yet begun). Two equal snapshots see exactly the same rows,
 * and a snapshot never recurs once anything has committed since, so a page is served again only while no
 * transaction of the whole server has begun or committed since it was computed, and for at most the
 * maximum age (a period is a window that moves with time). Every record says when it was computed
 * (`as_of`, and the period's bounds with it), so a served page is exact as of that moment. A client that
 * has just written sees its write: its commit changed the snapshot.
 */
interface Entry {
  snapshot: string;
  at: number;
  page: Page<StatisticsRecord>;
}

/** Pages kept per data source; the least recently used go first. */
const MAX_ENTRIES = 256;

class StatisticsCache {
  private readonly entries = new Map<string, Entry>();
  /** Computations under way, so that the requests that miss together compute once (no stampede at expiry). */
  readonly computing = new Map<string, { snapshot: string; page: Promise<Page<StatisticsRecord>> }>();

  get(key: string, snapshot: string, now: number, maxAgeMs: number): Page<StatisticsRecord> | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    const age = now - entry.at;
    if (entry.snapshot !== snapshot || age < 0 || age >= maxAgeMs) {
      this.entries.delete(key);
      return undefined;
    }
    this.entries.delete(key);
    this.entries.set(key, entry);
    return { ...entry.page, result: entry.page.result.slice() };
  }

  set(key: string, snapshot: string, now: number, page: Page<StatisticsRecord>): void {
    this.entries.delete(key);
    this.entries.set(key, { snapshot, at: now, page: { ...page, result: page.result.slice() } });
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
  }
}

/** One cache per database (the service's data source, not a request's view of it). */
const caches = new WeakMap<DataSource, StatisticsCache>();

/**
 * The page for `key` as computed under the current snapshot no longer than `maxAgeMs` ago, or `compute`'s
 * (run now and kept; requests that miss under the same snapshot while it runs share it). One statement
 * when the page is served from the cache or from a computation under way.
 */
export async function cachedStatistics(
  ds: DataSource,
  key: string,
  now: Date,
  maxAgeMs: number,
  compute: () => Promise<Page<StatisticsRecord>>,
): Promise<Page<StatisticsRecord>> {
  const root = rootDataSource(ds);
  let cache = caches.get(root);
  if (!cache) caches.set(root, (cache = new StatisticsCache()));
  const [{ snapshot }] = (await ds.query('SELECT pg_current_snapshot()::text AS snapshot')) as Array<{ snapshot: string }>;
  const hit = cache.get(key, snapshot, now.getTime(), maxAgeMs);
  if (hit) return hit;
  const running = cache.computing.get(key);
  if (running?.snapshot === snapshot) {
    const page = await running.page;
    return { ...page, result: page.result.slice() };
  }
  const page = compute();
  const computing = { snapshot, page };
  cache.computing.set(key, computing);
  try {
    const computed = await page;
    cache.set(key, snapshot, now.getTime(), computed);
    return computed;
  } finally {
    if (cache.computing.get(key) === computing) cache.computing.delete(key);
  }
}
