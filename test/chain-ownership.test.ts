import { ChainSettings } from '../src/config';
import { startChainNode, ChainNode, until } from './setup/chain-node';
import { startServer, TestServer } from './setup/server';
import { buildCsv, csvRecords, importFormUrlencoded } from './factories/csv';

/**
 * Issue #41 items 6 and 1-3 of what remained: the follower reads ERC-173 OwnershipTransferred of the collections
 * it follows and moves their claim in the step that applies the log (a reorg undoes it), so the former owner's
 * key can no longer change the collection nor write its assets, and the new owner's can, with no write needed
 * first. A local EVM node with an Ownable ERC721 (test/chain/TestERC721Owned.sol), both doors; both databases.
 */
const CHAIN_ID = '31349';
let node: ChainNode;
/** Follows CHAIN_ID. */
let api: TestServer;
/** Follows no chain: a gateway before CHAIN_RPC_<id> was set. */
let plain: TestServer;

beforeAll(async () => {
  node = await startChainNode(Number(CHAIN_ID));
  const chains: ChainSettings = { follow: [{ chainId: CHAIN_ID, rpcUrl: node.url, confirmations: 0 }], pollMs: 50, blockRange: 2000 };
  api = await startServer({ chains });
  plain = await startServer();
});

afterAll(async () => {
  await plain?.close();
  await api?.close();
  await node?.close();
});

/** The deployer of every contract, its owner() until transferOwnership. */
const deployer = () => node.accounts[0];
const collectionPath = (contract: string) => `/v1/collections/${contract}?chain_id=${CHAIN_ID}`;
const blockOf = async (tx: `0x${string}`) => (await node.client.getTransactionReceipt({ hash: tx })).blockNumber;

/** An Ownable contract, registered by its deployer's key (verified), once the follower has read its blocks. */
async function registered(name: string) {
  const contract = await node.deploy('TestERC721Owned');
  const ownerKey = await api.key({ address: deployer() });
  const created = await api.rest('POST', '/v1/collections', { contract_address: contract, chain_id: CHAIN_ID, name }, ownerKey.key);
  expect(created.status).toBe(200);
  expect(created.body).toMatchObject({ owner: deployer(), owner_verification: 'verified', contract_owner: deployer() });
  return { contract, id: created.body.id as string, ownerKey, checkedBlock: created.body.owner_checked_block as number };
}

/** Once the follower has applied the head block and kept its hash: a reorg from here forks at or above it. */
async function followerAtHead() {
  const head = Number(await node.client.getBlockNumber());
  await until(
    () => api.ds.query('SELECT max(number)::int AS n FROM chain_blocks WHERE chain_id = $1', [CHAIN_ID]),
    (rows: { n: number | null }[]) => (rows[0]?.n ?? -1) >= head,
    'the follower to keep the head block',
  );
}

/** The collection as the REST door reads it, once `done` holds. */
const collectionWhen = (contract: string, done: (c: Record<string, unknown>) => boolean, what: string) =>
  until(async () => (await api.rest('GET', collectionPath(contract))).body, done, what);

test('when owner() is transferred on chain, then the follower moves the claim to the new owner at once, with collection.claimed, on both doors', async () => {
  const { contract, id, ownerKey, checkedBlock } = await registered('Moving');
  expect(checkedBlock).toBeGreaterThan(0);
  const [, alice] = node.accounts;
  const tx = await node.write(contract, deployer(), 'transferOwnership', [alice]);
  const block = await blockOf(tx);

  const moved = await collectionWhen(contract, (c) => c.owner === alice, 'the claim to move to alice');
  expect(moved).toMatchObject({ owner: alice, owner_verification: 'verified', contract_owner: alice, owner_checked_block: Number(block) });
  const gql = await api.gql(READ, { id: contract, chainId: CHAIN_ID });
  expect(gql.body.data.collection).toMatchObject({ owner: alice, ownerVerification: 'VERIFIED', contractOwner: alice, ownerCheckedBlock: Number(block) });
  const feed = await api.rest('GET', `/v1/events?collection_id=${id}&types=collection.claimed`);
  expect(feed.body.result.map((e: { data: Record<string, unknown> }) => [e.data.owner, e.data.previous_owner, e.data.transaction_hash, e.data.block_number])).toEqual([
    [alice, deployer(), tx, block.toString()],
  ]);

  // The former owner's key may no longer change it, on either door; the new owner's may, without a claim.
  const refused = await api.rest('PUT', collectionPath(contract), { name: 'Still mine' }, ownerKey.key);
  expect(refused.status).toBe(403);
  expect(refused.body.error.message).toContain(`owner() (ERC-173) is ${alice}`);
  const refusedGql = await api.gql(UPDATE, { id: contract, chainId: CHAIN_ID, input: { name: 'Still mine' } }, ownerKey.key);
  expect(refusedGql.body.errors?.[0]).toMatchObject({ extensions: { code: 'FORBIDDEN' } });
  const aliceKey = await api.key({ address: alice });
  const renamed = await api.rest('PUT', collectionPath(contract), { name: "Alice's" }, aliceKey.key);
  expect(renamed.status).toBe(200);
  expect(renamed.body).toMatchObject({ name: "Alice's", owner: alice, owner_verification: 'verified' });
  // The write read owner() again: no second collection.claimed, the claim did not change hands.
  expect((await api.rest('GET', `/v1/events?collection_id=${id}&types=collection.claimed`)).body.result).toHaveLength(1);
});

