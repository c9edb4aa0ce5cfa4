import { equalsFilter, priceRangeFilters, ReadModel, SqlScope } from '../../common/read-model';
import { countedSum, groupConditions, KeptSpan, priceRangeCount } from '../trade/list-counts';
import { currencyFilterSql } from '../currency/currency.service';
import { currencyRelation } from '../currency/currency.read';
import { collectionIdFilter } from '../collection/collection.read';
import { OfferOrderBy, OfferRole, OfferStatus } from './offer.types';

/** An offer's status at `now`: `expired` once its end has passed. */
export function offerStatusSql(o: string, now: string): string {
  return `(CASE WHEN ${o}.status = 'active' AND ${o}.end_time <= ${now}::timestamptz THEN 'expired' ELSE ${o}.status END)`;
}

/**
 * The offers whose status at `now` is `status`, as offerStatusSql computes it, written on the stored column
 * so that an index with `status` first serves it (the CASE of offerStatusSql is opaque to the planner):
 * `active` is stored `active` ending after now; `expired` stored so, or stored `active` ended by now.
 */
export function offerStatusIsSql(o: string, now: string, status: string): string {
  switch (status) {
    case OfferStatus.ACTIVE:
      return `(${o}.status = 'active' AND ${o}.end_time > ${now}::timestamptz)`;
    case OfferStatus.EXPIRED:
      return `(${o}.status = 'expired' OR (${o}.status = 'active' AND ${o}.end_time <= ${now}::timestamptz))`;
    case OfferStatus.ACCEPTED:
    case OfferStatus.CANCELLED:
      return `${o}.status = '${status}'`;
    default:
      throw new Error(`not an offer status: ${status}`);
  }
}

/**
 * The offers whose status at `now` is `status` (EXPIRED, else undefined) as disjoint parts of the
 * table, each a FROM item of offers aliased `o` that an index serves in each of the lists' orders (ReadFilter.sources,
 * migration 1765810000000). The sweeper marks the ended offers stored active (`expiry_swept`) and leaves them
 * active, so each of the two sets of them lies nearly all on one side of now:
 * expired is stored so (ix_offers_status_*), marked and ended (ix_offers_swept_*), and unmarked and ended:
 * the few the sweeper has not reached. Active offers (unmarked and live, and marked and live: none unless the reader's clock is behind) stay one walk
 * of ix_offers_active_* filtered by the end: read as parts, page 10 at --scale 10 took 1.3-3.7 s (not yet explained).
 * The few are found by their ids, read from their end's index alone (ix_offers_expiry_due),
 * then sorted: an ordered walk of another index filtered by the end, which the planner may pick when it guesses
 * many of them (it knows nothing of how the mark and the end go together), would read every offer of that index.
 */
export function offerStatusSources(o: string, now: () => string, status: string): string[] | undefined {
  // The moment's parameter added only when used (PostgreSQL refuses a parameter left unused).
  const at = () => `${now()}::timestamptz`;
  const part = (condition: string) => `(SELECT * FROM offers WHERE ${condition}) ${o}`;
  const few = (condition: string) => `(SELECT * FROM offers WHERE id = ANY(ARRAY(SELECT id FROM offers WHERE ${condition}))) ${o}`;
  switch (status) {
    case OfferStatus.EXPIRED:
      return [
        part(`status = 'expired'`),
        part(`status = 'active' AND expiry_swept AND end_time <= ${at()}`),
        few(`status = 'active' AND NOT expiry_swept AND end_time <= ${at()}`),
      ];
    default:
      return undefined;
  }
}

/** The offers that can buy asset `a` (Asset.offers): its item offers, and the collection offers of its collection. */
export function assetOffersSql(o: string, a: string): string {
  return `(${o}.asset_id = ${a}.id OR (${o}.kind = 'collection' AND ${o}.collection_id = ${a}.collection_id))`;
}

