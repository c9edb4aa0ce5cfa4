import { MetadataSettings } from '../../src/config';

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
