import { Address } from 'viem';
import { ChainSettings } from '../src/config';
import { startChainNode, ChainNode, until } from './setup/chain-node';
import { startServer, TestServer } from './setup/server';
import { openWindow } from './factories/market';

/**
 * Issue #30, first increment: a real local node (ganache) and OpenZeppelin's ERC721; the gateway follows
 * the chain and the API shows what happened on it. Both databases.
 */
const CHAIN_ID = 31337;
let node: ChainNode;
let api: TestServer;
let follower: TestServer | undefined;
let admin: { key: string; address: string };

const chains = (): ChainSettings => ({ follow: [{ chainId: String(CHAIN_ID), rpcUrl: node.url, confirmations: 0 }], pollMs: 50, blockRange: 2000 });
const startFollower = () => startServer({ chains: chains() });

const assetOf = (contract: Address, tokenId: bigint) => api.rest('GET', `/v1/assets/${contract}/${tokenId}?chain_id=${CHAIN_ID}`);
const ownerIs = async (contract: Address, tokenId: bigint, owner: string) =>
  until(() => assetOf(contract, tokenId), (r) => r.status === 200 && r.body.owner === owner, `owner ${owner} of token ${tokenId}`);

async function trackedCollection(): Promise<Address> {
  const contract = await node.deploy();
  const created = await api.rest('POST', '/v1/collections', { contract_address: contract, chain_id: String(CHAIN_ID), name: `Chain ${contract.slice(2, 10)}` }, admin.key);
  expect(created.status).toBe(200);
  return contract;
}

beforeAll(async () => {
  node = await startChainNode(CHAIN_ID);
  api = await startServer();
  admin = await api.key({ admin: true });
  follower = await startFollower();
});

afterAll(async () => {
  await follower?.close();
  await api?.close();
  await node?.close();
});

