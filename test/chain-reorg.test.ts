import { ChainSettings } from '../src/config';
import { startChainNode, ChainNode, until } from './setup/chain-node';
import { startServer, TestServer } from './setup/server';

/**
 * Issue #30: a reorg made with evm_snapshot/evm_revert and a different branch; the follower rolls back the
 * transfers of the orphaned blocks (owner restored, listing active again, with events) and applies the new
 * branch. Both databases.
 */
const CHAIN_ID = '31339';
let node: ChainNode;
let api: TestServer;
let follower: TestServer;

beforeAll(async () => {
  node = await startChainNode(Number(CHAIN_ID));
  api = await startServer();
  const chains: ChainSettings = { follow: [{ chainId: CHAIN_ID, rpcUrl: node.url, confirmations: 0 }], pollMs: 50, blockRange: 2000 };
  follower = await startServer({ chains });
});

afterAll(async () => {
  await follower?.close();
  await api?.close();
  await node?.close();
});

test('when a block with a transfer is orphaned by a reorg, then the transfer is undone and the new branch applied, each once', async () => {
  const admin = await api.key({ admin: true });
  const contract = await node.deploy();
  expect((await api.rest('POST', '/v1/collections', { contract_address: contract, chain_id: CHAIN_ID, name: 'Reorged' }, admin.key)).status).toBe(200);
  const [, alice, bob, carol] = node.accounts;
  await node.mint(contract, alice, 1n);
  const asset = (path = `/v1/assets/${contract}/1?chain_id=${CHAIN_ID}`) => api.rest('GET', path);
  const minted = await until(asset, (r) => r.status === 200 && r.body.owner === alice, 'the mint');
  const aliceKey = (await api.key({ address: alice })).key;
  const listing = await api.rest('POST', '/v1/assets/listing', { asset_id: minted.body.id, start_price: '2' }, aliceKey);
  expect(listing.status).toBe(200);

  const fork = await node.rpc<string>('evm_snapshot');
  const orphanedTx = await node.transfer(contract, alice, bob, 1n);
  await until(asset, (r) => r.body.owner === bob, 'the transfer to bob');
  const listingStatus = async () => (await api.ds.query('SELECT status FROM listings WHERE id = $1', [listing.body.id]))[0].status;
  expect(await listingStatus()).toBe('inactive');

  // The block with alice -> bob is replaced: the new branch has an empty block at its height, then alice -> carol.
  expect(await node.rpc('evm_revert', [fork])).toBe(true);
  await node.mine(1);
  const newTx = await node.transfer(contract, alice, carol, 1n);

  await until(asset, (r) => r.body.owner === carol, 'the new branch applied');
  const transfers = await api.ds.query('SELECT tx_hash AS tx, to_address AS "to" FROM chain_transfers WHERE chain_id = $2 AND token_address = $1 ORDER BY block_number, log_index', [contract, CHAIN_ID]);
  expect(transfers.map((t: { to: string }) => t.to)).toEqual([alice, carol]);
  expect(transfers[1].tx).toBe(newTx);
  expect(await listingStatus()).toBe('inactive');

  const feed = await api.rest('GET', `/v1/events?asset_id=${minted.body.id}&types=asset.transferred,asset.transfer_reverted,listing.inactivated,listing.reactivated`);
  const seen = feed.body.result.map((e: { type: string; data: { owner?: string; transaction_hash: string } }) => [e.type, e.data.transaction_hash, e.data.owner ?? null]);
  expect(seen).toEqual([
    ['asset.transferred', orphanedTx, bob],
    ['listing.inactivated', orphanedTx, null],
    ['asset.transfer_reverted', orphanedTx, alice],
    ['listing.reactivated', orphanedTx, null],
    ['asset.transferred', newTx, carol],
    ['listing.inactivated', newTx, null],
  ]);
});

