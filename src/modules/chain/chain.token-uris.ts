import { DataSource } from 'typeorm';
import { queuedNow, queueRowsSql } from '../metadata/metadata.queue';

/** Tokens whose tokenURI one round reads: one JSON-RPC batch of eth_calls. */
export const TOKEN_URI_BATCH = 200;

/** A token to read the tokenURI of. */
export interface PendingToken {
  assetId: string;
  tokenAddress: string;
  tokenId: bigint;
}

/**
 * What reading one tokenURI gave: the URI, `null` when the contract refused for good (the call reverted or
 * the contract has no such function: the asset keeps its placeholder), or `undefined` when the read failed
 * for a reason that may pass (the node did not answer): the token is read again in a later round.
 */
export type TokenUriRead = string | null | undefined;

/**
 * One round of reading the tokenURIs of tokens the follower saw minted (chain_token_uris_pending): up to
 * TOKEN_URI_BATCH of the chain's, read together by `read`; each URI read is stored as the asset's
 * `metadata.token_uri` and its document queued for the metadata fetch (docs/metadata.md), and the tokens
 * read for good are taken off the list in the same statement. Runs apart from the follower's steps, so a backfill of many mints is not held
 * up by as many calls. Returns how many tokens were taken off the list.
 */
export async function readPendingTokenUris(
  ds: DataSource,
  chainId: string,
  read: (tokens: PendingToken[]) => Promise<TokenUriRead[]>,
): Promise<number> {
  const rows: { assetId: string; tokenAddress: string; tokenId: string }[] = await ds.query(
    `SELECT p.asset_id AS "assetId", a.token_address AS "tokenAddress", a.token_id::text AS "tokenId"
     FROM chain_token_uris_pending p JOIN assets a ON a.id = p.asset_id WHERE p.chain_id = $1 ORDER BY p.asset_id LIMIT $2`,
    [chainId, TOKEN_URI_BATCH],
  );
  if (!rows.length) return 0;
  const uris = await read(rows.map((r) => ({ assetId: r.assetId, tokenAddress: r.tokenAddress, tokenId: BigInt(r.tokenId) })));
  const done = rows.map((r, i) => ({ id: r.assetId, uri: uris[i] })).filter((r) => r.uri !== undefined);
  if (!done.length) return 0;
  // Assets a step holds are skipped (read again next round): waiting for it would slow the step, and
  // locking in another order than its id order could deadlock with it.
  const [{ taken }]: { taken: number }[] = await ds.query(
    `WITH locked AS (SELECT id FROM assets WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE SKIP LOCKED),
     taken AS (DELETE FROM chain_token_uris_pending p USING locked WHERE p.asset_id = locked.id RETURNING p.asset_id),
     stored AS (
       UPDATE assets a SET metadata = a.metadata || jsonb_build_object('token_uri', k.uri), metadata_status = 'pending', updated_at = now()
       FROM unnest($1::uuid[], $2::text[]) k(id, uri) WHERE a.id = k.id AND k.uri <> '' AND k.id IN (SELECT asset_id FROM taken) RETURNING a.id, k.uri),
     queued AS (${queueRowsSql('(SELECT id AS asset_id, uri FROM stored)')})
     SELECT count(*)::int AS taken FROM taken`,
    [done.map((r) => r.id), done.map((r) => r.uri ?? '')],
  );
  if (taken) queuedNow();
  return taken;
}

/** Whether a follower has followed this chain (it keeps a sync row): a refresh then reads tokenURIs from the chain again. */
export async function chainFollowed(q: Pick<DataSource, 'query'>, chainId: string): Promise<boolean> {
  const rows: unknown[] = await q.query('SELECT 1 FROM chain_sync WHERE chain_id = $1', [chainId]);
  return rows.length > 0;
}

/** Lists assets for the follower to read their tokenURI again (a refresh): a URI it reads is stored and its document queued. */
export async function queueTokenUriReads(q: Pick<DataSource, 'query'>, chainId: string, assetIds: readonly string[]): Promise<void> {
  await q.query(`INSERT INTO chain_token_uris_pending (asset_id, chain_id) SELECT unnest($2::uuid[]), $1 ON CONFLICT (asset_id) DO NOTHING`, [chainId, assetIds]);
}
