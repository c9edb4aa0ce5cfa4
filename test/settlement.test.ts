import { applyChainStep, rollBackChain } from '../src/modules/chain/chain.transfers';
import { withEvents } from '../src/modules/event/event.log';
import { lockAsset } from '../src/modules/listing/auction';
import { failOverdueSettlements } from '../src/modules/order/settlement';
import { saveListing, saveOffer, saveOwnedAsset, saveSiblingAsset } from './factories/market';
import { freshDatabase } from './setup/global-setup';
import { startServer, TestServer } from './setup/server';
import { HOUR, later } from './setup/time';

/**
 * Settlement on chain (SETTLEMENT=chain, docs/chain.md "Settlement on chain"), as the API shows it without
 * a chain: a sale writes a pending order, holds the asset until its deadline, and fails at it. The
 * completion by a transfer is test/chain-settlement.test.ts's. Both databases.
 */
let api: TestServer;
let db: { url: string; drop: () => Promise<void> };

beforeAll(async () => {
  // On PostgreSQL a database of its own. On the embedded database (one per run: a worker cannot start
  // another) the shared one: so the tests never sweep ahead of time, which would expire or settle (as
  // pending orders, in this process's mode) the listings and auctions of other test files; they move only
  // their own rows' time.
  db = process.env.DATABASE_URL ? await freshDatabase('gw_settlement') : { url: process.env.TEST_DATABASE_URL!, drop: async () => {} };
  api = await startServer({ settlement: { mode: 'chain', deadlineSeconds: 3600 } }, { url: db.url });
}, 60_000);
afterAll(async () => {
  await api?.close();
  await db?.drop();
});

const ORDER = /* GraphQL */ `
  query ($id: ID!) { order(id: $id) { id status settlementDeadline settlementTransactionHash settlementBlockNumber } }`;

async function eventsOf(assetId: string): Promise<{ type: string; data: Record<string, unknown> }[]> {
  const feed = await api.rest('GET', `/v1/events?asset_id=${assetId}&limit=100`);
  return feed.body.result;
}

/** An owner's listed asset and a buyer's offer on it, accepted through REST: the order's answer. */
async function acceptedSale() {
  const owned = await saveOwnedAsset(api);
  const buyer = await api.key();
  const listing = await saveListing(api, owned.owner.key, owned.asset.id, { startPrice: 5 });
  const offer = await saveOffer(api, buyer.key, owned.asset.id, { price: 2 });
  const accepted = await api.rest('POST', '/v1/offers/accept', { offer_id: offer.id }, owned.owner.key);
  expect(accepted.status).toBe(200);
  return { owned, buyer, listing, offer, order: accepted.body };
}

test('when an offer is accepted, then the order is pending until its deadline on both doors, the listing held and the owner unchanged', async () => {
  const before = Date.now();
  const { owned, buyer, listing, offer, order } = await acceptedSale();
  expect(order).toMatchObject({ status: 'pending', seller: owned.owner.address, buyer: buyer.address, settlement_transaction_hash: null, settlement_block_number: null });
  const deadline = new Date(order.settlement_deadline).getTime();
  expect(deadline).toBeGreaterThanOrEqual(before + HOUR - 1000);
  expect(deadline).toBeLessThanOrEqual(Date.now() + HOUR);

  const graphql = await api.gql(ORDER, { id: order.id });
  expect(graphql.body.data.order).toMatchObject({ status: 'PENDING', settlementDeadline: order.settlement_deadline });
  expect((await api.rest('GET', `/v1/orders?owner_id=${buyer.address}&status=pending`)).body.result.map((o: { id: string }) => o.id)).toEqual([order.id]);
  const asset = await api.rest('GET', `/v1/assets/${owned.asset.tokenAddress}/${owned.asset.tokenId}?chain_id=1`);
  expect(asset.body.owner).toBe(owned.owner.address);
  const [held] = await api.ds.query('SELECT status FROM listings WHERE id = $1', [listing.id]);
  expect(held.status).toBe('pending');
  expect((await api.rest('GET', `/v1/offers/${offer.id}`)).body).toMatchObject({ status: 'active', filled: 0, reserved: 1 });
  expect((await eventsOf(owned.asset.id)).map((e) => e.type).slice(-2)).toEqual(['listing.pending', 'order.pending']);
});

