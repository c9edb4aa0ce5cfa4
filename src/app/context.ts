import { DataSource } from 'typeorm';
import { UnauthenticatedError } from '../common/errors';
import { Caller, Context, DEFAULT_POLICY, Loaders, RequestPolicy } from '../common/request/context';
import { RequestScope, scopedDataSource } from '../common/request/scope';
import { callerForKey, UNKNOWN_KEY } from '../modules/apikey/api-key.service';
import { createLoaders } from './loaders';

export interface ContextOptions {
  /** The caller, for operator commands that act without an API key. */
  actingAs?: Caller;
  policy?: RequestPolicy;
  /** Told what the lookup of the request's API key found (the rate limit's KnownKeys). */
  keyChecked?: (apiKey: string, valid: boolean) => void;
}

/**
 * A request's context: its scoped data source, fresh loaders, the caller of its API key, and the
 * deployment's policy. The data source's view, the loaders and the caller are made on first use: a
 * request answered by one statement (SQL plans, lean.ts) reads through rootDs and needs none of them.
 * A class, so that a request makes one object and no closures; copies keep its prototype (Apollo's
 * cloneObject, Object.assign onto it), never a spread.
 */
class RequestContext implements Context {
  private view?: DataSource;
  private lookup?: Promise<Caller | null>;
  private made?: Loaders;

  constructor(
    readonly rootDs: DataSource,
    readonly scope: RequestScope,
    private readonly apiKey: string | undefined,
    readonly policy: RequestPolicy,
    actingAs: Caller | undefined,
    private readonly keyChecked: ContextOptions['keyChecked'],
  ) {
    if (actingAs) this.lookup = Promise.resolve(actingAs);
  }

  get ds(): DataSource {
    return (this.view ??= scopedDataSource(this.rootDs, this.scope));
  }

  get loaders(): Loaders {
    return (this.made ??= createLoaders(this.ds));
  }

  caller(): Promise<Caller | null> {
    return (this.lookup ??= this.apiKey ? this.lookUp(this.apiKey) : Promise.resolve(null));
  }

  private async lookUp(apiKey: string): Promise<Caller | null> {
    const found = await callerForKey(this.ds, apiKey);
    this.keyChecked?.(apiKey, found !== null);
    return found;
  }

  invalidate(): void {
    for (const loader of Object.values(this.made ?? {})) loader.clearAll();
  }

  async requireCaller(): Promise<Caller> {
    const found = await this.caller();
    if (!found) {
      throw new UnauthenticatedError(
        this.apiKey
          ? UNKNOWN_KEY
          : 'this operation needs an API key in the access-token header (or Authorization: Bearer)',
      );
    }
    return found;
  }
}

/** A request's context (RequestContext). */
export function createContext(rootDs: DataSource, scope: RequestScope, apiKey: string | undefined, options: ContextOptions = {}): Context {
  return new RequestContext(rootDs, scope, apiKey, options.policy ?? DEFAULT_POLICY, options.actingAs, options.keyChecked);
}