test('when a reorg takes back a transfer and the new branch has none, then the owner and the listing are as before it', async () => {
  const admin = await api.key({ admin: true });
  const contract = await node.deploy();
  expect((await api.rest('POST', '/v1/collections', { contract_address: contract, chain_id: CHAIN_ID, name: 'Reorged back' }, admin.key)).status).toBe(200);
  const [, alice, bob] = node.accounts;
  await node.mint(contract, alice, 5n);
  const asset = () => api.rest('GET', `/v1/assets/${contract}/5?chain_id=${CHAIN_ID}`);
  const minted = await until(asset, (r) => r.status === 200 && r.body.owner === alice, 'the mint');
  const aliceKey = (await api.key({ address: alice })).key;
  const listing = await api.rest('POST', '/v1/assets/listing', { asset_id: minted.body.id, start_price: '3' }, aliceKey);
  const fork = await node.rpc<string>('evm_snapshot');
  await node.transfer(contract, alice, bob, 5n);
  await until(asset, (r) => r.body.owner === bob, 'the transfer to bob');

  await node.rpc('evm_revert', [fork]);
  await node.mine(2);

  const back = await until(asset, (r) => r.body.owner === alice, 'the owner restored');
  expect(back.body.listing).toMatchObject({ id: listing.body.id, status: 'active' });
  const [{ count }] = await api.ds.query('SELECT count(*)::int AS count FROM chain_transfers WHERE chain_id = $2 AND token_address = $1', [contract, CHAIN_ID]);
  expect(count).toBe(1);
});

test('when a reorg takes back a mint, then the asset it made is gone, unless a listing refers to it: that one stays, owned by no one, its listing inactive', async () => {
  const admin = await api.key({ admin: true });
  const contract = await node.deploy();
  expect((await api.rest('POST', '/v1/collections', { contract_address: contract, chain_id: CHAIN_ID, name: 'Reorged mints' }, admin.key)).status).toBe(200);
  const [, alice, bob] = node.accounts;
  const zero = '0x0000000000000000000000000000000000000000';
  const asset = (tokenId: number) => () => api.rest('GET', `/v1/assets/${contract}/${tokenId}?chain_id=${CHAIN_ID}`);
  await node.mint(contract, alice, 1n);
  await until(asset(1), (r) => r.status === 200, 'the mint below the fork');

  const fork = await node.rpc<string>('evm_snapshot');
  await node.mint(contract, bob, 2n);
  await node.mint(contract, alice, 3n);
  const two = await until(asset(2), (r) => r.status === 200, 'the first orphaned mint');
  const three = await until(asset(3), (r) => r.status === 200, 'the second orphaned mint');
  const aliceKey = (await api.key({ address: alice })).key;
  const listing = await api.rest('POST', '/v1/assets/listing', { asset_id: three.body.id, start_price: '1' }, aliceKey);
  expect(listing.status).toBe(200);

  expect(await node.rpc('evm_revert', [fork])).toBe(true);
  await node.mine(3);

  await until(asset(2), (r) => r.status === 404, 'the orphaned mint gone');
  const kept = await until(asset(3), (r) => r.body.owner === zero, 'the listed token owned by no one');
  expect(kept.body.listing ?? null).toBeNull();
  const [{ status }] = await api.ds.query('SELECT status FROM listings WHERE id = $1', [listing.body.id]);
  expect(status).toBe('inactive');
  expect((await asset(1)()).body.owner).toBe(alice);
  const [{ count }] = await api.ds.query(
    'SELECT c.assets::int AS count FROM collection_asset_counts c JOIN collections k ON k.id = c.collection_id WHERE k.contract_address = $1 AND k.chain_id = $2',
    [contract, CHAIN_ID],
  );
  expect(count).toBe(2);

  // The feed keeps the gone asset's story: created, then reverted with `removed`.
  const feed = await api.rest('GET', `/v1/events?asset_id=${two.body.id}`);
  expect(feed.body.result.map((e: { type: string }) => e.type)).toEqual(['asset.created', 'asset.transfer_reverted']);
  expect(feed.body.result[1].data).toMatchObject({ previous_owner: bob, owner: zero, removed: true, reason: 'reorg' });
  const listed = await api.rest('GET', `/v1/events?asset_id=${three.body.id}&types=asset.transfer_reverted,listing.inactivated`);
  expect(listed.body.result.map((e: { type: string; data: { removed?: boolean } }) => [e.type, e.data.removed ?? false])).toEqual([
    ['asset.transfer_reverted', false],
    ['listing.inactivated', false],
  ]);
});
