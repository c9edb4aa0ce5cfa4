import type { DataSource } from 'typeorm';
import type { SqlScope } from '../../common/read-model';

/**
 * How many assets the market has, on each chain (issue #38), from `asset_counts` (migration 1765730000000):
 * deltas appended by the writes' transactions, folded into one row per chain by the expiry sweeper's loop.
 * A count reads a few rows whatever the number of assets.
 */

/** The count of every asset, or of those of one chain (`chainId`: its EIP-155 id, checked to exist). */
export function assetTotalSql(s: SqlScope, chainId?: string | null): string {
  return `(SELECT COALESCE(sum(k.n), 0)::bigint FROM asset_counts k${chainId != null ? ` WHERE k.chain_id = ${s.p.add(chainId)}` : ''})`;
}

/** Deltas past which the expiry sweeper's loop folds them. */
const COMPACT_PAST = 256;

/**
 * Folds the deltas into one row per chain, in one statement, only past `past` deltas (a quiet market writes
 * nothing). A reader sums the rows before or after it; deltas committed meanwhile are not in its snapshot and
 * stay; a second process at once deletes nothing the first deleted, so nothing is counted twice.
 */
export async function compactAssetCounts(ds: DataSource, past = COMPACT_PAST): Promise<void> {
  await ds.query(
    `WITH gone AS (DELETE FROM asset_counts WHERE (SELECT count(*) FROM asset_counts) > $1 RETURNING chain_id, n)
     INSERT INTO asset_counts (chain_id, n, folded) SELECT chain_id, sum(n), true FROM gone GROUP BY chain_id HAVING sum(n) <> 0`,
    [past],
  );
}
