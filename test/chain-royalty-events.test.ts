import { ChainNode, until } from './setup/chain-node';
import { TestServer } from './setup/server';
import { subscribe } from './setup/subscriber';
import { startReceiver } from './setup/webhook-receiver';
import { startFollowedChain } from './factories/metadata';

/**
 * Issue #41: an ERC-2981 royalty that changes on chain says so. A collection's royalty read again that differs
 * from the last read writes `collection.royalties_updated`, a token's own royalty set, changed or gone writes
 * `asset.royalties_updated` (the feed, subscriptions and webhooks), each counted in
 * gateway_chain_royalties_changed_total; a read that finds the same royalty writes nothing. A local EVM node with
 * test/chain/TestERC721Metadata.sol (OpenZeppelin's ERC721Royalty), both databases.
 */
const CHAIN_ID = '31351';
let node: ChainNode;
let api: TestServer;
let admin: { key: string; address: string };

beforeAll(async () => {
  // Deliveries to a receiver on loopback, polled often.
  ({ node, api, admin } = await startFollowedChain(CHAIN_ID, {
    webhooks: { deliver: true, allowPrivate: true, timeoutMs: 2000, backoffBaseMs: 100, backoffMaxMs: 400, retryWindowMs: 10_000, pollMs: 50 },
  }));
});

afterAll(async () => {
  await api?.close();
  await node?.close();
});

type Royalty = { address: string; basis_points: number };
type FeedEvent = { type: string; asset_id: string | null; data: Record<string, unknown> };
const royalty = (address: string, basisPoints: number): Royalty[] => [{ address, basis_points: basisPoints }];
const collectionPath = (contract: string) => `/v1/collections/${contract}?chain_id=${CHAIN_ID}`;
const assetPath = (contract: string, tokenId: number) => `/v1/assets/${contract}/${tokenId}?chain_id=${CHAIN_ID}`;
const feed = async (query: string): Promise<FeedEvent[]> => (await api.rest('GET', `/v1/events?${query}&limit=100`)).body.result;

