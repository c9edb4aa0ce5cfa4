import { DataSource } from 'typeorm';
import type { Context } from '../../common/request/context';
import { clock } from '../../common/clock';
import { BadRequestError } from '../../common/errors';
import { fetchPage, Page, SortKey } from '../../common/pagination';
import { Params } from '../../common/sql';
import { chainCondition } from '../collection/collection.service';
import { currentPriceSql, isActiveListingSql } from '../listing/listing.sql';
import { PERIODS, Period, StatisticsArgs, StatisticsOrderBy, StatisticsRecord } from './statistics.types';

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
}

/**
 * The figures of every collection matching `collectionFilter`, as a derived table `t` with the columns of
 * StatisticsRecord. Periods are [start, now]; the trend compares the trend window (the period, or the last
 * 24 h for `all`) with the window of equal length just before it, [start - length, start). The floor and
 * the holders are computed per collection (LATERAL, by index) and only when asked for: a page sorted by
 * volume computes them for its own collections only (see listStatistics).
 */
function statisticsTable(p: Params, period: Period, now: Date, collectionFilter: string, figures: Figures): string {
  const seconds = PERIODS[period];
  const trendSeconds = seconds ?? DAY_SECONDS;
  const nowP = p.add(now);
  const start = seconds === null ? null : p.add(new Date(now.getTime() - seconds * 1000));
  const trendStart = p.add(new Date(now.getTime() - trendSeconds * 1000));
  const previousStart = p.add(new Date(now.getTime() - 2 * trendSeconds * 1000));
  const inPeriod = `o.created_at <= ${nowP}::timestamptz${start ? ` AND o.created_at >= ${start}::timestamptz` : ''}`;
  const inTrend = `o.created_at >= ${trendStart}::timestamptz AND o.created_at <= ${nowP}::timestamptz`;
  const inPrevious = `o.created_at >= ${previousStart}::timestamptz AND o.created_at < ${trendStart}::timestamptz`;
  const earliest = start ? `o.created_at >= LEAST(${start}::timestamptz, ${previousStart}::timestamptz) AND ` : '';
  const floor = figures.floor
    ? `LEFT JOIN LATERAL (
        SELECT ${currentPriceSql('l', nowP)} AS floor_price, l.id AS listing_id, l.asset_id
        FROM listings l WHERE l.collection_id = c.id AND ${isActiveListingSql('l', nowP)}
        ORDER BY 1 ASC, l.id LIMIT 1) f ON true`
    : 'LEFT JOIN (SELECT NULL::numeric AS floor_price, NULL::uuid AS listing_id, NULL::uuid AS asset_id) f ON true';
  const holders = figures.holders
    ? 'LEFT JOIN LATERAL (SELECT count(DISTINCT a.owner) AS holders FROM assets a WHERE a.collection_id = c.id) h ON true'
    : 'LEFT JOIN (SELECT NULL::bigint AS holders) h ON true';
  return `(SELECT c.id, c.id AS "collectionId", c.chain_id AS "chainId",
      f.floor_price::text AS "floorPrice", f.listing_id AS "floorListingId", f.asset_id AS "floorAssetId",
      COALESCE(v.volume, 0)::text AS volume, COALESCE(v.transactions, 0)::int AS "totalTransactions",
      COALESCE(h.holders, 0)::int AS "totalHolders",
      COALESCE(v.trend, 0)::text AS "trendVolume", COALESCE(v.previous, 0)::text AS "previousVolume",
      CASE WHEN COALESCE(v.trend, 0) > 0 AND COALESCE(v.trend, 0) >= ${TRENDING_FACTOR} * COALESCE(v.previous, 0) THEN 1 ELSE 0 END AS "isTrending",
      COALESCE(v.volume, 0) AS volume_sort, f.floor_price AS floor_sort
    FROM collections c
    LEFT JOIN (
      SELECT o.collection_id,
        sum(o.price) FILTER (WHERE ${inPeriod}) AS volume,
        count(*) FILTER (WHERE ${inPeriod}) AS transactions,
        sum(o.price) FILTER (WHERE ${inTrend}) AS trend,
        sum(o.price) FILTER (WHERE ${inPrevious}) AS previous
      FROM orders o WHERE ${earliest}o.status = 'completed' AND o.seller <> o.buyer AND o.created_at <= ${nowP}::timestamptz
      GROUP BY o.collection_id) v ON v.collection_id = c.id
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

const COLUMNS = `t.id, t."collectionId", t."chainId", t."floorPrice", t."floorListingId", t."floorAssetId", t.volume,
  t."totalTransactions", t."totalHolders", t."trendVolume", t."previousVolume", t."isTrending"`;

function withPeriod(rows: StatisticsRecord[], period: Period, now: Date): StatisticsRecord[] {
  const seconds = PERIODS[period];
  const periodStart = seconds === null ? null : new Date(now.getTime() - seconds * 1000);
  return rows.map((r) => Object.assign(r, { period, periodStart, periodEnd: now }));
}

export async function listStatistics(ctx: Context, args: StatisticsArgs): Promise<Page<StatisticsRecord>> {
  const period = checkPeriod(args.period);
  if (args.isTrending != null && args.isTrending !== 0 && args.isTrending !== 1) {
    throw new BadRequestError(`is_trending must be 1 (trending) or 0 (not trending); got ${args.isTrending}`, [
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
    const full = new Map((await figuresFor(ctx.ds, page.result.map((r) => r.collectionId), period, now)).map((r) => [r.collectionId, r]));
    for (const row of page.result) {
      const more = full.get(row.collectionId);
      if (!more) continue;
      if (!figures.floor) Object.assign(row, { floorPrice: more.floorPrice, floorListingId: more.floorListingId, floorAssetId: more.floorAssetId });
      if (!figures.holders) row.totalHolders = more.totalHolders;
    }
  }
  for (const row of page.result) delete (row as Partial<{ id: string }>).id;
  page.result = withPeriod(page.result, period, now);
  return page;
}

function figuresFor(ds: DataSource, ids: readonly string[], period: Period, now: Date): Promise<StatisticsRecord[]> {
  const p = new Params();
  const table = statisticsTable(p, period, now, `c.id = ANY(${p.add(ids)}::uuid[])`, { floor: true, holders: true });
  return ds.query(`SELECT ${COLUMNS} FROM ${table}`, p.values);
}

/** One record per collection for `Collection.statistics(period)`, batched by the loader. */
export async function statisticsForCollections(ds: DataSource, ids: readonly string[], period: Period): Promise<StatisticsRecord[]> {
  const now = clock.now();
  return withPeriod(await figuresFor(ds, ids, period, now), period, now);
}
