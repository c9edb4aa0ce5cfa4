import { DataSource, EntityManager } from 'typeorm';
import { Params } from '../../common/sql';
import { Offer } from './offer.types';

export function offerStatusSql(o: string, now: string): string {
  return `(CASE WHEN ${o}.status = 'active' AND ${o}.end_time <= ${now}::timestamptz THEN 'expired' ELSE ${o}.status END)`;
}

/**
 * The offers that can buy asset `a` (Asset.offers): its item offers, and the collection offers of its
 * collection. One definition, for its loader (offer.loaders.ts) and the SQL plans (app/graphql/sql-plan).
 */
export function assetOffersSql(o: string, a: string): string {
  return `(${o}.asset_id = ${a}.id OR (${o}.kind = 'collection' AND ${o}.collection_id = ${a}.collection_id))`;
}

export function offerColumns(now: string): string {
  return `o.id, o.kind, o.quantity, o.filled, o.reserved, o.asset_id AS "assetId", o.collection_id AS "collectionId", o.chain_id AS "chainId",
    o.token_address AS "tokenAddress", o.token_id::text AS "tokenId", o.taker, o.price::text AS price, o.currency AS "currencyAddress",
    o.start_time AS "startTime", o.end_time AS "endTime", ${offerStatusSql('o', now)} AS status,
    o.created_at AS "createdAt", o.updated_at AS "updatedAt", o.signature,
    (SELECT coalesce(jsonb_agg(jsonb_build_object('traitType', t.v->>'trait_type', 'value', t.v->>'value') ORDER BY t.i), '[]'::jsonb)
     FROM jsonb_array_elements(coalesce(o.traits, '[]'::jsonb)) WITH ORDINALITY t(v, i)) AS traits`;
}

export async function offersByIds(db: DataSource | EntityManager, ids: readonly string[], now: Date): Promise<Offer[]> {
  const p = new Params();
  const nowParam = p.add(now);
  return db.query(`SELECT ${offerColumns(nowParam)} FROM offers o WHERE o.id = ANY(${p.add(ids)}::uuid[])`, p.values);
}
