import type { DataSource } from 'typeorm';
import type { SqlScope } from '../../common/read-model';
import { DeltaTable, foldDeltas } from '../../common/delta-counts';

/**
 * How many assets the market has, on each chain (issue #38), from `asset_counts` (migration 1765730000000):
 * deltas appended by the writes' transactions, folded into one row per chain by the expiry sweeper's loop.
 * A count reads a few rows whatever the number of assets.
 */

/** The count of every asset, or of those of one chain (`chainId`: its EIP-155 id, checked to exist). */
export function assetTotalSql(s: SqlScope, chainId?: string | null): string {
  return `(SELECT COALESCE(sum(k.n), 0)::bigint FROM asset_counts k${chainId != null ? ` WHERE k.chain_id = ${s.p.add(chainId)}` : ''})`;
}

/** The deltas, folded into one row per chain by the expiry sweeper's loop (foldDeltas). */
const ASSET_COUNT_DELTAS: DeltaTable = { table: 'asset_counts', groups: ['chain_id'], marksFolded: true };

export const compactAssetCounts = (ds: DataSource, past?: number): Promise<void> => foldDeltas(ds, ASSET_COUNT_DELTAS, past);
