import { Readable } from 'node:stream';
import { EntityManager } from 'typeorm';
import { importedRows } from '../../common/metrics';
import type { Context } from '../../common/request/context';
import { isAdmin } from '../../common/request/context';
import { FieldProblem, Problems, ValidationError } from '../../common/errors';
import { camelToSnake } from '../../common/names';
import { MAX_TOKEN_ID, parseAddress, parseTokenId } from '../../common/scalars';
import { checkStorable, stringProblem } from '../../common/limits';
import { lockCollectionForMint, checkAssetFields, checkTokenUri } from '../asset/asset.service';
import { queueFetches, queuedNow } from '../metadata/metadata.queue';
import { indexAssetTraits } from '../asset/asset.traits';
import { Collection } from '../collection/collection.entity';
import { findCollectionByRef } from '../collection/collection.service';
import { assertSpeaksFor } from '../collection/collection.claim';
import { EventLog, withEvents } from '../event/event.log';
import { CsvRow, readCsvRows } from './csv-rows';
import { logger } from '../../common/logger';
import { withLongStatements } from '../../db/statement-timeout';

const BATCH_ROWS = 1000;
/** A response lists at most this many row problems (and says how many there were). */
const MAX_REPORTED_PROBLEMS = 1000;

export interface ImportProgress {
  validated: number;
  written: number;
  elapsedMs: number;
}

export interface ImportSummary {
  count: number;
  firstTokenId: string | null;
  lastTokenId: string | null;
  collection: Collection;
}


interface PreparedRow {
  line: number;
  tokenId: string;
  name: string;
  description: string;
  imageUrl: string;
  animationUrl: string | null;
  externalLink: string | null;
  metadata: string;
  owner: string;
  /** The row has a token_uri (in its metadata): its document is queued for the fetch. */
  tokenUri: boolean;
}

/** One row's checks, with the CSV's column names; the same field rules as createAsset. */
function checkRow(
  row: CsvRow,
  caller: { address: string; admin: boolean },
): { problems: FieldProblem[]; metadata?: Record<string, unknown>; owner?: string; tokenId?: string; tokenUri?: string } {
  const problems = new Problems();
  const v = row.values;
  if (row.fieldCountProblem) problems.add('row', row.fieldCountProblem);
  // Text PostgreSQL cannot store is refused per field, as on the other doors (checkVariables).
  for (const [column, value] of Object.entries(v)) {
    const problem = column === 'metadata' || value === undefined ? undefined : stringProblem(value);
    if (problem) problems.add(column, problem);
  }
  let metadata: unknown = {};
  if (v.metadata !== undefined) {
    try {
      metadata = JSON.parse(v.metadata);
      checkStorable(problems, 'metadata', metadata);
    } catch {
      metadata = undefined;
      problems.add('metadata', 'is not valid JSON');
    }
  }
  // A row with a token_uri starts as createAsset's with tokenUri: its document fills the fields left empty.
  const tokenUri = v.token_uri ? checkTokenUri(problems, v.token_uri) : undefined;
  const withUri = Boolean(v.token_uri);
  checkAssetFields(problems, {
    name: withUri ? v.name || '#' : v.name,
    description: withUri ? v.description || '-' : v.description,
    imageUrl: withUri ? v.image_url || 'ipfs://-' : v.image_url,
    animationUrl: v.animation_url,
    externalLink: v.external_link,
    metadata: metadata === undefined ? {} : metadata,
  });
  let owner: string | undefined;
  if (v.owner === undefined) problems.add('owner', 'is required');
  else {
    try {
      owner = parseAddress(v.owner);
      if (owner !== caller.address && !caller.admin) problems.add('owner', `must be the importing account ${caller.address} unless the key is an admin's`);
    } catch (err) {
      problems.add('owner', (err as Error).message);
    }
  }
  let tokenId: string | undefined;
  if (v.token_id !== undefined) {
    try {
      tokenId = parseTokenId(v.token_id);
    } catch (err) {
      problems.add('token_id', (err as Error).message);
    }
  }
  return {
    problems: problems.list.map((p) => ({ line: row.line, field: camelToSnake(p.field), message: p.message })),
    metadata: tokenUri ? { ...(metadata as Record<string, unknown>), token_uri: tokenUri } : (metadata as Record<string, unknown>),
    owner,
    tokenId,
    tokenUri,
  };
}