/** How offers are read: by offer.service.ts and its loaders, and by the SQL plans. */
export const OFFER_READ: ReadModel = {
  type: 'Offer',
  list: 'offers',
  table: 'offers',
  alias: 'o',
  fields: {
    id: { sql: 'id', kind: 'text' },
    kind: { sql: 'kind', kind: 'enum' },
    quantity: { sql: 'quantity', kind: 'value' },
    filled: { sql: 'filled', kind: 'value' },
    reserved: { sql: 'reserved', kind: 'value' },
    assetId: { sql: 'asset_id', kind: 'text' },
    collectionId: { sql: 'collection_id', kind: 'text' },
    chainId: { sql: 'chain_id', kind: 'value' },
    tokenAddress: { sql: 'token_address', kind: 'value' },
    tokenId: { sql: 'token_id', kind: 'text' },
    taker: { sql: 'taker', kind: 'value' },
    price: { sql: 'price', kind: 'decimal' },
    currencyAddress: { sql: 'currency', kind: 'value', serviceOnly: true },
    startTime: { sql: 'start_time', kind: 'timestamp' },
    endTime: { sql: 'end_time', kind: 'timestamp' },
    status: { sql: (o, s) => offerStatusSql(o, s.now()), kind: 'enum' },
    createdAt: { sql: 'created_at', kind: 'timestamp' },
    updatedAt: { sql: 'updated_at', kind: 'timestamp' },
    signature: { sql: 'signature', kind: 'value' },
    traits: {
      sql: (o) => `(SELECT coalesce(jsonb_agg(jsonb_build_object('traitType', t.v->>'trait_type', 'value', t.v->>'value') ORDER BY t.i), '[]'::jsonb)
     FROM jsonb_array_elements(coalesce(${o}.traits, '[]'::jsonb)) WITH ORDINALITY t(v, i))`,
      kind: 'value',
      serviceOnly: true,
    },
  },
  filters: [
    {
      arg: 'status',
      type: 'OfferStatus',
      plan: 'sql',
      where: (s, o, status: string) => offerStatusIsSql(o, s.now(), status),
      sources: (s, o, status: string) => offerStatusSources(o, s.now, status),
    },
    equalsFilter('kind', 'OfferKind', 'kind'),
    // The resolvers check that the currency exists first.
    { arg: 'currency', type: 'String', note: 'address or symbol: sorting by price compares amounts of one currency only when it is given', plan: 'aside', where: (s, o, given: string) => currencyFilterSql(s.p, `${o}.currency`, `${o}.chain_id`, given) },
    ...priceRangeFilters((row) => `${row}.price`),
  ],
  rootFilters: [
    // The resolvers check that the chain exists (offer.service.ts writes its condition).
    { arg: 'chainId', type: 'String', plan: 'aside' },
    equalsFilter('tokenAddress', 'Address', 'token_address'),
    equalsFilter('tokenId', 'TokenId', 'token_id', 'numeric'),
    equalsFilter('ownerId', 'Address', 'taker', '', 'the taker'),
    collectionIdFilter(),
  ],
  sorts: {
    // ledBy: the indexes ix_offers_{token_address,collection,taker,token_id}_{created,price,end_time} (column, sort, id).
    [OfferOrderBy.CREATED_AT]: { expression: 'o.created_at', sqlType: 'timestamptz', ledBy: ['tokenAddress', 'collectionId', 'ownerId', 'tokenId'] },
    [OfferOrderBy.PRICE]: { expression: 'o.price', sqlType: 'numeric', ledBy: ['collectionId', 'tokenId'] },
    [OfferOrderBy.END_TIME]: { expression: 'o.end_time', sqlType: 'timestamptz', ledBy: ['collectionId', 'tokenId'] },
  },
  relations: {
    // An item offer's asset (null for collection and trait offers, whose asset_id is null).
    asset: { kind: 'byId', type: 'Asset', table: 'assets', key: 'asset_id' },
    currency: currencyRelation((o) => `${o}.chain_id`),
  },
  // Its traits (trait offers) and the page of assets it can buy (Offer.assets).
  rest: {
    shape: [
      'id',
      'kind',
      'status',
      'quantity',
      'filled',
      'reserved',
      { field: 'traits', shape: ['traitType', 'value'] },
      'collectionId',
      { field: 'assets', of: 'Asset', page: true },
      'taker',
      'price',
      'currency',
      'startTime',
      'endTime',
      'assetId',
      'chainId',
      'tokenAddress',
      'tokenId',
      'signature',
      'createdAt',
      'updatedAt',
    ],
  },
  pagesOf: {
    // The offers that can buy the asset: its item offers and its collection's collection offers.
    'Asset.offers': assetOffersSql,
    // An account's, by its part in them: those it made as taker; those of others on the assets it owns now (item offers).
    'Account.offers': {
      arg: 'role',
      by: {
        [OfferRole.MADE]: (o, account) => `${o}.taker = ${account}.id`,
        [OfferRole.RECEIVED]: (o, account) => `${o}.asset_id IN (SELECT x.id FROM assets x WHERE x.owner = ${account}.id) AND ${o}.taker <> ${account}.id`,
      },
    },
  },
  count: {
    filters: ['status', 'kind', 'chainId', 'currency', 'minPrice', 'maxPrice'],
    sql: (s, args) => priceRangeCount(s, 'offers', (span) => offerCountSql(s, args, span), (row) => offerConditions(s, row, args), args),
  },
};

/** The conditions over an offer `row` of the counted filters of `args` but the price range (status, kind, chain, currency). */
function offerConditions(s: SqlScope, row: string, args: Record<string, unknown>): string[] {
  return [...(args.status != null ? [offerStatusIsSql(row, s.now(), args.status as string)] : []), ...groupConditions(s, row, args)];
}

/**
 * The count of the offers of the root list for `args` (status, kind, chain, currency) whose price is within
 * `span`, from its kept counts. The groups know the stored status and the sweeper's mark; an offer
 * stored active is counted expired from the moment it ends: the unmarked ones that ended by now (what the
 * sweeper has not reached yet, found by ix_offers_expiry_due) move from active to expired, and the marked
 * ones that end after now (none, unless the reader's clock is behind the sweeper's) move back.
 */
function offerCountSql(s: SqlScope, args: Record<string, unknown>, span: KeptSpan): string {
  const groups = groupConditions(s, 'k', args);
  const now = `${s.now()}::timestamptz`;
  const rows = (condition: string) => `(SELECT count(*) FROM offers oc WHERE ${[condition, ...groupConditions(s, 'oc', args), ...span.rows('oc')].join(' AND ')})`;
  const status = args.status as string | null | undefined;
  if (status !== OfferStatus.ACTIVE && status !== OfferStatus.EXPIRED) return countedSum('offers', status == null ? groups : [...groups, `k.status = ${s.p.add(status)}`], span);
  const endedUnmarked = rows(`oc.status = 'active' AND NOT oc.expiry_swept AND oc.end_time <= ${now}`);
  const markedOpen = rows(`oc.status = 'active' AND oc.expiry_swept AND oc.end_time > ${now}`);
  return status === OfferStatus.ACTIVE
    ? `(${countedSum('offers', [...groups, `k.status = 'active'`, 'NOT k.swept'], span)} - ${endedUnmarked} + ${markedOpen})`
    : `(${countedSum('offers', [...groups, `(k.status = 'expired' OR (k.status = 'active' AND k.swept))`], span)} + ${endedUnmarked} - ${markedOpen})`;
}
