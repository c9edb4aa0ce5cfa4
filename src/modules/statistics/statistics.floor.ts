import type { ListQuery } from '../../common/list-query';
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
 *   `floor_low`; while `floor_high_until` is after now it is at most `floor_high` (migration
 *   1765710000000-collection-floor-high: the highest price of one of its floor listings, open until then).
 *   Cheapest first, the collections with one are walked in the order of `floor_low`, dearest first in the
 *   order of `floor_high` (descending), and priced until twice `rows` of them (after the cursor, matching
 *   the filters) are found; the `rows`-th of those in the page's order, (P, I) in (price, id), is at or
 *   after the page's last row, so the only other candidates are the collections whose (bound, id) is before
 *   (P, I) (an index range past the walk; ties at P are cut by id). Dearest first, the collections whose
 *   upper bound has expired (its listing closed by the clock, not yet marked by the expiry sweeper, whose
 *   mark makes the writes choose another) are candidates too, every one priced: an index range by
 *   `floor_high_until`, a sweep's worth of closings.
 * - Asked for trending collections only, the candidates are those with a sale in the trend window's hours
 *   (bounded by the trades, not by the market): every one is priced.
 * - The collections without a floor price come last (by id), only when the priced ones leave room: those
 *   without a floor listing walk an index by id, those whose floor listings have all closed (by the clock:
 *   their stored status stays active, the expiry sweeper only writes their events) come from an index by
 *   `floor_until` and are sorted.
 *
 * `countFrom`: the same rows for the counts (`remaining`, `totalCount`), a floor priced only where the
 * cursor's condition reads it and neither bound tells which side of the cursor it is on (the collections up
 * to the cursor, and those whose upper bound has expired).
 */
