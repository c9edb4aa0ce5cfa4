import { ChainSettings } from '../src/config';
import { startChainNode, ChainNode, until } from './setup/chain-node';
import { startServer, TestServer } from './setup/server';
import { startRpcProxy } from './setup/rpc-proxy';

/**
 * Issue #30: the ranges a follower reads and the transactions it applies them in. Through a proxy that
 * refuses an eth_getLogs answer of more than RESULT_LIMIT logs, as many providers do ("query returned more
 * than 10000 results"), the range (from CHAIN_BLOCK_RANGE / 64 at start) grows while answers are small, is
 * halved when one is refused, and grows to CHAIN_BLOCK_RANGE where the chain is sparse; a range read whole is applied in steps of whole blocks, CHAIN_STEP_TRANSFERS at most
 * each. Both databases.
 */
const CHAIN_ID = '31341';
const RESULT_LIMIT = 5;
const BLOCK_RANGE = 64;
let node: ChainNode;
let proxy: LogLimitProxy;
let api: TestServer;
let follower: TestServer | undefined;

/** An eth_getLogs the proxy saw: its blocks and whether the node's answer was passed on. */
interface LogRead {
  from: number;
  to: number;
  answered: boolean;
}

interface LogLimitProxy {
  url: string;
  reads: LogRead[];
  close(): Promise<void>;
}

/** A JSON-RPC proxy in front of the node that answers an eth_getLogs of more than `limit` logs with the error providers give. */
async function startLogLimitProxy(target: string, limit: number): Promise<LogLimitProxy> {
  const reads: LogRead[] = [];
  const proxy = await startRpcProxy(target, ({ call }, answer) => {
    if (Array.isArray(call) || call.method !== 'eth_getLogs') return answer;
    const logs = (JSON.parse(answer) as { result?: unknown[] }).result ?? [];
    const range = call.params![0] as { fromBlock: string; toBlock: string };
    const read = { from: Number(range.fromBlock), to: Number(range.toBlock), answered: logs.length <= limit };
    reads.push(read);
    return read.answered ? answer : JSON.stringify({ jsonrpc: '2.0', id: call.id, error: { code: -32005, message: `query returned more than ${limit} results` } });
  });
  return { ...proxy, reads };
}

beforeAll(async () => {
  node = await startChainNode(Number(CHAIN_ID));
  proxy = await startLogLimitProxy(node.url, RESULT_LIMIT);
  api = await startServer();
});

afterAll(async () => {
  await follower?.close();
  await api?.close();
  await proxy?.close();
  await node?.close();
});

test('when a node refuses answers with too many logs, then the range starts small, is halved where the chain is dense and grows where it is sparse, each transfer applied once', async () => {
  const admin = await api.key({ admin: true });
  const contract = await node.deploy();
  const deployed = Number(await node.client.getBlockNumber());
  const [, alice, bob] = node.accounts;
  // A dense stretch (a mint in each of 40 blocks: the range, from 1 block, grows to 8 over them), a sparse one (300 empty blocks), then 3 transfers.
  for (let id = 0n; id < 40n; id++) await node.mint(contract, alice, id);
  await node.rpc('evm_mine', [{ blocks: 300 }]);
  for (let id = 0n; id < 3n; id++) await node.transfer(contract, alice, bob, id);
  const head = Number(await node.client.getBlockNumber());
  const created = await api.rest('POST', '/v1/collections', { contract_address: contract, chain_id: CHAIN_ID, name: 'Ranges', start_block: deployed }, admin.key);
  expect(created.status).toBe(200);

  const chains: ChainSettings = { follow: [{ chainId: CHAIN_ID, rpcUrl: proxy.url, confirmations: 0 }], pollMs: 50, blockRange: BLOCK_RANGE };
  follower = await startServer({ chains });
  // Some 60 steps of a few blocks each (a loaded machine takes its time over them).
  await until(() => api.rest('GET', `/v1/chains/${CHAIN_ID}/sync`), (r) => r.status === 200 && r.body.last_applied_block === head, 'the follower at the head', 60_000);

  const answered = proxy.reads.filter((r) => r.answered);
  const blocks = (r: LogRead) => r.to - r.from + 1;
  // A first range of CHAIN_BLOCK_RANGE / 64 blocks, grown over the mints until the node refused it, then halved...
  expect(proxy.reads[0]).toEqual({ from: deployed, to: deployed, answered: true });
  const refused = proxy.reads.findIndex((r) => !r.answered);
  expect(refused).toBeGreaterThan(0);
  expect(blocks(proxy.reads[refused])).toBeGreaterThan(RESULT_LIMIT);
  expect(blocks(proxy.reads[refused + 1])).toBe(blocks(proxy.reads[refused]) / 2);
  // ...and back to the full range over the empty blocks, before the last transfers.
  const last = answered[answered.length - 1];
  expect(answered.some((r) => r.from > deployed + 40 && r.to < last.from && blocks(r) === BLOCK_RANGE)).toBe(true);
  // The answered ranges follow each other from the start block to the head: none skipped, none read twice.
  expect(answered[0].from).toBe(deployed);
  for (let i = 1; i < answered.length; i++) expect(answered[i].from).toBe(answered[i - 1].to + 1);
  expect(last.to).toBeGreaterThanOrEqual(head);

  const transfers = await api.ds.query(
    'SELECT token_id::int AS token, to_address AS "to" FROM chain_transfers WHERE chain_id = $1 AND token_address = $2 ORDER BY block_number, log_index',
    [CHAIN_ID, contract],
  );
  expect(transfers).toEqual([
    ...Array.from({ length: 40 }, (_, token) => ({ token, to: alice })),
    ...Array.from({ length: 3 }, (_, token) => ({ token, to: bob })),
  ]);
  const owners = await api.ds.query('SELECT token_id::int AS token, owner FROM assets WHERE chain_id = $1 AND token_address = $2 ORDER BY token_id', [CHAIN_ID, contract]);
  expect(owners).toEqual(Array.from({ length: 40 }, (_, token) => ({ token, owner: token < 3 ? bob : alice })));
  const [{ created: createdEvents, transferred }] = await api.ds.query(
    `SELECT count(*) FILTER (WHERE e.type = 'asset.created')::int AS created, count(*) FILTER (WHERE e.type = 'asset.transferred')::int AS transferred
     FROM events e JOIN assets a ON a.id = e.asset_id WHERE a.chain_id = $1 AND a.token_address = $2`,
    [CHAIN_ID, contract],
  );
  expect({ createdEvents, transferred }).toEqual({ createdEvents: 40, transferred: 3 });
});

