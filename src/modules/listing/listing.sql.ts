import { EntityManager } from 'typeorm';
import { SortDirection } from '../../common/pagination';
import { Params } from '../../common/sql';
import { isNativeSql } from '../currency/currency.entity';
import { ALL_COLLECTIONS } from './listed-counts';

/** Microseconds from `from` to `to`, as an exact integer (numeric). */
const micros = (from: string, to: string) => `round(EXTRACT(EPOCH FROM (${to} - ${from})) * 1000000)`;

/**
 * The highest bid of an english auction standing at moment `t`: an item offer on its asset, active, at or
 * above its start price (a bid below it is refused, docs/api.md "Auctions") and in its currency, its window
 * holding `t`. Null without one.
 */
export function bestBidSql(l: string, t: string): string {
  return `(SELECT max(o.price) FROM offers o WHERE o.asset_id = ${l}.asset_id AND o.status = 'active' AND o.currency = ${l}.currency
    AND o.price >= ${l}.start_price AND o.start_time <= ${t} AND o.end_time > ${t})`;
}

/**
 * SQL for a listing's figures that depend on the moment of reading; `now` is a parameter (the clock).
 * A dutch auction falls linearly from start price at listing_time to accept price at closing_date, in
 * exact integer arithmetic on the 18-decimal unit (wei): the fall is rounded up to a whole unit, so the
 * price is rounded down to 18 decimals, and then down to its currency's decimals (USDC: 6). An english auction stands at its best bid, or its start price
 * without one.
 */
export function currentPriceSql(l: string, now: string): string {
  const total = micros(`${l}.listing_time`, `${l}.closing_date`);
  const elapsed = `LEAST(${total}, GREATEST(0, ${micros(`${l}.listing_time`, `${now}::timestamptz`)}))`;
  const fallWei = `div((${l}.start_price - ${l}.accept_price) * 1000000000000000000 * ${elapsed} + ${total} - 1, ${total})`;
  return `(CASE ${l}.order_type
    WHEN 'dutch_auction' THEN trunc(${l}.start_price - ${fallWei} * 0.000000000000000001, ${l}.currency_decimals)
    WHEN 'english_auction' THEN COALESCE(${bestBidSql(l, `${now}::timestamptz`)}, ${l}.start_price)
    ELSE ${l}.start_price END)`;
}

/** Active now: not sold or cancelled, and its closing date (if any) still ahead. */
export function isActiveListingSql(l: string, now: string): string {
  return `(${l}.status = 'active' AND (${l}.closing_date IS NULL OR ${l}.closing_date > ${now}::timestamptz))`;
}

/** A listing's status as read now: an active listing whose closing date has passed reads as expired. */
export function listingStatusSql(l: string, now: string): string {
  return `(CASE WHEN ${l}.status = 'active' AND ${l}.closing_date <= ${now}::timestamptz THEN 'expired' ELSE ${l}.status END)`;
}

/**
 * The floor of the collection `collectionId` (an SQL expression) now: its active listing in the native
 * currency (statistics are native, docs/market.md) of the lowest current price, the lowest id of equal ones, as a one-row subquery over `listings l` (`joins` may add
 * its asset `a`) selecting `columns`. The statistics' floor and `Collection.floorListing` both read it.
 */
export function floorListingSql(collectionId: string, now: string, columns: string, joins = ''): string {
  return `SELECT ${columns} FROM listings l${joins} WHERE l.collection_id = ${collectionId} AND ${isActiveListingSql('l', now)} AND ${isNativeSql('l')}
    ORDER BY ${currentPriceSql('l', now)} ASC, l.id LIMIT 1`;
}


/** What listedByPriceSql needs of a page of listed assets by current price. */
export interface ListedByPrice {
  /** The moment of reading, a parameter. */
  now: string;
  direction: SortDirection;
  /** The list's conditions over the asset `t` and its active listing `l`. */
  filters: string[];
  /** The collection the list is of (a parameter), which `filters` hold too: here it picks the index. */
  collection?: string;
  /** The list's `currency` (an address or a symbol), which `filters` hold too: here it picks the index. */
  currency?: string | null;
  /** The page's cursor: the current price and asset id of the row it follows. */
  after?: { value: unknown; id: string };
  /** How many rows the page reads from its position's start (its offset, its limit and one more). */
  rows: number;
  /** The list holds unlisted assets too (sorted with the nulls, by id), found by `filters` (a collection's, a chain's, or none). */
  unlisted?: boolean;
}