test('when a sale awaits the chain, then the asset cannot be sold or listed again: another acceptance, a buy of its listing and a new listing are refused (409)', async () => {
  const { owned, listing, order } = await acceptedSale();
  const other = await api.key();
  const second = await saveOffer(api, other.key, owned.asset.id, { price: 3 });
  const refused = await api.rest('POST', '/v1/offers/accept', { offer_id: second.id }, owned.owner.key);
  expect(refused.status).toBe(409);
  expect(refused.body.error.message).toContain(`reserved by order ${order.id}`);
  const bought = await api.rest('POST', `/v1/listings/${listing.id}/buy`, {}, other.key);
  expect(bought.status).toBe(409);
  expect(bought.body.error.message).toContain(`held by order ${order.id}`);
  const relisted = await api.rest('POST', '/v1/assets/listing', { asset_id: owned.asset.id, start_price: '9' }, owned.owner.key);
  expect(relisted.status).toBe(409);
  expect(relisted.body.error.message).toContain(`reserved by order ${order.id}`);
  const [{ count }] = await api.ds.query('SELECT count(*)::int AS count FROM orders WHERE asset_id = $1', [owned.asset.id]);
  expect(count).toBe(1);
});

test('when the deadline passes without the transfer, then the order fails, the listing and the offer are active again and a new sale is possible', async () => {
  const { owned, listing, offer, order } = await acceptedSale();
  // The deadline passes (this order's alone), and the sweep's step for overdue settlements runs.
  await api.ds.query(`UPDATE orders SET settlement_deadline = now() - interval '1 second' WHERE id = $1`, [order.id]);
  await withEvents(api.ds, (m, events) => failOverdueSettlements(m, events, new Date(), 100));

  expect((await api.rest('GET', `/v1/orders/${order.id}`)).body.status).toBe('failed');
  expect((await api.rest('GET', `/v1/offers/${offer.id}`)).body).toMatchObject({ status: 'active', filled: 0, reserved: 0 });
  const asset = await api.rest('GET', `/v1/assets/${owned.asset.tokenAddress}/${owned.asset.tokenId}?chain_id=1`);
  expect(asset.body).toMatchObject({ owner: owned.owner.address, listing: { id: listing.id, status: 'active' } });
  const events = (await eventsOf(owned.asset.id)).slice(-3);
  expect(events.map((e) => [e.type, e.data.reason])).toEqual([
    ['offer.released', 'deadline_passed'],
    ['listing.reactivated', 'deadline_passed'],
    ['order.failed', 'deadline_passed'],
  ]);

  // The same offer can be accepted again: a new pending order, the same unit.
  const again = await api.rest('POST', '/v1/offers/accept', { offer_id: offer.id }, owned.owner.key);
  expect(again.status).toBe(200);
  expect(again.body).toMatchObject({ status: 'pending', unit: 1, listing_id: listing.id });
});

test('when a buy now awaits the chain, then its order is pending and names the held listing', async () => {
  const owned = await saveOwnedAsset(api);
  const buyer = await api.key();
  const listing = await saveListing(api, owned.owner.key, owned.asset.id, { startPrice: 4 });
  const bought = await api.rest('POST', `/v1/listings/${listing.id}/buy`, {}, buyer.key);
  expect(bought.status).toBe(200);
  expect(bought.body).toMatchObject({ status: 'pending', listing_id: listing.id, offer: null });
  const read = await api.rest('GET', `/v1/assets/${owned.asset.tokenAddress}/${owned.asset.tokenId}?chain_id=1`);
  expect(read.body).toMatchObject({ owner: owned.owner.address, listing: null });
});

