import type { DataSource } from 'typeorm';
import type { SqlScope } from '../../common/read-model';
import { DeltaTable, foldDeltas } from '../../common/delta-counts';
import { currencyFilterSql } from '../currency/currency.service';

/**
 * How many assets are listed (issue #38), from `listed_asset_counts` (migration 1765680000000): deltas of the
 * listings stored active by collection (and for the whole market), chain, currency and the sweeper's mark,
 * appended in the transaction of each write. A count reads a few rows whatever the number of listings.
 */

/** The collection id of the rows that count the whole market's listings (the migration's; no collection has it). */
export const ALL_COLLECTIONS = '00000000-0000-0000-0000-000000000000';

/** The filters the groups count by (the chain as its EIP-155 id, checked to exist); a list with any other is counted row by row. */
export interface ListedFilters {
  collectionId?: string | null;
  chainId?: string | null;
  /** An address or a symbol, as the lists' `currency`. */
  currency?: string | null;
}

/**
 * The count of the assets listed now (an active listing whose closing date, if any, is ahead) for `f`. A
 * listing stored active leaves the count the moment it closes: the unmarked ones closed by now (what the
 * sweeper has not reached yet, found by ix_listings_expiry_due) are taken off, and the marked ones that
 * close after now (none, unless the reader's clock is behind the sweeper's: ix_listings_swept_closing) are
 * added back.
 */
export function listedCountSql(s: SqlScope, f: ListedFilters): string {
  const now = `${s.now()}::timestamptz`;
  const collection = f.collectionId != null ? s.p.add(f.collectionId) : undefined;
  const of = (row: string, chain: string) => [
    ...(f.chainId != null ? [`${chain} = ${s.p.add(f.chainId)}`] : []),
    ...(f.currency != null ? [currencyFilterSql(s.p, `${row}.currency`, chain, f.currency)] : []),
  ];
  const kept = `(SELECT COALESCE(sum(k.n), 0)::bigint FROM listed_asset_counts k WHERE ${[
    `k.collection_id = ${collection ?? `'${ALL_COLLECTIONS}'`}::uuid`,
    'NOT k.swept',
    ...of('k', 'k.chain_id'),
  ].join(' AND ')})`;
  const chained = f.chainId != null || f.currency != null;
  const rows = (condition: string) =>
    `(SELECT count(*) FROM listings lc${chained ? ' JOIN collections cc ON cc.id = lc.collection_id' : ''} WHERE ${[
      `lc.status = 'active'`,
      condition,
      ...(collection ? [`lc.collection_id = ${collection}::uuid`] : []),
      ...of('lc', 'cc.chain_id'),
    ].join(' AND ')})`;
  const closedUnmarked = rows(`NOT lc.expiry_swept AND lc.closing_date IS NOT NULL AND lc.closing_date <= ${now}`);
  const markedOpen = rows(`lc.expiry_swept AND (lc.closing_date IS NULL OR lc.closing_date > ${now})`);
  return `(${kept} - ${closedUnmarked} + ${markedOpen})`;
}

/**
 * The deltas, folded into one row per group by the expiry sweeper's loop (foldDeltas), reading only the groups
 * of the collections the deltas touch (and the market's).
 */
const LISTED_COUNT_DELTAS: DeltaTable = {
  table: 'listed_asset_counts',
  groups: ['collection_id', 'chain_id', 'currency', 'swept'],
  marksFolded: true,
  touched: 'collection_id',
};

export const compactListedAssetCounts = (ds: DataSource, past?: number): Promise<void> => foldDeltas(ds, LISTED_COUNT_DELTAS, past);