export function floorRanking(p: Params, x: FloorRankingArgs): Required<Pick<ListQuery, 'pageFrom' | 'countFrom'>> {
  const { now, trend } = x;
  // A floor now, and its upper bound holding now (`floor_high IS NOT NULL`, implied by a floor listing: the bounds'
  // partial indexes are on it), each stated once. `asFilter`: for the reads by an index range of a bound (past the
  // walk, the count up to a cursor), written so that no index serves the moment's condition (`+ interval '0
  // seconds'`, infinity-safe): in a generic plan (a named statement after five runs) `floor_until > $1` and
  // `floor_high_until > $1` looked selective, and those reads walked all 100,000 collections by
  // ix_collection_figures_floor_until or _floor_high_until at 10,000,000 assets (21-71 ms of a page 10 by floor
  // price). The walk keeps the plain form: there the custom plans' estimates choose the bound's index.
  const until = (column: string, asFilter: boolean) => `${asFilter ? `${column} + interval '0 seconds'` : column} > ${now}::timestamptz`;
  const liveOf = (asFilter: boolean) => ['f.floor_low IS NOT NULL', until('f.floor_until', asFilter)];
  const boundedOf = (asFilter: boolean) => `f.floor_high IS NOT NULL AND ${until('f.floor_high_until', asFilter)}`;
  const [live, liveFilter] = [liveOf(false), liveOf(true)];
  const [bounded, boundedFilter] = [boundedOf(false), boundedOf(true)];
  const collections = (conditions: string[]) =>
    `(SELECT f.collection_id AS id, f.floor_low, f.floor_high${trend ? `, ${trend.columns}` : ''} FROM ${x.from.sql}${trend?.join ?? ''}
      WHERE ${[...x.conditions, ...conditions].join(' AND ')})`;
  const priced = (conditions: string[]) =>
    `(SELECT t.*, fl.floor_price AS floor_sort, fl.floor_price::text AS "floorPrice", fl.listing_id AS "floorListingId", fl.asset_id AS "floorAssetId",
        fa.token_address AS "floorTokenAddress", fa.token_id::text AS "floorTokenId"
      FROM ${collections(conditions)} t ${floorJoin('t.id', now, 'fl', 'fa')})`;
  const price = `(${floorListingSql('f.collection_id', now, currentPriceSql('l', now))})`;
  // Past a cursor (V, I) in (price, id), a collection whose (bound, id) is past it too is on the same side of
  // the cursor as its bound (its floor is at least the lower bound, at most the upper one): only the others
  // are priced. By price alone, a tie at V (a market whose floors are a few prices) priced every collection of the tie.
  // With a kept count of the list (`kept`), after a priced cursor only the rows up to it are counted: those whose
  // bound can be up to it, an index range, not every collection (27 ms for 100,000 at 10,000,000 assets). Cheapest
  // first a floor up to (V, I) has a lower bound up to it too; dearest first an upper bound at or past it, or one
  // that has expired (priced): two index ranges, apart. A collection without a floor price now comes after every priced one.
  const upTo = (cursor: string, direction: SortDirection): string[][] =>
    direction === SortDirection.ASC
      ? [[...liveFilter, `(f.floor_low, f.collection_id) <= ${cursor}`]]
      : [
          [...liveFilter, 'f.floor_high IS NOT NULL', `(f.floor_high, f.collection_id) >= ${cursor}`],
          [...liveFilter, 'f.floor_high IS NOT NULL', `f.floor_high_until <= ${now}::timestamptz`, `(f.floor_high, f.collection_id) < ${cursor}`],
        ];
  const countFrom: NonNullable<ListQuery['countFrom']> = ({ after, kept, direction }) => {
    const cursor = after && after.value !== null ? `(${p.add(after.value)}::numeric, ${p.add(after.id)}::uuid)` : undefined;
    const told = cursor
      ? [`WHEN (f.floor_low, f.collection_id) > ${cursor} THEN f.floor_low`, `WHEN ${bounded} AND (f.floor_high, f.collection_id) < ${cursor} THEN f.floor_high`]
      : [];
    const select = (conditions: string[]) =>
      `SELECT f.collection_id AS id, CASE WHEN NOT (${live.join(' AND ')}) THEN NULL ${told.join(' ')} ELSE ${price} END AS floor_sort${trend ? `, ${trend.columns}` : ''}
        FROM ${x.from.sql}${trend?.join ?? ''}${conditions.length ? ` WHERE ${conditions.join(' AND ')}` : ''}`;
    const parts = kept && cursor ? upTo(cursor, direction).map((range) => select([...x.conditions, ...range])) : [select(x.conditions)];
    return `(${parts.join(' UNION ALL ')}) t`;
  };

  const pageFrom: NonNullable<ListQuery['pageFrom']> = (filters, { after, rows: count, direction }) => {
    if (x.from.bounded) return `${priced(['true'])} t`;
    const asc = direction === SortDirection.ASC;
    const dir = asc ? 'ASC' : 'DESC';
    const rows = p.add(count);
    // Twice the rows: a few walked collections priced far from their bound (a dutch auction, a listing closed
    // by the clock, which stays active in storage) do not move the threshold.
    const walkRows = p.add(2 * count);
    const where = (conditions: string[]) => (conditions.length ? ` WHERE ${conditions.join(' AND ')}` : '');
    const afterValue = after && after.value !== null ? { value: p.add(after.value), id: p.add(after.id) } : undefined;
    // After a cursor of a collection without a floor price, only such collections remain.
    const pricedAfter = after === undefined || afterValue !== undefined;
    const keyset = afterValue ? [`(t.floor_sort, t.id) ${asc ? '>' : '<'} (${afterValue.value}::numeric, ${afterValue.id}::uuid)`] : [];
    // The bound walked: the lower one cheapest first; dearest first the upper one, while it holds.
    const bound = asc ? 'floor_low' : 'floor_high';
    const walk = `SELECT t.* FROM ${priced(asc ? live : [...live, bounded])} t${where([...filters, ...keyset])} ORDER BY t.${bound} ${dir}, t.id ${dir} LIMIT ${walkRows}::int`;
    const walked = `w AS MATERIALIZED (${pricedAfter ? walk : `SELECT t.* FROM ${priced(['false'])} t`})`;
    // Dearest first, the collections whose upper bound has expired: every one priced.
    const expired = asc ? [] : [`e AS MATERIALIZED (SELECT t.* FROM ${priced(pricedAfter ? [...live, 'f.floor_high IS NOT NULL', `f.floor_high_until <= ${now}::timestamptz`] : ['false'])} t${where([...filters, ...keyset])})`];
    const found = asc ? `(SELECT count(*) FROM w)` : `((SELECT count(*) FROM w) + (SELECT count(*) FROM e))`;
    // Past the walk: the collections whose bound reaches the walk's rows-th (P, I) in the page's order, (P, I)
    // itself at or after the page's last row. Cheapest first, a collection before it has a floor of at most
    // P, so a lower bound below P, or P itself (its floor is then P) with an id before I; dearest first, an
    // upper bound above P, or P with an id after I. Ties at P (a market whose floors are few prices) are cut
    // by id, not read whole.
    const last = (column: string) => `(SELECT w.${column} FROM w ORDER BY w.${bound} ${asc ? 'DESC' : 'ASC'}, w.id ${asc ? 'DESC' : 'ASC'} LIMIT 1)`;
    const kth = (column: string) => `(SELECT w.${column} FROM w ORDER BY w.floor_sort ${dir}, w.id ${dir} OFFSET ${rows}::int - 1 LIMIT 1)`;
    const [beyondWalk, beforeKth] = asc ? ['>', '<'] : ['<', '>'];
    const reach = `(SELECT t.* FROM ${priced([
      ...liveFilter,
      ...(asc ? [] : [boundedFilter]),
      `(f.${bound}, f.collection_id) ${beyondWalk} (${last(bound)}, ${last('id')})`,
      `(f.${bound}, f.collection_id) ${beforeKth} (${kth('floor_sort')}, ${kth('id')})`,
    ])} t
          WHERE (SELECT count(*) FROM w) >= ${walkRows}::int)`;
    const idAfter = after && !afterValue ? [`t.id ${asc ? '>' : '<'} ${p.add(after.id)}::uuid`] : [];
    const unpriced = (conditions: string[]) =>
      `(SELECT t.* FROM ${priced(conditions)} t WHERE ${[`${found} < ${rows}::int`, ...filters, ...idAfter].join(' AND ')} ORDER BY t.id ${dir} LIMIT ${rows}::int)`;
    const branches = ['SELECT * FROM w', ...(asc ? [] : ['SELECT * FROM e']), reach, unpriced(['f.floor_low IS NULL']), unpriced(['f.floor_low IS NOT NULL', `f.floor_until <= ${now}::timestamptz`])];
    return `(WITH ${[walked, ...expired].join(', ')} ${branches.join(' UNION ALL ')}) t`;
  };
  return { countFrom, pageFrom };
}
