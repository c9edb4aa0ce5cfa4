import { createHash } from 'node:crypto';
import { NextFunction, Request, RequestHandler, Response } from 'express';
import { getOperationAST, parse } from 'graphql';
import { DataSource } from 'typeorm';
import { clock } from '../../common/clock';
import { BadRequestError, ConflictError, httpStatusOf, UnauthenticatedError, ValidationError } from '../../common/errors';
import { logger } from '../../common/logger';
import { callerForKey, digestOf, keyFromHeaders, UNKNOWN_KEY } from '../../modules/apikey/api-key.service';
import { MAX_TOKENS } from '../graphql/protections';
import { sendAnswer, sendMiddlewareError } from '../http/respond';

const HEADER = 'Idempotency-Key';
/** A first attempt still unfinished after this long is taken to have died with its process: a retry may take it over. */
const ABANDONED_AFTER_MS = 5 * 60 * 1000;
/** Expired records are deleted by a request that comes at least this long after the last sweep. */
const SWEEP_EVERY_MS = 10 * 60 * 1000;
/**
 * Response headers that belong to the result and are replayed with it: its type, a refusal's Retry-After, a
 * create's Location and a write's consistency token (x-min-lsn, which a replay of the write still needs). The
 * rest are the retry's own (request id, statement count, rate limits) or follow from the body (ETag, length).
 */
const REPLAYED_HEADERS = ['content-type', 'retry-after', 'location', 'x-min-lsn'];
const REST_WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

interface StoredRecord {
  request_hash: string;
  status: number | null;
  headers: Record<string, string> | null;
  body: string | null;
  locked_at: Date;
  expires_at: Date;
}

/** 5xx and lost races (409) may go another way on a retry, and a 401 is no result: those records are dropped, not kept. */
function isKeptStatus(status: number): boolean {
  return status < 500 && status !== 401 && status !== 409;
}

