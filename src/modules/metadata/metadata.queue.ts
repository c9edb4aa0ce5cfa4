import { createHash } from 'node:crypto';
import { EntityManager } from 'typeorm';
import { withEvents } from '../event/event.log';
import { reindexAssetTraits } from '../asset/asset.traits';
import { MAX_LENGTH } from '../../common/limits';
import type { RequestScope } from '../../common/request/scope';
import { traceparentOf } from '../../common/tracing';

/**
 * The queue of tokenURI documents to fetch (asset_metadata_queue, docs/metadata.md): one row per asset with
 * a tokenURI, its state mirrored on the asset (metadata_status, metadata_error, metadata_fetched_at).
 */

/**
 * The key of the host a tokenURI is read from, for the per-host limit, in SQL: every ipfs:// URI goes to the
 * one IPFS gateway ('ipfs') and every ar:// to the Arweave one ('ar'); a data: URI is read in place ('': no
 * limit); otherwise the URL's host.
 */
function hostKeySql(uri: string): string {
  return `CASE WHEN ${uri} ~* '^ipfs:' THEN 'ipfs' WHEN ${uri} ~* '^ar:' THEN 'ar' WHEN ${uri} ~* '^data:' THEN ''
    ELSE lower(left(COALESCE(substring(${uri} from '^[A-Za-z][A-Za-z0-9+.-]*://([^/?#]*)'), ''), 300)) END`;
}

/**
 * SQL that queues (again) the fetch of the assets `rows` names (an SQL relation of (asset_id, uri)): a
 * pending row due now, its attempts reset; a fetch under way for one of them is not applied (its lease is
 * taken) and the new one runs instead. Returns the queued asset ids. The caller marks the assets pending.
 * `traceparent` (SQL, a text expression) is the queuing request's span, for the fetch's trace to link to.
 */
export function queueRowsSql(rows: string, traceparent = 'NULL'): string {
  return `INSERT INTO asset_metadata_queue (asset_id, source_url, host_key, traceparent)
    SELECT r.asset_id, r.uri, ${hostKeySql('r.uri')}, ${traceparent} FROM ${rows} r
    ON CONFLICT (asset_id) DO UPDATE SET source_url = excluded.source_url, host_key = excluded.host_key, traceparent = excluded.traceparent, state = 'pending',
      attempts = 0, next_attempt_at = now(), requested_at = now(), lease_token = NULL, lease_until = NULL
    RETURNING asset_id`;
}

/** Wakes this process's fetch worker (others find the rows at their next poll). */
const wakers = new Set<() => void>();
export function onQueued(wake: () => void): () => void {
  wakers.add(wake);
  return () => wakers.delete(wake);
}
export function queuedNow(): void {
  for (const wake of wakers) wake();
}

/**
 * Queues the fetch of the tokenURIs of these assets (locked first, in id order, as every writer of several
 * assets takes them), and marks them pending; inside the caller's transaction. Returns how many were queued.
 */
export async function queueFetches(m: EntityManager, assetIds: readonly string[]): Promise<number> {
  if (!assetIds.length) return 0;
  const [{ queued }]: { queued: number }[] = await m.query(
    `WITH locked AS (
       SELECT id, metadata->>'token_uri' AS uri FROM assets WHERE id = ANY($1::uuid[]) AND metadata->>'token_uri' <> '' ORDER BY id FOR UPDATE),
     queued AS (${queueRowsSql('(SELECT id AS asset_id, uri FROM locked)', '$2::varchar')}),
     marked AS (UPDATE assets a SET metadata_status = 'pending' FROM queued q WHERE a.id = q.asset_id RETURNING 1)
     SELECT count(*)::int AS queued FROM marked`,
    // The queuing request's span, while it is traced: the fetch's trace links to it.
    [assetIds, traceparentOf((m.queryRunner?.data as { scope?: RequestScope } | undefined)?.scope)],
  );
  return queued;
}

/**
 * A claimed row: the asset, its tokenURI, the host it is read from, this attempt's number, the last
 * document's hash, the claim's lease token, the queuing request's span (while traced).
 */