/**
 * The conditions on an active listing `l` of the list's collection, the CTE `cur` of the addresses of the
 * list's currency (address or symbol, on any chain; the list's statement matches the asset's chain), and
 * the asset ids of those listings in it that meet more `conditions`.
 */
function listingsOf(p: Params, x: Pick<ListedByPrice, 'now' | 'collection' | 'currency'>) {
  const currency = x.currency != null ? p.add(x.currency.trim()) : undefined;
  const ofCollection = x.collection ? [`l.collection_id = ${x.collection}`] : [];
  const ofListing = [isActiveListingSql('l', x.now), ...ofCollection];
  const ofCurrency = currency ? ['l.currency IN (SELECT address FROM cur)'] : [];
  return {
    ofListing,
    cur: currency
      ? `cur AS MATERIALIZED (SELECT DISTINCT c.address FROM currencies c WHERE c.address = lower(${currency}) OR upper(c.symbol) = upper(${currency}))`
      : undefined,
    /** `stored`: active as stored, its closing date not read (the list's statement reads the active listing again). */
    ofListings: (conditions: string[], stored = false) =>
      `SELECT l.asset_id FROM listings l WHERE ${[...(stored ? [`l.status = 'active'`, ...ofCollection] : ofListing), ...conditions, ...ofCurrency].join(' AND ')}`,
  };
}

/**
 * A relation of asset ids (`asset_id`) that holds every listed asset up to the cursor `after` (it included)
 * in the order of their current price now, for the count of a later page (`remaining`: the kept count less
 * these), which filters them as the list does: the fixed prices up to it from the price indexes, the moving
 * ones whose bounds reach it. After a cursor among the prices read as null (sorted last), the listings whose
 * price reads as null: the rows left after it are among them.
 */
export function listedUpToSql(p: Params, x: Pick<ListedByPrice, 'now' | 'direction' | 'collection' | 'currency'> & { after: { value: unknown; id: string } }): string {
  const { cur, ofListings: listings } = listingsOf(p, x);
  const head = cur ? `WITH ${cur} ` : '';
  if (x.after.value === null) return `(${head}${listings(['l.price_low IS NULL'])})`;
  const asc = x.direction === SortDirection.ASC;
  const value = `${p.add(x.after.value)}::numeric`;
  // The fixed prices up to the cursor as two ranges of the price index, each bounded by the price, the
  // closing date left to the list's statement (which reads each candidate's active listing again): those
  // before the cursor's price, and those at its price up to its asset id. A row comparison, `(price_low,
  // asset_id) <= (value, id)`, starts a scan where it should but ends it only past the price (PostgreSQL 15
  // stops a forward scan on a row comparison's first column): the count walked every listing at the
  // cursor's price (100,000 at 10,000,000 assets: 630 index pages, 20-50 ms, for page 10's 180 rows). At
  // the price, `= ANY(ARRAY[price])`: an equality, after which the asset id ends the scan; written `=`, the
  // planner folds it and `price_low = price_high` into `price_low = price_high = price`, no longer sees the
  // fixed-price index's predicate, and read the listings by asset id (6,400 rows for 180, 52 ms). With the
  // pair only, or with the closing date read from the rows, the planner took the index by currency first
  // and read all of it (3,800 pages for 160 rows at 1,000,000 assets; 216 ms at 10,000,000 in a generic plan).
  const before = asc ? '<' : '>';
  const upTo = asc ? '<=' : '>=';
  const fixedBefore = listings(['l.price_low = l.price_high', `l.price_low ${before} ${value}`], true);
  const fixedAt = listings(['l.price_low = l.price_high', `l.price_low = ANY(ARRAY[${value}])`, `l.asset_id ${upTo} ${p.add(x.after.id)}::uuid`], true);
  const moving = listings(['l.price_low < l.price_high', asc ? `l.price_low <= ${value}` : `l.price_high >= ${value}`]);
  return `(${head}${fixedBefore} UNION ALL ${fixedAt} UNION ALL ${moving})`;
}

