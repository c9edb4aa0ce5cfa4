import { DataSource } from 'typeorm';
import { UnauthenticatedError } from '../common/errors';
import { Caller, Context } from '../common/request/context';
import { RequestScope, scopedDataSource } from '../common/request/scope';
import { callerForKey } from '../modules/apikey/api-key.service';
import { createLoaders } from './loaders';

/** A request's context: its scoped data source, fresh loaders, and the caller of its API key. `actingAs` is for operator commands. */
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