export interface Claimed {
  token: string;
  traceparent: string | null;
  assetId: string;
  sourceUrl: string;
  hostKey: string;
  attempts: number;
  documentHash: string | null;
}

/** The standard fields of a metadata document as asset columns: a field absent (or not a string that fits) keeps the column. */
function columnsOf(document: Record<string, unknown>) {
  const text = (value: unknown, max: number) => (typeof value === 'string' && value.trim() !== '' ? value.slice(0, max) : null);
  const url = (value: unknown) => (typeof value === 'string' && value !== '' && value.length <= MAX_LENGTH.url ? value : null);
  let image = url(document.image) ?? url(document.image_url);
  // An SVG given inline (image_data) shows as a data: URL when it fits the column.
  if (!image && typeof document.image_data === 'string' && document.image_data.trim().startsWith('<')) {
    image = url(`data:image/svg+xml;base64,${Buffer.from(document.image_data).toString('base64')}`);
  }
  return {
    name: text(document.name, MAX_LENGTH.assetName),
    description: text(document.description, MAX_LENGTH.description),
    image,
    animation: url(document.animation_url),
    external: url(document.external_url),
  };
}

/** The document's hash: a fetch whose hash is the last one's changed nothing (no event). */
export function documentHash(document: Record<string, unknown>): string {
  return createHash('sha256').update(JSON.stringify(document)).digest('hex');
}

/** What one fetch came to: a document, or a failure due again at `retryAt` (null: `failed` for good). */
export type Outcome =
  | { claim: Claimed; document: Record<string, unknown>; from: string }
  | { claim: Claimed; error: string; retryAt: Date | null };

/** What recording an outcome did: nothing (the claim no longer held), or applied, and whether a document's content changed. */
export interface Recorded {
  applied: boolean;
  changed: boolean;
}

/**
 * Records the outcomes of many fetches in one transaction, each only if its claim still holds (not queued
 * again since, the asset not deleted), in set-based statements: the assets are locked in id order before
 * their queue rows, as every writer of several assets takes them.
 * - A document: its standard fields onto the asset's columns, the document as its metadata (with its
 *   token_uri), its traits indexed again, the queue row `fetched` with the document, when and from where;
 *   `asset.metadata_updated` when the document differs from the last one.
 * - A failure: due again at its `retryAt`, or `failed` for good; the asset shows the reason either way
 *   (its status `failed` only at the end).
 * Returns what each outcome did, in order.
 */
export async function recordOutcomes(ds: Parameters<typeof withEvents>[0], outcomes: readonly Outcome[]): Promise<Recorded[]> {
  const recorded: Recorded[] = outcomes.map(() => ({ applied: false, changed: false }));
  if (!outcomes.length) return recorded;
  await withEvents(ds, async (m, events) => {
    const ids = outcomes.map((o) => o.claim.assetId);
    await m.query(`SELECT id FROM assets WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE`, [ids]);
    // A row's claim holds while its lease token is the one claimed; its asset exists while the row does.
    const held: { assetId: string; token: string; documentHash: string | null }[] = await m.query(
      `SELECT q.asset_id AS "assetId", q.lease_token::text AS token, q.document_hash AS "documentHash"
       FROM asset_metadata_queue q JOIN unnest($1::uuid[], $2::uuid[]) c(asset_id, token) ON q.asset_id = c.asset_id AND q.lease_token = c.token
       ORDER BY q.asset_id FOR UPDATE OF q`,
      [ids, outcomes.map((o) => o.claim.token)],
    );
    const holding = new Map(held.map((h) => [`${h.assetId}/${h.token}`, h.documentHash]));
    const fetched: { i: number; hash: string; document: Record<string, unknown>; from: string; claim: Claimed }[] = [];
    const failed: { i: number; error: string; retryAt: Date | null; claim: Claimed }[] = [];
    outcomes.forEach((o, i) => {
      const key = `${o.claim.assetId}/${o.claim.token}`;
      if (!holding.has(key)) return;
      if ('document' in o) {
        const hash = documentHash(o.document);
        fetched.push({ i, hash, document: o.document, from: o.from, claim: o.claim });
        recorded[i] = { applied: true, changed: holding.get(key) !== hash };
      } else {
        failed.push({ i, error: o.error, retryAt: o.retryAt, claim: o.claim });
        recorded[i] = { applied: true, changed: false };
      }
    });
    if (fetched.length) await applyDocuments(m, fetched);
    if (failed.length) {
      await m.query(
        `WITH f AS (SELECT * FROM unnest($1::uuid[], $2::text[], $3::timestamptz[]) f(asset_id, error, retry_at)),
         queued AS (
           UPDATE asset_metadata_queue q SET state = CASE WHEN f.retry_at IS NULL THEN 'failed' ELSE 'pending' END,
             next_attempt_at = COALESCE(f.retry_at, q.next_attempt_at), last_error = f.error, lease_token = NULL, lease_until = NULL
           FROM f WHERE q.asset_id = f.asset_id RETURNING 1)
         UPDATE assets a SET metadata_status = CASE WHEN f.retry_at IS NULL THEN 'failed' ELSE 'pending' END, metadata_error = f.error
         FROM f WHERE a.id = f.asset_id`,
        [failed.map((f) => f.claim.assetId), failed.map((f) => f.error), failed.map((f) => f.retryAt?.toISOString() ?? null)],
      );
    }
    for (const f of fetched) {
      if (recorded[f.i].changed) events.add('asset.metadata_updated', 'asset', f.claim.assetId, { token_uri: f.claim.sourceUrl, fetched_from: f.from });
    }
  });
  return recorded;
}