test('when a range holds more transfers than a step takes, then it is applied in several transactions of whole blocks, each transfer once', async () => {
  await follower?.close();
  const admin = await api.key({ admin: true });
  const contract = await node.deploy();
  const deployed = Number(await node.client.getBlockNumber());
  const [minter, alice, bob] = node.accounts;
  // Blocks of 8, 8, 8, 8 and 12 mints, then a block with one transfer: one read of the whole range.
  for (let i = 0n; i < 4n; i++) await node.write(contract, minter, 'mintBatch', [alice, i * 8n, 8n]);
  await node.write(contract, minter, 'mintBatch', [alice, 32n, 12n]);
  await node.transfer(contract, alice, bob, 0n);
  const head = Number(await node.client.getBlockNumber());
  expect((await api.rest('POST', '/v1/collections', { contract_address: contract, chain_id: CHAIN_ID, name: 'Steps', start_block: deployed }, admin.key)).status).toBe(200);

  const chains: ChainSettings = { follow: [{ chainId: CHAIN_ID, rpcUrl: node.url, confirmations: 0 }], pollMs: 50, blockRange: 2000, stepTransfers: 10 };
  follower = await startServer({ chains });
  await until(() => api.rest('GET', `/v1/chains/${CHAIN_ID}/sync`), (r) => r.status === 200 && r.body.last_applied_block === head, 'the follower at the head', 30_000);

  // One transaction per block here (two blocks of 8 are over 10), the block of 12 whole; xmin is the writing transaction.
  const steps = await api.ds.query(
    `SELECT count(*)::int AS transfers, count(DISTINCT block_number)::int AS blocks FROM chain_transfers WHERE chain_id = $1 AND token_address = $2
     GROUP BY xmin::text ORDER BY min(block_number)`,
    [CHAIN_ID, contract],
  );
  expect(steps).toEqual([8, 8, 8, 8, 12, 1].map((transfers) => ({ transfers, blocks: 1 })));
  const owners = await api.ds.query('SELECT token_id::int AS token, owner FROM assets WHERE chain_id = $1 AND token_address = $2 ORDER BY token_id', [CHAIN_ID, contract]);
  expect(owners).toEqual(Array.from({ length: 44 }, (_, token) => ({ token, owner: token === 0 ? bob : alice })));
  const events = await api.ds.query(
    `SELECT e.type, count(*)::int AS n FROM events e JOIN assets a ON a.id = e.asset_id WHERE a.chain_id = $1 AND a.token_address = $2 GROUP BY e.type ORDER BY e.type`,
    [CHAIN_ID, contract],
  );
  expect(events).toEqual([
    { type: 'asset.created', n: 44 },
    { type: 'asset.transferred', n: 1 },
  ]);
});
