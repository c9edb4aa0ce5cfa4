import { ChainSettings } from '../src/config';
import { startChainNode, ChainNode, until } from './setup/chain-node';
import { startServer, TestServer } from './setup/server';
import { startGatewayProcess } from './setup/gateway-process';

/**
 * Issue #30: two gateway servers on one PostgreSQL database, each configured to follow the chain: one
 * follows it (the chain's advisory lock), the other takes over when the first stops; then the real service,
 * set by CHAIN_RPC_<id>, takes over from the last. On PostgreSQL only:
 * the embedded database is one process's.
 */
const onPostgres = Boolean(process.env.DATABASE_URL);
if (!onPostgres) console.log('chain-lock.test.ts skipped: the follower lock is PostgreSQL\'s (DATABASE_URL); the embedded database is one process');

const CHAIN_ID = '31338';
let node: ChainNode;
let gateways: TestServer[] = [];

(onPostgres ? describe : describe.skip)('two gateways, one chain', () => {
  beforeAll(async () => {
    node = await startChainNode(Number(CHAIN_ID));
    const chains: ChainSettings = { follow: [{ chainId: CHAIN_ID, rpcUrl: node.url, confirmations: 0 }], pollMs: 50, blockRange: 2000 };
    gateways = await Promise.all([startServer({ chains }), startServer({ chains })]);
  });

  afterAll(async () => {
    await Promise.all(gateways.map((g) => g.close()));
    await node?.close();
  });

  test('when two gateways follow one chain, then one applies each transfer once, and the other takes over when it stops', async () => {
    const [a, b] = gateways;
    const admin = await a.key({ admin: true });
    const contract = await node.deploy();
    const created = await a.rest('POST', '/v1/collections', { contract_address: contract, chain_id: CHAIN_ID, name: 'Locked' }, admin.key);
    expect(created.status).toBe(200);
    const [, alice, bob] = node.accounts;
    await node.mint(contract, alice, 1n);
    await node.transfer(contract, alice, bob, 1n);

    const followingNow = () => gateways.map((g) => g.app.chainFollowers[0].following);
    await until(async () => followingNow(), (f) => f.filter(Boolean).length === 1, 'one follower');
    const owner = () => b.rest('GET', `/v1/assets/${contract}/1?chain_id=${CHAIN_ID}`);
    const asset = await until(owner, (r) => r.status === 200 && r.body.owner === bob, 'the transfer applied');
    // Both kept polling meanwhile; still one follows, and each transfer is in the log once.
    await new Promise((r) => setTimeout(r, 300));
    expect(followingNow().filter(Boolean)).toHaveLength(1);
    const feed = await a.rest('GET', `/v1/events?asset_id=${asset.body.id}&types=asset.created,asset.transferred`);
    expect(feed.body.result.map((e: { type: string }) => e.type)).toEqual(['asset.created', 'asset.transferred']);

    const leader = gateways[followingNow().indexOf(true)];
    const other = gateways.find((g) => g !== leader)!;
    await leader.close();
    gateways = [other];
    await until(async () => other.app.chainFollowers[0].following, Boolean, 'the other gateway to take over');
    await node.transfer(contract, bob, alice, 1n);
    await until(() => other.rest('GET', `/v1/assets/${contract}/1?chain_id=${CHAIN_ID}`), (r) => r.body.owner === alice, 'the transfer after the takeover');

    // The real service, set by its environment, waits for the lock; when the last server stops, it follows.
    const service = await startGatewayProcess({ [`CHAIN_RPC_${CHAIN_ID}`]: node.url, CHAIN_CONFIRMATIONS: '0', CHAIN_POLL_MS: '50', SEED_DEMO: 'false' });
    try {
      const ready = await fetch(`${service.url}/readyz`);
      expect(await ready.json()).toEqual({ status: 'ready', chains: [{ chainId: CHAIN_ID, lag: 0, lastError: null }] });
      await other.close();
      gateways = [];
      await node.transfer(contract, alice, bob, 1n);
      const read = async () => (await (await fetch(`${service.url}/v1/assets/${contract}/1?chain_id=${CHAIN_ID}`)).json()) as { owner: string };
      await until(read, (body) => body.owner === bob, 'the service to take over');
    } finally {
      expect(await service.stop()).toBe(0);
    }
  });
});
