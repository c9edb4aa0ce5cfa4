import { ChainNode, until } from './setup/chain-node';
import { OperatorChain, startOperatorChain } from './setup/operator-chain';
import type { TestServer } from './setup/server';

/**
 * Issue #41 item 4, fillability: with the chain's operator set, a listing whose seller revokes it on chain
 * (setApprovalForAll(operator, false), and no approve of the token to it) becomes inactive with reason
 * approval_revoked and cannot be bought on either door; approving again makes it active again; a reorg
 * undoes either. A local EVM node and OpenZeppelin's ERC721; both databases.
 */
const CHAIN_ID = '31343';
let world: OperatorChain;
let node: ChainNode;
let api: TestServer;
let operator: string;

beforeAll(async () => {
  world = await startOperatorChain(CHAIN_ID);
  ({ node, api, operator } = world);
});

afterAll(async () => {
  await world?.close();
});

type Listing = { id: string; status: string; inactive_reason: string | null };

/** A collection of a new contract, token 1 minted to alice and listed by her; the follower has applied the mint. */
async function listedToken(name: string) {
  const admin = await api.key({ admin: true });
  const contract = await node.deploy();
  expect((await api.rest('POST', '/v1/collections', { contract_address: contract, chain_id: CHAIN_ID, name }, admin.key)).status).toBe(200);
  const [, alice, bob] = node.accounts;
  await node.mint(contract, alice, 1n);
  const asset = () => api.rest('GET', `/v1/assets/${contract}/1?chain_id=${CHAIN_ID}`);
  const minted = await until(asset, (r) => r.status === 200 && r.body.owner === alice, 'the mint');
  const aliceKey = (await api.key({ address: alice })).key;
  const listed = await api.rest('POST', '/v1/assets/listing', { asset_id: minted.body.id, start_price: '2' }, aliceKey);
  expect(listed.status).toBe(200);
  // The listing as GraphQL shows it among the asset's listings of every status.
  const listing = async () => {
    const read = await api.gql(LISTINGS, { address: contract, chainId: CHAIN_ID });
    const found = read.body.data.asset.listings.result.find((l: { id: string }) => l.id === listed.body.id);
    return { body: { id: found.id, status: String(found.status).toLowerCase(), inactive_reason: found.inactiveReason } as Listing };
  };
  const buyer = await api.key({ address: bob });
  return { contract, alice, aliceKey, assetId: minted.body.id as string, listingId: listed.body.id as string, listing, asset, buyer };
}

const inactive = (r: { body: Listing }) => r.body.status === 'inactive' && r.body.inactive_reason === 'approval_revoked';
const active = (r: { body: Listing }) => r.body.status === 'active' && r.body.inactive_reason === null;

test('when the seller revokes the operator on chain, then the listing is inactive and unbuyable on both doors, and approving again restores it', async () => {
  const t = await listedToken('Revoked');
  await node.write(t.contract, t.alice, 'setApprovalForAll', [operator, true]);
  const revokeTx = await node.write(t.contract, t.alice, 'setApprovalForAll', [operator, false]);
  await until(t.listing, inactive, 'the listing inactive');

  const rest = await api.rest('POST', `/v1/listings/${t.listingId}/buy`, {}, t.buyer.key);
  expect(rest.status).toBe(409);
  expect(rest.body.error.message).toMatch(/inactive \(approval_revoked\): its seller no longer approves the marketplace operator/);
  const gql = await api.gql(BUY, { id: t.listingId }, t.buyer.key);
  expect(gql.body.errors?.[0]).toMatchObject({ extensions: { code: 'CONFLICT' } });
  expect(gql.body.errors?.[0].message).toMatch(/approval_revoked/);
  expect((await t.asset()).body.status).toBe('unlisted');
  const listed = await api.rest('GET', `/v1/assets?asset_contract=${t.contract}&chain_id=${CHAIN_ID}&status=listed`);
  expect(listed.body.result ?? listed.body).toEqual([]);
  expect((await api.gql(FLOOR, { address: t.contract, chainId: CHAIN_ID })).body.data.collection.floorListing).toBeNull();

  const approveTx = await node.write(t.contract, t.alice, 'setApprovalForAll', [operator, true]);
  await until(t.listing, active, 'the listing active again');
  expect((await t.asset()).body.status).toBe('listed');
  expect((await api.gql(FLOOR, { address: t.contract, chainId: CHAIN_ID })).body.data.collection.floorListing).toEqual({ id: t.listingId });

  const feed = await api.rest('GET', `/v1/events?asset_id=${t.assetId}&types=listing.inactivated,listing.reactivated`);
  expect(feed.body.result.map((e: { type: string; data: Record<string, unknown> }) => [e.type, e.data.transaction_hash, e.data.inactive_reason])).toEqual([
    ['listing.inactivated', revokeTx, 'approval_revoked'],
    ['listing.reactivated', approveTx, null],
  ]);
  const bought = await api.rest('POST', `/v1/listings/${t.listingId}/buy`, {}, t.buyer.key);
  expect(bought.status).toBe(200);
  expect(bought.body.status).toBe('completed');
});

