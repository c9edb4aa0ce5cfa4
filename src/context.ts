import { DataSource } from 'typeorm';
import { ForbiddenError, UnauthenticatedError } from './common/errors';
import { RequestScope, scopedDataSource } from './common/request-scope';
import { ApiKeyRole } from './modules/apikey/api-key.entity';
import { Caller, callerForKey } from './modules/apikey/api-key.service';
import { createLoaders, Loaders } from './loaders';

/** Everything a resolver may use for one request. Loaders are new for every request (no cross-request cache). */
export interface Context {
  /** The request's id and its count of SQL statements. */
  scope: RequestScope;
  /** The data source as this request sees it: its statements are counted in `scope`. */
  ds: DataSource;
  loaders: Loaders;
  /** The caller, looked up on first use: reads that never ask cost no statement. */
  caller(): Promise<Caller | null>;
  /** The caller, or a 401 when the request has no valid key. */
  requireCaller(): Promise<Caller>;
  /** After a write commits: forget every row the loaders cached, so the response shows the new state. */
  invalidate(): void;
}

/** `actingAs` is for operator commands, which act with database access rather than a key. */
export function createContext(rootDs: DataSource, scope: RequestScope, apiKey: string | undefined, actingAs?: Caller): Context {
  const ds = scopedDataSource(rootDs, scope);
  let lookup: Promise<Caller | null> | undefined = actingAs ? Promise.resolve(actingAs) : undefined;
  const caller = () => (lookup ??= apiKey ? callerForKey(ds, apiKey) : Promise.resolve(null));
  const loaders = createLoaders(ds);
  return {
    scope,
    ds,
    loaders,
    caller,
    invalidate() {
      for (const loader of Object.values(loaders)) loader.clearAll();
    },
    async requireCaller() {
      const found = await caller();
      if (!found) {
        throw new UnauthenticatedError(
          apiKey
            ? 'the API key is unknown or revoked'
            : 'this operation needs an API key in the access-token header (or Authorization: Bearer)',
        );
      }
      return found;
    },
  };
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
