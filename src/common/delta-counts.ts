import type { DataSource } from 'typeorm';

/**
 * Counts kept as rows of deltas (issue #38: asset_counts, listed_asset_counts, trade_list_counts): triggers
 * append each statement's change in the transaction that writes it, so writers never wait for each other,
 * and readers sum the rows of a group. foldDeltas, from the expiry sweeper's loop, folds them into one row
 * per group.
 */
export interface DeltaTable {
  table: string;
  /** The columns that make a group: one row each once folded. */
  groups: readonly string[];
  /** The table marks folded rows (`folded`): the deltas counted against `past` are the unmarked ones. */
  marksFolded?: true;
  /** Fold only the groups whose value of this column a delta past `past` has (a collection's), reading none of the others. */
  touched?: string;
}

/** Deltas past which the expiry sweeper's loop folds them. */
const FOLD_PAST = 256;

/**
 * Folds the deltas of `t` into one row per group, in one statement (atomic: a reader sums the rows before or
 * after it; deltas committed meanwhile are not in its snapshot and stay), only past `past` deltas, so a quiet
 * market writes nothing. Two processes at once: the second skips the rows the first deleted (and does not
 * see the folded rows it wrote), so nothing is counted twice.
 */
export async function foldDeltas(ds: DataSource, t: DeltaTable, past = FOLD_PAST): Promise<void> {
  const groups = t.groups.join(', ');
  // The deltas counted against `past`: the unmarked ones.
  const deltas = t.marksFolded ? ' WHERE NOT folded' : '';
  const gone = t.touched
    ? // The check reads at most `past` + 1 deltas, in the order of the partial index of the unfolded ones, and
      // gates the DELETE (a One-Time Filter: nothing under it runs when it is false). Counting every delta, on
      // statistics taken before a fold (a table loaded unfolded, the folded rows' dead versions not yet
      // vacuumed), the planner scanned the table, then hash-joined it: at 10M assets 2,700 pages of
      // listed_asset_counts every turn of the sweeper's loop, which pushed the writes' pages out of shared_buffers.
      `touched AS (SELECT DISTINCT ${t.touched} FROM ${t.table}${deltas}),
       gone AS (DELETE FROM ${t.table} k USING touched WHERE k.${t.touched} = touched.${t.touched}
         AND (SELECT count(*) FROM (SELECT 1 FROM ${t.table}${deltas} ORDER BY ${t.touched} LIMIT $1 + 1) piled) > $1 RETURNING k.*)`
    : `gone AS (DELETE FROM ${t.table} WHERE (SELECT count(*) FROM ${t.table}${deltas}) > $1 RETURNING *)`;
  await ds.query(
    `WITH ${gone}
     INSERT INTO ${t.table} (${groups}, n${t.marksFolded ? ', folded' : ''})
     SELECT ${groups}, sum(n)${t.marksFolded ? ', true' : ''} FROM gone GROUP BY ${groups} HAVING sum(n) <> 0`,
    [past],
  );
}
