import { DataSource } from 'typeorm';
import { randomAddress } from '../setup/server';

/** The accounts of a bulk market: `owner` owns every collection and asset, bought from `previous`; `bidder` bids. */
export interface BulkMarket {
  owner: string;
  previous: string;
  bidder: string;
}

/**
 * `count` collections of one new owner, written straight to the database (through the API a market of
 * 50 collections takes hundreds of requests), for counting the statements of a request over many parents.
 * Each collection has one asset, which `owner` bought from `previous` through a fixed-price listing (a
 * sold listing, an accepted item offer, a completed order) and now sells by an active english auction
 * with one bid of `bidder`, who also makes a collection offer.
 */
export async function saveBulkMarket(ds: DataSource, count: number): Promise<BulkMarket> {
  const market = { owner: randomAddress(), previous: randomAddress(), bidder: randomAddress() };
  const contracts = Array.from({ length: count }, () => randomAddress());
  await ds.transaction(async (m) => {
    await m.query(
      `INSERT INTO collections (chain_id, contract_address, owner, name, slug)
       SELECT '1', c.address, $2, 'Bulk ' || c.i, 'bulk-' || substr(c.address, 3, 12) || '-' || c.i
       FROM unnest($1::varchar[]) WITH ORDINALITY AS c(address, i)`,
      [contracts, market.owner],
    );
    await m.query(
      `INSERT INTO assets (collection_id, chain_id, token_address, token_id, name, description, image_url, metadata, owner)
       SELECT c.id, c.chain_id, c.contract_address, 1, c.name || ' #1', 'A bulk asset', 'https://example.com/a.png', '{}'::jsonb, c.owner
       FROM collections c WHERE c.owner = $1`,
      [market.owner],
    );
    const assets = `FROM assets a WHERE a.owner = $1`;
    await m.query(
      `INSERT INTO listings (asset_id, collection_id, seller, order_type, start_price, accept_price, listing_time, status, created_at, updated_at)
       SELECT a.id, a.collection_id, $2, 'fixed_price', 1, 1, now() - interval '3 hours', 'sold', now() - interval '3 hours', now() - interval '2 hours' ${assets}`,
      [market.owner, market.previous],
    );
    await m.query(
      `INSERT INTO listings (asset_id, collection_id, seller, order_type, start_price, listing_time, closing_date, created_at, updated_at)
       SELECT a.id, a.collection_id, a.owner, 'english_auction', 1, now() - interval '1 hour', now() + interval '1 day',
         now() - interval '1 hour', now() - interval '1 hour' ${assets}`,
      [market.owner],
    );
    await m.query(
      `INSERT INTO offers (kind, asset_id, collection_id, chain_id, token_address, token_id, taker, price, start_time, end_time, status, filled, created_at, updated_at)
       SELECT 'item', a.id, a.collection_id, a.chain_id, a.token_address, a.token_id, $1, 1, now() - interval '3 hours', now() + interval '1 day',
         'accepted', 1, now() - interval '2 hours', now() - interval '2 hours' ${assets}
       UNION ALL
       SELECT 'item', a.id, a.collection_id, a.chain_id, a.token_address, a.token_id, $2, 2, now() - interval '30 minutes', now() + interval '1 day',
         'active', 0, now() - interval '30 minutes', now() - interval '30 minutes' ${assets}
       UNION ALL
       SELECT 'collection', NULL, a.collection_id, a.chain_id, a.token_address, NULL, $2, 3, now() - interval '30 minutes', now() + interval '1 day',
         'active', 0, now() - interval '30 minutes', now() - interval '30 minutes' ${assets}`,
      [market.owner, market.bidder],
    );
    await m.query(
      `INSERT INTO orders (offer_id, listing_id, asset_id, collection_id, chain_id, token_address, token_id, price, seller, buyer, status, created_at, updated_at)
       SELECT o.id, l.id, a.id, a.collection_id, a.chain_id, a.token_address, a.token_id, 1, l.seller, o.taker, 'completed',
         now() - interval '2 hours', now() - interval '2 hours'
       FROM assets a JOIN offers o ON o.asset_id = a.id AND o.status = 'accepted' JOIN listings l ON l.asset_id = a.id AND l.status = 'sold'
       WHERE a.owner = $1`,
      [market.owner],
    );
  });
  return market;
}

/**
 * `count` assets (token ids 1..count) of `owner` in the collection, written straight to the database: a
 * bulk listing of 100 assets would otherwise first take 100 requests.
 */
export async function saveAssetsOf(ds: DataSource, collection: { id: string; chainId: string; contractAddress: string }, owner: string, count: number) {
  const rows: { id: string; tokenId: string }[] = await ds.query(
    `INSERT INTO assets (collection_id, chain_id, token_address, token_id, name, description, image_url, metadata, owner)
     SELECT $1, $2, $3, n, 'Bulk #' || n, 'A bulk asset', 'https://example.com/a.png', '{}'::jsonb, $4 FROM generate_series(1, $5::int) n
     RETURNING id, token_id::text AS "tokenId"`,
    [collection.id, collection.chainId, collection.contractAddress, owner, count],
  );
  return rows.sort((a, b) => Number(a.tokenId) - Number(b.tokenId)).map((r) => ({ ...r, tokenAddress: collection.contractAddress }));
}

/**
 * A plan test's market, written straight to the database: `collections` collections (ids md5('c' || n)) and
 * `assets` assets named `Asset <n>` (ids md5('a' || n), token id n, in collection 1 + n % collections), owned by
 * `holders` holders in turn, listed where `listedWhen` (SQL over the asset's number `i`) holds.
 */
export async function saveNumberedAssets(ds: DataSource, o: { collections: number; assets: number; holders: number; listedWhen: string }): Promise<void> {
  await ds.query(
    `INSERT INTO collections (id, chain_id, contract_address, owner, name, slug)
     SELECT md5('c' || i)::uuid, '1', '0x' || substr(md5('contract' || i) || md5('x' || i), 1, 40), '0x' || substr(md5('owner') || md5('x'), 1, 40),
       'Collection ' || i, 'collection-' || i FROM generate_series(1, $1::int) i`,
    [o.collections],
  );
  await ds.query(
    `INSERT INTO assets (id, collection_id, chain_id, token_address, token_id, name, description, image_url, metadata, owner, status)
     SELECT md5('a' || i)::uuid, md5('c' || (1 + i % $1::int))::uuid, '1', '0x' || substr(md5('contract' || (1 + i % $1::int)) || md5('x' || (1 + i % $1::int)), 1, 40),
       i, 'Asset ' || i, 'An asset', 'https://img.example/a.png', '{}'::jsonb, '0x' || substr(md5('holder' || i % $3::int) || md5('y'), 1, 40),
       CASE WHEN ${o.listedWhen} THEN 'listed' ELSE 'unlisted' END
     FROM generate_series(1, $2::int) i`,
    [o.collections, o.assets, o.holders],
  );
}