/**
 * A relation of asset ids (`asset_id`) that holds the first `rows` listed assets in the order of their current
 * price now (then asset id) after the cursor, for the list's statement to price, filter and order again: a
 * few rows where the list would price every listed asset. Read from the stored price bounds (migration
 * 1765640000000-listing-price-bounds): the listings whose price only writes change come from an index walk
 * on it, `rows` of them; a listing whose price moves with time (a dutch auction, an english auction with
 * bids) can only reach those rows if its lower bound is at most the last of them (the dearest first: its upper
 * bound at least), so only those are candidates, whatever the list's filters on the asset (its statement
 * applies them); and the few whose price reads as null (sorted last) are added.
 */
export function listedByPriceSql(p: Params, x: ListedByPrice): string {
  const asc = x.direction === SortDirection.ASC;
  const dir = asc ? 'ASC' : 'DESC';
  const rows = p.add(x.rows);
  const afterValue = x.after && x.after.value !== null ? { value: p.add(x.after.value), id: p.add(x.after.id) } : undefined;
  const pricedAfter = x.after === undefined || afterValue !== undefined;
  const { ofListing, cur, ofListings } = listingsOf(p, x);
  const fixedAfter = afterValue ? [`(l.price_low, l.asset_id) ${asc ? '>' : '<'} (${afterValue.value}::numeric, ${afterValue.id}::uuid)`] : [];
  const walk = (conditions: string[]) =>
    `SELECT l.asset_id, l.price_low AS price FROM listings l JOIN assets t ON t.id = l.asset_id
     WHERE ${[...ofListing, 'l.price_low = l.price_high', ...conditions, ...fixedAfter, ...x.filters].join(' AND ')}
     ORDER BY l.price_low ${dir}, l.asset_id ${dir} LIMIT ${rows}::int`;
  // One walk per currency address the filter names (USDC has one per chain), each in the index's order.
  const fixed = cur ? `SELECT f.* FROM cur CROSS JOIN LATERAL (${walk(['l.currency = cur.address'])}) f` : walk([]);
  const reach = asc
    ? `l.price_low <= COALESCE((SELECT s.price FROM s ORDER BY s.price ASC OFFSET ${rows}::int - 1 LIMIT 1), 'Infinity'::numeric)`
    : `l.price_high >= COALESCE((SELECT s.price FROM s ORDER BY s.price DESC OFFSET ${rows}::int - 1 LIMIT 1), '-Infinity'::numeric)`;
  // A moving price past the cursor's can only be one whose bounds reach it.
  const movingAfter = afterValue ? [asc ? `l.price_high >= ${afterValue.value}::numeric` : `l.price_low <= ${afterValue.value}::numeric`] : [];
  const ctes = [...(cur ? [cur] : []), ...(pricedAfter ? [`s AS MATERIALIZED (${fixed})`] : [])];
  const branches = [
    ...(pricedAfter ? ['SELECT s.asset_id FROM s', ofListings(['l.price_low < l.price_high', reach, ...movingAfter])] : []),
    ofListings(['l.price_low IS NULL']),
    ...(x.unlisted ? [unlistedSql(p, x, dir, rows, pricedAfter)] : []),
  ];
  return `(${ctes.length ? `WITH ${ctes.join(', ')} ` : ''}${branches.join(' UNION ALL ')})`;
}

/**
 * The row addresses (ctid) of the first `limit` listed assets whose name meets `starts` (common/name-search.ts's
 * StartsWalk), in the order of the names' pattern index (lower-cased, then the asset's id), among those that
 * pass the list's `filters` (over the asset `t` and its listing `l`, active now). Read from the names the
 * listings stored active keep (`asset_name`, migration 1765870000000) by ix_listings_currency_name_prefix: one
 * walk per currency address (the list's currency's, an address or a symbol; without one, every currency the
 * kept counts of listed assets have seen), each reading about as many listings as it keeps, merged in the same
 * order. A walk of every asset's name looked up each one's active listing instead (a third of the bench's
 * assets are listed: 3,000 names read for 1,000).
 */
