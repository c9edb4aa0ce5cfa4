import type { DataSource } from 'typeorm';
import type { SqlScope } from '../../common/read-model';
import { DeltaTable, foldDeltas } from '../../common/delta-counts';
import { COUNT_WALK } from '../../common/pagination';
import { currencyFilterSql } from '../currency/currency.service';

/**
 * The counts of the lists of offers and orders (issue #38), kept in `trade_list_counts` by triggers on
 * offers and orders (migration 1765620000001): deltas by chain, currency, kind, stored status and the
 * sweeper's mark, appended in the transaction of each write and summed by the readers. A count of a list
 * whose filters are all among those groups reads a few dozen rows whatever the number of offers.
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

/** How many rows of `list` its groups `k` matching `where` hold. */
export function countedSum(list: CountedList, where: string[]): string {
  return `(SELECT COALESCE(sum(k.n), 0)::bigint FROM trade_list_counts k WHERE k.list = '${list}'${where.map((w) => ` AND ${w}`).join('')})`;
}

/** The share (0 to 1) of a list's rows whose price is `op` `price`, as the planner's statistics of the column estimate it (pg_stats `st`). */
const shareSql = (op: string, price: string) =>
  `(COALESCE((SELECT sum(m.f) FILTER (WHERE m.v ${op} ${price}) FROM unnest(st.most_common_vals::text::numeric[], st.most_common_freqs) m(v, f)), 0)
   + (1 - st.null_frac - COALESCE((SELECT sum(f) FROM unnest(st.most_common_freqs) f), 0))
     * COALESCE((SELECT (count(*) FILTER (WHERE b ${op} ${price}))::float8 / NULLIF(count(*), 0) FROM unnest(st.histogram_bounds::text::numeric[]) b), 0))`;

/**
 * The count of a list's rows within the price range of `args` (`minPrice`, `maxPrice`), given `kept`, the kept
 * count of the rows its other filters match, whose conditions over a row `row` are `conditions(row)`. Exact,
 * and read from the price's indexes (the list's own: by status, kind or alone). Two sides: the rows within
 * the range, and the rows out of it (below and above: `kept` less those). Each is walked as far as 10,000
 * rows, the one the column's statistics estimate the fewer first (pg_stats: the planner's histogram, a few
 * hundred values whatever the market's size), each walk read once (out of a range of two ends, below it and
 * then above it, one walk in all); the first that ends gives the count. Past
 * both, the estimated fewer side is counted, by the same index without a walk's LIMIT (a walk of 250,000 rows
 * took 1.7 times a count of them). So a count reads the fewer side: the rows within a narrow range, those out
 * of a range of nearly every row, about half the market for a range that cuts it in two, plus at most two
 * walks of 10,000 index entries; where the statistics are far off for the rows the other filters leave (or
 * missing: a table never analyzed, when the rows within are counted), the other side, at most the kept
 * count's rows, as a plain count of the range read.
 */
export function priceRangeCount(s: SqlScope, list: CountedList, kept: string, conditions: (row: string) => string[], args: Record<string, unknown>): string {
  const ends = [
    args.minPrice != null ? { within: '>=', beyond: '<', price: args.minPrice } : undefined,
    args.maxPrice != null ? { within: '<=', beyond: '>', price: args.maxPrice } : undefined,
  ].flatMap((end) => (end ? [{ ...end, price: `${s.p.add(end.price)}::numeric` }] : []));
  if (!ends.length) return kept;
  const rows = (more: string[]) => `${list} x WHERE ${[...conditions('x'), ...more].join(' AND ')}`;
  const walk = (of: string) => `(SELECT count(*) FROM (SELECT 1 FROM ${of} LIMIT ${COUNT_WALK + 1}) w)`;
  const inRange = rows(ends.map((end) => `x.price ${end.within} ${end.price}`));
  const outOfRange = ends.map((end) => rows([`x.price ${end.beyond} ${end.price}`]));
  // Each side: its walk, its count, and the list's count from the rows it read (`n`).
  interface Side {
    walk: string;
    all: string;
    count: (n: string) => string;
  }
  const inside: Side = { walk: walk(inRange), all: `(SELECT count(*) FROM ${inRange})`, count: (n) => n };
  // Out of a range of two ends: below it, then above it as far as the walk's rest (one walk of 10,000 in all).
  const [below, above] = outOfRange;
  const outWalk = above
    ? `(SELECT CASE WHEN b.n > ${COUNT_WALK} THEN b.n ELSE b.n + (SELECT count(*) FROM (SELECT 1 FROM ${above} LIMIT ${COUNT_WALK + 1} - b.n) w) END FROM (SELECT ${walk(below)} AS n OFFSET 0) b)`
    : walk(below);
  const outside: Side = {
    walk: outWalk,
    all: `(${outOfRange.map((out) => `(SELECT count(*) FROM ${out})`).join(' + ')})`,
    count: (n) => `a.kept - ${n}`,
  };
  // Each walk read once: a step's count in a subquery of its own, the next step only in its ELSE.
  const steps = (fewer: Side, other: Side): string =>
    [fewer, other].reduceRight(
      (otherwise, side) => `(SELECT CASE WHEN w.n <= ${COUNT_WALK} THEN ${side.count('w.n')} ELSE ${otherwise} END FROM (SELECT ${side.walk} AS n OFFSET 0) w)`,
      fewer.count(fewer.all),
    );
  // The estimated share of the rows within (null without statistics).
  const share = ends.map((end) => shareSql(end.within === '>=' ? '<' : '<=', end.price));
  const within = ends.length === 2 ? `${share[1]} - ${share[0]}` : ends[0].within === '>=' ? `1 - ${share[0]}` : share[0];
  const estimate = `(SELECT ${within} FROM pg_stats st WHERE st.schemaname = current_schema() AND st.tablename = '${list}' AND st.attname = 'price')`;
  return `(SELECT CASE WHEN a.share IS NULL OR a.share <= 0.5 THEN ${steps(inside, outside)} ELSE ${steps(outside, inside)} END
    FROM (SELECT ${kept} AS kept, ${estimate} AS share OFFSET 0) a)`;
}

/** The deltas, folded into one row per group by the expiry sweeper's loop (foldDeltas). */
const TRADE_COUNT_DELTAS: DeltaTable = { table: 'trade_list_counts', groups: ['list', 'chain_id', 'currency', 'kind', 'status', 'swept'] };

export const compactTradeListCounts = (ds: DataSource, past?: number): Promise<void> => foldDeltas(ds, TRADE_COUNT_DELTAS, past);
