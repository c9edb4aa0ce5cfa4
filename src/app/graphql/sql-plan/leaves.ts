import { EntityMetadata } from 'typeorm';
import { getNamedType, getNullableType, GraphQLEnumType, GraphQLField, isEnumType, isListType } from 'graphql';
import { currentPriceSql, listingStatusSql } from '../../../modules/listing/listing.sql';
import { offerStatusSql } from '../../../modules/offer/offer.sql';
import { Build, enumPart, isoSql, nowOf, Part, plain, Render, serialized } from './parts';

/**
 * The leaves of SQL plans: a stored column as its GraphQL type serializes it, a listing's fields (the
 * SQL of listing.sql.ts, as the resolvers read them), a trait's and a fee's fields.
 */

/** The JSON value of a column field as its GraphQL type serializes it, or undefined when SQL cannot say it exactly. */
export function columnPart(metadata: EntityMetadata, field: GraphQLField<unknown, unknown>): Part | undefined {
  if (isEnumType(getNamedType(field.type))) {
    const column = metadata.findColumnWithPropertyName(field.name);
    if (!column || column.relationMetadata) return undefined;
    return enumPart(getNamedType(field.type) as GraphQLEnumType, (_b, row) => `${row}."${column.databaseName}"`);
  }
  const render = columnRender(metadata, field);
  return render && plain(render);
}

export function columnRender(metadata: EntityMetadata, field: GraphQLField<unknown, unknown>): Render | undefined {
  const column = metadata.findColumnWithPropertyName(field.name);
  if (!column || column.relationMetadata) return undefined;
  if (isListType(getNullableType(field.type))) return undefined;
  const type = getNamedType(field.type);
  const sqlType = typeof column.type === 'string' ? column.type : '';
  const name = `"${column.databaseName}"`;
  if (isEnumType(type)) return undefined;
  switch (type.name) {
    case 'ID':
    case 'String':
    case 'Address':
    case 'TokenId':
      if (sqlType === 'uuid' || sqlType === 'numeric') return (_b, row) => `${row}.${name}::text`;
      if (sqlType === 'varchar' || sqlType === 'text') return (_b, row) => `${row}.${name}`;
      return undefined;
    case 'Int':
      return sqlType === 'integer' || sqlType === 'smallint' ? (_b, row) => `${row}.${name}` : undefined;
    case 'SafeInt':
      // A bigint as a JSON number, as SafeInt serializes the column's text (a block number stays below 2^53).
      return sqlType === 'bigint' ? (_b, row) => `${row}.${name}` : undefined;
    case 'JSON':
    case 'JSONObject':
      return sqlType === 'jsonb' ? (_b, row) => `${row}.${name}` : undefined;
    case 'DateTimeISO':
      // Stored to the millisecond (precision 3): the text Date#toISOString gives of the value pg reads.
      if (sqlType !== 'timestamptz' || column.precision !== 3) return undefined;
      return (_b, row) => isoSql(`${row}.${name}`);
    default:
      return undefined;
  }
}

/**
 * Listing is not an entity: its fields are listing.sql.ts's listingColumns, in SQL over the listing's row
 * (`l`) and its asset's (`a`, the asset the listing is nested in).
 */
export function listingRender(field: GraphQLField<unknown, unknown>, key: string): Part | undefined {
  const asset = (b: Build, l: string) => b.assetOf.get(l)!;
  const type = getNamedType(field.type);
  const value = plain;
  switch (field.name) {
    case 'id':
      return value((_b, l) => `${l}.id::text`);
    case 'assetId':
      return value((_b, l) => `${l}.asset_id::text`);
    case 'seller':
      return value((_b, l) => `${l}.seller`);
    case 'signature':
      return value((_b, l) => `${l}.signature`);
    case 'inactiveReason':
      return value((_b, l) => `${l}.inactive_reason`);
    case 'orderType':
      return isEnumType(type) ? enumPart(type, (_b, l) => `${l}.order_type`) : undefined;
    case 'status':
      return isEnumType(type) ? enumPart(type, (b, l) => listingStatusSql(l, nowOf(b))) : undefined;
    case 'startPrice':
    case 'startPriceDecimal':
      return serialized(field, key, (_b, l) => `${l}.start_price`);
    case 'acceptPrice':
    case 'acceptPriceDecimal':
      return serialized(field, key, (_b, l) => `${l}.accept_price`);
    case 'currentPrice':
    case 'currentPriceDecimal':
      return serialized(field, key, (b, l) => `(${currentPriceSql(l, nowOf(b))})`);
    case 'listingTime':
      return value((_b, l) => isoSql(`${l}.listing_time`));
    case 'closingDate':
      return value((_b, l) => isoSql(`${l}.closing_date`));
    case 'createdAt':
      return value((_b, l) => isoSql(`${l}.created_at`));
    case 'updatedAt':
      return value((_b, l) => isoSql(`${l}.updated_at`));
    case 'name':
      return value((b, l) => `${asset(b, l)}.name`);
    case 'tokenAddress':
      return value((b, l) => `${asset(b, l)}.token_address`);
    case 'tokenId':
      return value((b, l) => `${asset(b, l)}.token_id::text`);
    default:
      return undefined;
  }
}

