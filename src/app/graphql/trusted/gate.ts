import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { AppError } from '../../../common/errors';
import { sendMiddlewareError } from '../../http/respond';
import { persistedHashOf } from '../http-request';
import type { TrustedDocuments } from './trusted-documents';

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `extensions` without persistedQuery; undefined when nothing else is left. */
function withoutPersistedQuery(extensions: unknown): Record<string, unknown> | undefined {
  if (!isPlainObject(extensions)) return undefined;
  const { persistedQuery: _persisted, ...rest } = extensions;
  return Object.keys(rest).length ? rest : undefined;
}

/** A GET's `extensions` parameter as JSON; undefined when absent or not JSON (Apollo answers such a request itself). */
function extensionsOfGet(params: URLSearchParams): unknown {
  const text = params.get('extensions');
  if (text === null) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * /graphql in express, after the body is read and before anything acts on the document (idempotency,
 * the compiled path, Apollo), under TRUSTED_DOCUMENTS (trusted-documents.ts's judge): a request refused
 * is answered 400 PERSISTED_QUERY_NOT_TRUSTED before its document is parsed; a request that names a
 * registered document by its id alone goes on with that document's text in place of the id, as if the
 * client had sent it (by POST, JSON or multipart, or by GET), so that everything after reads the same
 * request whichever way it came. `persisted`: the automatic persisted queries' text by hash.
 */
export function trustedDocumentsGate(trust: TrustedDocuments, persisted: (hash: string) => Promise<string | undefined>): RequestHandler {
  const decide = async (req: Request, res: Response, next: NextFunction) => {
    const q = req.url.indexOf('?');
    const verdict = await trustedRequest(trust, persisted, { method: req.method, search: q === -1 ? '' : req.url.slice(q), body: req.body });
    if ('refuse' in verdict) return sendMiddlewareError(req, res, verdict.refuse);
    if (verdict.search !== undefined) req.url = `${req.url.slice(0, q === -1 ? undefined : q)}${verdict.search}`;
    if (verdict.body !== undefined) req.body = verdict.body;
    next();
  };
  return (req, res, next) => void decide(req, res, next).catch(next);
}

/**
 * The trusted-documents check of one request (its method, its URL's search, `?...` or '', and its
 * parsed body): refused, or to run as sent, or with the registered text in place of its id (the new
 * search of a GET, the new body of a POST). `unregistered`: an id the caller already found no document
 * has (no second look).
 */
export async function trustedRequest(
  trust: TrustedDocuments,
  persisted: (hash: string) => Promise<string | undefined>,
  request: { method: string; search: string; body?: unknown },
  unregistered?: string,
): Promise<{ refuse: AppError } | { search?: string; body?: unknown }> {
  const params = request.method === 'GET' ? new URLSearchParams(request.search) : undefined;
  const body = request.body;
  if (!params && !isPlainObject(body)) return {};
  const query = params ? params.get('query') ?? undefined : (body as Record<string, unknown>).query;
  const extensions = params ? extensionsOfGet(params) : (body as Record<string, unknown>).extensions;
  const hash = persistedHashOf(extensions) ?? undefined;
  const verdict = await trust.judge(query, hash, { persisted, unregistered });
  if ('refuse' in verdict) return verdict;
  if (verdict.run === 'as-sent') return {};
  const rest = withoutPersistedQuery(extensions);
  if (params) {
    params.set('query', verdict.body);
    if (rest) params.set('extensions', JSON.stringify(rest));
    else params.delete('extensions');
    return { search: `?${params.toString()}` };
  }
  // Apollo refuses an `extensions` key whose value is not an object: none is left when nothing else was in it.
  const { extensions: _sent, ...others } = body as Record<string, unknown>;
  return { body: { ...others, query: verdict.body, ...(rest ? { extensions: rest } : {}) } };
}
