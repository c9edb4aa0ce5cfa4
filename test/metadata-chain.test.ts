import { MetadataSettings } from '../src/config';
import { startChainNode, ChainNode, until } from './setup/chain-node';
import { startServer, TestServer } from './setup/server';

/**
 * A token minted on chain has its tokenURI document queued once the follower has read the URI (issue #41
 * item 1). The server runs no fetch worker: test files share the run's database, and a worker here would
 * take the rows of test/metadata.test.ts (which fetches them) with its own settings.
 */
// A chain of its own: chain-follow's contracts on 31337 (the same fixed wallets, the same addresses) would collide with these.
const CHAIN_ID = 31354;
let node: ChainNode;
let api: TestServer;

const metadata: MetadataSettings = {
  fetch: false,
  allowPrivate: false,
  ipfsGateway: 'https://ipfs.io/ipfs/',
  arweaveGateway: 'https://arweave.net/',
  timeoutMs: 2000,
  maxBytes: 65536,
  maxRedirects: 3,
  concurrency: 8,
  hostConcurrency: 4,
  maxAttempts: 2,
  backoffBaseMs: 50,
  backoffMaxMs: 100,
  pollMs: 50,
  refreshIntervalS: 60,
};

beforeAll(async () => {
  node = await startChainNode(CHAIN_ID);
  api = await startServer({ chains: { follow: [{ chainId: String(CHAIN_ID), rpcUrl: node.url, confirmations: 0 }], pollMs: 50, blockRange: 2000 }, metadata });
});

afterAll(async () => {
  await api?.close();
  await node?.close();
});

test('when a token is minted on chain, then its tokenURI document is queued and the asset shows it pending', async () => {
  const admin = await api.key({ admin: true });
  const contract = await node.deploy();
  await api.rest('POST', '/v1/collections', { contract_address: contract, chain_id: String(CHAIN_ID) }, admin.key);
  await node.mint(contract, node.accounts[1], 3n);

  const asset = await until(
    () => api.rest('GET', `/v1/assets/${contract}/3?chain_id=${CHAIN_ID}`),
    (r) => r.status === 200 && r.body.metadata_status !== null,
    'the metadata fetch to be queued',
    15_000,
  );
  expect(asset.body.metadata).toEqual({ token_uri: 'https://nft.test/token/3' });
  // A worker of another test file sharing the database may already be trying it (nft.test never resolves).
  expect(['pending', 'failed']).toContain(asset.body.metadata_status);
  const [row] = await api.ds.query(`SELECT source_url, host_key FROM asset_metadata_queue WHERE asset_id = $1`, [asset.body.id]);
  expect(row).toEqual({ source_url: 'https://nft.test/token/3', host_key: 'nft.test' });
});
