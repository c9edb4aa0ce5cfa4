import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { ChainSettings } from '../src/config';
import { startChainNode, ChainNode } from './setup/chain-node';
import { startServer, TestServer } from './setup/server';

/**
 * Issue #41 item 6, who may speak for a collection: on a followed chain a contract's ERC-173 owner() decides
 * who registers, changes or claims its collection; elsewhere the collection is unverified. A local EVM node
 * with an Ownable ERC721 (test/chain/TestERC721Owned.sol), through both doors; both databases.
 */
const CHAIN_ID = '31346';
/** A chain no server of this file follows, except `deadNode`, whose node never answers. */
const OTHER_CHAIN_ID = '31348';
let node: ChainNode;
/** Follows CHAIN_ID. */
let api: TestServer;
/** Follows no chain: it cannot read owner(), as a gateway before CHAIN_RPC_<id> was set. */
let plain: TestServer;
/** Follows OTHER_CHAIN_ID through a node that refuses every connection. */
let deadNode: TestServer;

beforeAll(async () => {
  node = await startChainNode(Number(CHAIN_ID));
  const chains: ChainSettings = { follow: [{ chainId: CHAIN_ID, rpcUrl: node.url, confirmations: 0 }], pollMs: 50, blockRange: 2000 };
  api = await startServer({ chains });
  plain = await startServer();
  const dead: ChainSettings = { follow: [{ chainId: OTHER_CHAIN_ID, rpcUrl: 'http://127.0.0.1:1', confirmations: 0 }], pollMs: 1000, blockRange: 2000 };
  deadNode = await startServer({ chains: dead });
});

afterAll(async () => {
  await deadNode?.close();
  await plain?.close();
  await api?.close();
  await node?.close();
});

/** The deployer of every contract, its owner() until transferOwnership. */
const deployer = () => node.accounts[0];

/** The claim message of docs/chain.md, signed by `signer` (personal_sign). */
async function signedClaim(signer: ReturnType<typeof privateKeyToAccount>, contract: string, chainId: string, claimant: string, nonce: string, expiresAt: Date) {
  const message = [
    'Claim an NFT collection on the gateway',
    `Collection: ${contract}`,
    `Chain: ${chainId}`,
    `Claimant: ${claimant}`,
    `Nonce: ${nonce}`,
    `Expires at: ${expiresAt.toISOString()}`,
  ].join('\n');
  return { signature: await signer.signMessage({ message }), nonce, expires_at: expiresAt.toISOString() };
}

const inMinutes = (m: number) => new Date(Date.now() + m * 60_000);

test("when a key that is not the contract's owner() registers its collection on a followed chain, then it is refused on both doors; the owner's key registers it verified", async () => {
  const contract = await node.deploy('TestERC721Owned');
  const stranger = await api.key();
  const rest = await api.rest('POST', '/v1/collections', { contract_address: contract, chain_id: CHAIN_ID, name: 'Not mine' }, stranger.key);
  expect(rest.status).toBe(403);
  expect(rest.body.error.message).toContain(`owner() (ERC-173) is ${deployer()}; only a key acting for ${deployer()} may register it`);
  const gql = await api.gql(CREATE, { input: { contractAddress: contract, chainId: CHAIN_ID, name: 'Not mine' } }, stranger.key);
  expect(gql.body.errors?.[0]).toMatchObject({ extensions: { code: 'FORBIDDEN' } });
  expect(await api.ds.query('SELECT 1 FROM collections WHERE chain_id = $1 AND contract_address = $2', [CHAIN_ID, contract])).toEqual([]);

  const owner = await api.key({ address: deployer() });
  const created = await api.rest('POST', '/v1/collections', { contract_address: contract, chain_id: CHAIN_ID, name: 'Mine' }, owner.key);
  expect(created.status).toBe(200);
  expect(created.body).toMatchObject({ owner: deployer(), owner_verification: 'verified', contract_owner: deployer() });
  expect(Date.parse(created.body.owner_checked_at)).toBeGreaterThan(Date.now() - 60_000);
  const read = await api.gql(READ, { id: contract, chainId: CHAIN_ID });
  expect(read.body.data.collection).toMatchObject({ owner: deployer(), ownerVerification: 'VERIFIED', contractOwner: deployer() });
});

