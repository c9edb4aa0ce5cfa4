import { clock } from '../../src/common/clock';
import { randomAddress, TestServer } from '../setup/server';
import { CollectionRow, saveAsset, saveCollection } from './marketplace';
import { CREATE_OFFER, openWindow, Party, saveListing, saveOffer } from './market';

/** The values a rich market holds, for generated requests to ask about (so that their answers are not empty). */
export interface RichMarket {
  /** The owner of most collections (with their assets, listings and fees). */
  collectionOwner: string;
  owners: string[];
  contracts: string[];
  tokenIds: string[];
  collectionIds: string[];
  assetIds: string[];
  listingIds: string[];
  offerIds: string[];
  orderIds: string[];
  categoryIds: string[];
  traits: string[];
  eventIds: string[];
  /** A collection of BIG_COLLECTION assets with one trait carried by one asset: its rarity is below 1e-4. */
  big: CollectionRow;
  bigAsset: { tokenAddress: string; tokenId: string };
}

/** Assets of the big collection: a rarity of 1 / 10,002 is a float JavaScript and PostgreSQL spell differently. */
export const BIG_COLLECTION = 10_002;

const HOUR = 3600 * 1000;
const PALETTE = ['Blue', 'Red', 'Green'];

/**
 * A market over three chains, written through the API at `made` (the clock is set, then left there):
 * collections with categories, royalty fees, JSON descriptions and both statuses; assets with traits
 * (types with several values, numbers among them); listings of every kind and status (fixed price with
 * maker fees, dutch, english with and without an offer, cancelled, expired, sold); item, collection and
 * trait offers (active, cancelled, accepted); orders. Plus one collection of BIG_COLLECTION assets,
 * inserted by SQL (the API would take minutes).
 */
