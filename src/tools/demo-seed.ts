import { DataSource } from 'typeorm';
import { createContext } from '../app/context';
import { ApiKeyRole, Caller, Context, DEFAULT_POLICY } from '../common/request/context';
import { createApiKey } from '../modules/apikey/api-key.service';
import { createAsset } from '../modules/asset/asset.service';
import { createCollection } from '../modules/collection/collection.service';
import { createListing } from '../modules/listing/listing.service';
import { ListingOrderType } from '../modules/listing/listing.types';
import { acceptOffer, createOffer } from '../modules/offer/offer.service';
import { buyListing } from '../modules/trade/trade.service';

export const DEMO_ADMIN_ADDRESS = '0x00000000000000000000000000000000000d3a00';
const DEMO_OWNER = '0x1111111111111111111111111111111111111111';
const DEMO_BUYER = '0x3333333333333333333333333333333333333333';

const demoCollections = [
  { chain: '1', address: '0xb47e3cd837ddf8e4c57f05d70ab865de6e193bbb', name: 'Crypto Critters', category: 'pfps', supply: 10000, royalty: 250 },
  { chain: '137', address: '0x2953399124f0cbb46d2cbacd8a89cf0599974963', name: 'Polygon Pixels', category: 'art', supply: null, royalty: 500 },
  { chain: '8453', address: '0x4200000000000000000000000000000000000abc', name: 'Base Badges', category: 'memberships', supply: 500, royalty: 0 },
];
const BACKGROUNDS = ['blue', 'gold', 'green', 'blue', 'purple'];

/** A week from now: the demo's offers stay open that long. */
const openWindow = () => ({ startTime: new Date(Date.now() - 60_000), endTime: new Date(Date.now() + 7 * 24 * 3600_000) });

/**
 * On an empty embedded database, a small market so that Sandbox and the REST examples answer with
 * something: three collections of five assets with traits, a market on the first one (a fixed-price, a
 * dutch and an english listing with bids, open offers, a sale by an accepted offer and a sale by buy-now),
 * and a development admin key (returned once). Everything is written through the services the API's
 * writes use, as the accounts of the demo, so the demo has what real writes leave: traits and trait
 * floors, histories, the change feed's events (and a subscription's replay), statistics and charts.
 * Lists show the newest first: the market's collection is written last and its latest tokens are listed,
 * so the README's tour (two collections, two assets each) shows listing prices.
 */
export async function seedDemoIfEmpty(ds: DataSource): Promise<{ key: string } | null> {
  const [{ count }]: { count: string }[] = await ds.query('SELECT count(*) FROM collections');
  if (Number(count) > 0) return null;
  const as = (address: string, role = ApiKeyRole.USER): Context =>
    createContext(ds, { requestId: 'demo-seed', sqlStatements: 0 }, undefined, {
      actingAs: { address, role, keyId: 'demo-seed' } satisfies Caller,
      policy: DEFAULT_POLICY,
    });
  const owner = as(DEMO_OWNER);
  const admin = as(DEMO_ADMIN_ADDRESS, ApiKeyRole.ADMIN);
  const buyer = as(DEMO_BUYER);
  const marketAssets = new Map<string, string>();
  for (const [i, c] of [...demoCollections.entries()].reverse()) {
    await createCollection(owner, {
      chainId: c.chain,
      contractAddress: c.address,
      totalSupply: c.supply,
      categoryId: c.category,
      name: c.name,
      description: { text: `${c.name}: demo collection` },
      imageUrl: `https://example.com/demo/${i}.png`,
      fees: c.royalty ? [{ address: DEMO_OWNER, basisPoints: c.royalty }] : [],
    });
    for (let t = 1; t <= 5; t += 1) {
      const asset = await createAsset(admin, {
        collectionId: c.address,
        chainId: c.chain,
        tokenAddress: c.address,
        tokenId: String(t),
        name: `${c.name} #${t}`,
        description: `Token ${t} of ${c.name}`,
        imageUrl: `https://example.com/demo/${i}/${t}.png`,
        metadata: {
          attributes: [
            { trait_type: 'rarity', value: t === 1 ? 'rare' : 'common' },
            { trait_type: 'background', value: BACKGROUNDS[t - 1] },
          ],
        },
        owner: t % 2 ? DEMO_OWNER : DEMO_ADMIN_ADDRESS,
      });
      if (i === 0) marketAssets.set(String(t), asset.id);
    }
  }
  await seedMarket({ owner, admin, buyer }, demoCollections[0], marketAssets);
  const { key } = await ds.transaction((m) => createApiKey(m, { address: DEMO_ADMIN_ADDRESS, role: ApiKeyRole.ADMIN, label: 'development key (demo data)' }));
  return { key };
}

/** The market of the first demo collection: listings, bids and offers, and two sales, made as its accounts would make them. */
async function seedMarket(
  as: Record<'owner' | 'admin' | 'buyer', Context>,
  collection: (typeof demoCollections)[number],
  assetIds: Map<string, string>,
): Promise<void> {
  const token = (tokenId: string) => ({ tokenAddress: collection.address, tokenId, chainId: collection.chain });
  const offer = (ctx: Context, tokenId: string, price: string) => createOffer(ctx, { assetId: assetIds.get(tokenId), price, ...openWindow() });

  // A sale by buy-now: the admin account lists token 4 and the buyer buys it.
  const sold = await createListing(as.admin, { ...token('4'), orderType: ListingOrderType.FIXED_PRICE, startPrice: '2', acceptPrice: '2' });
  await buyListing(as.buyer, sold.id, null);
  // A sale by an accepted offer: the buyer's offer on token 2, accepted by its owner.
  const accepted = await offer(as.buyer, '2', '2.25');
  await acceptOffer(as.admin, accepted.id);
  // The open market: a fixed-price, an english and a dutch listing, with offers and bids.
  await createListing(as.owner, { ...token('1'), orderType: ListingOrderType.FIXED_PRICE, startPrice: '1.5', acceptPrice: '1.5' });
  await createListing(as.owner, { ...token('3'), orderType: ListingOrderType.ENGLISH_AUCTION, startPrice: '0.5', expirationTime: { durationSeconds: 48 * 3600 } });
  await createListing(as.owner, {
    ...token('5'),
    orderType: ListingOrderType.DUTCH_AUCTION,
    startPrice: '3',
    acceptPrice: '1',
    expirationTime: { durationSeconds: 23 * 3600 },
  });
  await offer(as.admin, '1', '1.2');
  await offer(as.admin, '3', '0.8');
  await offer(as.buyer, '3', '0.9');
}