/** The fetched documents onto their assets and queue rows, and the assets' traits indexed again: three statements for the lot. */
async function applyDocuments(m: EntityManager, fetched: readonly { hash: string; document: Record<string, unknown>; from: string; claim: Claimed }[]): Promise<void> {
  const columns = fetched.map((f) => columnsOf(f.document));
  const ids = fetched.map((f) => f.claim.assetId);
  const documents = fetched.map((f) => JSON.stringify(f.document));
  await m.query(
    `UPDATE assets a SET name = COALESCE(d.name, a.name), description = COALESCE(d.description, a.description), image_url = COALESCE(d.image, a.image_url),
       animation_url = COALESCE(d.animation, a.animation_url), external_link = COALESCE(d.external, a.external_link),
       metadata = d.document || jsonb_build_object('token_uri', d.uri),
       metadata_status = 'fetched', metadata_error = NULL, metadata_fetched_at = now(), updated_at = now()
     FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::jsonb[], $8::text[])
       d(asset_id, name, description, image, animation, external, document, uri)
     WHERE a.id = d.asset_id`,
    [
      ids,
      columns.map((c) => c.name),
      columns.map((c) => c.description),
      columns.map((c) => c.image),
      columns.map((c) => c.animation),
      columns.map((c) => c.external),
      documents,
      fetched.map((f) => f.claim.sourceUrl),
    ],
  );
  await reindexAssetTraits(m, ids);
  await m.query(
    `UPDATE asset_metadata_queue q SET state = 'fetched', lease_token = NULL, lease_until = NULL, last_error = NULL,
       fetched_at = now(), fetched_from = d.origin, document = d.document, document_hash = d.hash
     FROM unnest($1::uuid[], $2::text[], $3::jsonb[], $4::text[]) d(asset_id, origin, document, hash)
     WHERE q.asset_id = d.asset_id`,
    [ids, fetched.map((f) => f.from), documents, fetched.map((f) => f.hash)],
  );
}

/** The queue's figures for /metrics: rows pending and when the oldest of them was queued. */
export async function metadataQueueFigures(ds: Parameters<typeof withEvents>[0]): Promise<{ pending: number; oldestRequestedAt: Date | null }> {
  const [row] = await ds.query(
    `SELECT count(*)::int AS pending, min(requested_at) AS "oldestRequestedAt" FROM asset_metadata_queue WHERE state = 'pending'`,
  );
  return { pending: row.pending, oldestRequestedAt: row.oldestRequestedAt ? new Date(row.oldestRequestedAt) : null };
}
