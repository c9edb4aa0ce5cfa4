import { Address } from 'viem';
import { ChainSettings, SettlementSettings } from '../src/config';
import { startChainNode, ChainNode, until } from './setup/chain-node';
import { startServer, TestServer } from './setup/server';
import { openWindow } from './factories/market';

/**
 * Issue #30, settlement on chain (SETTLEMENT=chain): a real local node (ganache) and OpenZeppelin's ERC721;
 * an accepted offer's order is pending until the follower sees the token go from seller to buyer, fails when
 * it goes elsewhere, and is pending again when a reorg takes the transfer back. Both databases.
 */
const CHAIN_ID = '31340';
const settlement: SettlementSettings = { mode: 'chain', deadlineSeconds: 3600 };
let node: ChainNode;
let api: TestServer;
let follower: TestServer;
let admin: { key: string; address: string };

beforeAll(async () => {
  node = await startChainNode(Number(CHAIN_ID));
  api = await startServer({ settlement });
  admin = await api.key({ admin: true });
  const chains: ChainSettings = { follow: [{ chainId: CHAIN_ID, rpcUrl: node.url, confirmations: 0 }], pollMs: 50, blockRange: 2000 };
  follower = await startServer({ chains, settlement });
});

afterAll(async () => {
  await follower?.close();
  await api?.close();
  await node?.close();
});

const LISTINGS = /* GraphQL */ `
  query ($id: ID!) { assetById(id: $id) { owner listings { result { id status inactiveReason } } } }`;

/**
 * A token minted on chain to alice, listed by her, and bob's offer on it that she accepts through REST:
 * the pending order, with what it names.
 */
async function pendingSale(tokenId: bigint) {
  const contract = await node.deploy();
  expect((await api.rest('POST', '/v1/collections', { contract_address: contract, chain_id: CHAIN_ID, name: `Settled ${tokenId}` }, admin.key)).status).toBe(200);
  const [, alice, bob, carol] = node.accounts;
  await node.mint(contract, alice, tokenId);
  const minted = await until(() => assetOf(contract, tokenId), (r) => r.status === 200 && r.body.owner === alice, 'the mint');
  const aliceKey = (await api.key({ address: alice })).key;
  const bobKey = (await api.key({ address: bob })).key;
  const listing = await api.rest('POST', '/v1/assets/listing', { asset_id: minted.body.id, start_price: '5' }, aliceKey);
  expect(listing.status).toBe(200);
  const offer = await api.rest('POST', '/v1/offers', { asset_id: minted.body.id, price: '2', start_time: openWindow().startTime, end_time: openWindow().endTime }, bobKey);
  expect(offer.status).toBe(200);
  const order = await api.rest('POST', '/v1/offers/accept', { offer_id: offer.body.id }, aliceKey);
  expect(order.body).toMatchObject({ status: 'pending', seller: alice, buyer: bob });
  return { contract, alice, bob, carol, assetId: minted.body.id as string, listingId: listing.body.id as string, offerId: offer.body.id as string, orderId: order.body.id as string };
}

const assetOf = (contract: Address, tokenId: bigint) => api.rest('GET', `/v1/assets/${contract}/${tokenId}?chain_id=${CHAIN_ID}`);
const orderIs = (orderId: string, status: string) => until(() => api.rest('GET', `/v1/orders/${orderId}`), (r) => r.body.status === status, `order ${status}`);

async function eventsOf(assetId: string, types: string): Promise<{ type: string; data: Record<string, unknown> }[]> {
  return (await api.rest('GET', `/v1/events?asset_id=${assetId}&types=${types}&limit=100`)).body.result;
}