test('when an admin key registers a contract with an owner(), then the collection is its owner\'s', async () => {
  const contract = await node.deploy('TestERC721Owned');
  const admin = await api.key({ admin: true });
  const created = await api.rest('POST', '/v1/collections', { contract_address: contract, chain_id: CHAIN_ID }, admin.key);
  expect(created.status).toBe(200);
  expect(created.body).toMatchObject({ owner: deployer(), owner_verification: 'verified' });
});

test("when owner() changes on chain, then the former owner's key may no longer change the collection, and the new owner's key takes the claim over", async () => {
  const contract = await node.deploy('TestERC721Owned');
  const former = await api.key({ address: deployer() });
  const created = await api.rest('POST', '/v1/collections', { contract_address: contract, chain_id: CHAIN_ID, name: 'Changing hands' }, former.key);
  expect(created.status).toBe(200);
  const [, alice] = node.accounts;
  await node.write(contract, deployer(), 'transferOwnership', [alice]);

  const rest = await api.rest('PUT', `/v1/collections/${contract}?chain_id=${CHAIN_ID}`, { name: 'Still mine' }, former.key);
  expect(rest.status).toBe(403);
  expect(rest.body.error.message).toContain(`owner() (ERC-173) is ${alice}`);
  expect(rest.body.error.message).toContain(`was proven for ${deployer()}; owner() has changed since`);
  const gql = await api.gql(UPDATE, { id: contract, chainId: CHAIN_ID, input: { name: 'Still mine' } }, former.key);
  expect(gql.body.errors?.[0]).toMatchObject({ extensions: { code: 'FORBIDDEN' } });

  const aliceKey = await api.key({ address: alice });
  const updated = await api.rest('PUT', `/v1/collections/${contract}?chain_id=${CHAIN_ID}`, { name: "Alice's now" }, aliceKey.key);
  expect(updated.status).toBe(200);
  expect(updated.body).toMatchObject({ name: "Alice's now", owner: alice, owner_verification: 'verified', contract_owner: alice });
  const feed = await api.rest('GET', `/v1/events?collection_id=${created.body.id}&types=collection.claimed`);
  expect(feed.body.result.map((e: { data: Record<string, unknown> }) => [e.data.owner, e.data.previous_owner])).toEqual([[alice, deployer()]]);
  expect((await api.rest('PUT', `/v1/collections/${contract}?chain_id=${CHAIN_ID}`, { name: 'Again' }, former.key)).status).toBe(403);
});

test('when a followed contract answers no owner(), then the first key registers it as no_contract_owner and nobody can claim it', async () => {
  const contract = await node.deploy('TestERC721');
  const first = await api.key();
  const created = await api.rest('POST', '/v1/collections', { contract_address: contract, chain_id: CHAIN_ID }, first.key);
  expect(created.status).toBe(200);
  expect(created.body).toMatchObject({ owner: first.address, owner_verification: 'no_contract_owner', contract_owner: null });
  expect((await api.rest('PUT', `/v1/collections/${contract}?chain_id=${CHAIN_ID}`, { name: 'First come' }, first.key)).status).toBe(200);
  const other = await api.key();
  expect((await api.rest('PUT', `/v1/collections/${contract}?chain_id=${CHAIN_ID}`, { name: 'Mine' }, other.key)).status).toBe(403);
  const claim = await api.rest('POST', `/v1/collections/${contract}/claim?chain_id=${CHAIN_ID}`, {}, other.key);
  expect(claim.status).toBe(409);
  expect(claim.body.error.message).toContain('answers no ERC-173 owner()');
});

test('when the chain is not followed, then the collection is unverified on both doors and cannot be claimed', async () => {
  const contract = await node.deploy('TestERC721Owned');
  const first = await plain.key();
  const created = await plain.rest('POST', '/v1/collections', { contract_address: contract, chain_id: OTHER_CHAIN_ID }, first.key);
  expect(created.status).toBe(200);
  expect(created.body).toMatchObject({ owner: first.address, owner_verification: 'unverified', contract_owner: null, owner_checked_at: null });
  const read = await plain.gql(READ, { id: contract, chainId: OTHER_CHAIN_ID });
  expect(read.body.data.collection).toMatchObject({ ownerVerification: 'UNVERIFIED', contractOwner: null });
  const owner = await plain.key({ address: deployer() });
  const claim = await plain.rest('POST', `/v1/collections/${contract}/claim?chain_id=${OTHER_CHAIN_ID}`, {}, owner.key);
  expect(claim.status).toBe(409);
  expect(claim.body.error.message).toContain(`does not follow chain ${OTHER_CHAIN_ID} (no CHAIN_RPC_${OTHER_CHAIN_ID})`);
});

