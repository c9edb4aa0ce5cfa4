import { DataSource } from 'typeorm';
import type { Context } from '../../common/request/context';
import { clock } from '../../common/clock';
import { BadRequestError } from '../../common/errors';
import { fetchPage, Page, SortKey } from '../../common/pagination';
import { Params, prefixedColumns, takeJoined } from '../../common/sql';
import { Category } from '../catalog/category.entity';
import { Chain } from '../chain/chain.entity';
import { Collection } from '../collection/collection.entity';
import { chainCondition } from '../collection/collection.service';
import { currentPriceSql, floorListingSql } from '../listing/listing.sql';
import { cachedStatistics } from './statistics.cache';
import { PERIODS, Period, StatisticsArgs, StatisticsOrderBy, StatisticsRecord } from './statistics.types';
import { isNativeSql } from '../currency/currency.entity';

const TRENDING_FACTOR = 1.5;
const DAY_SECONDS = 24 * 3600;

export function checkPeriod(period: string): Period {
  if (!(period in PERIODS)) {
    throw new BadRequestError(`period must be one of ${Object.keys(PERIODS).join(', ')}; got ${JSON.stringify(period)}`, [
      { field: 'period', message: `one of ${Object.keys(PERIODS).join(', ')}` },
    ]);
  }
  return period as Period;
}

/** Which of the costlier figures a statement computes (the others come out null). */
interface Figures {
  floor: boolean;
  holders: boolean;
  /** false: the sales figures come out 0 (a page's second statement only needs the floor and the holders). */
  sales?: boolean;
}

const HOUR_MS = 3600 * 1000;
const floorHour = (t: Date) => new Date(Math.floor(t.getTime() / HOUR_MS) * HOUR_MS);

/**
 * The sales figures of the windows a record reports, from the hourly rollups plus the orders of the
 * partial hours at the windows' edges. Every window is half-open, [start, end), and they tile: the
 * period is [now - length, now) (all: everything before now), the trend window is the period (all:
 * [now - 24 h, now)), and the previous window is [trend start - length, trend start). A whole UTC hour
 * that holds no window edge lies wholly inside or wholly outside each window, so it is read from
 * `collection_sales_hourly`; an hour that holds an edge (when now is not on the hour: at most three) is
 * read from `orders` by its (created_at) index, so the figures are exact at the millisecond and a sale at
 * an edge counts in exactly one window. The cost depends on the collections and the hours in the windows,
 * not on how many orders there are.
 */
function salesTable(p: Params, period: Period, now: Date, collectionIds: readonly string[] | null): string {
  const seconds = PERIODS[period];
  const trendMs = (seconds ?? DAY_SECONDS) * 1000;
  const end = now;
  const start = seconds === null ? null : new Date(now.getTime() - seconds * 1000);
  const trendStart = new Date(now.getTime() - trendMs);
  const previousStart = new Date(now.getTime() - 2 * trendMs);
  const edgeHours = [previousStart, trendStart, end]
    .filter((t) => t.getTime() % HOUR_MS !== 0)
    .map((t) => floorHour(t));
  const endP = p.add(end);
  const startP = start ? p.add(start) : null;
  const trendP = p.add(trendStart);
  const previousP = p.add(previousStart);
  const edgesP = p.add(edgeHours.map((t) => t.toISOString()));
  // The earliest moment any window reaches: for all, the beginning.
  const rollupFrom = start === null ? '' : `r.hour >= ${p.add(floorHour(previousStart))}::timestamptz AND `;
  const idsP = collectionIds ? p.add(collectionIds) : null;
  const ofRollup = idsP ? `r.collection_id = ANY(${idsP}::uuid[]) AND ` : '';
  const ofOrder = idsP ? ` AND o.collection_id = ANY(${idsP}::uuid[])` : '';
  // One range per edge hour, so each is an index range scan on orders (created_at).
  const edgeRanges = edgeHours.map((hour) => {
    const from = new Date(hour);
    return `(o.created_at >= ${p.add(from)}::timestamptz AND o.created_at < ${p.add(new Date(from.getTime() + HOUR_MS))}::timestamptz)`;
  });
  const orderEdges = edgeRanges.length
    ? `UNION ALL
      SELECT o.collection_id, o.created_at, o.price, 1
      FROM orders o
      WHERE (${edgeRanges.join(' OR ')})
        AND o.status = 'completed' AND o.seller <> o.buyer AND ${isNativeSql('o')} AND o.created_at < ${endP}::timestamptz${ofOrder}`
    : '';
  const inPeriod = `s.at < ${endP}::timestamptz${startP ? ` AND s.at >= ${startP}::timestamptz` : ''}`;
  const inTrend = `s.at >= ${trendP}::timestamptz AND s.at < ${endP}::timestamptz`;
  const inPrevious = `s.at >= ${previousP}::timestamptz AND s.at < ${trendP}::timestamptz`;
  return `(SELECT s.collection_id,
        sum(s.volume) FILTER (WHERE ${inPeriod}) AS volume,
        sum(s.sales) FILTER (WHERE ${inPeriod}) AS transactions,
        sum(s.volume) FILTER (WHERE ${inTrend}) AS trend,
        sum(s.volume) FILTER (WHERE ${inPrevious}) AS previous
      FROM (
        SELECT r.collection_id, r.hour AS at, r.volume, r.sales
        FROM collection_sales_hourly r
        WHERE ${ofRollup}${rollupFrom}r.hour < ${p.add(floorHour(end))}::timestamptz AND r.hour <> ALL(${edgesP}::timestamptz[])
        ${orderEdges}
      ) s(collection_id, at, volume, sales)
      GROUP BY s.collection_id)`;
}

