import { DataSource } from 'typeorm';
import type { Context } from '../../common/request/context';
import { clock } from '../../common/clock';
import { BadRequestError } from '../../common/errors';
import { directionOf, Page, SortKey } from '../../common/pagination';
import { fetchPage } from '../../common/list-page';
import { Params, prefixedColumns, takeJoined } from '../../common/sql';
import { Category } from '../catalog/category.entity';
import { Chain } from '../chain/chain.entity';
import { Collection } from '../collection/collection.entity';
import { chainCondition } from '../collection/collection.service';
import { cachedStatistics } from './statistics.cache';
import { PERIODS, Period, StatisticsArgs, StatisticsOrderBy, StatisticsRecord } from './statistics.types';
import { keyOf } from '../../common/graphql/node';
import { ranking } from './statistics.ranking';
import { ofIds, statisticsTable } from './statistics.sql';

/**
 * A page of a statistics list is read in two statements at one moment: its ranking (statistics.ranking.ts:
 * which collections, by the figure sorted and filtered by) and then every figure of its collections
 * (figuresFor). The figures the page was sorted and filtered by stay as the ranking saw them.
 */

export function checkPeriod(period: string): Period {
  if (!(period in PERIODS)) {
    throw new BadRequestError(`period must be one of ${Object.keys(PERIODS).join(', ')}; got ${JSON.stringify(period)}`, [
      { field: 'period', message: `one of ${Object.keys(PERIODS).join(', ')}` },
    ]);
  }
  return period as Period;
}

/** The chain filter of a list (checked: an unknown chain is refused) on a column, or null without one. */
async function chainParam(ctx: Context, p: Params, chainId: string | null | undefined): Promise<((column: string) => string) | null> {
  if (chainId == null) return null;
  await chainCondition(ctx, new Params(), 'chain_id', chainId);
  const chainP = p.add(keyOf('Chain', chainId));
  return (column) => `${column} = ${chainP}`;
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
  const chain = await chainParam(ctx, p, args.chainId);
  const now = clock.now();
  // `> 0` and `< 1` (isTrending is 0 or 1), not `= 1` and `= 0`: the planner guesses that an equality on a
  // computed column keeps one row in 200, and would compute every collection's figures to sort them rather
  // than walk an index and stop once the page is full.
  const where = args.isTrending != null ? [args.isTrending === 1 ? 't."isTrending" > 0' : 't."isTrending" < 1'] : [];
  const { sources, fields, pageFrom, countFrom, count, with: common } = ranking(p, {
    period,
    now,
    orderBy: args.orderBy,
    chain,
    isTrending: args.isTrending,
    direction: directionOf(args.direction, SORT[args.orderBy]),
  });
  const page = await fetchPage<StatisticsRecord>(ctx.ds, {
    from: '',
    sources,
    pageFrom,
    countFrom,
    with: common,
    count,
    columns: ['t.id', ...fields.map((field) => `t."${field}"`)].join(', '),
    idExpression: 't.id',
    where,
    params: p,
    sort: SORT[args.orderBy],
    orderBy: args.orderBy,
    args,
  });
  if (page.result.length) {
    // Every figure of this page's collections at the same moment, but those the page was sorted and
    // filtered by: they stay as the ranking saw them.
    const ranked = page.result as unknown as Array<Record<string, unknown>>;
    const full = new Map((await figuresFor(ctx.ds, ranked.map((r) => String(r.id)), period, now, true)).map((r) => [r.collectionId, r]));
    for (const row of ranked) {
      const more = full.get(String(row.id));
      const kept = Object.fromEntries(fields.map((field) => [field, row[field]]));
      Object.assign(row, more ?? { collectionId: row.id }, kept);
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
async function figuresFor(ds: DataSource, ids: readonly string[], period: Period, now: Date, withRows = false): Promise<StatisticsRecord[]> {
  const p = new Params();
  const joined = JOINED.map((j) => ({ ...j, metadata: ds.getMetadata(j.entity) }));
  const inner = withRows ? joined.map((j) => prefixedColumns(j.metadata, j.alias, j.prefix)).join(', ') : '';
  const table = statisticsTable(p, period, now, `c.id = ANY(${p.add(ids)}::uuid[])`, { floor: true, sales: true }, ofIds(p, ids), inner);
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