test('when a sweep awaits the chain, then each listing it buys is held by a pending order of its own and the owners are unchanged', async () => {
  const first = await saveOwnedAsset(api);
  const assets = [first, await saveSiblingAsset(api, first), await saveSiblingAsset(api, first)];
  const listings = [];
  for (const [i, owned] of assets.entries()) listings.push(await saveListing(api, first.owner.key, owned.asset.id, { startPrice: i + 1 }));
  const sweeper = await api.key();

  const swept = await api.rest('POST', `/v1/collections/${first.collection.id}/sweep`, { count: 2, max_total: 10, max_unit_price: 10 }, sweeper.key);

  expect(swept.status).toBe(200);
  expect(swept.body.orders.map((o: { status: string; listing_id: string }) => [o.status, o.listing_id])).toEqual([
    ['pending', listings[0].id],
    ['pending', listings[1].id],
  ]);
  const rows = await api.ds.query(
    `SELECT l.status AS listing, a.owner, a.status AS asset, (SELECT count(*)::int FROM orders r WHERE r.listing_id = l.id AND r.status = 'pending') AS pending
     FROM listings l JOIN assets a ON a.id = l.asset_id WHERE l.id = ANY($1::uuid[]) ORDER BY l.start_price`,
    [listings.map((l) => l.id)],
  );
  expect(rows).toEqual([
    { listing: 'pending', owner: first.owner.address, asset: 'unlisted', pending: 1 },
    { listing: 'pending', owner: first.owner.address, asset: 'unlisted', pending: 1 },
    { listing: 'active', owner: first.owner.address, asset: 'listed', pending: 0 },
  ]);
  expect((await eventsOf(assets[0].asset.id)).map((e) => e.type)).toEqual(['asset.created', 'listing.created', 'listing.pending', 'order.pending']);
});

test('when an english auction closes with a bid, then its order is pending, the auction held and the owner unchanged until the chain', async () => {
  const owned = await saveOwnedAsset(api);
  const bidder = await api.key();
  const auction = await api.rest(
    'POST',
    '/v1/assets/listing',
    { asset_id: owned.asset.id, order_type: 'english_auction', start_price: 1, expiration_time: { duration_seconds: 60 } },
    owned.owner.key,
  );
  expect(auction.status).toBe(200);
  const bid = await saveOffer(api, bidder.key, owned.asset.id, { price: 2 });
  // After the close, the first write on the asset (or the sweeper) settles the auction: its lock does.
  await withEvents(api.ds, (m, events) => lockAsset(m, events, owned.asset.id, later(new Date(), 120 * 1000)));

  const [order] = await api.ds.query('SELECT id, status, offer_id AS "offerId", listing_id AS "listingId" FROM orders WHERE asset_id = $1', [owned.asset.id]);
  expect(order).toMatchObject({ status: 'pending', offerId: bid.id, listingId: auction.body.id });
  const [listing] = await api.ds.query('SELECT status FROM listings WHERE id = $1', [auction.body.id]);
  expect(listing.status).toBe('pending');
  const asset = await api.rest('GET', `/v1/assets/${owned.asset.tokenAddress}/${owned.asset.tokenId}?chain_id=1`);
  expect(asset.body.owner).toBe(owned.owner.address);
});