test("when the chain's node does not answer, then registering, changing and claiming are a 503 and nothing is written", async () => {
  const contract = await node.deploy('TestERC721Owned');
  const key = await deadNode.key();
  const rest = await deadNode.rest('POST', '/v1/collections', { contract_address: contract, chain_id: OTHER_CHAIN_ID }, key.key);
  expect(rest.status).toBe(503);
  expect(rest.body.error).toMatchObject({ code: 'UNAVAILABLE' });
  expect(rest.body.error.message).toContain(`the node of chain ${OTHER_CHAIN_ID} did not answer owner() of ${contract}`);
  const gql = await deadNode.gql(CREATE, { input: { contractAddress: contract, chainId: OTHER_CHAIN_ID } }, key.key);
  expect(gql.body.errors?.[0]).toMatchObject({ extensions: { code: 'UNAVAILABLE' } });
  expect(await deadNode.ds.query('SELECT 1 FROM collections WHERE chain_id = $1 AND contract_address = $2', [OTHER_CHAIN_ID, contract])).toEqual([]);

  const registered = await plain.rest('POST', '/v1/collections', { contract_address: contract, chain_id: OTHER_CHAIN_ID }, key.key);
  expect(registered.status).toBe(200);
  const claim = await deadNode.rest('POST', `/v1/collections/${contract}/claim?chain_id=${OTHER_CHAIN_ID}`, {}, key.key);
  expect(claim.status).toBe(503);
  expect(claim.headers.get('retry-after')).toBe('1');
  const update = await deadNode.gql(UPDATE, { id: contract, chainId: OTHER_CHAIN_ID, input: { name: 'Unchecked' } }, key.key);
  expect(update.body.errors?.[0]).toMatchObject({ extensions: { code: 'UNAVAILABLE' } });
  expect((await plain.rest('GET', `/v1/collections/${contract}?chain_id=${OTHER_CHAIN_ID}`)).body).toMatchObject({ name: contract, owner_verification: 'unverified' });
});

