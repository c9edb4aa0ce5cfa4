import { withEvents } from '../src/modules/event/event.log';
import { failOverdueSettlements } from '../src/modules/order/settlement';
import { ACCEPT_OFFER, saveOffer } from './factories/market';
import { ChainNode, until } from './setup/chain-node';
import { OperatorChain, startOperatorChain } from './setup/operator-chain';
import type { TestServer } from './setup/server';

/**
 * Issue #41 item 4, fillability beyond a buy: on a followed chain with the operator set, an owner who
 * revoked the operator cannot accept an offer (409 on both doors, saying how to approve again), and a sale
 * whose transfer never came does not bring back a listing whose seller revoked the operator meanwhile (the
 * expiry sweeper's deadline_passed release leaves it inactive, approval_revoked; approving again restores
 * it). A local EVM node and OpenZeppelin's ERC721; sales settle on chain; both databases.
 */
const CHAIN_ID = '31347';
let world: OperatorChain;
let node: ChainNode;
let api: TestServer;
let operator: string;

beforeAll(async () => {
  world = await startOperatorChain(CHAIN_ID, { settlement: { mode: 'chain', deadlineSeconds: 3600 } });
  ({ node, api, operator } = world);
});

afterAll(async () => {
  await world?.close();
});

/** A collection of a new contract, token 1 minted to alice; the follower has applied the mint. */
async function mintedToken(name: string) {
  const admin = await api.key({ admin: true });
  const contract = await node.deploy();
  expect((await api.rest('POST', '/v1/collections', { contract_address: contract, chain_id: CHAIN_ID, name }, admin.key)).status).toBe(200);
  const [, alice, bob] = node.accounts;
  await node.mint(contract, alice, 1n);
  const minted = await until(() => api.rest('GET', `/v1/assets/${contract}/1?chain_id=${CHAIN_ID}`), (r) => r.status === 200 && r.body.owner === alice, 'the mint');
  const aliceKey = (await api.key({ address: alice })).key;
  const bobKey = (await api.key({ address: bob })).key;
  /** Waits until the follower has applied `count` approval rows of the contract (on this chain: another file's node deploys at the same addresses). */
  const approvalsApplied = (count: number) =>
    until(
      () => api.ds.query('SELECT 1 FROM chain_approvals WHERE chain_id = $1 AND token_address = $2', [CHAIN_ID, contract]),
      (rows) => rows.length === count,
      `${count} approval logs applied`,
    );
  return { contract, alice, aliceKey, bobKey, assetId: minted.body.id as string, approvalsApplied };
}

test('when the owner revoked the operator, then accepting an offer is refused on both doors; once approved again, it is accepted', async () => {
  const t = await mintedToken('Offer refused');
  const offer = await saveOffer(api, t.bobKey, t.assetId, { price: 2 });
  await node.write(t.contract, t.alice, 'setApprovalForAll', [operator, false]);
  await t.approvalsApplied(1);

  const rest = await api.rest('POST', '/v1/offers/accept', { offer_id: offer.id }, t.aliceKey);
  expect(rest.status).toBe(409);
  expect(rest.body.error.message).toContain(`no longer approves the marketplace operator ${operator} on chain ${CHAIN_ID} (approval_revoked)`);
  expect(rest.body.error.message).toContain(`setApprovalForAll(${operator}, true)`);
  const gql = await api.gql(ACCEPT_OFFER, { offerId: offer.id }, t.aliceKey);
  expect(gql.body.errors?.[0]).toMatchObject({ extensions: { code: 'CONFLICT' } });
  expect(gql.body.errors?.[0].message).toMatch(/approval_revoked/);
  expect(await api.ds.query('SELECT id FROM orders WHERE asset_id = $1', [t.assetId])).toEqual([]);
  expect((await api.rest('GET', `/v1/offers/${offer.id}`)).body).toMatchObject({ status: 'active', reserved: 0 });

  await node.write(t.contract, t.alice, 'setApprovalForAll', [operator, true]);
  await t.approvalsApplied(2);
  const accepted = await api.rest('POST', '/v1/offers/accept', { offer_id: offer.id }, t.aliceKey);
  expect(accepted.status).toBe(200);
  expect(accepted.body.status).toBe('pending');
});

test("when a sale's deadline passes after its seller revoked the operator, then the sweeper leaves the listing inactive (approval_revoked); approving again reactivates it", async () => {
  const t = await mintedToken('Sweeper re-checks');
  const listed = await api.rest('POST', '/v1/assets/listing', { asset_id: t.assetId, start_price: '2' }, t.aliceKey);
  expect(listed.status).toBe(200);
  const bought = await api.rest('POST', `/v1/listings/${listed.body.id}/buy`, {}, t.bobKey);
  expect(bought.status).toBe(200);
  expect(bought.body.status).toBe('pending');
  // The seller revokes while the sale awaits its transfer, which never comes.
  await node.write(t.contract, t.alice, 'setApprovalForAll', [operator, false]);
  await t.approvalsApplied(1);
  await api.ds.query(`UPDATE orders SET settlement_deadline = now() - interval '1 second' WHERE id = $1`, [bought.body.id]);
  await withEvents(api.ds, (m, events) => failOverdueSettlements(m, events, new Date(), 100));

  expect((await api.rest('GET', `/v1/orders/${bought.body.id}`)).body.status).toBe('failed');
  const listing = async () => (await api.ds.query('SELECT status, inactive_reason AS reason FROM listings WHERE id = $1', [listed.body.id]))[0];
  expect(await listing()).toEqual({ status: 'inactive', reason: 'approval_revoked' });
  const asset = await api.rest('GET', `/v1/assets/${t.contract}/1?chain_id=${CHAIN_ID}`);
  expect(asset.body.status).toBe('unlisted');
  const again = await api.rest('POST', `/v1/listings/${listed.body.id}/buy`, {}, t.bobKey);
  expect(again.status).toBe(409);
  expect(again.body.error.message).toMatch(/inactive \(approval_revoked\)/);
  const feed = await api.rest('GET', `/v1/events?asset_id=${t.assetId}&types=listing.inactivated,listing.reactivated`);
  expect(feed.body.result.map((e: { type: string; data: Record<string, unknown> }) => [e.type, e.data.reason, e.data.inactive_reason])).toEqual([
    ['listing.inactivated', 'deadline_passed', 'approval_revoked'],
  ]);

  await node.write(t.contract, t.alice, 'setApprovalForAll', [operator, true]);
  await until(listing, (l) => l.status === 'active', 'the listing active again');
  expect((await api.rest('GET', `/v1/assets/${t.contract}/1?chain_id=${CHAIN_ID}`)).body.status).toBe('listed');
});
