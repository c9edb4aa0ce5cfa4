import { DataSource } from 'typeorm';

export interface Scale {
  collections: number;
  assetsPerCollection: number;
  offers: number;
  orders: number;
}

export const DEFAULT_SCALE: Scale = { collections: 1000, assetsPerCollection: 100, offers: 50_000, orders: 10_000 };

/** A deterministic address from a label: the same data set on every run and both databases. */
const address = (label: string) => `'0x' || substr(md5(${label}) || md5('x' || ${label}), 1, 40)`;

/**
 * Loads the benchmark's data set with a few set-based statements (no API calls): collections, their
 * assets, listings on a third of the assets, active offers, and completed orders spread over 30 days.
 */
export async function loadDataset(ds: DataSource, scale: Scale, log: (line: string) => void): Promise<void> {
  const started = Date.now();
  const step = async (what: string, sql: string, params: unknown[] = []) => {
    const t = Date.now();
    await ds.query(sql, params);
    log(`  ${what} (${((Date.now() - t) / 1000).toFixed(1)} s)`);
  };
  await step(
    `${scale.collections} collections`,
    `INSERT INTO collections (id, chain_id, contract_address, owner, category_id, name, slug, fees, created_at, updated_at)
     SELECT md5('c' || i)::uuid, (ARRAY['1','137','8453','10'])[1 + i % 4], ${address("'contract' || i")},
       ${address("'owner' || (i % 50)")}, (ARRAY['art','gaming','pfps','music'])[1 + i % 4], 'Collection ' || i, 'collection-' || i,
       '[{"address":"0x1111111111111111111111111111111111111111","basisPoints":250}]'::jsonb,
       now() - make_interval(mins => i), now()
     FROM generate_series(1, $1::int) i`,
    [scale.collections],
  );
  await step(
    `${scale.collections * scale.assetsPerCollection} assets`,
    `INSERT INTO assets (id, collection_id, chain_id, token_address, token_id, name, description, image_url, metadata, owner, status, created_at, updated_at)
     SELECT md5('a' || c.i || '-' || t)::uuid, md5('c' || c.i)::uuid, (ARRAY['1','137','8453','10'])[1 + c.i % 4],
       ${address("'contract' || c.i")}, t, 'Asset ' || c.i || '/' || t, 'Token ' || t || ' of collection ' || c.i,
       'https://img.example/' || c.i || '/' || t || '.png', jsonb_build_object('rarity', t % 7),
       ${address("'holder' || ((c.i * 31 + t) % 5000)")}, CASE WHEN t % 3 = 0 THEN 'listed' ELSE 'unlisted' END,
       now() - make_interval(secs => c.i * 100 + t), now()
     FROM generate_series(1, $1::int) c(i) CROSS JOIN generate_series(1, $2::int) t`,
    [scale.collections, scale.assetsPerCollection],
  );
  await step(
    'listings on a third of the assets',
    `INSERT INTO listings (asset_id, collection_id, seller, order_type, start_price, accept_price, listing_time)
     SELECT a.id, a.collection_id, a.owner, 'fixed_price', (a.token_id % 50 + 1) / 10.0, (a.token_id % 50 + 1) / 10.0, now() - interval '1 day'
     FROM assets a WHERE a.token_id % 3 = 0`,
  );
  await step(
    `${scale.offers} offers`,
    `INSERT INTO offers (id, asset_id, collection_id, chain_id, token_address, token_id, taker, price, start_time, end_time)
     SELECT md5('o' || k)::uuid, a.id, a.collection_id, a.chain_id, a.token_address, a.token_id, ${address("'taker' || (k % 1000)")},
       (k % 40 + 1) / 20.0, now() - interval '1 day', now() + interval '30 days'
     FROM generate_series(1, $1::int) k
     JOIN assets a ON a.id = md5('a' || (1 + k % $2::int) || '-' || (1 + (k / $2::int) % $3::int))::uuid`,
    [scale.offers, scale.collections, scale.assetsPerCollection],
  );
  await step(
    `${scale.orders} completed orders`,
    `WITH sold AS (
       UPDATE offers SET status = 'accepted' WHERE id IN (SELECT md5('o' || k)::uuid FROM generate_series(1, $1::int) k)
       RETURNING id, asset_id, collection_id, chain_id, token_address, token_id, taker, price)
     INSERT INTO orders (offer_id, asset_id, collection_id, chain_id, token_address, token_id, price, seller, buyer, created_at, updated_at)
     SELECT s.id, s.asset_id, s.collection_id, s.chain_id, s.token_address, s.token_id, s.price,
       ${address("'seller' || s.token_id")}, s.taker, now() - make_interval(hours => (abs(hashtext(s.id::text)) % 720)),
       now()
     FROM sold s`,
    [scale.orders],
  );
  // A settled database: index-only scans need the visibility map, which autovacuum sets within minutes of
  // a load; VACUUM sets it now, so a run does not depend on when autovacuum came by.
  await step('VACUUM ANALYZE', 'VACUUM ANALYZE');
  log(`  loaded in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