export async function saveRichMarket(server: TestServer, made: Date): Promise<RichMarket> {
  clock.set(made);
  const alice = await server.key();
  const bob = await server.key();
  const taker = await server.key();
  const buyer = await server.key();
  const addressOf = (p: Party) => p.address;
  const collections: CollectionRow[] = [];
  const assets: { id: string; tokenId: string; tokenAddress: string; owner: Party }[] = [];
  const listingIds: string[] = [];
  const offerIds: string[] = [];
  const orderIds: string[] = [];

  const collection = async (party: Party, overrides: Record<string, unknown>) => {
    const c = await saveCollection(server, party.key, overrides);
    collections.push(c);
    return c;
  };
  const asset = async (party: Party, c: CollectionRow, i: number, overrides: Record<string, unknown> = {}) => {
    const attributes = [
      { trait_type: 'Background', value: PALETTE[i % 3] },
      { trait_type: 'Eyes', value: i % 2 ? 'Laser' : 'Sleepy' },
      ...(i % 4 === 0 ? [{ trait_type: 'Level', value: i }] : []),
    ];
    const a = await saveAsset(server, party.key, c, party.address, { name: `${c.name} #${i}`, metadata: { attributes, n: i / 7, deep: { list: [i, null, 'x'] } }, ...overrides });
    const row = { ...a, owner: party };
    assets.push(row);
    return row;
  };

  const art = await collection(alice, {
    name: 'Art of Alice',
    chainId: '1',
    categoryId: 'art',
    totalSupply: 100,
    fees: [
      { address: randomAddress(), basisPoints: 250 },
      { address: randomAddress(), basisPoints: 75 },
    ],
    description: { text: 'Deep "json"', n: 12.5, big: 1e21, small: 5e-7, list: [1, 'two', null, { k: true }] },
    twitterUsername: 'alice',
    discordUrl: 'https://discord.example/a',
  });
  const poly = await collection(alice, { name: 'Polygon things', chainId: '137', description: 'plain text', imageUrl: 'https://example.com/p.png' });
  const bnb = await collection(bob, { name: 'BNB of Bob', chainId: '56', categoryId: 'gaming', fees: [{ address: randomAddress(), basisPoints: 500 }] });
  const empty = await collection(bob, { name: 'Empty of Bob', chainId: '1', categoryId: 'music' });
  await server.ds.query(`UPDATE collections SET status = 'verified' WHERE id = ANY($1)`, [[poly.id, empty.id]]);

  const artAssets = [];
  for (let i = 0; i < 9; i += 1) artAssets.push(await asset(alice, art, i));
  const polyAssets = [];
  for (let i = 0; i < 4; i += 1) polyAssets.push(await asset(alice, poly, i, i === 1 ? { animationUrl: 'https://example.com/a.mp4', externalLink: 'https://example.com/e' } : {}));
  const bnbAssets = [];
  for (let i = 0; i < 5; i += 1) bnbAssets.push(await asset(bob, bnb, i, i === 4 ? { tokenId: ((1n << 256n) - 1n).toString() } : {}));

  const list = async (a: (typeof assets)[number], overrides: Record<string, unknown> = {}) => {
    const l = await saveListing(server, a.owner.key, a.id, overrides);
    listingIds.push(l.id);
    return l;
  };
  const offer = async (party: Party, input: Record<string, unknown>) => {
    const res = await server.gql(CREATE_OFFER, { input: { price: 1, ...openWindow(), ...input } }, party.key);
    if (!res.body.data?.createOffer) throw new Error(`createOffer failed: ${JSON.stringify(res.body)}`);
    offerIds.push(res.body.data.createOffer.id);
    return res.body.data.createOffer as { id: string; status: string };
  };
  const cancelListing = (a: (typeof assets)[number]) =>
    server.gql(`mutation ($t: Address!, $i: TokenId!) { cancelListing(tokenAddress: $t, tokenId: $i) { id } }`, { t: a.tokenAddress, i: a.tokenId }, a.owner.key);

  // Listings of every kind and status on the art collection.
  await list(artAssets[0], { startPrice: '1.123456789012345678', makerFees: { [randomAddress()]: 150, [randomAddress()]: 25 } });
  await list(artAssets[1], { orderType: 'DUTCH_AUCTION', startPrice: '12345.678', acceptPrice: '0.000000000000000001', expirationTime: { durationSeconds: 86400 } });
  await list(artAssets[2], { orderType: 'ENGLISH_AUCTION', startPrice: 2 });
  await offer(taker, { assetId: artAssets[2].id, price: '3.000000000000000007' });
  await list(artAssets[3], { orderType: 'ENGLISH_AUCTION', startPrice: '7.5', acceptPrice: 100 });
  await list(artAssets[4], { startPrice: 9 });
  await cancelListing(artAssets[4]);
  clock.set(new Date(made.getTime() - 2 * HOUR));
  await list(artAssets[5], { startPrice: 3, expirationTime: { durationSeconds: 3600 } });
  clock.set(made);
  await list(artAssets[6], { startPrice: 4 });
  const bought = await saveOffer(server, buyer.key, artAssets[6].id, { price: 4 });
  offerIds.push(bought.id);
  // Prices in an ERC-20 currency: a listing in USDC, a collection offer in WBNB.
  await list(polyAssets[0], { startPrice: '0.5', currency: 'USDC' });
  await list(bnbAssets[1], { orderType: 'DUTCH_AUCTION', startPrice: 10, acceptPrice: 1, expirationTime: { durationSeconds: 7200 } });
  await list(bnbAssets[2], { startPrice: '99999999999999999999.999999999999999999' });

  // Offers: on items (one cancelled, one accepted into an order), on collections, on traits.
  const cancelled = await offer(taker, { assetId: artAssets[7].id, price: 2 });
  await server.gql(`mutation ($id: ID!) { cancelOffer(id: $id) { id } }`, { id: cancelled.id }, taker.key);
  const accepted = await offer(buyer, { assetId: polyAssets[2].id, price: '0.25' });
  const order = await server.gql(`mutation ($id: ID!) { acceptOffer(offerId: $id) { id } }`, { id: accepted.id }, alice.key);
  if (!order.body.data?.acceptOffer) throw new Error(`acceptOffer failed: ${JSON.stringify(order.body)}`);
  await offer(taker, { collectionId: art.id, price: '0.75', quantity: 3 });
  await offer(buyer, { collectionId: bnb.contractAddress, price: 1.5, currency: 'WBNB' });
  await offer(taker, { collectionId: art.id, price: '0.3', traits: [{ traitType: 'Background', value: 'Blue' }] });
  await offer(buyer, { collectionId: art.id, price: '0.2', traits: [{ traitType: 'Eyes', value: 'Laser' }, { traitType: 'Background', value: 'Red' }] });
  await offer(taker, { assetId: bnbAssets[0].id, price: 0.1 });

  // The big collection: its assets by SQL, then one asset with a trait no other carries.
  const big = await collection(bob, { name: 'Big of Bob', chainId: '1' });
  await server.ds.query(
    `INSERT INTO assets (collection_id, chain_id, token_address, token_id, name, description, image_url, metadata, owner)
     SELECT $1, '1', $2, n, 'Bulk #' || n, '', 'https://example.com/b.png', '{}'::jsonb, $3 FROM generate_series(1, $4::int) n`,
    [big.id, big.contractAddress, bob.address, BIG_COLLECTION - 1],
  );
  const bigAsset = await saveAsset(server, bob.key, big, bob.address, { name: 'The rare one', metadata: { attributes: [{ trait_type: 'Rare', value: 'Yes' }] } });

  const ids = collections.map((c) => c.id);
  const rows = (sql: string) => server.ds.query(sql, [ids]).then((r: { v: string }[]) => r.map((x) => x.v));
  const [owners, tokenIds, eventIds, orders] = await Promise.all([
    rows(`SELECT DISTINCT owner AS v FROM assets WHERE collection_id = ANY($1) AND name NOT LIKE 'Bulk #%'`),
    rows(`SELECT DISTINCT token_id::text AS v FROM assets WHERE collection_id = ANY($1) AND name NOT LIKE 'Bulk #%'`),
    rows(`SELECT position::text AS v FROM events WHERE collection_id = ANY($1) ORDER BY position LIMIT 40`),
    rows(`SELECT o.id::text AS v FROM orders o JOIN assets a ON a.id = o.asset_id WHERE a.collection_id = ANY($1)`),
  ]);
  orderIds.push(...orders);
  return {
    collectionOwner: alice.address,
    owners: [...owners, ...[alice, bob, taker, buyer].map(addressOf)],
    contracts: collections.map((c) => c.contractAddress),
    tokenIds: [...tokenIds, '1', '2', '5000'],
    collectionIds: collections.map((c) => c.id),
    assetIds: [...assets.map((a) => a.id), bigAsset.id],
    listingIds,
    offerIds,
    orderIds,
    categoryIds: ['art', 'gaming', 'music', 'pfps'],
    traits: ['Background:Blue', 'Background:Red', 'Eyes:Laser', 'Eyes:Sleepy', 'Level:4', 'Rare:Yes'],
    eventIds,
    big,
    bigAsset: { tokenAddress: bigAsset.tokenAddress, tokenId: bigAsset.tokenId },
  };
}