/**
 * Inserts one batch; returns the token ids that were already taken (a row later in the file than their
 * holder), and records an asset.imported event for each asset written.
 */
async function insertBatch(m: EntityManager, events: EventLog, collection: Collection, rows: PreparedRow[]): Promise<Set<string>> {
  const inserted: { id: string; token_id: string }[] = await m.query(
    `INSERT INTO assets (collection_id, chain_id, token_address, token_id, name, description, image_url, animation_url, external_link, metadata, owner)
     SELECT $1, $2, $3, r.token_id, r.name, r.description, r.image_url, r.animation_url, r.external_link, r.metadata, r.owner
     FROM unnest($4::numeric[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::jsonb[], $11::text[])
       AS r(token_id, name, description, image_url, animation_url, external_link, metadata, owner)
     ON CONFLICT ON CONSTRAINT uq_assets_chain_token DO NOTHING
     RETURNING id, token_id::text`,
    [
      collection.id,
      collection.chainId,
      collection.contractAddress,
      rows.map((r) => r.tokenId),
      rows.map((r) => r.name),
      rows.map((r) => r.description),
      rows.map((r) => r.imageUrl),
      rows.map((r) => r.animationUrl),
      rows.map((r) => r.externalLink),
      rows.map((r) => r.metadata),
      rows.map((r) => r.owner),
    ],
  );
  // Only rows whose metadata may hold attributes cost the trait index a look (most imports of plain rows none).
  const mayHaveTraits = new Set(rows.filter((r) => r.metadata.includes('"attributes"')).map((r) => r.tokenId));
  await indexAssetTraits(m, inserted.filter((row) => mayHaveTraits.has(row.token_id)).map((row) => row.id));
  const fetched = new Set(rows.filter((r) => r.tokenUri).map((r) => r.tokenId));
  await queueFetches(m, inserted.filter((row) => fetched.has(row.token_id)).map((row) => row.id));
  for (const row of inserted) events.add('asset.imported', 'asset', row.id);
  const written = new Set(inserted.map((r) => r.token_id));
  return new Set(rows.map((r) => r.tokenId).filter((id) => !written.has(id)));
}

/** DB_IMPORT_STATEMENT_TIMEOUT_MS's default, for contexts made without the configured policy. */
const DEFAULT_IMPORT_STATEMENT_TIMEOUT_MS = 120_000;

/** The tables an import fills (assets, their traits, the event log). */
const IMPORTED_TABLES = 'assets, asset_traits, collection_traits, events';

/**
 * Fresh planner statistics for the tables an import filled, at once: until they are analysed, PostgreSQL
 * plans the new rows of a collection as the handful it knew of (autovacuum may be off, or late), and a
 * page of that collection could take a plan that reads it thousands of times. The rows are committed: a
 * failure here is logged, not the import's.
 */
async function analyzeImported(ctx: Context, timeoutMs: number): Promise<void> {
  try {
    await ctx.ds.transaction((m) => withLongStatements(m, timeoutMs, () => m.query(`ANALYZE ${IMPORTED_TABLES}`)));
  } catch (err) {
    logger.warn('ANALYZE after an import failed; the planner sees the new rows once autovacuum analyses them', {
      requestId: ctx.scope.requestId,
      error: (err as Error).message,
    });
  }
}

/**
 * Imports a CSV of assets into a collection, all or nothing. Rows are checked and written in batches
 * inside one transaction that holds the collection's mint lock (so token ids minted here and by
 * concurrent createAsset calls stay unique and consecutive); if any row fails, the transaction is
 * rolled back and every failing row is reported with its line and column. Its statements may run up to
 * DB_IMPORT_STATEMENT_TIMEOUT_MS (it may wait behind another import of the collection), and it ends with
 * ANALYZE of the tables it filled.
 */
