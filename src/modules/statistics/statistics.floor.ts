import type { ListQuery } from '../../common/pagination';
import { SortDirection } from '../../common/pagination';
import { Params } from '../../common/sql';
import { currentPriceSql, floorListingSql } from '../listing/listing.sql';

/**
 * The floor listing of the collection `id` (an SQL expression) at `now` (a parameter), joined as `floor`
 * (floor_price, listing_id, asset_id; nulls without one) and its asset as `asset` (token_address, token_id),
 * found by its key (OFFSET 0: never a hash of every asset).
 */
export function floorJoin(id: string, now: string, floor: string, asset: string): string {
  return `LEFT JOIN LATERAL (${floorListingSql(id, now, `${currentPriceSql('l', now)} AS floor_price, l.id AS listing_id, l.asset_id`)}) ${floor} ON true
      LEFT JOIN LATERAL (SELECT a.token_address, a.token_id FROM assets a WHERE a.id = ${floor}.asset_id OFFSET 0) ${asset} ON true`;
}

/** What floorRanking needs: the moment (a parameter), the chain filter and the trend figures of a collection `f`. */
export interface FloorRankingArgs {
  now: string;
  /**
   * The collections the list can hold, as `FROM` items giving `collection_figures f`: every collection
   * (walked by its floor bound), or few enough to price every one (`bounded`: those with a sale in the
   * trend window's hours, when only trending ones are asked for).
   */
  from: { sql: string; bounded: boolean };
  /** Conditions on `collection_figures f` (the chain filter). */
  conditions: string[];
  /** Joined to `collection_figures f` when the list is filtered by trend figures, and their columns. */
  trend: { join: string; columns: string } | null;
}

/**
 * Statistics sorted by floor price (issue #38), the page's rows read from the collections' floor bounds
 * kept by the writes (migration 1765670000000-collection-floor-bounds): only candidates are priced (their
 * floor computed exactly at the moment of reading, as every other read of a floor), and the list's
 * statement filters, orders and cuts them as it would every collection, so the answer is the same.
 *
 * - A collection has a floor price now exactly when `floor_until` is after now, and it is at least
 *   `floor_low`. Cheapest first, the collections with one are walked in the order of `floor_low` and
 *   priced until twice `rows` of them (after the cursor, matching the filters) are found; the `rows`-th
 *   cheapest of those, (P, I) in the page's order (price, id), is at or after the page's last row, so the
 *   only other candidates are the collections whose (`floor_low`, id) is before (P, I) (an index range past
 *   the walk; ties at P are cut by id). Dearest first has no bound that survives the clock (a listing that
 *   closes raises the floor to any of the others'): every collection with a floor price now is priced.
 * - Asked for trending collections only, the candidates are those with a sale in the trend window's hours
 *   (bounded by the trades, not by the market): every one is priced.
 * - The collections without a floor price come last (by id), only when the priced ones leave room: those
 *   without a floor listing walk an index by id, those whose floor listings have all closed (by the clock:
 *   their stored status stays active, the expiry sweeper only writes their events) come from an index by
 *   `floor_until` and are sorted.
 *
 * `countSources`: the same rows for the counts (`remaining`, `totalCount`), a floor priced only where the
 * cursor's condition reads it and the bound does not tell (cheapest first: the collections up to the cursor).
 */