test('when the seller transfers the token to the buyer on chain, then the order completes with that transfer, the listing is sold and the offer accepted', async () => {
  const sale = await pendingSale(1n);
  expect((await assetOf(sale.contract, 1n)).body.owner).toBe(sale.alice);

  const tx = await node.transfer(sale.contract, sale.alice, sale.bob, 1n);
  const completed = await orderIs(sale.orderId, 'completed');
  expect(completed.body).toMatchObject({ settlement_transaction_hash: tx, offer: { id: sale.offerId, status: 'accepted' } });
  expect(typeof completed.body.settlement_block_number).toBe('number');
  const read = await api.gql(LISTINGS, { id: sale.assetId });
  expect(read.body.data.assetById).toEqual({ owner: sale.bob, listings: { result: [{ id: sale.listingId, status: 'SOLD', inactiveReason: null }] } });

  const events = await eventsOf(sale.assetId, 'asset.transferred,listing.sold,offer.accepted,order.pending,order.completed');
  expect(events.map((e) => [e.type, e.data.transaction_hash ?? null])).toEqual([
    ['order.pending', null],
    ['asset.transferred', tx],
    ['listing.sold', tx],
    ['offer.accepted', tx],
    ['order.completed', tx],
  ]);
  expect(events[4].data).toMatchObject({ status: 'completed', settlement_tx_hash: tx });
});

test('when the token goes to someone else while the order is pending, then the order fails and the listing is inactive, owner_changed', async () => {
  const sale = await pendingSale(2n);
  const tx = await node.transfer(sale.contract, sale.alice, sale.carol, 2n);

  await orderIs(sale.orderId, 'failed');
  const read = await api.gql(LISTINGS, { id: sale.assetId });
  expect(read.body.data.assetById).toEqual({ owner: sale.carol, listings: { result: [{ id: sale.listingId, status: 'INACTIVE', inactiveReason: 'owner_changed' }] } });
  const [offer] = await api.ds.query('SELECT status, filled, reserved FROM offers WHERE id = $1', [sale.offerId]);
  expect(offer).toEqual({ status: 'active', filled: 0, reserved: 0 });
  const events = await eventsOf(sale.assetId, 'listing.inactivated,order.failed');
  expect(events.map((e) => [e.type, e.data.reason, e.data.transaction_hash])).toEqual([
    ['listing.inactivated', 'transferred_elsewhere', tx],
    ['order.failed', 'transferred_elsewhere', tx],
  ]);
});

test('when a reorg takes back the transfer that completed an order, then the order is pending again, and the new branch completes it once', async () => {
  const sale = await pendingSale(3n);
  const fork = await node.rpc<string>('evm_snapshot');
  const orphanedTx = await node.transfer(sale.contract, sale.alice, sale.bob, 3n);
  await orderIs(sale.orderId, 'completed');

  expect(await node.rpc('evm_revert', [fork])).toBe(true);
  await node.mine(2);
  const back = await orderIs(sale.orderId, 'pending');
  expect(back.body).toMatchObject({ settlement_transaction_hash: null, offer: { id: sale.offerId, status: 'active' } });
  await until(() => assetOf(sale.contract, 3n), (r) => r.body.owner === sale.alice, 'the owner restored');
  const [listing] = await api.ds.query('SELECT status FROM listings WHERE id = $1', [sale.listingId]);
  expect(listing.status).toBe('pending');

  const newTx = await node.transfer(sale.contract, sale.alice, sale.bob, 3n);
  const again = await orderIs(sale.orderId, 'completed');
  expect(again.body.settlement_transaction_hash).toBe(newTx);
  const events = await eventsOf(sale.assetId, 'order.pending,order.completed');
  expect(events.map((e) => [e.type, e.data.reason ?? null, e.data.transaction_hash ?? null])).toEqual([
    ['order.pending', null, null],
    ['order.completed', null, orphanedTx],
    ['order.pending', 'reorg', orphanedTx],
    ['order.completed', null, newTx],
  ]);
  // The sale counts once in the statistics' hourly rollups.
  const [{ sales }] = await api.ds.query(
    'SELECT sum(sales)::int AS sales FROM collection_sales_hourly h JOIN assets a ON a.collection_id = h.collection_id WHERE a.id = $1',
    [sale.assetId],
  );
  expect(sales).toBe(1);
});