/** The SQL of a field of a row that is text, an id or a number written as text in the response. */
const asText = (column: string): Render => (_b, row) => `${row}.${column}::text`;
const asIs = (column: string): Render => (_b, row) => `${row}.${column}`;
const asIso = (column: string): Render => (_b, row) => isoSql(`${row}.${column}`);

/**
 * A leaf of Order or Offer, which are not entities: the columns of order.service.ts's ORDER_COLUMNS over
 * the order's row, and of offer.sql.ts's offerColumns over the offer's (its status by offerStatusSql at
 * the statement's `now`). Undefined for any other field (relations are objects.ts's; an offer's traits
 * are not planned).
 */
export function tradeRender(typeName: 'Order' | 'Offer', field: GraphQLField<unknown, unknown>, key: string): Part | undefined {
  const type = getNamedType(field.type);
  const byName: Record<string, Render> = typeName === 'Order' ? ORDER_LEAVES : OFFER_LEAVES;
  switch (field.name) {
    case 'price':
    case 'priceDecimal':
      return serialized(field, key, (_b, row) => `${row}.price`);
    case 'status':
      if (!isEnumType(type)) return undefined;
      return enumPart(type, typeName === 'Order' ? asIs('status') : (b, o) => offerStatusSql(o, nowOf(b)));
    case 'kind':
      return typeName === 'Offer' && isEnumType(type) ? enumPart(type, asIs('kind')) : undefined;
  }
  const render = Object.hasOwn(byName, field.name) ? byName[field.name] : undefined;
  return render && plain(render);
}

const ORDER_LEAVES: Record<string, Render> = {
  id: asText('id'),
  offerId: asText('offer_id'),
  listingId: asText('listing_id'),
  assetId: asText('asset_id'),
  collectionId: asText('collection_id'),
  chainId: asIs('chain_id'),
  tokenAddress: asIs('token_address'),
  tokenId: asText('token_id'),
  seller: asIs('seller'),
  buyer: asIs('buyer'),
  unit: asIs('unit'),
  createdAt: asIso('created_at'),
  updatedAt: asIso('updated_at'),
  settlementDeadline: asIso('settlement_deadline'),
  settlementTransactionHash: asIs('settlement_tx_hash'),
  settlementBlockNumber: (_b, row) => `${row}.settlement_block_number::float8`,
};

const OFFER_LEAVES: Record<string, Render> = {
  id: asText('id'),
  quantity: asIs('quantity'),
  filled: asIs('filled'),
  reserved: asIs('reserved'),
  assetId: asText('asset_id'),
  collectionId: asText('collection_id'),
  chainId: asIs('chain_id'),
  tokenAddress: asIs('token_address'),
  tokenId: asText('token_id'),
  taker: asIs('taker'),
  signature: asIs('signature'),
  startTime: asIso('start_time'),
  endTime: asIso('end_time'),
  createdAt: asIso('created_at'),
  updatedAt: asIso('updated_at'),
};

/** A collection's assets as collection_asset_counts keeps them (migration 1765000000000). */
export const assetCountSql = (collectionId: string) => `COALESCE((SELECT x.assets FROM collection_asset_counts x WHERE x.collection_id = ${collectionId}), 0)`;

/** A Trait's fields in SQL over collection_traits `ct`, given the collection's number of assets (`size`). */
export const TRAIT_SQL: Record<string, (ct: string, size: string) => string> = {
  __typename: () => `'Trait'`,
  traitType: (ct) => `${ct}.trait_type`,
  value: (ct) => `${ct}.value`,
  count: (ct) => `${ct}.asset_count`,
  rarity: (ct, size) => `${ct}.asset_count::float8 / GREATEST(${size}, 1)`,
};

/**
 * A float8 of at most 1 in REST's text, a JSON number as JSON.stringify writes it. PostgreSQL writes the
 * same shortest digits, but with an exponent below 1e-4 (`9.998e-05`), where JavaScript writes one only
 * below 1e-6 (`9.998e-7`) and plain decimals above (`0.00009998`).
 */
export const jsFloatSql = (value: string) =>
  `(SELECT (CASE WHEN f.e IS NULL THEN f.t WHEN f.e <= 6 THEN '0.' || repeat('0', f.e - 1) || replace(f.m, '.', '') ELSE f.m || 'e-' || f.e END)::json` +
  ` FROM (SELECT g.t, split_part(g.t, 'e-', 1) AS m, NULLIF(split_part(g.t, 'e-', 2), '')::int AS e FROM (SELECT (${value})::text AS t) g) f)`;

/** REST's text of a Trait's fields where it is not their SQL value's: rarity as JavaScript spells it. */
export const TRAIT_TEXT: Record<string, (ct: string, size: string) => string> = {
  rarity: (ct, size) => jsFloatSql(TRAIT_SQL.rarity(ct, size)),
};

/** A Fee's fields in SQL over a stored fee `u.f` of type `u.t` (fees' text form). */
export const FEE_SQL: Record<string, string> = {
  __typename: `'Fee'`,
  address: `u.f->>'address'`,
  basisPoints: `(u.f->>'basisPoints')::int`,
  type: 'u.t',
};
