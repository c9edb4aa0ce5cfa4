import { DataSource } from 'typeorm';
import { randomAddress } from '../setup/server';

/**
 * A sale in the past, written straight to the database: an accepted offer and its order at `at`.
 * (Orders are never created by clients, and the API stamps them with the present.)
 */
export async function saveOrderAt(
  ds: DataSource,
  assetId: string,
  price: string,
  at: Date,
  options: { status?: 'completed' | 'pending' | 'failed'; seller?: string; buyer?: string } = {},
): Promise<string> {
  const buyer = options.buyer ?? randomAddress();
  const [row]: { id: string }[] = await ds.query(
    `WITH a AS (SELECT id, collection_id, chain_id, token_address, token_id, owner FROM assets WHERE id = $1),
     offer AS (
       INSERT INTO offers (asset_id, collection_id, chain_id, token_address, token_id, taker, price, start_time, end_time, status, created_at, updated_at)
       SELECT a.id, a.collection_id, a.chain_id, a.token_address, a.token_id, $2, $3, $4::timestamptz - interval '1 hour', $4::timestamptz + interval '1 hour',
         'accepted', $4, $4
       FROM a RETURNING id)
     INSERT INTO orders (offer_id, asset_id, collection_id, chain_id, token_address, token_id, price, seller, buyer, status, created_at, updated_at)
     SELECT offer.id, a.id, a.collection_id, a.chain_id, a.token_address, a.token_id, $3, COALESCE($5, a.owner), $2, $6, $4, $4
     FROM a, offer RETURNING id`,
    [assetId, buyer, price, at, options.seller ?? null, options.status ?? 'completed'],
  );
  if (!row) throw new Error(`saveOrderAt: no asset ${assetId}`);
  return row.id;
}

/** Gives an asset another owner (a holder other than the collection's creator). */
export async function setAssetOwner(ds: DataSource, assetId: string, owner: string): Promise<void> {
  await ds.query('UPDATE assets SET owner = $2 WHERE id = $1', [assetId, owner]);
}
