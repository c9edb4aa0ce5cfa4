import type { DataSource } from 'typeorm';
import type { SqlScope } from '../../common/read-model';
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

/** Deltas past which the expiry sweeper's loop folds them into one row per group. */
const COMPACT_PAST = 256;

/**
 * Folds the deltas into one row per group, in one statement (atomic: a reader sums the rows before or after
 * it; deltas committed meanwhile are not in its snapshot and stay). Two processes at once: the second skips
 * the rows the first deleted. Only past COMPACT_PAST rows, so a quiet market writes nothing.
 */
export async function compactTradeListCounts(ds: DataSource): Promise<void> {
  await ds.query(
    `WITH gone AS (DELETE FROM trade_list_counts WHERE (SELECT count(*) FROM trade_list_counts) > $1 RETURNING *)
     INSERT INTO trade_list_counts (list, chain_id, currency, kind, status, swept, n)
     SELECT list, chain_id, currency, kind, status, swept, sum(n) FROM gone GROUP BY list, chain_id, currency, kind, status, swept HAVING sum(n) <> 0`,
    [COMPACT_PAST],
  );
}
