import type { Span } from '@opentelemetry/api';
import { DataSource } from 'typeorm';
import { ForbiddenError } from '../errors';
import { RequestScope } from './scope';
import type { SignatureMode } from '../eip712';

/** The role of an API key: `admin` may act on anything, `user` on what its account owns. */
export enum ApiKeyRole {
  USER = 'user',
  ADMIN = 'admin',
}

/** Who is calling: the account an API key belongs to. */
export interface Caller {
  address: string;
  role: ApiKeyRole;
  keyId: string;
  /** The key's label, as given when it was made (null: none; absent: a caller with no key, an operator command). */
  keyLabel?: string | null;
}

/**
 * The request's DataLoaders, one per nested relation. Each module declares its own loaders into this
 * interface (`declare module '.../common/request/context'` in its `<noun>.loaders.ts`), and the app
 * assembles them per request; so this layer names no module, and no module imports the app.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface Loaders {}

/**
 * What a followed chain's node says of a contract's ERC-173 owner(): `followed: false` when this process does
 * not follow the chain (no CHAIN_RPC_<id>); the owner in lower case, or null when the contract answers none (a
 * revert, no code, the zero address), as of `block` (the chain's latest block when read). A node that does not
 * answer throws an UnavailableError.
 */
export type ContractOwnerRead = { followed: false } | { followed: true; owner: string | null; block: string };

/** The deployment's rules that change what a request may do or see (settings, passed in by the app). */
export interface RequestPolicy {
  /**
   * The followed chains' nodes, asked for a contract's owner() (docs/chain.md "Who may speak for a collection");
   * none: no chain is followed. `parent`: the request's span, the call's parent while it is traced.
   */
  contractOwner?: (chainId: string, contractAddress: string, parent?: Span) => Promise<ContractOwnerRead>;
  /** SIGNATURES: how listing and offer signatures are checked (docs/signatures.md). */
  signatures: SignatureMode;
  /** WEBHOOK_ALLOW_PRIVATE: webhooks may target private, loopback and link-local addresses (docs/webhooks.md). */
  webhookAllowPrivate?: boolean;
  /** STATISTICS_MAX_AGE_MS: a statistics page is computed at most this often per database state; 0: every time. */
  statisticsMaxAgeMs?: number;
  /** AUCTION_MIN_INCREMENT_PERCENT: how far a bid on an english auction must exceed its best bid; 5 when absent. */
  auctionMinIncrementPercent?: number;
  /** DB_IMPORT_STATEMENT_TIMEOUT_MS: the statement_timeout inside an import's transaction. */
  importStatementTimeoutMs?: number;
  /** METADATA_REFRESH_INTERVAL_S: a key may refresh one asset or collection this often (docs/metadata.md); 60 when absent. */
  metadataRefreshIntervalS?: number;
}

export const DEFAULT_POLICY: RequestPolicy = { signatures: 'optional' };

/** Everything a resolver may use for one request. Loaders are new for every request (no cross-request cache). */
export interface Context {
  /** The request's id and its count of SQL statements. */
  scope: RequestScope;
  /** The data source as this request sees it: its statements are counted in `scope`. */
  ds: DataSource;
  /** The service's data source itself, which counts no request's statements: for code that counts its own (db/read-statement.ts). */
  rootDs: DataSource;
  loaders: Loaders;
  policy: RequestPolicy;
  /** The caller, looked up on first use: reads that never ask cost no statement. */
  caller(): Promise<Caller | null>;
  /** The caller, or a 401 when the request has no valid key. */
  requireCaller(): Promise<Caller>;
  /** After a write commits: forget every row the loaders cached, so the response shows the new state. */
  invalidate(): void;
}

export function isAdmin(caller: Caller): boolean {
  return caller.role === ApiKeyRole.ADMIN;
}

/** 403 unless the caller is `owner` or an admin. */
export function assertOwnerOrAdmin(caller: Caller, owner: string, what: string): void {
  if (caller.address !== owner && !isAdmin(caller)) {
    throw new ForbiddenError(`${what} belongs to ${owner}; the API key of ${caller.address} may not change it`);
  }
}
