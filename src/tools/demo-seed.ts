import { DataSource, EntityManager } from 'typeorm';
import { ApiKeyRole } from '../modules/apikey/api-key.entity';
import { createApiKey } from '../modules/apikey/api-key.service';
import { slugify } from '../modules/collection/collection.service';

export const DEMO_ADMIN_ADDRESS = '0x00000000000000000000000000000000000d3a00';
const DEMO_OWNER = '0x1111111111111111111111111111111111111111';
const DEMO_BUYER = '0x3333333333333333333333333333333333333333';

const demoCollections = [
  { chain: '1', address: '0xb47e3cd837ddf8e4c57f05d70ab865de6e193bbb', name: 'Crypto Critters', category: 'pfps', supply: 10000, royalty: 250 },
  { chain: '137', address: '0x2953399124f0cbb46d2cbacd8a89cf0599974963', name: 'Polygon Pixels', category: 'art', supply: null, royalty: 500 },
  { chain: '8453', address: '0x4200000000000000000000000000000000000abc', name: 'Base Badges', category: 'memberships', supply: 500, royalty: 0 },
];

/**
 * On an empty embedded database, a small data set so that Sandbox and the REST examples answer with
 * something: three collections with a few assets each, a market on the first one (a fixed-price, a
 * dutch and an english listing, open offers, a completed sale), and a development admin key (returned once).
 * Lists show the newest first: the market's collection is the newest and its latest tokens are listed, so
 * the README's tour (two collections, two assets each) shows listing prices.
 */
export async function seedDemoIfEmpty(ds: DataSource): Promise<{ key: string } | null> {
  const [{ count }]: { count: string }[] = await ds.query('SELECT count(*) FROM collections');
  if (Number(count) > 0) return null;
  return ds.transaction(async (m) => {
    for (const [i, c] of demoCollections.entries()) {
      const [{ id }]: { id: string }[] = await m.query(
        `INSERT INTO collections (chain_id, contract_address, owner, total_supply, category_id, name, slug, description, image_url, fees,
           created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10::jsonb, now() - make_interval(hours => 4, mins => $11),
           now() - make_interval(hours => 4, mins => $11)) RETURNING id`,
        [
          c.chain,
          c.address,
          DEMO_OWNER,
          c.supply,
          c.category,
          c.name,
          slugify(c.name),
          JSON.stringify({ text: `${c.name}: demo collection` }),
          `https://example.com/demo/${i}.png`,
          JSON.stringify(c.royalty ? [{ address: DEMO_OWNER, basisPoints: c.royalty }] : []),
          i,
        ],
      );
      for (let t = 1; t <= 5; t += 1) {
        await m.query(
          `INSERT INTO assets (collection_id, chain_id, token_address, token_id, name, description, image_url, metadata, owner,
             created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, now() - make_interval(hours => 3, mins => -$10::int),
             now() - make_interval(hours => 3, mins => -$10::int))`,
          [
            id,
            c.chain,
            c.address,
            t,
            `${c.name} #${t}`,
            `Token ${t} of ${c.name}`,
            `https://example.com/demo/${i}/${t}.png`,
            JSON.stringify({ attributes: [{ trait_type: 'rarity', value: t === 1 ? 'rare' : 'common' }] }),
            t % 2 ? DEMO_OWNER : DEMO_ADMIN_ADDRESS,
            t,
          ],
        );
      }
    }
    await seedMarket(m, demoCollections[0].address);
    const { key } = await createApiKey(m, { address: DEMO_ADMIN_ADDRESS, role: ApiKeyRole.ADMIN, label: 'development key (demo data)' });
    return { key };
  });
}

/** Listings, offers and one completed order on the first demo collection, written as the API would leave them. */
async function seedMarket(m: EntityManager, contract: string): Promise<void> {
  const assets: { id: string; token_id: string; collection_id: string; chain_id: string }[] = await m.query(
    'SELECT id, token_id::text, collection_id, chain_id FROM assets WHERE token_address = $1 ORDER BY token_id',
    [contract],
  );
  const byToken = new Map(assets.map((a) => [a.token_id, a]));
  const listing = (token: string, type: string, start: string, accept: string | null, hours: number | null) =>
    m.query(
      `INSERT INTO listings (asset_id, collection_id, seller, order_type, start_price, accept_price, listing_time, closing_date)
       VALUES ($1, $2, $3, $4, $5, $6, now() - interval '1 hour', CASE WHEN $7::int IS NULL THEN NULL ELSE now() + make_interval(hours => $7::int) END)`,
      [byToken.get(token)!.id, byToken.get(token)!.collection_id, DEMO_OWNER, type, start, accept, hours],
    );
  await listing('1', 'fixed_price', '1.5', '1.5', null);
  await listing('3', 'english_auction', '0.5', null, 48);
  await listing('5', 'dutch_auction', '3', '1', 23);
  await m.query(`UPDATE assets SET status = 'listed' WHERE token_address = $1 AND token_id IN (1, 3, 5)`, [contract]);
  const offer = (token: string, taker: string, price: string, status = 'active') =>
    m.query(
      `INSERT INTO offers (asset_id, collection_id, chain_id, token_address, token_id, taker, price, start_time, end_time, status)
       VALUES ($1, $2, $3, $4, $5::numeric, $6, $7, now() - interval '2 hours', now() + interval '7 days', $8) RETURNING id`,
      [byToken.get(token)!.id, byToken.get(token)!.collection_id, byToken.get(token)!.chain_id, contract, token, taker, price, status],
    );
  await offer('1', DEMO_ADMIN_ADDRESS, '1.2');
  await offer('3', DEMO_ADMIN_ADDRESS, '0.8');
  await offer('3', DEMO_BUYER, '0.9');
  // A sale already made: the buyer's offer on token 2 was accepted by its owner an hour ago.
  const [{ id: acceptedOffer }] = await offer('2', DEMO_BUYER, '2.25', 'accepted');
  const sold = byToken.get('2')!;
  await m.query(
    `INSERT INTO orders (offer_id, asset_id, collection_id, chain_id, token_address, token_id, price, seller, buyer, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, 2, 2.25, $6, $7, now() - interval '1 hour', now() - interval '1 hour')`,
    [acceptedOffer, sold.id, sold.collection_id, sold.chain_id, contract, DEMO_ADMIN_ADDRESS, DEMO_BUYER],
  );
  await m.query('UPDATE assets SET owner = $2 WHERE id = $1', [sold.id, DEMO_BUYER]);
}
