import type { DataSource } from 'typeorm';
import type { SqlScope } from '../../common/read-model';
import { DeltaTable, foldDeltas } from '../../common/delta-counts';
import { COUNT_WALK, walkOf } from '../../common/pagination';
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

/** How far priceRangeCount walks the rows within a range and out of it, in turn, before it counts them. */
const RANGE_WALKS = [COUNT_WALK, 10 * COUNT_WALK, 100 * COUNT_WALK];

/**
 * The count of a list's rows within the price range of `args` (`minPrice`, `maxPrice`), given `kept`, the kept
 * count of the rows its other filters match, whose conditions over a row `row` are `conditions(row)`. Exact,
 * and read from the price's indexes (the list's own: by status, kind or alone), the fewer side first: the
 * rows within the range and the rows out of it (below and above) are walked in turn, as far as 10,000, then
 * 100,000, then 1,000,000 rows, and the first side that ends within its walk gives the count (out of it:
 * `kept` less those); past that, the rows within are counted. A count reads in proportion to the fewer side
 * (within the step of the walks, tenfold): a narrow range, or one that holds nearly every row, reads at most
 * four walks of 10,000 index entries whatever the market's size; a range that cuts a big market into two big
 * parts reads in proportion to the market (`remaining` and `totalCount` are exact: docs/api.md "Lists").
 */
export function priceRangeCount(s: SqlScope, list: CountedList, kept: string, conditions: (row: string) => string[], args: Record<string, unknown>): string {
  const ends = [
    args.minPrice != null ? { within: '>=', beyond: '<', price: args.minPrice } : undefined,
    args.maxPrice != null ? { within: '<=', beyond: '>', price: args.maxPrice } : undefined,
  ].flatMap((end) => (end ? [{ ...end, price: `${s.p.add(end.price)}::numeric` }] : []));
  if (!ends.length) return kept;
  const rows = (more: string[]) => `${list} x WHERE ${[...conditions('x'), ...more].join(' AND ')}`;
  const within = rows(ends.map((end) => `x.price ${end.within} ${end.price}`));
  const beyond = ends.map((end) => rows([`x.price ${end.beyond} ${end.price}`]));
  const walks = RANGE_WALKS.flatMap((most) => {
    const inRange = walkOf(`SELECT 1 FROM ${within}`, most);
    const outOfRange = beyond.map((out) => walkOf(`SELECT 1 FROM ${out}`, most)).join(' + ');
    return [`WHEN ${inRange} <= ${most} THEN ${inRange}`, `WHEN ${outOfRange} <= ${most} THEN ${kept} - (${outOfRange})`];
  });
  return `(CASE ${walks.join(' ')} ELSE (SELECT count(*) FROM ${within}) END)`;
}

/** The deltas, folded into one row per group by the expiry sweeper's loop (foldDeltas). */
const TRADE_COUNT_DELTAS: DeltaTable = { table: 'trade_list_counts', groups: ['list', 'chain_id', 'currency', 'kind', 'status', 'swept'] };

export const compactTradeListCounts = (ds: DataSource, past?: number): Promise<void> => foldDeltas(ds, TRADE_COUNT_DELTAS, past);