describe('a collection registered first-come, before its chain was followed', () => {
  let contract: string;
  let squatter: { key: string; address: string };
  /** owner() of the contract: an account whose key signs here. */
  const realOwner = privateKeyToAccount(generatePrivateKey());
  const ownerAddress = realOwner.address.toLowerCase();
  let claimant: { key: string; address: string };

  beforeAll(async () => {
    contract = await node.deploy('TestERC721Owned');
    await node.write(contract as `0x${string}`, deployer(), 'transferOwnership', [ownerAddress]);
    squatter = await plain.key();
    const created = await plain.rest('POST', '/v1/collections', { contract_address: contract, chain_id: CHAIN_ID, name: 'Squatted' }, squatter.key);
    expect(created.body).toMatchObject({ owner: squatter.address, owner_verification: 'unverified' });
    claimant = await api.key();
  });

  test("then the squatter may not change it where the chain is followed", async () => {
    const rest = await api.rest('PUT', `/v1/collections/${contract}?chain_id=${CHAIN_ID}`, { name: 'Still squatted' }, squatter.key);
    expect(rest.status).toBe(403);
    expect(rest.body.error.message).toContain('was never proven by owner()');
  });

  test("then a claim signed by someone else than owner(), or expired, or malformed, is refused on both doors", async () => {
    const stranger = privateKeyToAccount(generatePrivateKey());
    const wrong = await api.rest('POST', `/v1/collections/${contract}/claim?chain_id=${CHAIN_ID}`, await signedClaim(stranger, contract, CHAIN_ID, claimant.address, 'wrong-signer-1', inMinutes(10)), claimant.key);
    expect(wrong.status).toBe(403);
    expect(wrong.body.error.message).toContain(`not to the contract's owner() ${ownerAddress}`);
    // Signed by owner() for another claimant: the message this key would have signed is not the one signed.
    const forOther = await signedClaim(realOwner, contract, CHAIN_ID, squatter.address, 'for-the-squatter', inMinutes(10));
    expect((await api.rest('POST', `/v1/collections/${contract}/claim?chain_id=${CHAIN_ID}`, forOther, claimant.key)).status).toBe(403);
    const expired = await signedClaim(realOwner, contract, CHAIN_ID, claimant.address, 'expired-nonce', inMinutes(-1));
    const late = await api.rest('POST', `/v1/collections/${contract}/claim?chain_id=${CHAIN_ID}`, expired, claimant.key);
    expect(late.status).toBe(403);
    expect(late.body.error.message).toContain('the signed claim expired at');
    const gqlLate = await api.gql(CLAIM, { id: contract, chainId: CHAIN_ID, input: { signature: expired.signature, nonce: expired.nonce, expiresAt: expired.expires_at } }, claimant.key);
    expect(gqlLate.body.errors?.[0]).toMatchObject({ extensions: { code: 'FORBIDDEN' } });
    const tooFar = await signedClaim(realOwner, contract, CHAIN_ID, claimant.address, 'too-far-ahead', inMinutes(120));
    const far = await api.rest('POST', `/v1/collections/${contract}/claim?chain_id=${CHAIN_ID}`, tooFar, claimant.key);
    expect(far.status).toBe(422);
    expect(far.body.error.details).toEqual([expect.objectContaining({ field: 'expires_at' })]);
    const malformed = await api.rest('POST', `/v1/collections/${contract}/claim?chain_id=${CHAIN_ID}`, { signature: '0x1234', nonce: 'malformed-1', expires_at: inMinutes(5).toISOString() }, claimant.key);
    expect(malformed.status).toBe(422);
    const unsigned = await api.rest('POST', `/v1/collections/${contract}/claim?chain_id=${CHAIN_ID}`, {}, claimant.key);
    expect(unsigned.status).toBe(403);
    expect(unsigned.body.error.message).toContain(`may claim it with a signature by ${ownerAddress}`);
    expect((await api.rest('GET', `/v1/collections/${contract}?chain_id=${CHAIN_ID}`)).body).toMatchObject({ owner: squatter.address, owner_verification: 'unverified' });
  });

  test("then a claim signed by owner() gives the collection to the claiming key, once: the same signature again is refused", async () => {
    const signed = await signedClaim(realOwner, contract, CHAIN_ID, claimant.address, 'claim-nonce-1', inMinutes(10));
    const claimed = await api.gql(CLAIM, { id: contract, chainId: CHAIN_ID, input: { signature: signed.signature, nonce: signed.nonce, expiresAt: signed.expires_at } }, claimant.key);
    expect(claimed.body.errors).toBeUndefined();
    expect(claimed.body.data.claimCollection).toMatchObject({ owner: claimant.address, ownerVerification: 'VERIFIED', contractOwner: ownerAddress });

    const edited = await api.rest('PUT', `/v1/collections/${contract}?chain_id=${CHAIN_ID}`, { name: 'Claimed' }, claimant.key);
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({ name: 'Claimed', owner: claimant.address, owner_verification: 'verified', contract_owner: ownerAddress });
    expect((await api.rest('PUT', `/v1/collections/${contract}?chain_id=${CHAIN_ID}`, { name: 'Mine again' }, squatter.key)).status).toBe(403);

    const replayed = await api.rest('POST', `/v1/collections/${contract}/claim?chain_id=${CHAIN_ID}`, signed, claimant.key);
    expect(replayed.status).toBe(409);
    expect(replayed.body.error.message).toContain('was used already');
    const feed = await api.rest('GET', `/v1/events?types=collection.claimed&collection_id=${edited.body.id}`);
    expect(feed.body.result.map((e: { data: Record<string, unknown> }) => [e.data.owner, e.data.previous_owner])).toEqual([[claimant.address, squatter.address]]);
  });
});

const FIELDS = 'id owner ownerVerification contractOwner ownerCheckedAt';
const CREATE = `mutation ($input: CreateCollectionInput!) { createCollection(input: $input) { ${FIELDS} } }`;
const READ = `query ($id: String!, $chainId: String) { collection(id: $id, chainId: $chainId) { ${FIELDS} } }`;
const UPDATE = `mutation ($id: String!, $chainId: String, $input: UpdateCollectionInput!) { updateCollection(id: $id, chainId: $chainId, input: $input) { ${FIELDS} } }`;
const CLAIM = `mutation ($id: String!, $chainId: String, $input: ClaimCollectionInput) { claimCollection(id: $id, chainId: $chainId, input: $input) { ${FIELDS} } }`;