/**
 * The figures of every collection matching `collectionFilter`, as a derived table `t` with the columns of
 * StatisticsRecord; the sales figures come from salesTable. The trending score is
 * trend / (trend + previous) (0 when both are 0), and a collection is trending when trend > 0 and
 * trend >= 1.5 x previous, i.e. score >= 0.6 (compared exactly). The floor and the holders are computed
 * per collection (LATERAL, by index) and only when asked for: a page sorted by volume computes them for
 * its own collections only (see listStatistics).
 */
function statisticsTable(
  p: Params,
  period: Period,
  now: Date,
  collectionFilter: string,
  figures: Figures,
  collectionIds: readonly string[] | null = null,
  collectionColumns = '',
): string {
  const sales =
    figures.sales === false
      ? '(SELECT NULL::uuid AS collection_id, NULL::numeric AS volume, NULL::bigint AS transactions, NULL::numeric AS trend, NULL::numeric AS previous)'
      : salesTable(p, period, now, collectionIds);
  const nowP = figures.floor ? p.add(now) : '';
  const floor = figures.floor
    ? `LEFT JOIN LATERAL (${floorListingSql('c.id', nowP, `${currentPriceSql('l', nowP)} AS floor_price, l.id AS listing_id, l.asset_id`)}) f ON true
      LEFT JOIN assets fa ON fa.id = f.asset_id`
    : `LEFT JOIN (SELECT NULL::numeric AS floor_price, NULL::uuid AS listing_id, NULL::uuid AS asset_id) f ON true
      LEFT JOIN (SELECT NULL::varchar AS token_address, NULL::numeric AS token_id) fa ON true`;
  const holders = figures.holders
    ? 'LEFT JOIN LATERAL (SELECT count(DISTINCT a.owner) AS holders FROM assets a WHERE a.collection_id = c.id) h ON true'
    : 'LEFT JOIN (SELECT NULL::bigint AS holders) h ON true';
  const trend = 'COALESCE(v.trend, 0)';
  const previous = 'COALESCE(v.previous, 0)';
  return `(SELECT c.id, c.id AS "collectionId", c.chain_id AS "chainId",
      f.floor_price::text AS "floorPrice", f.listing_id AS "floorListingId", f.asset_id AS "floorAssetId",
      fa.token_address AS "floorTokenAddress", fa.token_id::text AS "floorTokenId",
      COALESCE(v.volume, 0)::text AS volume, COALESCE(v.transactions, 0)::int AS "totalTransactions",
      COALESCE(h.holders, 0)::int AS "totalHolders",
      ${trend}::text AS "trendVolume", ${previous}::text AS "previousVolume",
      CASE WHEN ${trend} > 0 AND ${trend} >= ${TRENDING_FACTOR} * ${previous} THEN 1 ELSE 0 END AS "isTrending",
      CASE WHEN ${trend} + ${previous} > 0 THEN (${trend} / (${trend} + ${previous}))::float8 ELSE 0 END AS "trendingScore",
      COALESCE(v.volume, 0) AS volume_sort, f.floor_price AS floor_sort${collectionColumns ? `, ${collectionColumns}` : ''}
    FROM collections c${collectionColumns ? `
    LEFT JOIN chains ch ON ch.id = c.chain_id
    LEFT JOIN categories cat ON cat.id = c.category_id` : ''}
    LEFT JOIN ${sales} v ON v.collection_id = c.id
    ${floor}
    ${holders}
    WHERE ${collectionFilter}) t`;
}

