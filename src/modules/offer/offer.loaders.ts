import DataLoader from 'dataloader';
import { DataSource } from 'typeorm';
import { byKey, observed, pagesByParent } from '../../common/batch';
import { clock } from '../../common/clock';
import { Page } from '../../common/pagination';
import { fetchPagesByParent, PageParent } from '../../common/list-page';
import { offersByIds } from './offer.sql';
import { assetOffersSql, OFFER_READ, offerStatusIsSql } from './offer.read';
import { sqlScope } from '../../common/read-model';
import { pagesOfParent, selectList } from '../../common/read-model-sql';
import { offerListQuery, OfferSource } from './offer.service';
import { NestedOfferArgs, Offer, OfferPageArgs, OfferRole, OfferStatus } from './offer.types';
import { isNativeSql } from '../currency/currency.entity';

/** The arguments of an account's offers: its part in them besides the list's own. */
export type AccountOfferPageArgs = NestedOfferArgs & { role: OfferRole };

type OfferPages<A> = DataLoader<{ parentId: string; args: A }, Page<Offer>, string>;

declare module '../../common/request/context' {
  interface Loaders {
    offerById: DataLoader<string, Offer | null>;
    /** Asset.offers: its item offers and its collection's collection offers. */
    offerPagesByAsset: OfferPages<NestedOfferArgs>;
    offerPagesByCollection: OfferPages<NestedOfferArgs>;
    /** Account.offers, by the account's address and its part in them (offer.read.ts `pagesOf`). */
    offerPagesByAccount: OfferPages<AccountOfferPageArgs>;
    /** Listing.offers: the bids of an english auction. */
    bidPagesByListing: OfferPages<OfferPageArgs>;
    /** Collection.topOffer. */
    topOfferByCollection: DataLoader<string, Offer | null>;
    /** Asset.topOffer. */
    topOfferByAsset: DataLoader<string, Offer | null>;
  }
}

/**
 * The bids of an english auction `bl`: the item offers on its asset made while it stood, from its creation
 * to its end (the close; or the sale, cancellation or expiry that was written, whichever came first).
 */
const BIDS: OfferSource = {
  from: 'offers o JOIN listings bl ON bl.asset_id = o.asset_id',
  where: [
    `bl.order_type = 'english_auction'`,
    `o.kind = 'item'`,
    `o.created_at >= bl.created_at`,
    `o.created_at < COALESCE(CASE WHEN bl.status = 'active' THEN bl.closing_date ELSE LEAST(bl.updated_at, bl.closing_date) END, 'infinity')`,
  ],
};

/** Pages of offers of many parents, one statement per batch (offerListQuery over `source`). */
function offerPages<A extends OfferPageArgs>(ds: DataSource, name: string, source: OfferSource, parent: (args: A) => PageParent & { sqlType: 'uuid' | 'text' }) {
  return pagesByParent<A, Page<Offer>>(name, (args, ids) => fetchPagesByParent<Offer>(ds, offerListQuery(args, sqlScope(), source), { ...parent(args), ids }));
}

/**
 * The best collection offer of each collection that could buy one of its assets now: active, its window
 * started, in the native currency (as the statistics), the highest price (the earliest of equal ones, as an auction's winning bid). One statement.
 */
async function topCollectionOffers(ds: DataSource, collectionIds: readonly string[]): Promise<Offer[]> {
  const s = sqlScope();
  const { p } = s;
  const now = s.now();
  return ds.query(
    `SELECT x.* FROM unnest(${p.add(collectionIds)}::uuid[]) AS c(id)
     CROSS JOIN LATERAL (SELECT ${selectList(OFFER_READ, s)} FROM offers o
       WHERE o.collection_id = c.id AND o.kind = 'collection' AND ${isNativeSql('o')} AND ${offerStatusIsSql('o', now, OfferStatus.ACTIVE)} AND o.start_time <= ${now}::timestamptz
       ORDER BY o.price DESC, o.created_at, o.id LIMIT 1) x`,
    p.values,
  );
}

/**
 * The best offer that could buy each asset now: its item offers, its collection's collection offers and
 * the trait offers whose traits it carries (every type the offer names, any of its values for a type);
 * active, its window started, not made by the asset's owner; the highest price, the earliest of equal ones.
 * One statement.
 */
async function topAssetOffers(ds: DataSource, assetIds: readonly string[]): Promise<Array<Offer & { forAssetId: string }>> {
  const s = sqlScope();
  const { p } = s;
  const now = s.now();
  const traitsCarried = `NOT EXISTS (SELECT 1 FROM jsonb_array_elements(o.traits) want(v) WHERE NOT EXISTS (
       SELECT 1 FROM asset_traits at JOIN jsonb_array_elements(o.traits) alt(v) ON alt.v->>'trait_type' = at.trait_type AND alt.v->>'value' = at.value
       WHERE at.asset_id = a.id AND at.trait_type = want.v->>'trait_type'))`;
  return ds.query(
    `SELECT x.*, a.id AS "forAssetId" FROM assets a
     CROSS JOIN LATERAL (SELECT ${selectList(OFFER_READ, s)} FROM offers o
       WHERE (${assetOffersSql('o', 'a')} OR (o.kind = 'trait' AND o.collection_id = a.collection_id AND ${traitsCarried}))
         AND ${offerStatusIsSql('o', now, OfferStatus.ACTIVE)} AND o.start_time <= ${now}::timestamptz AND o.taker <> a.owner
       ORDER BY o.price DESC, o.created_at, o.id LIMIT 1) x
     WHERE a.id = ANY(${p.add(assetIds)}::uuid[])`,
    p.values,
  );
}

export function createOfferLoaders(ds: DataSource) {
  const offers: OfferSource = { from: 'offers o', where: [] };
  return {
    offerById: new DataLoader<string, Offer | null>(observed('offerById', async (ids) => byKey(ids, await offersByIds(ds, ids, clock.now()), (o) => o.id))),
    offerPagesByAsset: offerPages<NestedOfferArgs>(
      ds,
      'offerPagesByAsset',
      { from: `offers o JOIN assets pa ON ${assetOffersSql('o', 'pa')}`, where: [] },
      () => ({ column: 'pa.id', sqlType: 'uuid' }),
    ),
    offerPagesByCollection: offerPages<NestedOfferArgs>(ds, 'offerPagesByCollection', offers, () => ({ column: 'o.collection_id', sqlType: 'uuid' })),
    offerPagesByAccount: offerPages<AccountOfferPageArgs>(ds, 'offerPagesByAccount', offers, (args) => ({
      ...pagesOfParent(OFFER_READ, 'Account.offers', args),
      sqlType: 'text',
    })),
    bidPagesByListing: offerPages<OfferPageArgs>(ds, 'bidPagesByListing', BIDS, () => ({ column: 'bl.id', sqlType: 'uuid' })),
    topOfferByCollection: new DataLoader<string, Offer | null>(
      observed('topOfferByCollection', async (ids) => byKey(ids, await topCollectionOffers(ds, ids), (o) => o.collectionId)),
    ),
    topOfferByAsset: new DataLoader<string, Offer | null>(
      observed('topOfferByAsset', async (ids) => byKey(ids, await topAssetOffers(ds, ids), (o) => o.forAssetId)),
    ),
  };
}