export function floorRanking(p: Params, x: FloorRankingArgs): Required<Pick<ListQuery, 'pageFrom' | 'countSources'>> {
  const { now, trend } = x;
  const live = ['f.floor_low IS NOT NULL', `f.floor_until > ${now}::timestamptz`];
  const collections = (conditions: string[]) =>
    `(SELECT f.collection_id AS id, f.floor_low${trend ? `, ${trend.columns}` : ''} FROM ${x.from.sql}${trend?.join ?? ''}
      WHERE ${[...x.conditions, ...conditions].join(' AND ')})`;
  const priced = (conditions: string[]) =>
    `(SELECT t.*, fl.floor_price AS floor_sort, fl.floor_price::text AS "floorPrice", fl.listing_id AS "floorListingId", fl.asset_id AS "floorAssetId",
        fa.token_address AS "floorTokenAddress", fa.token_id::text AS "floorTokenId"
      FROM ${collections(conditions)} t ${floorJoin('t.id', now, 'fl', 'fa')})`;
  const price = `(${floorListingSql('f.collection_id', now, currentPriceSql('l', now))})`;
  // Past a cursor (V, I) in (price, id), a collection whose (bound, id) is past it too is on the same side of
  // the cursor as its bound (its floor is at least the bound): only those before it are priced. By price
  // alone, a tie at V (a market whose floors are a few prices) priced every collection of the tie.
  const countSources = (after?: { value: unknown; id: string }) => {
    const above = after && after.value !== null ? [`WHEN (f.floor_low, f.collection_id) > (${p.add(after.value)}::numeric, ${p.add(after.id)}::uuid) THEN f.floor_low`] : [];
    return [
      `(SELECT f.collection_id AS id, CASE WHEN NOT (${live.join(' AND ')}) THEN NULL ${above.join(' ')} ELSE ${price} END AS floor_sort${trend ? `, ${trend.columns}` : ''}
        FROM ${x.from.sql}${trend?.join ?? ''}${x.conditions.length ? ` WHERE ${x.conditions.join(' AND ')}` : ''}) t`,
    ];
  };

  const pageFrom: NonNullable<ListQuery['pageFrom']> = (filters, { after, rows: count, direction }) => {
    if (x.from.bounded) return `${priced(['true'])} t`;
    const asc = direction === SortDirection.ASC;
    const dir = asc ? 'ASC' : 'DESC';
    const rows = p.add(count);
    // Twice the rows: a few walked collections priced far above their bound (a dutch auction, a cheap
    // listing closed by the clock, which stays active in storage) do not move the threshold.
    const walkRows = asc ? p.add(2 * count) : undefined;
    const where = (conditions: string[]) => (conditions.length ? ` WHERE ${conditions.join(' AND ')}` : '');
    const afterValue = after && after.value !== null ? { value: p.add(after.value), id: p.add(after.id) } : undefined;
    // After a cursor of a collection without a floor price, only such collections remain.
    const pricedAfter = after === undefined || afterValue !== undefined;
    const keyset = afterValue ? [`(t.floor_sort, t.id) ${asc ? '>' : '<'} (${afterValue.value}::numeric, ${afterValue.id}::uuid)`] : [];
    const walk = asc
      ? `SELECT t.* FROM ${priced(live)} t${where([...filters, ...keyset])} ORDER BY t.floor_low, t.id LIMIT ${walkRows}::int`
      : `SELECT t.* FROM ${priced(live)} t${where([...filters, ...keyset])}`;
    const walked = `w AS MATERIALIZED (${pricedAfter ? walk : `SELECT t.* FROM ${priced(['false'])} t`})`;
    const found = `(SELECT count(*) FROM w)`;
    // Cheapest first, past the walk: the collections whose lower bound reaches the dearest price it found.
    const last = (column: string) => `(SELECT w.${column} FROM w ORDER BY w.floor_low DESC, w.id DESC LIMIT 1)`;
    // The walk's rows-th in the page's order, (P, I): a collection before it has a floor of at most P, so a
    // bound below P, or P itself (its floor is then P) with an id before I. Ties at P (a market whose floors
    // are few prices) are cut by id, not read whole.
    const kth = (column: string) => `(SELECT w.${column} FROM w ORDER BY w.floor_sort, w.id OFFSET ${rows}::int - 1 LIMIT 1)`;
    const reach = asc
      ? [`(SELECT t.* FROM ${priced([...live, `(f.floor_low, f.collection_id) > (${last('floor_low')}, ${last('id')})`, `(f.floor_low, f.collection_id) < (${kth('floor_sort')}, ${kth('id')})`])} t
          WHERE ${found} >= ${walkRows}::int)`]
      : [];
    const idAfter = after && !afterValue ? [`t.id ${asc ? '>' : '<'} ${p.add(after.id)}::uuid`] : [];
    const unpriced = (conditions: string[]) =>
      `(SELECT t.* FROM ${priced(conditions)} t WHERE ${[`${found} < ${rows}::int`, ...filters, ...idAfter].join(' AND ')} ORDER BY t.id ${dir} LIMIT ${rows}::int)`;
    const branches = ['SELECT * FROM w', ...reach, unpriced(['f.floor_low IS NULL']), unpriced(['f.floor_low IS NOT NULL', `f.floor_until <= ${now}::timestamptz`])];
    return `(WITH ${walked} ${branches.join(' UNION ALL ')}) t`;
  };
  return { countSources, pageFrom };
}