test("when owner() was transferred on chain, then the former owner's key cannot create, import or refresh the collection's assets, and the new owner's can", async () => {
  const { contract, ownerKey } = await registered('Assets change hands');
  const [, , bob] = node.accounts;
  await node.write(contract, deployer(), 'transferOwnership', [bob]);
  await collectionWhen(contract, (c) => c.owner === bob, 'the claim to move to bob');
  const collection = (await api.rest('GET', collectionPath(contract))).body;
  const asset = (owner: string, tokenId: string) => ({
    collection_id: collection.id,
    token_address: contract,
    chain_id: CHAIN_ID,
    token_id: tokenId,
    name: `Asset ${tokenId}`,
    description: 'made through the API',
    image_url: 'https://img.example/a.png',
    metadata: {},
    owner,
  });

  const former = await api.rest('POST', '/v1/assets', asset(deployer(), '900'), ownerKey.key);
  expect(former.status).toBe(403);
  expect(former.body.error.message).toContain(`belongs to ${bob}`);
  const formerGql = await api.gql(CREATE_ASSET, {
    input: { collectionId: collection.id, tokenAddress: contract, chainId: CHAIN_ID, tokenId: '900', name: 'x', description: 'x', imageUrl: 'https://img.example/a.png', metadata: {}, owner: deployer() },
  }, ownerKey.key);
  expect(formerGql.body.errors?.[0]).toMatchObject({ extensions: { code: 'FORBIDDEN' } });
  const imported = await importFormUrlencoded(api, collection.id, buildCsv(csvRecords(deployer(), 2)), ownerKey.key);
  expect(imported.status).toBe(403);
  const refresh = await api.rest('POST', `/v1/collections/${contract}/refresh`, { chain_id: CHAIN_ID }, ownerKey.key);
  expect(refresh.status).toBe(403);
  expect(await api.ds.query('SELECT 1 FROM assets WHERE collection_id = $1', [collection.id])).toEqual([]);

  const bobKey = await api.key({ address: bob });
  const made = await api.rest('POST', '/v1/assets', asset(bob, '900'), bobKey.key);
  expect(made.status).toBe(200);
  expect(made.body).toMatchObject({ token_id: '900', owner: bob });
  expect((await importFormUrlencoded(api, collection.id, buildCsv(csvRecords(bob, 2)), bobKey.key)).status).toBe(200);
  expect((await api.rest('POST', `/v1/collections/${contract}/refresh`, { chain_id: CHAIN_ID }, bobKey.key)).status).toBe(200);
  expect((await api.ds.query('SELECT owner FROM assets WHERE collection_id = $1', [collection.id])).map((a: { owner: string }) => a.owner)).toEqual([bob, bob, bob]);
});

test('when ownership is renounced on chain, then the collection says no_contract_owner and keeps its owner, with collection.updated', async () => {
  const { contract, id, ownerKey } = await registered('Renounced');
  const tx = await node.write(contract, deployer(), 'renounceOwnership', []);
  const renounced = await collectionWhen(contract, (c) => c.owner_verification === 'no_contract_owner', 'the renouncement to be applied');
  expect(renounced).toMatchObject({ owner: deployer(), contract_owner: null, owner_checked_block: Number(await blockOf(tx)) });
  const feed = await api.rest('GET', `/v1/events?collection_id=${id}&types=collection.updated,collection.claimed`);
  expect(feed.body.result.map((e: { type: string; data: Record<string, unknown> }) => [e.type, e.data.owner_verification, e.data.transaction_hash])).toEqual([
    ['collection.updated', 'no_contract_owner', tx],
  ]);
  // First come now: the owner who had it keeps it.
  expect((await api.rest('PUT', collectionPath(contract), { name: 'Nobody owns the contract' }, ownerKey.key)).status).toBe(200);
});

