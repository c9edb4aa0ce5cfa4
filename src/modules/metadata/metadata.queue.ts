import { createHash } from 'node:crypto';
import { EntityManager } from 'typeorm';
import { withEvents } from '../event/event.log';
import { reindexAssetTraits } from '../asset/asset.traits';
import { MAX_LENGTH } from '../../common/limits';

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
 */
export function queueRowsSql(rows: string): string {
  return `INSERT INTO asset_metadata_queue (asset_id, source_url, host_key)
    SELECT r.asset_id, r.uri, ${hostKeySql('r.uri')} FROM ${rows} r
    ON CONFLICT (asset_id) DO UPDATE SET source_url = excluded.source_url, host_key = excluded.host_key, state = 'pending',
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
     queued AS (${queueRowsSql('(SELECT id AS asset_id, uri FROM locked)')}),
     marked AS (UPDATE assets a SET metadata_status = 'pending' FROM queued q WHERE a.id = q.asset_id RETURNING 1)
     SELECT count(*)::int AS queued FROM marked`,
    [assetIds],
  );
  return queued;
}

/** A claimed row: the asset, its tokenURI, the host it is read from, this attempt's number, the last document's hash, the claim's lease token. */
export interface Claimed {
  token: string;
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

/**
 * Applies a fetched document, if the claim still holds (not queued again since): its standard fields onto
 * the asset's columns, the document as its metadata (with its token_uri), its traits indexed again, the
 * queue row `fetched` with the document, when and from where; `asset.metadata_updated` when the document
 * differs from the last one. One transaction; the asset is locked before the queue row. Returns whether it
 * was applied and whether the content changed.
 */
export async function recordFetched(
  ds: Parameters<typeof withEvents>[0],
  claim: Claimed,
  document: Record<string, unknown>,
  from: string,
): Promise<{ applied: boolean; changed: boolean }> {
  const hash = documentHash(document);
  return withEvents(ds, async (m, events) => {
    const [asset] = await m.query(`SELECT id FROM assets WHERE id = $1 FOR UPDATE`, [claim.assetId]);
    const [held]: { documentHash: string | null }[] = await m.query(
      `SELECT document_hash AS "documentHash" FROM asset_metadata_queue WHERE asset_id = $1 AND lease_token = $2 FOR UPDATE`,
      [claim.assetId, claim.token],
    );
    if (!asset || !held) return { applied: false, changed: false };
    const c = columnsOf(document);
    await m.query(
      `UPDATE assets SET name = COALESCE($2, name), description = COALESCE($3, description), image_url = COALESCE($4, image_url),
         animation_url = COALESCE($5, animation_url), external_link = COALESCE($6, external_link),
         metadata = $7::jsonb || jsonb_build_object('token_uri', $8::text),
         metadata_status = 'fetched', metadata_error = NULL, metadata_fetched_at = now(), updated_at = now()
       WHERE id = $1`,
      [claim.assetId, c.name, c.description, c.image, c.animation, c.external, JSON.stringify(document), claim.sourceUrl],
    );
    await reindexAssetTraits(m, [claim.assetId]);
    await m.query(
      `UPDATE asset_metadata_queue SET state = 'fetched', lease_token = NULL, lease_until = NULL, last_error = NULL,
         fetched_at = now(), fetched_from = $2, document = $3::jsonb, document_hash = $4 WHERE asset_id = $1`,
      [claim.assetId, from, JSON.stringify(document), hash],
    );
    const changed = held.documentHash !== hash;
    if (changed) events.add('asset.metadata_updated', 'asset', claim.assetId, { token_uri: claim.sourceUrl, fetched_from: from });
    return { applied: true, changed };
  });
}

/**
 * Records a failed attempt, if the claim still holds: due again at `retryAt`, or, when null, `failed` for
 * good; the asset shows the reason either way (its status `failed` only at the end).
 */
export async function recordFailure(ds: Parameters<typeof withEvents>[0], claim: Claimed, error: string, retryAt: Date | null): Promise<boolean> {
  return ds.transaction(async (m) => {
    const [asset] = await m.query(`SELECT id FROM assets WHERE id = $1 FOR UPDATE`, [claim.assetId]);
    if (!asset) return false;
    const [held] = await m.query(`SELECT 1 FROM asset_metadata_queue WHERE asset_id = $1 AND lease_token = $2 FOR UPDATE`, [claim.assetId, claim.token]);
    if (!held) return false;
    await m.query(
      `UPDATE asset_metadata_queue SET state = CASE WHEN $3::timestamptz IS NULL THEN 'failed' ELSE 'pending' END,
         next_attempt_at = COALESCE($3, next_attempt_at), last_error = $2, lease_token = NULL, lease_until = NULL WHERE asset_id = $1`,
      [claim.assetId, error, retryAt],
    );
    await m.query(
      `UPDATE assets SET metadata_status = CASE WHEN $3 THEN 'failed' ELSE 'pending' END, metadata_error = $2 WHERE id = $1`,
      [claim.assetId, error, retryAt === null],
    );
    return true;
  });
}

/** The queue's figures for /metrics: rows pending and when the oldest of them was queued. */
export async function metadataQueueFigures(ds: Parameters<typeof withEvents>[0]): Promise<{ pending: number; oldestRequestedAt: Date | null }> {
  const [row] = await ds.query(
    `SELECT count(*)::int AS pending, min(requested_at) AS "oldestRequestedAt" FROM asset_metadata_queue WHERE state = 'pending'`,
  );
  return { pending: row.pending, oldestRequestedAt: row.oldestRequestedAt ? new Date(row.oldestRequestedAt) : null };
}
