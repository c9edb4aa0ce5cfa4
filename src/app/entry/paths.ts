import { EXPLORER_PAGES } from '../http/explorer';
import { DOCS_PAGES } from '../rest/v1/docs';

/** What the entry does with a request before any road takes it (entry/door.ts), decided by its method and path. */
export interface EntryRule {
  /** An OPTIONS request: CORS's preflight, answered at the entry (204), whatever its path. */
  preflight: boolean;
  /** Its answer carries CORS headers (http/cors.ts). */
  cors: boolean;
  /** A request of one of the two doors (/graphql, /v1): it takes a rate-limit token and its scope is opened. */
  door: boolean;
}

const PREFLIGHT: EntryRule = { preflight: true, cors: true, door: false };
const DOOR: EntryRule = { preflight: false, cors: true, door: true };
/** The server's own pages (home, health, docs, explorer) and whatever is outside both doors. */
const PAGE: EntryRule = { preflight: false, cors: true, door: false };
/** GET /metrics: for Prometheus, not for browsers. */
const METRICS: EntryRule = { preflight: false, cors: false, door: false };

/** What the app serves besides the two doors (createApp's options). */
export interface PageSettings {
  /** GET /metrics is served (METRICS). */
  metrics: boolean;
  /** GraphiQL at /graphql/explorer is served (not in production). */
  explorer: boolean;
}

/**
 * The one table of the steps that depend on a request's path, for every request whichever road answers it:
 * - OPTIONS, anywhere: a preflight, answered by CORS at the entry;
 * - GET (or HEAD) /metrics: no CORS headers, no rate limit;
 * - under /graphql and /v1: rate-limited, with a scope, except the static pages served there to GET (and
 *   HEAD): the /v1 reference (`/v1/openapi.json`, `/v1/docs` and its files) and, outside production, the
 *   explorer (`/graphql/explorer` and its files);
 * - anything else (`/`, `/healthz`, `/readyz`, an unknown path): CORS headers, no rate limit, no scope.
 * Paths compare as express's routing compares them: in any case, with or without a trailing slash.
 */
export function entryRules(settings: PageSettings): (method: string | undefined, url: string) => EntryRule {
  const pages = new Set([...DOCS_PAGES, ...(settings.explorer ? EXPLORER_PAGES : [])].map((page) => page.toLowerCase()));
  return (method, url) => {
    if (method === 'OPTIONS') return PREFLIGHT;
    const path = routePath(url);
    const reads = method === 'GET' || method === 'HEAD';
    if (reads && settings.metrics && path === '/metrics') return METRICS;
    if (!isUnder(path, '/graphql') && !isUnder(path, '/v1')) return PAGE;
    return reads && pages.has(path) ? PAGE : DOOR;
  };
}

/** A URL's path as express's routing compares it: without its query, in lower case, without a trailing slash. */
function routePath(url: string): string {
  const q = url.indexOf('?');
  const path = (q === -1 ? url : url.slice(0, q)).toLowerCase();
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

/** Whether `path` is `mount` or below it, as express mounts a router (whole segments only). */
const isUnder = (path: string, mount: string) => path === mount || path.startsWith(`${mount}/`);