test('when a reorg orphans the block of an ownership transfer, then the claim goes back to the former owner, with reason reorg', async () => {
  const { contract, id, ownerKey } = await registered('Reorged owner');
  const [, , , carol] = node.accounts;
  await followerAtHead();
  const fork = await node.rpc<string>('evm_snapshot');
  const tx = await node.write(contract, deployer(), 'transferOwnership', [carol]);
  await collectionWhen(contract, (c) => c.owner === carol, 'the claim to move to carol');

  // The new branch is longer and has no ownership transfer.
  expect(await node.rpc('evm_revert', [fork])).toBe(true);
  await node.mine(3);
  const back = await collectionWhen(contract, (c) => c.owner === deployer(), 'the claim back with the deployer');
  expect(back).toMatchObject({ owner_verification: 'verified', contract_owner: deployer() });
  expect(await api.ds.query('SELECT 1 FROM chain_ownership_transfers WHERE collection_id = $1', [id])).toEqual([]);
  const feed = await api.rest('GET', `/v1/events?collection_id=${id}&types=collection.claimed`);
  expect(feed.body.result.map((e: { data: Record<string, unknown> }) => [e.data.owner, e.data.previous_owner, e.data.transaction_hash, e.data.reason ?? null])).toEqual([
    [carol, deployer(), tx, null],
    [deployer(), carol, tx, 'reorg'],
  ]);
  expect((await api.rest('PUT', collectionPath(contract), { name: 'Mine again' }, ownerKey.key)).status).toBe(200);
});

test("when a key wrote the collection after an ownership transfer that a reorg orphans, then its claim goes back with the transfer's, not at the next write", async () => {
  const { contract, id, ownerKey } = await registered('Reorged after a write');
  const [, , , carol] = node.accounts;
  await followerAtHead();
  const fork = await node.rpc<string>('evm_snapshot');
  const tx = await node.write(contract, deployer(), 'transferOwnership', [carol]);
  await collectionWhen(contract, (c) => c.owner === carol, 'the claim to move to carol');
  // carol's write reads owner() again, at a block above the transfer's.
  const carolKey = await api.key({ address: carol });
  await node.mine(1);
  const renamed = await api.rest('PUT', collectionPath(contract), { name: "Carol's" }, carolKey.key);
  expect(renamed.status).toBe(200);
  expect(renamed.body.owner_checked_block).toBeGreaterThan(Number(await blockOf(tx)));

  expect(await node.rpc('evm_revert', [fork])).toBe(true);
  await node.mine(4);
  const back = await collectionWhen(contract, (c) => c.owner === deployer(), 'the claim back with the deployer');
  expect(back).toMatchObject({ owner_verification: 'verified', contract_owner: deployer() });
  const feed = await api.rest('GET', `/v1/events?collection_id=${id}&types=collection.claimed`);
  expect(feed.body.result.map((e: { data: Record<string, unknown> }) => [e.data.owner, e.data.previous_owner, e.data.transaction_hash, e.data.reason ?? null])).toEqual([
    [carol, deployer(), tx, null],
    [deployer(), carol, tx, 'reorg'],
  ]);
  // Both doors: carol's key no longer speaks for it, the deployer's does.
  expect((await api.rest('PUT', collectionPath(contract), { name: 'Still carol' }, carolKey.key)).status).toBe(403);
  const refusedGql = await api.gql(UPDATE, { id: contract, chainId: CHAIN_ID, input: { name: 'Still carol' } }, carolKey.key);
  expect(refusedGql.body.errors?.[0]).toMatchObject({ extensions: { code: 'FORBIDDEN' } });
  expect((await api.gql(UPDATE, { id: contract, chainId: CHAIN_ID, input: { name: 'Mine again' } }, ownerKey.key)).body.data.updateCollection).toMatchObject({
    owner: deployer(),
  });
});

