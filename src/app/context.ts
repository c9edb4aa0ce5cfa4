import { DataSource } from 'typeorm';
import { UnauthenticatedError } from '../common/errors';
import { Caller, Context, DEFAULT_POLICY, Loaders, RequestPolicy } from '../common/request/context';
import { RequestScope, scopedDataSource } from '../common/request/scope';
import { callerForKey } from '../modules/apikey/api-key.service';
import { createLoaders } from './loaders';

export interface ContextOptions {
  /** The caller, for operator commands that act without an API key. */
  actingAs?: Caller;
  policy?: RequestPolicy;
}

/** A request's context: its scoped data source, fresh loaders, the caller of its API key, and the deployment's policy. */
export function createContext(rootDs: DataSource, scope: RequestScope, apiKey: string | undefined, options: ContextOptions = {}): Context {
  const { actingAs, policy = DEFAULT_POLICY } = options;
  // Made on first use, as the loaders: a request answered by a SQL plan reads through rootDs.
  let view: DataSource | undefined;
  const scoped = () => (view ??= scopedDataSource(rootDs, scope));
  let lookup: Promise<Caller | null> | undefined = actingAs ? Promise.resolve(actingAs) : undefined;
  const caller = () => (lookup ??= apiKey ? callerForKey(scoped(), apiKey) : Promise.resolve(null));
  // Made on first use: a request answered by one statement (SQL plans, lean.ts) never needs them.
  let loaders: Loaders | undefined;
  return {
    scope,
    get ds() {
      return scoped();
    },
    rootDs,
    get loaders() {
      return (loaders ??= createLoaders(scoped()));
    },
    policy,
    caller,
    invalidate() {
      for (const loader of Object.values(loaders ?? {})) loader.clearAll();
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
