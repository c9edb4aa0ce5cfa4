import { intFromEnv, onOff } from './env-readers';

export interface MetadataSettings {
  /** METADATA_FETCH: this process runs a fetch worker (several processes share the queue safely). */
  fetch: boolean;
  /** METADATA_ALLOW_PRIVATE: documents on private, loopback and link-local addresses are fetched. */
  allowPrivate: boolean;
  /** IPFS_GATEWAY: the HTTP gateway ipfs:// URIs are read through (the CID and path are appended). */
  ipfsGateway: string;
  /** ARWEAVE_GATEWAY: the same for ar:// URIs. */
  arweaveGateway: string;
  /** METADATA_TIMEOUT_MS: the whole fetch of one document (every redirect hop included). */
  timeoutMs: number;
  /** METADATA_MAX_BYTES: a larger document fails. */
  maxBytes: number;
  /** METADATA_MAX_REDIRECTS: redirects followed, each hop's target checked. */
  maxRedirects: number;
  /** METADATA_CONCURRENCY: documents one process fetches at once. */
  concurrency: number;
  /** METADATA_HOST_CONCURRENCY: of them, at most this many from one host (a slow host does not hold the rest). */
  hostConcurrency: number;
  /** METADATA_MAX_ATTEMPTS: attempts before the state is `failed` (a refused target, too large or not JSON fail at once). */
  maxAttempts: number;
  /** METADATA_BACKOFF_BASE_MS / METADATA_BACKOFF_MAX_MS: the first retry's delay, doubled each time up to the max. */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** METADATA_POLL_MS: milliseconds between looks for work when there was none. */
  pollMs: number;
  /** METADATA_REFRESH_INTERVAL_S: a key may ask to refresh the same asset or collection once per this many seconds. */
  refreshIntervalS: number;
}

/** An http(s) gateway URL, ending with a slash so that the CID or id is appended to it. */
function gatewayFromEnv(name: string, raw: string | undefined, fallback: string): string {
  const value = raw || fallback;
  if (!/^https?:\/\/[^/]/.test(value)) throw new Error(`${name} must be an http(s):// URL, got "${value}"`);
  return value.endsWith('/') ? value : `${value}/`;
}

/** Fetching the documents behind tokenURIs, and refreshes (docs/metadata.md). */
export function metadataSettingsFromEnv(env: NodeJS.ProcessEnv): MetadataSettings {
  return {
    fetch: onOff('METADATA_FETCH', env.METADATA_FETCH, true),
    allowPrivate: onOff('METADATA_ALLOW_PRIVATE', env.METADATA_ALLOW_PRIVATE, false),
    ipfsGateway: gatewayFromEnv('IPFS_GATEWAY', env.IPFS_GATEWAY, 'https://ipfs.io/ipfs/'),
    arweaveGateway: gatewayFromEnv('ARWEAVE_GATEWAY', env.ARWEAVE_GATEWAY, 'https://arweave.net/'),
    timeoutMs: Math.max(1, intFromEnv('METADATA_TIMEOUT_MS', 10_000, env)),
    maxBytes: Math.max(1, intFromEnv('METADATA_MAX_BYTES', 1_048_576, env)),
    maxRedirects: Math.max(0, intFromEnv('METADATA_MAX_REDIRECTS', 5, env)),
    concurrency: Math.max(1, intFromEnv('METADATA_CONCURRENCY', 64, env)),
    hostConcurrency: Math.max(1, intFromEnv('METADATA_HOST_CONCURRENCY', 16, env)),
    maxAttempts: Math.max(1, intFromEnv('METADATA_MAX_ATTEMPTS', 5, env)),
    backoffBaseMs: Math.max(1, intFromEnv('METADATA_BACKOFF_BASE_MS', 30_000, env)),
    backoffMaxMs: Math.max(1, intFromEnv('METADATA_BACKOFF_MAX_MS', 3_600_000, env)),
    pollMs: Math.max(10, intFromEnv('METADATA_POLL_MS', 1000, env)),
    refreshIntervalS: Math.max(0, intFromEnv('METADATA_REFRESH_INTERVAL_S', 60, env)),
  };
}