const SORT: Record<StatisticsOrderBy, SortKey> = {
  [StatisticsOrderBy.VOLUME]: { expression: 't.volume_sort', sqlType: 'numeric' },
  [StatisticsOrderBy.FLOOR_PRICE]: { expression: 't.floor_sort', sqlType: 'numeric', nullable: true },
  [StatisticsOrderBy.TOTAL_HOLDERS]: { expression: 't."totalHolders"', sqlType: 'integer' },
  [StatisticsOrderBy.TOTAL_TRANSACTIONS]: { expression: 't."totalTransactions"', sqlType: 'integer' },
};

const COLUMNS = `t.id, t."collectionId", t."chainId", t."floorPrice", t."floorListingId", t."floorAssetId", t."floorTokenAddress", t."floorTokenId", t.volume,
  t."totalTransactions", t."totalHolders", t."trendVolume", t."previousVolume", t."isTrending", t."trendingScore"`;

function withPeriod(rows: StatisticsRecord[], period: Period, now: Date): StatisticsRecord[] {
  const seconds = PERIODS[period];
  const periodStart = seconds === null ? null : new Date(now.getTime() - seconds * 1000);
  return rows.map((r) => Object.assign(r, { period, periodStart, periodEnd: now, asOf: now }));
}

/**
 * A page of statistics records. With STATISTICS_MAX_AGE_MS (policy.statisticsMaxAgeMs) above 0, a page is
 * computed once per database state and at most that often (statistics.cache.ts); its records say when
 * (as_of).
 */
export async function listStatistics(ctx: Context, args: StatisticsArgs): Promise<Page<StatisticsRecord>> {
  const maxAgeMs = ctx.policy.statisticsMaxAgeMs ?? 0;
  if (maxAgeMs <= 0) {
    const computed = await computeStatistics(ctx, args);
    primeCollections(ctx, computed);
    return computed;
  }
  const { period, chainId, orderBy, isTrending, limit, page, direction, countRemaining } = args;
  const key = JSON.stringify([period, chainId, orderBy, isTrending, limit, page, direction, countRemaining]);
  const served = await cachedStatistics(ctx.ds, key, clock.now(), maxAgeMs, () => computeStatistics(ctx, args));
  primeCollections(ctx, served);
  return served;
}

/** The page's collections, their chains and categories, read with it (as of its snapshot), go to the request's loaders. */
function primeCollections(ctx: Context, page: Page<StatisticsRecord>): void {
  for (const { collectionRow, chainRow, categoryRow } of page.result) {
    if (collectionRow) ctx.loaders.collectionById.prime(collectionRow.id, collectionRow);
    if (chainRow) ctx.loaders.chainById.prime(chainRow.id, chainRow);
    if (categoryRow) ctx.loaders.categoryById.prime(categoryRow.id, categoryRow);
  }
}

