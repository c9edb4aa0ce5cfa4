import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import Negotiator from 'negotiator';
import { APPLICATION_JSON } from '../http/respond';

/**
 * GraphQL over HTTP as Apollo Server 5 reads it, for the lean door (lean.ts): the same request gets the
 * same reading whichever road answers it. Anything this reading cannot take as Apollo would (a malformed
 * body, a parameter given twice, an Accept that takes no JSON) is left to Apollo, whose errors are the
 * answer.
 */

/** The parts of a GraphQL request. `query` may be absent when a persisted query's hash stands in for it. */
export interface GraphQLHttpRequest {
  query?: string;
  operationName?: string;
  variables: Record<string, unknown>;
  /** A persisted query's sha256 (extensions.persistedQuery, version 1). */
  persistedHash?: string;
}

/** Apollo's media types for a single result (ApolloServer's MEDIA_TYPES). */
export { APPLICATION_JSON };
export const GRAPHQL_RESPONSE_JSON = 'application/graphql-response+json; charset=utf-8';
const JSON_CALLBACK = 'application/json; callbackSpec=1.0; charset=utf-8';
const OFFERED = [APPLICATION_JSON, GRAPHQL_RESPONSE_JSON, JSON_CALLBACK];
/** What Apollo offers a GET when it decides whether to show the landing page (prefersHTML). */
const OFFERED_TO_GET = [APPLICATION_JSON, GRAPHQL_RESPONSE_JSON, 'multipart/mixed; deferSpec=20220824', 'multipart/mixed; incrementalSpec=v0.2', 'multipart/mixed', 'text/html'];

/** Accept values seen, with their answer; bounded (a client may send any text). */
const MAX_ACCEPTS = 200;
const byAccept = new Map<string, string | null>();
const getByAccept = new Map<string, boolean>();

/**
 * The content type Apollo answers a single result with for this Accept (chooseContentTypeForSingleResultResponse,
 * by the same negotiator), or undefined when it is neither of the two JSON types: Apollo answers those
 * (406, or the callback type). Decided once per Accept text.
 */
export function responseTypeFor(accept: string | undefined): string | undefined {
  if (accept === undefined || accept === '') return APPLICATION_JSON;
  let type = byAccept.get(accept);
  if (type === undefined) {
    type = new Negotiator({ headers: { accept } }).mediaType(OFFERED) ?? null;
    if (byAccept.size < MAX_ACCEPTS) byAccept.set(accept, type);
  }
  return type === APPLICATION_JSON || type === GRAPHQL_RESPONSE_JSON ? type : undefined;
}

/** Whether Apollo would show its landing page to a GET with this Accept (prefersHTML). */
export function getPrefersHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  let html = getByAccept.get(accept);
  if (html === undefined) {
    html = new Negotiator({ headers: { accept } }).mediaType(OFFERED_TO_GET) === 'text/html';
    if (getByAccept.size < MAX_ACCEPTS) getByAccept.set(accept, html);
  }
  return html;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The persisted query's hash from `extensions` (null: none asked), or undefined when Apollo must answer
 * (extensions not an object, another version, no hash). Other extensions (clientLibrary, ...) are
 * ignored, as Apollo ignores them.
 */
export function persistedHashOf(extensions: unknown): string | null | undefined {
  if (extensions === undefined || extensions === null) return null;
  if (!isPlainObject(extensions)) return undefined;
  const persisted = extensions.persistedQuery;
  if (persisted === undefined || persisted === null) return null;
  if (!isPlainObject(persisted) || persisted.version !== 1 || typeof persisted.sha256Hash !== 'string') return undefined;
  return persisted.sha256Hash;
}

/** The parts of a parsed JSON body, or undefined when Apollo must read it. */
export function readPostBody(body: unknown): GraphQLHttpRequest | undefined {
  if (!isPlainObject(body)) return undefined;
  const { query, operationName, variables } = body;
  if (query !== undefined && (typeof query !== 'string' || query === '')) return undefined;
  if (operationName != null && typeof operationName !== 'string') return undefined;
  if (variables != null && !isPlainObject(variables)) return undefined;
  const hash = persistedHashOf(body.extensions);
  if (hash === undefined || (query === undefined && hash === null)) return undefined;
  return { query, operationName: operationName ?? undefined, variables: (variables ?? {}) as Record<string, unknown>, persistedHash: hash ?? undefined };
}

/**
 * The parts of a GET's search parameters as Apollo reads them (each given at most once, `variables` and
 * `extensions` as JSON), or undefined when Apollo must read them.
 */
export function readGetParams(search: string): GraphQLHttpRequest | undefined {
  const params = new URLSearchParams(search);
  const once = (name: string): string | undefined | false => {
    const all = params.getAll(name);
    return all.length > 1 ? false : all[0];
  };
  const json = (name: string): unknown => {
    const text = once(name);
    if (text === false) return false;
    if (text === undefined) return undefined;
    try {
      return JSON.parse(text);
    } catch {
      return false;
    }
  };
  const query = once('query');
  const operationName = once('operationName');
  const variables = json('variables');
  const extensions = json('extensions');
  if (query === false || operationName === false || variables === false || extensions === false) return undefined;
  return readPostBody({ query, operationName, variables, extensions });
}

/** Apollo's CSRF prevention (preventCsrf): a request a browser would send without a preflight is refused there. */
export function passesCsrf(headers: IncomingHttpHeaders): boolean {
  const type = headers['content-type'];
  if (type !== undefined) {
    const essence = type.split(';')[0].trim().toLowerCase();
    if (essence !== 'application/x-www-form-urlencoded' && essence !== 'multipart/form-data' && essence !== 'text/plain') return true;
  }
  const name = headers['x-apollo-operation-name'];
  const preflight = headers['apollo-require-preflight'];
  return (typeof name === 'string' && name.length > 0) || (typeof preflight === 'string' && preflight.length > 0);
}

/** A persisted query's hash of a document's text, as Apollo computes it. */
export const queryHashOf = (query: string) => createHash('sha256').update(query).digest('hex');