export async function importAssets(
  ctx: Context,
  collectionRef: string,
  source: Readable,
  onProgress?: (progress: ImportProgress) => void,
): Promise<ImportSummary> {
  const caller = await ctx.requireCaller();
  let collection: Collection;
  try {
    collection = await findCollectionByRef(ctx, collectionRef);
  } catch (err) {
    source.resume();
    throw err;
  }
  await assertSpeaksFor(ctx, caller, collection);
  const who = { address: caller.address, admin: isAdmin(caller) };
  const started = Date.now();

  const timeoutMs = ctx.policy.importStatementTimeoutMs ?? DEFAULT_IMPORT_STATEMENT_TIMEOUT_MS;
  const summary = await withEvents(ctx.ds, (m, events) => withLongStatements(m, timeoutMs, async () => {
    const { nextTokenId } = await lockCollectionForMint(m, { ...collection, totalSupply: null }, 0, 1);
    let next = nextTokenId;
    const problems: FieldProblem[] = [];
    let problemCount = 0;
    let validated = 0;
    let written = 0;
    let first: bigint | null = null;
    let last: bigint | null = null;
    let batch: PreparedRow[] = [];
    const report = (p: FieldProblem) => {
      problemCount += 1;
      if (problems.length < MAX_REPORTED_PROBLEMS) problems.push(p);
    };

    const flush = async () => {
      if (!batch.length) return;
      const rows = batch;
      batch = [];
      const taken = await insertBatch(m, events, collection, rows);
      for (const row of rows) {
        if (taken.has(row.tokenId)) {
          report({ line: row.line, field: 'token_id', message: `token id ${row.tokenId} already exists in this collection or earlier in the file` });
          taken.delete(row.tokenId);
        } else {
          written += 1;
          const id = BigInt(row.tokenId);
          if (first === null || id < first) first = id;
          if (last === null || id > last) last = id;
        }
      }
      onProgress?.({ validated, written, elapsedMs: Date.now() - started });
    };

    const seenInBatch = new Set<string>();
    for await (const row of readCsvRows(source)) {
      validated += 1;
      const checked = checkRow(row, who);
      if (checked.problems.length) {
        checked.problems.forEach(report);
        continue;
      }
      let tokenId: string;
      if (checked.tokenId !== undefined) {
        tokenId = checked.tokenId;
        if (BigInt(tokenId) >= next) next = BigInt(tokenId) + 1n;
      } else {
        if (next > MAX_TOKEN_ID) {
          report({ line: row.line, field: 'token_id', message: 'minting reached the highest token id (2^256-1); give a free token_id' });
          continue;
        }
        tokenId = next.toString();
        next += 1n;
      }
      if (seenInBatch.has(tokenId)) {
        report({ line: row.line, field: 'token_id', message: `token id ${tokenId} appears earlier in the file` });
        continue;
      }
      seenInBatch.add(tokenId);
      const v = row.values;
      batch.push({
        line: row.line,
        tokenId,
        name: v.name || `#${tokenId}`,
        description: v.description ?? '',
        imageUrl: v.image_url ?? '',
        animationUrl: v.animation_url ?? null,
        externalLink: v.external_link ?? null,
        metadata: JSON.stringify(checked.metadata ?? {}),
        owner: checked.owner!,
        tokenUri: checked.tokenUri !== undefined,
      });
      if (batch.length >= BATCH_ROWS) {
        seenInBatch.clear();
        await flush();
      }
    }
    seenInBatch.clear();
    await flush();

    if (collection.totalSupply !== null) {
      const [{ count }] = await m.query('SELECT count(*)::int AS count FROM assets WHERE collection_id = $1', [collection.id]);
      if (count > collection.totalSupply) {
        report({ field: 'file', message: `the import would bring the collection to ${count} assets; its total_supply is ${collection.totalSupply}` });
      }
    }
    if (problemCount) {
      problems.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
      const shown = problemCount > problems.length ? ` (the first ${problems.length} are listed)` : '';
      throw new ValidationError(problems, `${problemCount} problem${problemCount === 1 ? '' : 's'} in the file${shown}; nothing was imported`);
    }
    if (validated === 0) throw new ValidationError([{ field: 'file', message: 'the file has a header but no rows' }]);
    const range = { firstTokenId: first === null ? null : String(first), lastTokenId: last === null ? null : String(last) };
    events.add('import.completed', 'collection', collection.id, { import: { count: written, first_token_id: range.firstTokenId, last_token_id: range.lastTokenId } });
    return { count: written, ...range, collection };
  }));
  importedRows.inc(summary.count);
  queuedNow();
  await analyzeImported(ctx, timeoutMs);
  ctx.invalidate();
  return summary;
}
