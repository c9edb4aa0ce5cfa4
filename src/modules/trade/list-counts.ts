import type { DataSource } from 'typeorm';
import type { SqlScope } from '../../common/read-model';
import { DeltaTable, foldDeltas } from '../../common/delta-counts';
import { fromUnits, toUnits } from '../../common/decimal';
import { currencyFilterSql } from '../currency/currency.service';

/**
 * The counts of the lists of offers and orders (issue #38), kept in `trade_list_counts` by triggers on
 * offers and orders (migration 1765620000001): deltas by chain, currency, kind, stored status and the
 * sweeper's mark, appended in the transaction of each write and summed by the readers. A count of a list
 * whose filters are all among those groups reads a few dozen rows whatever the number of offers; within a
 * price range, `trade_price_counts` (migration 1765830000000) holds the same groups by price bucket.
 */
export type CountedList = 'offers' | 'orders';

/** The filters the groups count by; a list with any other filter given is counted row by row. */
export interface CountedFilters {
  status?: string | null;
  kind?: string | null;
  /** The chain's EIP-155 id (the service has checked that it exists). */
  chainId?: string | null;
  currency?: string | null;
}

/** The conditions of the filters `kind`, `chainId` and `currency` over `row` (a group of trade_list_counts, or a row of the list's table). */
export function groupConditions(s: SqlScope, row: string, args: CountedFilters): string[] {
  const where: string[] = [];
  if (args.kind != null) where.push(`${row}.kind = ${s.p.add(args.kind)}`);
  if (args.chainId != null) where.push(`${row}.chain_id = ${s.p.add(args.chainId)}`);
  if (args.currency != null) where.push(currencyFilterSql(s.p, `${row}.currency`, `${row}.chain_id`, args.currency));
  return where;
}

/**
 * Where a kept count is read: every price (trade_list_counts), or the whole price buckets of a range
 * (trade_price_counts), `groups` over its rows `k`, holding the rows whose price is `rows` over a row.
 */
export interface KeptSpan {
  table: 'trade_list_counts' | 'trade_price_counts';
  groups: string[];
  rows: (row: string) => string[];
}

/** Every price: trade_list_counts, one row per group. */
export const EVERY_PRICE: KeptSpan = { table: 'trade_list_counts', groups: [], rows: () => [] };

/** How many rows of `list` the groups `k` of `span` matching `where` hold. */
export function countedSum(list: CountedList, where: string[], span: KeptSpan): string {
  return `(SELECT COALESCE(sum(k.n), 0)::bigint FROM ${span.table} k WHERE k.list = '${list}'${[...where, ...span.groups].map((w) => ` AND ${w}`).join('')})`;
}

/**
 * The bucket of trade_price_counts that holds `price` (the migration's price_bucket: rounded down to 3
 * significant digits), from its first price to the next bucket's, as decimal text; exact (whole units).
 */
export function priceBucket(price: string): { start: string; end: string; startUnits: bigint; endUnits: bigint; units: bigint } {
  const units = toUnits(price);
  const digits = units.toString().length;
  // A bucket of fewer than 3 digits of units (0 among them) holds one price: the next starts a unit (10^-18) on.
  const step = units > 0n && digits > 3 ? 10n ** BigInt(digits - 3) : 1n;
  const startUnits = units > 0n ? (units / step) * step : units;
  const endUnits = startUnits + step;
  return { start: fromUnits(startUnits), end: fromUnits(endUnits), startUnits, endUnits, units };
}

/**
 * The count of a list's rows within the price range of `args` (`minPrice`, `maxPrice`), given `kept`, the
 * kept count of the rows its other filters match within a span of prices, whose conditions over a row `row`
 * are `conditions(row)`. Exact: the whole buckets from the minimum's to the maximum's, summed from
 * trade_price_counts (one range of its index: a few rows per bucket), less the rows of those edge buckets
 * that are out of the range, counted from the price index: below the minimum in its bucket (none when it
 * is a bucket's start, as the round prices users type are), above the maximum in its bucket (a bucket
 * holds a fraction of a percent of the rows).
 */
export function priceRangeCount(s: SqlScope, list: CountedList, kept: (span: KeptSpan) => string, conditions: (row: string) => string[], args: Record<string, unknown>): string {
  const [min, max] = [args.minPrice, args.maxPrice].map((end) => (end == null ? undefined : { given: end as string, bucket: priceBucket(end as string) }));
  if (!min && !max) return kept(EVERY_PRICE);
  // Each bound a parameter once, added when first used (the end of the maximum's bucket only by the edge and the expiry corrections).
  const added = new Map<string, string>();
  const price = (text: string) => added.get(text) ?? added.set(text, `${s.p.add(text)}::numeric`).get(text)!;
  const groups: string[] = [];
  const rows: ((row: string) => string)[] = [];
  const edges: string[] = [];
  if (min) {
    const from = price(min.bucket.start);
    groups.push(`k.bucket >= ${from}`);
    rows.push((row) => `${row}.price >= ${from}`);
    if (min.bucket.units > min.bucket.startUnits) edges.push(`x.price >= ${from} AND x.price < ${price(min.given)}`);
  }
  if (max) {
    groups.push(`k.bucket <= ${price(max.bucket.start)}`);
    rows.push((row) => `${row}.price < ${price(max.bucket.end)}`);
    if (max.bucket.endUnits - max.bucket.units > 1n) edges.push(`x.price > ${price(max.given)} AND x.price < ${price(max.bucket.end)}`);
  }
  const span: KeptSpan = { table: 'trade_price_counts', groups, rows: (row) => rows.map((r) => r(row)) };
  const outside = edges.map((edge) => ` - (SELECT count(*) FROM ${list} x WHERE ${[...conditions('x'), edge].join(' AND ')})`);
  return `(${kept(span)}${outside.join('')})`;
}

/** The deltas, folded into one row per group and bucket by the expiry sweeper's loop (foldDeltas), only the buckets they touched. */
const TRADE_PRICE_COUNT_DELTAS: DeltaTable = {
  table: 'trade_price_counts',
  groups: ['list', 'chain_id', 'currency', 'kind', 'status', 'swept', 'bucket'],
  marksFolded: true,
  touched: 'bucket',
};

/** The deltas, folded into one row per group by the expiry sweeper's loop (foldDeltas). */
const TRADE_COUNT_DELTAS: DeltaTable = { table: 'trade_list_counts', groups: ['list', 'chain_id', 'currency', 'kind', 'status', 'swept'] };

/** Folds the deltas of trade_list_counts and trade_price_counts. */
export async function compactTradeListCounts(ds: DataSource, past?: number): Promise<void> {
  await foldDeltas(ds, TRADE_COUNT_DELTAS, past);
  await foldDeltas(ds, TRADE_PRICE_COUNT_DELTAS, past);
}