async function computeStatistics(ctx: Context, args: StatisticsArgs): Promise<Page<StatisticsRecord>> {
  const period = checkPeriod(args.period);
  if (args.isTrending != null && args.isTrending !== 0 && args.isTrending !== 1) {
    throw new BadRequestError(`isTrending must be 1 (trending) or 0 (not trending); got ${args.isTrending}`, [
      { field: 'isTrending', message: 'one of 0, 1' },
    ]);
  }
  const p = new Params();
  const filter = (await chainCondition(ctx, p, 'c.chain_id', args.chainId)) ?? 'true';
  const now = clock.now();
  const where = args.isTrending != null ? [`t."isTrending" = ${p.add(args.isTrending)}`] : [];
  const figures = { floor: args.orderBy === StatisticsOrderBy.FLOOR_PRICE, holders: args.orderBy === StatisticsOrderBy.TOTAL_HOLDERS };
  const page = await fetchPage<StatisticsRecord>(ctx.ds, {
    from: statisticsTable(p, period, now, filter, figures),
    columns: COLUMNS,
    idExpression: 't.id',
    where,
    params: p,
    sort: SORT[args.orderBy],
    orderBy: args.orderBy,
    args,
  });
  if ((!figures.floor || !figures.holders) && page.result.length) {
    // The figures the ordering did not need, for this page's collections only, at the same moment.
    // Only those: the figures the page was sorted and filtered by stay as that statement saw them.
    const ids = page.result.map((r) => r.collectionId);
    const full = new Map((await figuresFor(ctx.ds, ids, period, now, false, true)).map((r) => [r.collectionId, r]));
    for (const row of page.result) {
      const more = full.get(row.collectionId);
      if (!more) continue;
      Object.assign(row, { collectionRow: more.collectionRow, chainRow: more.chainRow, categoryRow: more.categoryRow });
      if (!figures.floor) {
        const { floorPrice, floorListingId, floorAssetId, floorTokenAddress, floorTokenId } = more;
        Object.assign(row, { floorPrice, floorListingId, floorAssetId, floorTokenAddress, floorTokenId });
      }
      if (!figures.holders) row.totalHolders = more.totalHolders;
    }
  }
  for (const row of page.result) delete (row as Partial<{ id: string }>).id;
  page.result = withPeriod(page.result, period, now);
  return page;
}

/** The rows joined to a record of figuresFor, each under its prefix (`"c:name"`), and the record's field for it. */
const JOINED = [
  { entity: Collection, alias: 'c', prefix: 'c:', field: 'collectionRow' },
  { entity: Chain, alias: 'ch', prefix: 'ch:', field: 'chainRow' },
  { entity: Category, alias: 'cat', prefix: 'cat:', field: 'categoryRow' },
] as const;

/**
 * `withRows`: each record carries its collection's row, and the collection's chain and category, from the
 * same statement (collectionRow, chainRow, categoryRow; categoryRow null when it has none).
 */
async function figuresFor(ds: DataSource, ids: readonly string[], period: Period, now: Date, sales = true, withRows = false): Promise<StatisticsRecord[]> {
  const p = new Params();
  const joined = JOINED.map((j) => ({ ...j, metadata: ds.getMetadata(j.entity) }));
  const inner = withRows ? joined.map((j) => prefixedColumns(j.metadata, j.alias, j.prefix)).join(', ') : '';
  const table = statisticsTable(p, period, now, `c.id = ANY(${p.add(ids)}::uuid[])`, { floor: true, holders: true, sales }, ids, inner);
  const outer = withRows ? `, ${joined.flatMap((j) => j.metadata.columns.map((c) => `t."${j.prefix}${c.propertyName}"`)).join(', ')}` : '';
  const rows: Array<Record<string, unknown>> = await ds.query(`SELECT ${COLUMNS}${outer} FROM ${table}`, p.values);
  if (!withRows) return rows as unknown as StatisticsRecord[];
  const prefixes = joined.map((j) => j.prefix);
  return rows.map((row) => {
    const parts = takeJoined(row, prefixes);
    joined.forEach((j, i) => (row[j.field] = parts[i]));
    return row as unknown as StatisticsRecord;
  });
}

/** One record per collection for `Collection.statistics(period)`, batched by the loader. */
export async function statisticsForCollections(ds: DataSource, ids: readonly string[], period: Period): Promise<StatisticsRecord[]> {
  const now = clock.now();
  return withPeriod(await figuresFor(ds, ids, period, now), period, now);
}
