import { clock } from '../../src/common/clock';
import { TestServer } from '../setup/server';
import { CollectionRow, saveAsset, saveCollection } from './marketplace';

export const CREATE_LISTING = /* GraphQL */ `
  mutation ($input: CreateListingInput!) {
    createListing(input: $input) {
      id status orderType startPrice acceptPrice currentPrice listingTime closingDate seller
    }
  }`;

export const CREATE_OFFER = /* GraphQL */ `
  mutation ($input: CreateOfferInput!) {
    createOffer(input: $input) { id status price taker startTime endTime }
  }`;

export const ACCEPT_OFFER = /* GraphQL */ `
  mutation ($offerId: ID!) {
    acceptOffer(offerId: $offerId) { id status price seller buyer offer { id status } }
  }`;

export interface Party {
  key: string;
  address: string;
}

export interface OwnedAsset {
  owner: Party;
  collection: CollectionRow;
  asset: { id: string; tokenId: string; tokenAddress: string; name: string };
}

export interface OfferRow {
  id: string;
  status: string;
  price: number;
  taker: string;
}

const HOUR = 3600 * 1000;

/** An offer window that has started and runs for a day, around the server's clock. */
export function openWindow(now: Date = clock.now()): { startTime: string; endTime: string } {
  return { startTime: new Date(now.getTime() - 60 * 1000).toISOString(), endTime: new Date(now.getTime() + 24 * HOUR).toISOString() };
}

/** A fresh account owning a fresh asset in its own collection (`royalties`: the collection's fees). */
export async function saveOwnedAsset(server: TestServer, royalties: { address: string; basisPoints: number }[] = []): Promise<OwnedAsset> {
  const owner = await server.key();
  const collection = await saveCollection(server, owner.key, royalties.length ? { fees: royalties } : {});
  const asset = await saveAsset(server, owner.key, collection, owner.address);
  return { owner, collection, asset };
}

/** Another asset of the same owner in the same collection. */
export async function saveSiblingAsset(server: TestServer, owned: OwnedAsset): Promise<OwnedAsset> {
  const asset = await saveAsset(server, owned.owner.key, owned.collection, owned.owner.address);
  return { ...owned, asset };
}

/** A listing through GraphQL; a fixed price of 5 unless overridden. */
export async function saveListing(server: TestServer, key: string, assetId: string, overrides: Record<string, unknown> = {}) {
  const res = await server.gql(CREATE_LISTING, { input: { assetId, startPrice: 5, ...overrides } }, key);
  if (!res.body.data?.createListing) throw new Error(`createListing failed: ${JSON.stringify(res.body)}`);
  return res.body.data.createListing as { id: string; status: string; currentPrice: number; closingDate: string | null };
}

/** An offer through GraphQL by the key's account; price 1 and an open window unless overridden. */
export async function saveOffer(server: TestServer, key: string, assetId: string, overrides: Record<string, unknown> = {}): Promise<OfferRow> {
  const res = await server.gql(CREATE_OFFER, { input: { assetId, price: 1, ...openWindow(), ...overrides } }, key);
  if (!res.body.data?.createOffer) throw new Error(`createOffer failed: ${JSON.stringify(res.body)}`);
  return res.body.data.createOffer;
}

/** An offer accepted by the asset's owner, through GraphQL; returns the order id. */
export async function saveAcceptedOffer(server: TestServer, owned: OwnedAsset, taker: Party, price = 1): Promise<{ offerId: string; orderId: string }> {
  const offer = await saveOffer(server, taker.key, owned.asset.id, { price });
  const res = await server.gql(ACCEPT_OFFER, { offerId: offer.id }, owned.owner.key);
  if (!res.body.data?.acceptOffer) throw new Error(`acceptOffer failed: ${JSON.stringify(res.body)}`);
  return { offerId: offer.id, orderId: res.body.data.acceptOffer.id };
}

/** What the database holds about one asset's market: compared before and after a refused request. */
export async function marketSnapshot(server: TestServer, assetId: string) {
  const [asset] = await server.ds.query('SELECT owner, status, updated_at FROM assets WHERE id = $1', [assetId]);
  const listings = await server.ds.query(
    `SELECT id, status, order_type, start_price::text, accept_price::text, listing_time, closing_date, maker_fees, updated_at
     FROM listings WHERE asset_id = $1 ORDER BY id`,
    [assetId],
  );
  const offers = await server.ds.query(
    'SELECT id, status, taker, price::text, start_time, end_time, updated_at FROM offers WHERE asset_id = $1 ORDER BY id',
    [assetId],
  );
  const orders = await server.ds.query('SELECT id, offer_id, seller, buyer, price::text FROM orders WHERE asset_id = $1 ORDER BY id', [assetId]);
  return { asset, listings, offers, orders };
}