describe('settlement on /metrics', () => {
  /** The value of one sample of the Prometheus text, or undefined when the scrape has none. */
  async function sample(line: string): Promise<number | undefined> {
    const res = await fetch(`${api.url}/metrics`);
    expect(res.status).toBe(200);
    const found = (await res.text()).split('\n').find((l) => l.startsWith(`${line} `));
    return found === undefined ? undefined : Number(found.slice(line.length + 1));
  }
  const FAILED_AT_DEADLINE = 'gateway_settlement_failed_total{reason="deadline_passed"}';

  test('when a sale awaits the chain, then the pending gauge counts it and the oldest age covers it; when its deadline fails it, then the failure counter grows', async () => {
    const { order } = await acceptedSale();
    // Its sale written two hours ago (this order's row alone).
    await api.ds.query(`UPDATE orders SET created_at = now() - interval '2 hours' WHERE id = $1`, [order.id]);
    expect(await sample('gateway_settlement_pending_orders')).toBeGreaterThanOrEqual(1);
    expect(await sample('gateway_settlement_oldest_pending_seconds')).toBeGreaterThanOrEqual(2 * 3600);
    const failedBefore = (await sample(FAILED_AT_DEADLINE)) ?? 0;

    await api.ds.query(`UPDATE orders SET settlement_deadline = now() - interval '1 second' WHERE id = $1`, [order.id]);
    await withEvents(api.ds, (m, events) => failOverdueSettlements(m, events, new Date(), 100));

    expect((await api.rest('GET', `/v1/orders/${order.id}`)).body.status).toBe('failed');
    // This process's sweeper may have failed it first: either way one failure of this process.
    expect(await sample(FAILED_AT_DEADLINE)).toBeGreaterThanOrEqual(failedBefore + 1);
  });

  test('when the follower applies the transfer from seller to buyer, then the order completes, the completion counter grows and the sale names its currency', async () => {
    const { owned, buyer, listing, order } = await acceptedSale();
    const completedBefore = (await sample('gateway_settlement_completed_total')) ?? 0;

    // Block 50 of chain 1: below the fork the offchain case below rolls back to (99), so it stays applied.
    const [collection] = await api.ds.query('SELECT id, chain_id AS "chainId", contract_address AS "contractAddress" FROM collections WHERE id = $1', [owned.collection.id]);
    const hash = `0x${'05'.repeat(32)}`;
    await applyChainStep(api.ds, {
      chainId: collection.chainId,
      toBlock: 50n,
      toHash: hash,
      blockHashes: new Map([[50n, hash]]),
      transfers: [{ blockNumber: 50n, blockHash: hash, txHash: `0x${'cd'.repeat(32)}`, logIndex: 0, tokenAddress: collection.contractAddress, tokenId: BigInt(owned.asset.tokenId), from: owned.owner.address, to: buyer.address }],
      collections: [{ ...collection, syncedBlock: 49n }],
    });

    expect((await api.rest('GET', `/v1/orders/${order.id}`)).body).toMatchObject({ status: 'completed', settlement_block_number: 50 });
    expect(await sample('gateway_settlement_completed_total')).toBe(completedBefore + 1);
    const sold = (await eventsOf(owned.asset.id)).find((e) => e.type === 'listing.sold');
    expect(sold?.data).toMatchObject({ id: listing.id, sale_currency: { address: '0x0000000000000000000000000000000000000000', symbol: 'ETH', decimals: 18 } });
  });
});

describe('offchain settlement (the default) and the chain', () => {
  let offchain: TestServer;
  beforeAll(async () => {
    // The process's settlement is offchain from here on (createApp sets it for the process).
    offchain = await startServer({ settlement: { mode: 'offchain', deadlineSeconds: 3600 } }, { url: db.url });
  });
  afterAll(() => offchain.close());

  test('when an API sale is followed by its transfer on chain and a reorg takes that back, then the order stays completed and the buyer the owner', async () => {
    const owned = await saveOwnedAsset(offchain);
    const buyer = await offchain.key();
    const offer = await saveOffer(offchain, buyer.key, owned.asset.id, { price: 2 });
    const sold = await offchain.rest('POST', '/v1/offers/accept', { offer_id: offer.id }, owned.owner.key);
    expect(sold.body).toMatchObject({ status: 'completed', buyer: buyer.address, settlement_deadline: null });

    // The follower's unit of work: the sale's transfer in block 100, then a reorg that forks below it.
    const [collection] = await offchain.ds.query('SELECT id, chain_id AS "chainId", contract_address AS "contractAddress" FROM collections WHERE id = $1', [owned.collection.id]);
    const txHash = `0x${'ab'.repeat(32)}`;
    await applyChainStep(offchain.ds, {
      chainId: collection.chainId,
      toBlock: 100n,
      toHash: `0x${'01'.repeat(32)}`,
      blockHashes: new Map([[100n, `0x${'01'.repeat(32)}`]]),
      transfers: [{ blockNumber: 100n, blockHash: `0x${'01'.repeat(32)}`, txHash, logIndex: 0, tokenAddress: collection.contractAddress, tokenId: BigInt(owned.asset.tokenId), from: owned.owner.address, to: buyer.address }],
      collections: [{ ...collection, syncedBlock: 99n }],
    });
    expect(await rollBackChain(offchain.ds, collection.chainId, 99n)).toBe(1);

    const asset = await offchain.rest('GET', `/v1/assets/${owned.asset.tokenAddress}/${owned.asset.tokenId}?chain_id=1`);
    expect(asset.body.owner).toBe(buyer.address);
    expect((await offchain.rest('GET', `/v1/orders/${sold.body.id}`)).body).toMatchObject({ status: 'completed', settlement_transaction_hash: null });
    const types = (await eventsOf(owned.asset.id)).map((e) => e.type);
    expect(types.filter((t) => t.startsWith('order.') || t === 'asset.transfer_reverted')).toEqual(['order.completed']);
  });
});