export function listedByNameSql(p: Params, x: { now: string; currency?: string | null; filters: readonly string[] }, starts: (column: string) => string, limit: string): string {
  const { ofListing, cur } = listingsOf(p, x);
  const currencies = cur ?? `cur AS MATERIALIZED (SELECT DISTINCT k.currency AS address FROM listed_asset_counts k WHERE k.collection_id = '${ALL_COLLECTIONS}'::uuid)`;
  const name = 'lower(l.asset_name)';
  // Each listing's asset by its key (OFFSET 0 keeps the join a nested loop: on 30,000 assets the planner hashed
  // every asset and sorted every listing in the currency instead of walking the index to its 1,000th).
  const each = `SELECT t.address, ${name} AS name, l.asset_id
    FROM listings l CROSS JOIN LATERAL (SELECT a.ctid AS address, a.* FROM assets a WHERE a.id = l.asset_id OFFSET 0) t
    WHERE ${[...ofListing, 'l.currency = cur.address', starts('l.asset_name'), ...x.filters].join(' AND ')} ORDER BY ${name} USING ~<~, l.asset_id LIMIT ${limit}`;
  return `WITH ${currencies} SELECT w.address AS ctid FROM cur CROSS JOIN LATERAL (${each}) w ORDER BY w.name USING ~<~, w.asset_id LIMIT ${limit}`;
}

/**
 * The first `rows` unlisted assets of the list (`x.unlisted`) by id after the cursor (when it is among the
 * nulls; a priced cursor is followed by every null): they come after every price, so when the position is
 * priced (`pricedAfter`) only while the walk of fixed prices `s` has fewer than `rows` rows can one reach the page.
 */
function unlistedSql(p: Params, x: ListedByPrice, dir: string, rows: string, pricedAfter: boolean): string {
  const conditions = [...x.filters, `NOT EXISTS (SELECT 1 FROM listings ul WHERE ul.asset_id = t.id AND ${isActiveListingSql('ul', x.now)})`];
  if (!pricedAfter) conditions.push(`t.id ${dir === 'ASC' ? '>' : '<'} ${p.add(x.after!.id)}::uuid`);
  else conditions.push(`(SELECT count(*) FROM s) < ${rows}::int`);
  return `(SELECT t.id AS asset_id FROM assets t WHERE ${conditions.join(' AND ')} ORDER BY t.id ${dir} LIMIT ${rows}::int)`;
}

/** The prices an offer on the asset meets, from its active listing now (none without one). */
export interface ListingTerms {
  orderType: string;
  /** The currency of its prices (an offer in another one neither takes it nor bids on it). */
  currencyAddress: string;
  /** Its currency's decimals: a bid's minimum is rounded up to them. */
  currencyDecimals: number;
  startPrice: string;
  acceptPrice: string | null;
  currentPrice: string;
  /** An english auction's best bid now; null without one (and for other order types). */
  bestBid: string | null;
}

export async function activeListingTerms(m: EntityManager, assetId: string, now: Date): Promise<ListingTerms | undefined> {
  const p = new Params();
  const nowParam = p.add(now);
  const [terms] = await m.query(
    `SELECT l.order_type AS "orderType", l.currency AS "currencyAddress", l.currency_decimals AS "currencyDecimals", l.start_price::text AS "startPrice", l.accept_price::text AS "acceptPrice",
       ${currentPriceSql('l', nowParam)}::text AS "currentPrice",
       CASE WHEN l.order_type = 'english_auction' THEN ${bestBidSql('l', `${nowParam}::timestamptz`)}::text END AS "bestBid"
     FROM listings l WHERE l.asset_id = ${p.add(assetId)} AND ${isActiveListingSql('l', nowParam)}`,
    p.values,
  );
  return terms;
}
