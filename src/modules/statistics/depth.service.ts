import { DataSource } from 'typeorm';
import { BadRequestError } from '../../common/errors';
import type { ItemsOf } from '../../common/pagination';
import { Params } from '../../common/sql';
import { currentPriceSql, isActiveListingSql } from '../listing/listing.sql';
import { isNativeSql } from '../currency/currency.entity';
import { PriceDepthBucket, TraitFloor } from './depth.types';

export const MAX_DEPTH_BUCKETS = 100;

/** priceDepth's ranges (the cost estimate counts them: common/pagination.ts ItemsOf). */
export const DEPTH_ITEMS: ItemsOf = { max: MAX_DEPTH_BUCKETS, count: ({ buckets }) => buckets as number };

/** The number of buckets of priceDepth, checked. */
export function checkDepthBuckets(buckets: number): number {
  if (!Number.isInteger(buckets) || buckets < 1 || buckets > MAX_DEPTH_BUCKETS) {
    const message = `buckets must be an integer from 1 to ${MAX_DEPTH_BUCKETS}, got ${buckets}`;
    throw new BadRequestError(message, [{ field: 'buckets', message: `1 to ${MAX_DEPTH_BUCKETS}` }]);
  }
  return buckets;
}

/**
 * Every trait value of each collection (collection_traits) with its floor now, by the statistics' rule
 * (floorListingSql): active native listings at their current price, the lowest id of equal prices. One statement.
 */
export async function traitFloorsForCollections(ds: DataSource, ids: readonly string[], now: Date): Promise<Map<string, TraitFloor[]>> {
  const p = new Params();
  const idsP = p.add(ids);
  const nowP = p.add(now);
  const rows: Array<TraitFloor & { collectionId: string }> = await ds.query(
    `SELECT ct.collection_id AS "collectionId", ct.trait_type AS "traitType", ct.value, ct.asset_count AS "assetCount",
       f.price::text AS "floorPrice", f.listing_id AS "floorListingId", COALESCE(f.listed, 0)::int AS "listedCount"
     FROM collection_traits ct
     LEFT JOIN (
       SELECT tr.collection_id, tr.trait_type, tr.value, min(l.price) AS price, count(*) AS listed,
         (array_agg(l.id ORDER BY l.price, l.id))[1] AS listing_id
       FROM (SELECT l.id, l.asset_id, ${currentPriceSql('l', nowP)} AS price FROM listings l
             WHERE l.collection_id = ANY(${idsP}::uuid[]) AND ${isActiveListingSql('l', nowP)} AND ${isNativeSql('l')}) l
       JOIN asset_traits tr ON tr.asset_id = l.asset_id
       GROUP BY 1, 2, 3
     ) f ON f.collection_id = ct.collection_id AND f.trait_type = ct.trait_type AND f.value = ct.value
     WHERE ct.collection_id = ANY(${idsP}::uuid[]) AND ct.asset_count > 0
     ORDER BY 1, 2, 3`,
    p.values,
  );
  const floors = new Map<string, TraitFloor[]>(ids.map((id) => [id, []]));
  for (const { collectionId, ...row } of rows) floors.get(collectionId)?.push({ ...row, floorPriceDecimal: row.floorPrice });
  return floors;
}

/**
 * The order book of each collection now in `buckets` equal price ranges from its lowest to its highest
 * price (active listings at their current price, active offers in their window; native prices only); the last range is
 * closed, so the highest price counts. A collection with neither has no ranges. One statement.
 */
export async function priceDepthForCollections(
  ds: DataSource,
  ids: readonly string[],
  buckets: number,
  now: Date,
): Promise<Map<string, PriceDepthBucket[]>> {
  const p = new Params();
  const idsP = p.add(ids);
  const nowP = p.add(now);
  const n = p.add(buckets);
  const rows: Array<PriceDepthBucket & { collectionId: string }> = await ds.query(
    `WITH prices AS (
       SELECT l.collection_id, true AS listing, ${currentPriceSql('l', nowP)} AS price FROM listings l
       WHERE l.collection_id = ANY(${idsP}::uuid[]) AND ${isActiveListingSql('l', nowP)} AND ${isNativeSql('l')}
       UNION ALL
       SELECT o.collection_id, false, o.price FROM offers o
       WHERE o.collection_id = ANY(${idsP}::uuid[]) AND ${isNativeSql('o')} AND o.status = 'active' AND o.start_time <= ${nowP}::timestamptz AND o.end_time > ${nowP}::timestamptz
     ), bounds AS (SELECT collection_id, min(price) AS lo, max(price) AS hi FROM prices GROUP BY 1),
     ranged AS (
       SELECT b.collection_id, i.i, round(b.lo + (b.hi - b.lo) * (i.i - 1) / ${n}::int, 18) AS lo, round(b.lo + (b.hi - b.lo) * i.i / ${n}::int, 18) AS hi
       FROM bounds b CROSS JOIN generate_series(1, ${n}::int) i(i)
     )
     SELECT r.collection_id AS "collectionId", r.lo::text AS "minPrice", r.hi::text AS "maxPrice",
       count(*) FILTER (WHERE p.listing)::int AS listings, count(*) FILTER (WHERE NOT p.listing)::int AS offers
     FROM ranged r
     LEFT JOIN prices p ON p.collection_id = r.collection_id
       AND p.price >= r.lo AND (p.price < r.hi OR (r.i = ${n}::int AND p.price <= r.hi))
     GROUP BY r.collection_id, r.i, r.lo, r.hi
     ORDER BY r.collection_id, r.i`,
    p.values,
  );
  const depth = new Map<string, PriceDepthBucket[]>(ids.map((id) => [id, []]));
  for (const { collectionId, ...row } of rows) {
    depth.get(collectionId)?.push({ ...row, minPriceDecimal: row.minPrice, maxPriceDecimal: row.maxPrice });
  }
  return depth;
}
