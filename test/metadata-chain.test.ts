import { MetadataSettings } from '../src/config';
import { startChainNode, ChainNode, until } from './setup/chain-node';
import { startServer, TestServer } from './setup/server';

/**
 * A token minted on chain has its tokenURI document queued once the follower has read the URI (issue #41
 * item 1). The tests' contract answers https://nft.test/token/<id>, a name that never resolves (.test is
 * reserved), so the fetch ends failed, saying why, after its attempts.
 */
const CHAIN_ID = 31337;
let node: ChainNode;
let api: TestServer;

const metadata: MetadataSettings = {
  fetch: true,
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

test('when a token is minted on chain, then its tokenURI document is fetched, and a host that never resolves ends failed saying so', async () => {
  const admin = await api.key({ admin: true });
  const contract = await node.deploy();
  await api.rest('POST', '/v1/collections', { contract_address: contract, chain_id: String(CHAIN_ID) }, admin.key);
  await node.mint(contract, node.accounts[1], 3n);

  const asset = await until(
    () => api.rest('GET', `/v1/assets/${contract}/3?chain_id=${CHAIN_ID}`),
    (r) => r.status === 200 && r.body.metadata_status === 'failed',
    'the metadata fetch to end',
    15_000,
  );
  expect(asset.body.metadata.token_uri).toBe('https://nft.test/token/3');
  expect(asset.body.metadata_error).toMatch(/the host nft\.test does not resolve .*\(after 2 attempts\)/);
  const [row] = await api.ds.query(`SELECT source_url, attempts FROM asset_metadata_queue WHERE asset_id = $1`, [asset.body.id]);
  expect(row).toEqual({ source_url: 'https://nft.test/token/3', attempts: 2 });
});