test('when a collection was registered with an owner() that a reorg orphans, then the claim passes to the owner() of the fork block, with reason reorg', async () => {
  const contract = await node.deploy('TestERC721Owned');
  const [, erin] = node.accounts;
  // A collection the follower follows, so that it applies (and keeps) the head block before the snapshot.
  await registered('Followed beside');
  await followerAtHead();
  const fork = await node.rpc<string>('evm_snapshot');
  const forkBlock = await node.client.getBlockNumber();
  await node.write(contract, deployer(), 'transferOwnership', [erin]);
  const erinKey = await api.key({ address: erin });
  const created = await api.rest('POST', '/v1/collections', { contract_address: contract, chain_id: CHAIN_ID, name: 'Registered above the fork' }, erinKey.key);
  expect(created.body).toMatchObject({ owner: erin, owner_verification: 'verified', contract_owner: erin });
  // The follower reads the contract's logs: the transfer is below the block owner() was read at, so nothing moves.
  const head = Number(await node.client.getBlockNumber());
  await until(
    () => api.ds.query('SELECT synced_block::int AS synced FROM chain_collection_sync WHERE collection_id = $1', [created.body.id]),
    (rows: { synced: number }[]) => rows[0]?.synced >= head,
    'the follower to reach the head',
  );

  expect(await node.rpc('evm_revert', [fork])).toBe(true);
  await node.mine(4);
  const back = await collectionWhen(contract, (c) => c.owner === deployer(), "the claim with the fork block's owner()");
  expect(back).toMatchObject({ owner_verification: 'verified', contract_owner: deployer() });
  expect(BigInt(back.owner_checked_block as number)).toBeLessThanOrEqual(forkBlock);
  const feed = await api.rest('GET', `/v1/events?collection_id=${created.body.id}&types=collection.claimed`);
  expect(feed.body.result.map((e: { data: Record<string, unknown> }) => [e.data.owner, e.data.previous_owner, e.data.reason, e.data.fork_block])).toEqual([
    [deployer(), erin, 'reorg', expect.any(String)],
  ]);
  expect((await api.rest('PUT', collectionPath(contract), { name: "Erin's" }, erinKey.key)).status).toBe(403);
});

test("when a collection was registered first come (unverified), then the follower leaves its claim to the next write, and a squatter's key cannot write its assets", async () => {
  const contract = await node.deploy('TestERC721Owned');
  const [, , , , dave] = node.accounts;
  await node.write(contract, deployer(), 'transferOwnership', [dave]);
  const squatter = await plain.key();
  const created = await plain.rest('POST', '/v1/collections', { contract_address: contract, chain_id: CHAIN_ID, name: 'Squatted' }, squatter.key);
  expect(created.body).toMatchObject({ owner: squatter.address, owner_verification: 'unverified' });
  // The follower reads the contract's blocks (its OwnershipTransferred logs among them) without moving the claim.
  const head = Number(await node.client.getBlockNumber());
  await until(
    () => api.ds.query('SELECT synced_block::int AS synced FROM chain_collection_sync WHERE collection_id = $1', [created.body.id]),
    (rows: { synced: number }[]) => rows[0]?.synced >= head,
    'the follower to reach the head',
  );
  expect((await api.rest('GET', collectionPath(contract))).body).toMatchObject({ owner: squatter.address, owner_verification: 'unverified' });

  const asset = (owner: string) => ({ collection_id: created.body.id, token_address: contract, chain_id: CHAIN_ID, token_id: '7', name: 'Seven', description: 'x', image_url: 'https://img.example/7.png', metadata: {}, owner });
  const squatted = await api.rest('POST', '/v1/assets', asset(squatter.address), squatter.key);
  expect(squatted.status).toBe(403);
  expect(squatted.body.error.message).toContain(`owner() (ERC-173) is ${dave}`);
  const daveKey = await api.key({ address: dave });
  const made = await api.rest('POST', '/v1/assets', asset(dave), daveKey.key);
  expect(made.status).toBe(200);
  // Writing the assets read owner(): the claim passed to dave, verified.
  expect((await api.rest('GET', collectionPath(contract))).body).toMatchObject({ owner: dave, owner_verification: 'verified', contract_owner: dave });
  const feed = await api.rest('GET', `/v1/events?collection_id=${created.body.id}&types=collection.claimed`);
  expect(feed.body.result.map((e: { data: Record<string, unknown> }) => [e.data.owner, e.data.previous_owner])).toEqual([[dave, squatter.address]]);
});

const FIELDS = 'id owner ownerVerification contractOwner ownerCheckedAt ownerCheckedBlock';
const READ = `query ($id: String!, $chainId: String) { collection(id: $id, chainId: $chainId) { ${FIELDS} } }`;
const UPDATE = `mutation ($id: String!, $chainId: String, $input: UpdateCollectionInput!) { updateCollection(id: $id, chainId: $chainId, input: $input) { ${FIELDS} } }`;
const CREATE_ASSET = `mutation ($input: CreateAssetInput!) { createAsset(input: $input) { id owner } }`;
