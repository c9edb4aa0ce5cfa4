import { ChainSettings } from '../src/config';
import { startChainNode, ChainNode, until } from './setup/chain-node';
import { startServer, TestServer } from './setup/server';
import { startRpcProxy } from './setup/rpc-proxy';

/**
 * A reorg that lands while the follower is in the middle of a step, made deterministic by a JSON-RPC proxy
 * that holds one answer (the node's, read before the reorg) until the test has reorged the node:
 * - between a range's eth_getLogs and the read of its last block's hash: the logs are of the orphaned branch,
 *   the hash of the new one (kept, it would hide the reorg from every later step);
 * - between the step's look for a fork (the kept head still on the chain) and the read of the range above it:
 *   the range is of the new branch, the block below it kept from the orphaned one.
 * Either way the orphaned transfer must end undone (or never applied) and the new branch applied. Both databases.
 */
const CHAIN_ID = '31355';
let node: ChainNode;
let proxy: HoldingProxy;
let api: TestServer;
let follower: TestServer;

interface RpcCall {
  method?: string;
  params?: unknown[];
}

interface HoldingProxy {
  url: string;
  /**
   * The next call that `matches` (given what the node answered the proxy's last eth_blockNumber) is answered by
   * the node at once and its answer held: `seen` resolves then, and the answer is sent on `release()`.
   */
  holdNext(matches: (call: RpcCall, head: number) => boolean): { seen: Promise<void>; release: () => void };
  close(): Promise<void>;
}

async function startHoldingProxy(target: string): Promise<HoldingProxy> {
  let head = -1;
  let hold: { matches: (call: RpcCall, head: number) => boolean; seen: () => void; released: Promise<void> } | undefined;
  const proxy = await startRpcProxy(target, async ({ call }, answer) => {
    if (Array.isArray(call)) return answer;
    if (call.method === 'eth_blockNumber') head = Number((JSON.parse(answer) as { result: string }).result);
    const held = hold;
    if (held && held.matches(call, head)) {
      hold = undefined;
      held.seen();
      await held.released;
    }
    return answer;
  });
  return {
    ...proxy,
    holdNext(matches) {
      let seen!: () => void;
      let release!: () => void;
      const seenP = new Promise<void>((r) => (seen = r));
      const released = new Promise<void>((r) => (release = r));
      hold = { matches, seen, released };
      return { seen: seenP, release };
    },
  };
}

beforeAll(async () => {
  node = await startChainNode(Number(CHAIN_ID));
  proxy = await startHoldingProxy(node.url);
  api = await startServer();
  const chains: ChainSettings = { follow: [{ chainId: CHAIN_ID, rpcUrl: proxy.url, confirmations: 0 }], pollMs: 50, blockRange: 2000 };
  follower = await startServer({ chains });
});

afterAll(async () => {
  await follower?.close();
  await api?.close();
  await proxy?.close();
  await node?.close();
});

const hex = (n: number) => `0x${n.toString(16)}`;
const sync = () => api.rest('GET', `/v1/chains/${CHAIN_ID}/sync`);

/** A collection with token 1 minted to alice, applied by the follower. */
async function mintedToAlice(name: string) {
  const admin = await api.key({ admin: true });
  const contract = await node.deploy();
  expect((await api.rest('POST', '/v1/collections', { contract_address: contract, chain_id: CHAIN_ID, name }, admin.key)).status).toBe(200);
  const [, alice] = node.accounts;
  await node.mint(contract, alice, 1n);
  const asset = () => api.rest('GET', `/v1/assets/${contract}/1?chain_id=${CHAIN_ID}`);
  await until(asset, (r) => r.status === 200 && r.body.owner === alice, 'the mint');
  return { contract, asset };
}

/** Once the follower has applied the node's head block, as the node has it now. */
async function followerAtNodeHead() {
  const head = Number(await node.client.getBlockNumber());
  const block = await node.client.getBlock({ blockNumber: BigInt(head) });
  await until(sync, (r) => r.status === 200 && r.body.last_applied_block === head, `the follower at block ${head}`);
  await until(
    () => api.ds.query('SELECT hash FROM chain_blocks WHERE chain_id = $1 AND number = $2', [CHAIN_ID, head]),
    (rows: { hash: string }[]) => rows[0]?.hash === block.hash,
    `block ${head} kept with the node's hash`,
  );
  return head;
}

const transfersOf = async (contract: string) =>
  (await api.ds.query('SELECT to_address AS "to" FROM chain_transfers WHERE chain_id = $1 AND token_address = $2 ORDER BY block_number, log_index', [CHAIN_ID, contract])).map(
    (t: { to: string }) => t.to,
  );

test('when a reorg lands between a range\'s eth_getLogs and the read of its last block, then the orphaned transfer is not applied and the new branch is', async () => {
  const { contract, asset } = await mintedToAlice('Reorged while read');
  const [, alice, bob] = node.accounts;
  const fork = await followerAtNodeHead();
  const snapshot = await node.rpc<string>('evm_snapshot');
  // The range with the transfer's block is read from the node; its answer is held until the node has reorged.
  const held = proxy.holdNext((call) => call.method === 'eth_getLogs' && Number((call.params![0] as { toBlock: string }).toBlock) > fork);
  await node.transfer(contract, alice, bob, 1n);
  await held.seen;
  expect(await node.rpc('evm_revert', [snapshot])).toBe(true);
  await node.mine(3);
  held.release();

  const head = await followerAtNodeHead();
  expect(head).toBe(fork + 3);
  expect((await asset()).body.owner).toBe(alice);
  expect(await transfersOf(contract)).toEqual([alice]);
});

test('when a reorg lands between the step\'s look for a fork and the read of the range above it, then the step does not apply it: the next finds the fork and undoes the transfer', async () => {
  const { contract, asset } = await mintedToAlice('Reorged between reads');
  const [, alice, bob] = node.accounts;
  const snapshot = await node.rpc<string>('evm_snapshot');
  await node.transfer(contract, alice, bob, 1n);
  await until(asset, (r) => r.body.owner === bob, 'the transfer to bob');
  const transferBlock = await followerAtNodeHead();
  // The next step that sees a new head compares the kept head (the transfer's block) with the node: that answer,
  // read before the reorg, is held until the node has reorged; the range above it is then read from the new branch.
  const held = proxy.holdNext((call, head) => call.method === 'eth_getBlockByNumber' && call.params![0] === hex(transferBlock) && head > transferBlock);
  await node.mine(1);
  await held.seen;
  expect(await node.rpc('evm_revert', [snapshot])).toBe(true);
  await node.mine(4);
  held.release();

  const head = await followerAtNodeHead();
  expect(head).toBe(transferBlock - 1 + 4);
  const back = await until(asset, (r) => r.body.owner === alice, 'the transfer undone');
  expect(await transfersOf(contract)).toEqual([alice]);
  const feed = await api.rest('GET', `/v1/events?asset_id=${back.body.id}&types=asset.transferred,asset.transfer_reverted`);
  expect(feed.body.result.map((e: { type: string; data: { owner: string } }) => [e.type, e.data.owner])).toEqual([
    ['asset.transferred', bob],
    ['asset.transfer_reverted', alice],
  ]);
});