/** gateway_chain_royalties_changed_total of this file's chain for `subject`, as /metrics shows it. */
async function changesCounted(subject: 'collection' | 'asset'): Promise<number> {
  const text = await (await fetch(`${api.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`gateway_chain_royalties_changed_total{chain_id="${CHAIN_ID}",subject="${subject}"} `));
  return line ? Number(line.split(' ').pop()) : 0;
}

/** A refresh of the collection, once the follower has read its royalty (and its tokens') again. */
async function refreshedCollection(contract: string, collectionId: string) {
  expect((await api.rest('POST', `/v1/collections/${contract}/refresh`, { chain_id: CHAIN_ID }, admin.key)).status).toBe(200);
  await until(
    () => api.ds.query('SELECT due FROM chain_collection_royalties WHERE collection_id = $1', [collectionId]),
    (rows: { due: boolean }[]) => rows[0]?.due === false,
    "the collection's royalty read again",
  );
  await tokenReadsDone(collectionId);
}

/** Once no token of the collection waits for its tokenURI and royalty to be read. */
const tokenReadsDone = (collectionId: string) =>
  until(
    () => api.ds.query('SELECT count(*)::int AS n FROM chain_token_uris_pending p JOIN assets a ON a.id = p.asset_id WHERE a.collection_id = $1', [collectionId]),
    (rows: { n: number }[]) => rows[0].n === 0,
    "the tokens' reads",
  );

test("when a collection's royalty changes on chain, then its refresh writes collection.royalties_updated on the feed, GraphQL and a webhook, and a refresh that reads the same one writes nothing", async () => {
  const [, first, second] = node.accounts;
  const contract = await node.deploy('TestERC721Metadata');
  await node.write(contract, node.accounts[0], 'setDefaultRoyalty', [first, 250n]);
  const counted = await changesCounted('collection');
  // Registered before the collection: the follower reads its royalty as soon as it is.
  const receiver = await startReceiver();
  const hook = await api.rest('POST', '/v1/webhooks', { url: receiver.url, event_types: ['collection.royalties_updated'] }, admin.key);
  expect(hook.status).toBe(200);
  const created = await api.rest('POST', '/v1/collections', { contract_address: contract, chain_id: CHAIN_ID }, admin.key);
  expect(created.status).toBe(200);
  const id = created.body.id as string;
  try {
    // The first read: a royalty where none was known.
    await until(async () => (await api.rest('GET', collectionPath(contract))).body.fees, (f: unknown[]) => f.length > 0, "the collection's royalty");
    const types = `collection_id=${id}&types=collection.royalties_updated`;
    await until(() => feed(types), (e) => e.length === 1, 'the first royalty event');

    await refreshedCollection(contract, id);
    expect(await feed(types)).toHaveLength(1);

    await node.write(contract, node.accounts[0], 'setDefaultRoyalty', [second, 500n]);
    await refreshedCollection(contract, id);
    const events = await feed(types);
    expect(events.map((e) => [e.data.royalties, e.data.previous_royalties])).toEqual([
      [royalty(first, 250), []],
      [royalty(second, 500), royalty(first, 250)],
    ]);
    // The data is the collection as it then stood: its fees show the new royalty.
    expect(events[1].data).toMatchObject({ id });
    expect((await api.rest('GET', collectionPath(contract))).body.fees).toEqual([{ address: second, basis_points: 500, type: 'royalty' }]);
    const gql = await api.gql(`query ($c: String) { events(collectionId: $c, types: ["collection.royalties_updated"]) { result { type data } } }`, { c: id });
    expect(gql.body.errors).toBeUndefined();
    expect(gql.body.data.events.result.map((e: { data: { royalties: Royalty[] } }) => e.data.royalties)).toEqual([royalty(first, 250), royalty(second, 500)]);
    const delivered = () => receiver.bodies.map((b) => JSON.parse(b) as { type: string; data: { id: string; royalties: Royalty[] } }).filter((b) => b.data.id === id);
    await until(async () => delivered().length, (n) => n === 2, 'the webhook deliveries', 30_000);
    expect(delivered().map((b) => [b.type, b.data.royalties])).toEqual([
      ['collection.royalties_updated', royalty(first, 250)],
      ['collection.royalties_updated', royalty(second, 500)],
    ]);
    expect(await changesCounted('collection')).toBe(counted + 2);
  } finally {
    await receiver.close();
  }
});

test("when a token's own royalty is set, changed or set back to its collection's, then asset.royalties_updated says so on the feed and a subscription, and a token whose royalty stays gets none", async () => {
  const [, holder, defaultReceiver, ownReceiver] = node.accounts;
  const contract = await node.deploy('TestERC721Metadata');
  await node.write(contract, node.accounts[0], 'setDefaultRoyalty', [defaultReceiver, 250n]);
  await node.write(contract, node.accounts[0], 'setTokenRoyalty', [2n, ownReceiver, 1000n]);
  const created = await api.rest('POST', '/v1/collections', { contract_address: contract, chain_id: CHAIN_ID }, admin.key);
  const id = created.body.id as string;
  await until(async () => (await api.rest('GET', collectionPath(contract))).body.fees, (f: unknown[]) => f.length > 0, "the collection's royalty");
  const counted = await changesCounted('asset');
  const live = subscribe(api.url, { collectionId: id, types: ['asset.royalties_updated'] });
  try {
    await live.until(() => live.connected, 5000, 'the subscription');
    for (const tokenId of [1n, 2n]) await node.write(contract, node.accounts[0], 'mint', [holder, tokenId, '']);
    const types = `collection_id=${id}&types=asset.royalties_updated`;
    // Token 2 declares its own royalty at its mint; token 1 its collection's: no event.
    await until(() => feed(types), (e) => e.length === 1, "token 2's royalty event");
    await tokenReadsDone(id);
    const token = async (tokenId: number) => (await api.rest('GET', assetPath(contract, tokenId))).body.id as string;
    const [one, two] = [await token(1), await token(2)];
    expect((await feed(types)).map((e) => [e.asset_id, e.data.royalties, e.data.previous_royalties])).toEqual([[two, royalty(ownReceiver, 1000), royalty(defaultReceiver, 250)]]);

    // Read again unchanged: nothing.
    for (const tokenId of [1, 2]) expect((await api.rest('POST', `/v1/assets/${contract}/${tokenId}/refresh`, { chain_id: CHAIN_ID }, admin.key)).status).toBe(200);
    await tokenReadsDone(id);
    expect(await feed(types)).toHaveLength(1);

    await node.write(contract, node.accounts[0], 'setTokenRoyalty', [1n, ownReceiver, 500n]);
    await node.write(contract, node.accounts[0], 'setTokenRoyalty', [2n, defaultReceiver, 250n]);
    for (const tokenId of [1, 2]) expect((await api.rest('POST', `/v1/assets/${contract}/${tokenId}/refresh`, { chain_id: CHAIN_ID }, admin.key)).status).toBe(200);
    await tokenReadsDone(id);
    const events = await feed(types);
    expect(events.slice(1).map((e) => [e.asset_id, e.data.royalties, e.data.previous_royalties]).sort()).toEqual(
      [
        [one, royalty(ownReceiver, 500), royalty(defaultReceiver, 250)],
        [two, royalty(defaultReceiver, 250), royalty(ownReceiver, 1000)],
      ].sort(),
    );
    // The asset as it then stood: token 1's fees its own royalty.
    expect((await api.rest('GET', assetPath(contract, 1))).body.fees).toEqual([{ address: ownReceiver, basis_points: 500, type: 'royalty' }]);
    await live.until(() => live.events.length === 3, 5000, 'the subscription to receive the three events');
    expect(live.events.map((e) => [e.type, e.assetId])).toEqual(events.map((e) => ['asset.royalties_updated', e.asset_id]));
    expect(await changesCounted('asset')).toBe(counted + 3);
  } finally {
    await live.stop();
  }
});