describe('following an ERC721 contract', () => {
  test('when a token is minted on chain, then it appears as an asset of the collection, owned by the receiver', async () => {
    const contract = await trackedCollection();
    const [, alice] = node.accounts;
    const tx = await node.mint(contract, alice, 7n);

    const asset = await ownerIs(contract, 7n, alice);
    expect(asset.body).toMatchObject({ name: '#7', token_id: '7', token_address: contract });
    const feed = await api.rest('GET', `/v1/events?asset_id=${asset.body.id}`);
    expect(feed.body.result.map((e: { type: string }) => e.type)).toEqual(['asset.created']);
    expect(feed.body.result[0].data).toMatchObject({ transaction_hash: tx, owner: alice, from: '0x0000000000000000000000000000000000000000' });
    // Its tokenURI is read apart from the step that made it, and stored in its metadata.
    const read = await until(() => assetOf(contract, 7n), (r) => r.body.metadata?.token_uri !== undefined, 'the token URI');
    expect(read.body.metadata).toEqual({ token_uri: 'https://nft.test/token/7' });
  });

  test('when many transfers land in one step, then each is applied once in chain order, with its events, and listings of former owners are inactive', async () => {
    const contract = await trackedCollection();
    const [minter, alice, bob, carol] = node.accounts;
    await node.mint(contract, alice, 1n);
    const first = await ownerIs(contract, 1n, alice);
    const aliceKey = (await api.key({ address: alice })).key;
    const listed = await api.rest('POST', '/v1/assets/listing', { asset_id: first.body.id, start_price: '1' }, aliceKey);
    expect(listed.status).toBe(200);
    await follower!.close();
    follower = undefined;

    // Read in one step: 30 mints to alice, alice gives them and token 1 to bob, bob passes token 100 on and burns token 129.
    await node.write(contract, minter, 'mintBatch', [alice, 100n, 30n]);
    await node.transfer(contract, alice, bob, 1n);
    await node.write(contract, alice, 'transferBatch', [bob, 100n, 30n]);
    await node.transfer(contract, bob, carol, 100n);
    await node.write(contract, bob, 'burn', [129n]);
    follower = await startFollower();

    const passed = await ownerIs(contract, 100n, carol);
    await ownerIs(contract, 1n, bob);
    await ownerIs(contract, 128n, bob);
    const burned = await ownerIs(contract, 129n, '0x0000000000000000000000000000000000000000');
    const [{ status }] = await api.ds.query('SELECT status FROM listings WHERE id = $1', [listed.body.id]);
    expect(status).toBe('inactive');
    const [{ assets }] = await api.ds.query('SELECT count(*)::int AS assets FROM assets WHERE token_address = $1 AND chain_id = $2', [contract, String(CHAIN_ID)]);
    expect(assets).toBe(31);

    const feed = await api.rest('GET', `/v1/events?asset_id=${passed.body.id}`);
    expect(feed.body.result.map((e: { type: string; data: { owner: string; previous_owner?: string } }) => [e.type, e.data.previous_owner ?? null, e.data.owner])).toEqual([
      // The created event's row is the asset as it stood when the step committed.
      ['asset.created', null, carol],
      ['asset.transferred', alice, bob],
      ['asset.transferred', bob, carol],
    ]);
    const recorded = await api.ds.query(
      'SELECT previous_owner AS "previousOwner", asset_id AS "assetId" FROM chain_transfers WHERE chain_id = $1 AND token_address = $2 AND token_id = 100 ORDER BY block_number, log_index',
      [String(CHAIN_ID), contract],
    );
    expect(recorded).toEqual([
      { previousOwner: null, assetId: passed.body.id },
      { previousOwner: alice, assetId: passed.body.id },
      { previousOwner: bob, assetId: passed.body.id },
    ]);
    const sold = await api.rest('GET', `/v1/events?asset_id=${first.body.id}&types=asset.transferred,listing.inactivated`);
    expect(sold.body.result.map((e: { type: string }) => e.type)).toEqual(['asset.transferred', 'listing.inactivated']);

    // The URIs are read once the owners are shown; the burned token's read reverts, so it keeps its placeholder.
    await until(
      async () => (await api.ds.query('SELECT count(*)::int AS n FROM chain_token_uris_pending p JOIN assets a ON a.id = p.asset_id WHERE a.token_address = $1', [contract]))[0].n,
      (n: number) => n === 0,
      'every token URI read',
    );
    expect((await assetOf(contract, 128n)).body.metadata).toEqual({ token_uri: 'https://nft.test/token/128' });
    expect((await assetOf(contract, 129n)).body.metadata).toEqual({});
    expect(burned.body.name).toBe('#129');
  });

  test('when a collection is created with a start_block, then the transfers before that block are not applied', async () => {
    const contract = await node.deploy();
    const [, alice, bob] = node.accounts;
    await node.mint(contract, alice, 1n);
    const start = Number(await node.client.getBlockNumber()) + 1;
    await node.mint(contract, bob, 2n);
    const created = await api.rest('POST', '/v1/collections', { contract_address: contract, chain_id: String(CHAIN_ID), name: 'From a block', start_block: start }, admin.key);
    expect(created.status).toBe(200);
    expect(created.body.start_block).toBe(start);
    expect((await api.rest('GET', `/v1/collections/${contract}?chain_id=${CHAIN_ID}`)).body.start_block).toBe(start);
    const shown = await api.gql(`query ($a: Address!, $c: String) { collection(address: $a, chainId: $c) { startBlock } }`, { a: contract, c: String(CHAIN_ID) });
    expect(shown.body.data.collection).toEqual({ startBlock: start });

    await ownerIs(contract, 2n, bob);
    expect((await assetOf(contract, 1n)).status).toBe(404);
    const refused = await api.rest('POST', '/v1/collections', { contract_address: await node.deploy(), chain_id: String(CHAIN_ID), start_block: -1 }, admin.key);
    expect(refused.status).toBe(422);
    expect(refused.body.error.details).toEqual([expect.objectContaining({ field: 'start_block' })]);
  });

  test('when the seller transfers a listed token on chain, then the owner changes on both doors and the listing is inactive, never filled', async () => {
    const contract = await trackedCollection();
    const [, alice, bob, carol] = node.accounts;
    await node.mint(contract, alice, 1n);
    const minted = await ownerIs(contract, 1n, alice);
    const aliceKey = (await api.key({ address: alice })).key;
    const carolKey = (await api.key({ address: carol })).key;
    const listed = await api.rest('POST', '/v1/assets/listing', { asset_id: minted.body.id, start_price: '1.5' }, aliceKey);
    expect(listed.status).toBe(200);
    const offer = await api.rest('POST', '/v1/offers', { asset_id: minted.body.id, price: '1', start_time: openWindow().startTime, end_time: openWindow().endTime }, carolKey);
    expect(offer.status).toBe(200);

    const tx = await node.transfer(contract, alice, bob, 1n);
    const receipt = await node.client.getTransactionReceipt({ hash: tx });

    const moved = await ownerIs(contract, 1n, bob);
    expect(moved.body.listing ?? null).toBeNull();
    const graphql = await api.gql(
      `query ($id: ID!) { assetById(id: $id) { owner status listing { id } } }`,
      { id: minted.body.id },
    );
    expect(graphql.body.data.assetById).toEqual({ owner: bob, status: 'UNLISTED', listing: null });
    const listings = await api.gql(`query ($id: ID!) { assetById(id: $id) { listings { result { id status inactiveReason } } } }`, { id: minted.body.id });
    expect(listings.body.data.assetById.listings.result).toEqual([{ id: listed.body.id, status: 'INACTIVE', inactiveReason: 'owner_changed' }]);

    const feed = await api.rest('GET', `/v1/events?asset_id=${minted.body.id}&types=asset.transferred,listing.inactivated`);
    expect(feed.body.result.map((e: { type: string }) => e.type)).toEqual(['asset.transferred', 'listing.inactivated']);
    expect(feed.body.result[0].data).toMatchObject({
      owner: bob,
      previous_owner: alice,
      block_number: receipt.blockNumber.toString(),
      transaction_hash: tx,
      log_index: receipt.logs[receipt.logs.length - 1].logIndex,
    });
    expect(feed.body.result[1].data).toMatchObject({ status: 'inactive', inactive_reason: 'owner_changed', reason: 'the seller no longer owns the token', transaction_hash: tx });

    // The former owner can no longer sell: accepting the offer is refused, and nothing is sold.
    const accept = await api.rest('POST', '/v1/offers/accept', { offer_id: offer.body.id }, aliceKey);
    expect(accept.status).toBe(403);
    const [{ orders }] = await api.ds.query('SELECT count(*)::int AS orders FROM orders WHERE asset_id = $1', [minted.body.id]);
    expect(orders).toBe(0);
  });

  test('when the follower restarts and reads the same blocks again, then no transfer is applied twice', async () => {
    const contract = await trackedCollection();
    const [, alice, bob] = node.accounts;
    await node.mint(contract, alice, 1n);
    await ownerIs(contract, 1n, alice);
    await follower!.close();
    follower = undefined;

    // While no follower runs, the token moves twice; the restarted follower resumes from where it stopped.
    await node.transfer(contract, alice, bob, 1n);
    await node.transfer(contract, bob, alice, 1n);
    await node.mint(contract, bob, 2n);
    const [{ id: collectionId }] = await api.ds.query('SELECT id FROM collections WHERE contract_address = $1 AND chain_id = $2', [contract, String(CHAIN_ID)]);
    const [before] = await api.ds.query('SELECT synced_block::int AS synced FROM chain_collection_sync WHERE collection_id = $1', [collectionId]);
    follower = await startFollower();
    await ownerIs(contract, 2n, bob);
    const asset = await ownerIs(contract, 1n, alice);

    // Read again from the start, as after a crash that lost the position: every transfer is known already.
    await api.ds.query('UPDATE chain_collection_sync SET synced_block = -1 WHERE collection_id = $1', [collectionId]);
    const head = Number(await node.client.getBlockNumber());
    await until(
      async () => (await api.ds.query('SELECT synced_block::int AS synced FROM chain_collection_sync WHERE collection_id = $1', [collectionId]))[0].synced,
      (synced: number) => synced >= head,
      'the collection read again to the head',
    );
    const transfers = await api.ds.query(
      'SELECT from_address AS "from", to_address AS "to" FROM chain_transfers WHERE chain_id = $2 AND token_address = $1 ORDER BY block_number, log_index',
      [contract, String(CHAIN_ID)],
    );
    expect(transfers).toEqual([
      { from: '0x0000000000000000000000000000000000000000', to: alice },
      { from: alice, to: bob },
      { from: bob, to: alice },
      { from: '0x0000000000000000000000000000000000000000', to: bob },
    ]);
    const feed = await api.rest('GET', `/v1/events?asset_id=${asset.body.id}&types=asset.created,asset.transferred`);
    expect(feed.body.result.map((e: { type: string; data: { owner: string } }) => [e.type, e.data.owner])).toEqual([
      ['asset.created', alice],
      ['asset.transferred', bob],
      ['asset.transferred', alice],
    ]);
    expect(before.synced).toBeLessThan(head);
  });

  test('when the chain is followed, then its sync status shows head, confirmed and applied blocks and no lag, on both doors, /readyz and /metrics', async () => {
    await trackedCollection();
    await node.mine(3);
    const head = Number(await node.client.getBlockNumber());
    const sync = await until(
      () => api.rest('GET', `/v1/chains/${CHAIN_ID}/sync`),
      (r) => r.status === 200 && r.body.last_applied_block === head,
      'the follower at the head',
    );
    expect(sync.body).toMatchObject({ chain_id: String(CHAIN_ID), head_block: head, confirmations: 0, confirmed_block: head, lag: 0, last_error: null });
    const graphql = await api.gql(`query ($c: ID!) { chainSync(chainId: $c) { headBlock lastAppliedBlock lag } }`, { c: String(CHAIN_ID) });
    expect(graphql.body.data.chainSync).toEqual({ headBlock: head, lastAppliedBlock: head, lag: 0 });
    // Readiness of the following process names its chains; a chain that lags would leave it ready all the same.
    const ready = await follower!.rest('GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready', chains: [{ chainId: String(CHAIN_ID), lag: 0, lastError: null }] });

    const metrics = await (await fetch(`${follower!.url}/metrics`)).text();
    expect(metrics).toContain(`gateway_chain_following{chain_id="${CHAIN_ID}"} 1`);
    expect(metrics).toContain(`gateway_chain_head_block{chain_id="${CHAIN_ID}"} ${head}`);
    expect(metrics).toContain(`gateway_chain_lag_blocks{chain_id="${CHAIN_ID}"} 0`);
    expect(metrics).toMatch(new RegExp(`gateway_chain_transfers_applied_total\\{chain_id="${CHAIN_ID}"\\} [1-9]`));

    const unknown = await api.rest('GET', '/v1/chains/999999/sync');
    expect(unknown.status).toBe(404);
  });
});