/** GraphQL answers errors with HTTP 200: there the codes of its errors decide, each by the status it has on the REST door. */
function isKept(status: number, body: Buffer, isGraphQL: boolean): boolean {
  if (!isKeptStatus(status)) return false;
  if (!isGraphQL) return true;
  try {
    const errors = (JSON.parse(body.toString('utf8')) as { errors?: { extensions?: { code?: string } }[] }).errors ?? [];
    return errors.every((e) => isKeptStatus(httpStatusOf[e.extensions?.code ?? ''] ?? 500));
  } catch {
    return false;
  }
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Whether a POST /graphql runs a mutation, by the document Apollo will run: the body's `query`, or the
 * persisted query its hash names. Parsed under the same token limit as Apollo's, so that no document is
 * read further than the limits allow; a document over it (or unreadable) is not taken for a mutation,
 * and Apollo refuses it with its own message, the same as without the header.
 */
async function isMutation(req: Request, persistedText: (hash: string) => Promise<string | undefined>): Promise<boolean> {
  const body: unknown = req.body;
  if (req.method !== 'POST' || !isPlainObject(body)) return false;
  let query = body.query;
  if (query === undefined && isPlainObject(body.extensions) && isPlainObject(body.extensions.persistedQuery)) {
    const hash = body.extensions.persistedQuery.sha256Hash;
    if (typeof hash === 'string') query = await persistedText(hash);
  }
  if (typeof query !== 'string') return false;
  try {
    const operationName = typeof body.operationName === 'string' ? body.operationName : undefined;
    return getOperationAST(parse(query, { maxTokens: MAX_TOKENS }), operationName)?.operation === 'mutation';
  } catch {
    return false;
  }
}

function requestHash(req: Request): string {
  return createHash('sha256').update(`${req.method} ${req.originalUrl}\n${JSON.stringify(req.body ?? null)}`).digest('hex');
}

/**
 * `Idempotency-Key` on writes (REST POST/PUT/PATCH/DELETE under /v1, GraphQL mutations): the first
 * attempt claims the key by inserting its record (the primary key makes one claimant win), runs, and
 * stores its response; a retry with the same request replays it with `Idempotent-Replayed: true`; a
 * retry while the first runs is a 409; the same key with another request is a 422. Records are scoped
 * to the API key (by its digest) and kept `ttlS` seconds. Requests without the header cost nothing here.
 * A GraphQL request sent by a persisted query's hash alone is judged by that query's text (`persistedText`).
 */
export function createIdempotency(ds: DataSource, ttlS: number, persistedText: (hash: string) => Promise<string | undefined>): RequestHandler {
  let lastSweep = 0;

  const sweep = (now: Date) => {
    if (now.getTime() - lastSweep < SWEEP_EVERY_MS) return;
    lastSweep = now.getTime();
    ds.query('DELETE FROM idempotency_keys WHERE expires_at <= $1', [now]).catch((err: Error) =>
      logger.warn('idempotency sweep failed', { error: err.message }),
    );
  };

  /** Inserts the record, or takes over an abandoned one; true when this request now owns the key. */
  async function claim(scope: string, key: string, hash: string, now: Date): Promise<boolean> {
    const inserted: unknown[] = await ds.query(
      `INSERT INTO idempotency_keys (scope, key, request_hash, locked_at, expires_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (scope, key) DO NOTHING RETURNING key`,
      [scope, key, hash, now, new Date(now.getTime() + ttlS * 1000)],
    );
    return inserted.length === 1;
  }

  async function takeOver(scope: string, key: string, record: StoredRecord, now: Date): Promise<boolean> {
    const [rows] = (await ds.query(
      `UPDATE idempotency_keys SET locked_at = $3 WHERE scope = $1 AND key = $2 AND status IS NULL AND locked_at = $4 RETURNING key`,
      [scope, key, now, record.locked_at],
    )) as [unknown[], number];
    return rows.length === 1;
  }

  /** Keeps the response for replays, or drops the record so that a retry runs again. */
  async function settle(scope: string, key: string, status: number, res: Response, body: Buffer): Promise<void> {
    if (!isKept(status, body, res.req.originalUrl.startsWith('/graphql'))) {
      await ds.query('DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2 AND status IS NULL', [scope, key]);
      return;
    }
    const headers: Record<string, string> = {};
    for (const name of REPLAYED_HEADERS) {
      const value = res.getHeader(name);
      if (value !== undefined) headers[name] = String(value);
    }
    await ds.query('UPDATE idempotency_keys SET status = $3, headers = $4, body = $5 WHERE scope = $1 AND key = $2', [
      scope,
      key,
      status,
      JSON.stringify(headers),
      body.toString('utf8'),
    ]);
  }

  /** Holds the response back until its record is settled, so that a retry after it sees the result, never "still running". */
  function captureResponse(res: Response, scope: string, key: string): void {
    const originalEnd = res.end;
    res.end = function end(this: Response, ...args: unknown[]) {
      res.end = originalEnd;
      const [chunk, encoding] = args;
      let body = Buffer.alloc(0);
      if (typeof chunk === 'string') body = Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
      else if (chunk instanceof Uint8Array) body = Buffer.from(chunk);
      // A response streamed with res.write (incremental delivery) is not captured whole: it is not kept.
      const status = res.headersSent ? 500 : res.statusCode;
      settle(scope, key, status, res, body)
        .catch((err: Error) => logger.warn('idempotency record not settled', { requestId: res.req.requestId, error: err.message }))
        .finally(() => originalEnd.apply(res, args as Parameters<Response['end']>));
      return res;
    } as Response['end'];
  }

  /**
   * The stored answer, written by the writer of every answer (sendAnswer), so that it carries the headers a
   * first answer does (statement count, ETag, length besides the kept ones), and `Idempotent-Replayed: true`.
   */
  function replay(req: Request, res: Response, record: StoredRecord): void {
    const { 'content-type': type, ...kept } = record.headers ?? {};
    const headers = [...Object.entries(kept).flat(), 'Idempotent-Replayed', 'true'];
    sendAnswer(res, { status: record.status!, headers, body: record.body ?? '', type }, req.scope);
  }

  async function handle(req: Request, res: Response, next: NextFunction, key: string, apiKey: string): Promise<void> {
    const scope = digestOf(apiKey);
    const hash = requestHash(req);
    // Bounded: each turn either settles the request or saw a record vanish or expire, which needs a racing request to cause it.
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const now = clock.now();
      sweep(now);
      if (await claim(scope, key, hash, now)) {
        captureResponse(res, scope, key);
        next();
        return;
      }
      // The key is checked before anything stored is answered: a revoked key replays nothing (a 401 is never kept).
      if (!(await callerForKey(ds, apiKey))) {
        sendMiddlewareError(req, res, new UnauthenticatedError(UNKNOWN_KEY));
        return;
      }
      const [record] = (await ds.query(
        'SELECT request_hash, status, headers, body, locked_at, expires_at FROM idempotency_keys WHERE scope = $1 AND key = $2',
        [scope, key],
      )) as StoredRecord[];
      if (!record) continue;
      if (record.expires_at.getTime() <= now.getTime()) {
        await ds.query('DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2 AND expires_at <= $3', [scope, key, now]);
        continue;
      }
      if (record.request_hash.trim() !== hash) {
        sendMiddlewareError(
          req,
          res,
          new ValidationError(
            [{ field: HEADER, message: 'was used with another request; a retry must repeat the method, path and body exactly' }],
            `${HEADER} ${JSON.stringify(key)} was already used with another request; use a new key for a new request`,
          ),
        );
        return;
      }
      if (record.status !== null) {
        replay(req, res, record);
        return;
      }
      if (now.getTime() - record.locked_at.getTime() > ABANDONED_AFTER_MS && (await takeOver(scope, key, record, now))) {
        captureResponse(res, scope, key);
        next();
        return;
      }
      sendMiddlewareError(req, res, new ConflictError(`the first request with ${HEADER} ${JSON.stringify(key)} is still running; retry later`));
      return;
    }
    sendMiddlewareError(req, res, new ConflictError(`the request with ${HEADER} ${JSON.stringify(key)} is changing concurrently; retry later`));
  }

  const start = (req: Request, res: Response, next: NextFunction, key: string | string[], apiKey: string) => {
    if (typeof key !== 'string' || key.length < 1 || key.length > 255) {
      return sendMiddlewareError(req, res, new BadRequestError(`${HEADER} must be given once, 1 to 255 characters`, [{ field: HEADER, message: '1 to 255 characters' }]));
    }
    if (req.is('multipart/form-data')) {
      return sendMiddlewareError(req, res, new BadRequestError(`${HEADER} is not supported on multipart uploads`, [{ field: HEADER, message: 'not supported on multipart uploads' }]));
    }
    handle(req, res, next, key, apiKey).catch(next);
  };

  return (req: Request, res: Response, next: NextFunction) => {
    const key = req.headers['idempotency-key'];
    if (key === undefined) return next();
    const apiKey = keyFromHeaders(req.headers);
    // A write without an API key is refused (401) by the operation itself: there is nothing to scope a record to.
    if (!apiKey) return next();
    if (!req.originalUrl.startsWith('/graphql')) return REST_WRITES.has(req.method) ? start(req, res, next, key, apiKey) : next();
    isMutation(req, persistedText).then(
      (mutation) => (mutation ? start(req, res, next, key, apiKey) : next()),
      next,
    );
  };
}