test("when the token itself stays approved to the operator, then revoking for all leaves the listing; approving another address for the token takes it away", async () => {
  const t = await listedToken('Token approvals');
  const [, , , carol] = node.accounts;
  await node.write(t.contract, t.alice, 'approve', [operator, 1n]);
  await node.write(t.contract, t.alice, 'setApprovalForAll', [operator, false]);
  // A later block of the follower's: the revocation has been applied, the listing stays active.
  await node.mint(t.contract, carol, 2n);
  await until(() => api.rest('GET', `/v1/assets/${t.contract}/2?chain_id=${CHAIN_ID}`), (r) => r.status === 200, 'a later block applied');
  expect((await t.listing()).body).toMatchObject({ status: 'active' });

  await node.write(t.contract, t.alice, 'approve', [carol, 1n]);
  await until(t.listing, inactive, 'the listing inactive once the token is approved to another address');
  await node.write(t.contract, t.alice, 'approve', [operator, 1n]);
  await until(t.listing, active, 'the listing active with the token approved to the operator again');
});

test('when the follower saw the seller revoke the operator, then listing the token is refused on both doors', async () => {
  const t = await listedToken('Listing refused');
  expect((await api.rest('DELETE', `/v1/assets/listing/${t.contract}/1?chain_id=${CHAIN_ID}`, undefined, t.aliceKey)).status).toBe(200);
  await node.write(t.contract, t.alice, 'setApprovalForAll', [operator, false]);
  await until(() => api.ds.query('SELECT 1 FROM chain_approvals WHERE chain_id = $1 AND token_address = $2', [CHAIN_ID, t.contract]), (rows) => rows.length === 1, 'the revocation applied');

  const rest = await api.rest('POST', '/v1/assets/listing', { asset_id: t.assetId, start_price: '3' }, t.aliceKey);
  expect(rest.status).toBe(409);
  expect(rest.body.error.message).toContain(`no longer approves the marketplace operator ${operator} on chain ${CHAIN_ID} (approval_revoked)`);
  expect(rest.body.error.message).toContain(`setApprovalForAll(${operator}, true)`);
  const gql = await api.gql(LIST, { input: { assetId: t.assetId, startPrice: '3' } }, t.aliceKey);
  expect(gql.body.errors?.[0]).toMatchObject({ extensions: { code: 'CONFLICT' } });
  expect(gql.body.errors?.[0].message).toMatch(/approval_revoked/);
});

test('when a reorg takes back a revocation, the listing is active again; when it takes back a re-approval, inactive again', async () => {
  const t = await listedToken('Reorged approvals');
  const beforeRevoke = await node.rpc<string>('evm_snapshot');
  const revokeTx = await node.write(t.contract, t.alice, 'setApprovalForAll', [operator, false]);
  await until(t.listing, inactive, 'the listing inactive');
  expect(await node.rpc('evm_revert', [beforeRevoke])).toBe(true);
  await node.mine(2);
  await until(t.listing, active, 'the revocation undone');

  await node.write(t.contract, t.alice, 'setApprovalForAll', [operator, false]);
  await until(t.listing, inactive, 'the listing inactive on the new branch');
  const beforeApprove = await node.rpc<string>('evm_snapshot');
  const approveTx = await node.write(t.contract, t.alice, 'setApprovalForAll', [operator, true]);
  await until(t.listing, active, 'the listing active again');
  expect(await node.rpc('evm_revert', [beforeApprove])).toBe(true);
  await node.mine(2);
  await until(t.listing, inactive, 'the re-approval undone');

  const feed = await api.rest('GET', `/v1/events?asset_id=${t.assetId}&types=listing.inactivated,listing.reactivated`);
  expect(feed.body.result.map((e: { type: string; data: Record<string, unknown> }) => [e.type, e.data.reason === 'reorg' ? 'reorg' : 'log'])).toEqual([
    ['listing.inactivated', 'log'],
    ['listing.reactivated', 'reorg'],
    ['listing.inactivated', 'log'],
    ['listing.reactivated', 'log'],
    ['listing.inactivated', 'reorg'],
  ]);
  expect(feed.body.result[1].data.transaction_hash).toBe(revokeTx);
  expect(feed.body.result[4].data.transaction_hash).toBe(approveTx);
});

const BUY = `mutation ($id: ID!) { buyListing(listingId: $id) { id } }`;
const LIST = `mutation ($input: CreateListingInput!) { createListing(input: $input) { id } }`;
const LISTINGS = `query ($address: Address!, $chainId: String) { asset(tokenAddress: $address, tokenId: "1", chainId: $chainId) { listings { result { id status inactiveReason } } } }`;
const FLOOR = `query ($address: Address!, $chainId: String) { collection(address: $address, chainId: $chainId, includeAssets: false) { floorListing { id } } }`;
