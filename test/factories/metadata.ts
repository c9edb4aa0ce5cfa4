import type { AppOptions } from '../../src/app';
import { ChainSettings, MetadataSettings } from '../../src/config';
import { startChainNode, type ChainNode } from '../setup/chain-node';
import { startServer, type TestServer } from '../setup/server';

/**
 * The fetch settings of the tests' workers, reading documents from a local host at `hostUrl` (its /ipfs/ and
 * /ar/ as the gateways): private addresses allowed, short timeouts and backoffs. Files whose workers share the
 * database use the same limits, so a row fetched by another file's worker ends as it would with their own.
 */
export function testMetadataSettings(hostUrl: string, overrides: Partial<MetadataSettings> = {}): MetadataSettings {
  return {
    fetch: true,
    allowPrivate: true,
    ipfsGateway: `${hostUrl}/ipfs/`,
    arweaveGateway: `${hostUrl}/ar/`,
    timeoutMs: 400,
    maxBytes: 64 * 1024,
    maxRedirects: 3,
    concurrency: 16,
    hostConcurrency: 8,
    maxAttempts: 3,
    backoffBaseMs: 50,
    backoffMaxMs: 200,
    pollMs: 50,
    refreshIntervalS: 60,
    ...overrides,
  };
}

/**
 * A local EVM node on `chainId` followed by a gateway of its own (polled every 50 ms, no confirmations) whose
 * metadata worker fetches nothing and lets a key refresh again at once: the royalty tests read what the
 * follower reads from the contracts themselves. `extra` adds to the gateway's options (webhooks, say).
 */
export async function startFollowedChain(chainId: string, extra: AppOptions = {}): Promise<{ node: ChainNode; api: TestServer; admin: { key: string; address: string } }> {
  const node = await startChainNode(Number(chainId));
  const chains: ChainSettings = { follow: [{ chainId, rpcUrl: node.url, confirmations: 0 }], pollMs: 50, blockRange: 2000 };
  const api = await startServer({ chains, metadata: testMetadataSettings('http://127.0.0.1:1', { fetch: false, refreshIntervalS: 0 }), ...extra });
  return { node, api, admin: await api.key({ admin: true }) };
}
