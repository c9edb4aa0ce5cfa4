import { DataSource, EntityManager } from 'typeorm';

/**
 * ERC-4906 (docs/chain.md, "Metadata updates"): a contract says a token's document changed with
 * `MetadataUpdate(uint256 tokenId)`, a range of tokens' with `BatchMetadataUpdate(uint256 from, uint256 to)`.
 * The follower reads them with the transfers (the same eth_getLogs) and, in the step's transaction, queues the
 * tokens' tokenURI to be read again (chain_token_uris_pending), which stores the URI and queues the fetch of
 * its document. A batch is kept as a range (chain_metadata_update_ranges) and expanded a chunk at a time by
 * the follower's tokenURI reader: `BatchMetadataUpdate(0, 2^256 - 1)` is one row, not a row per token.
 * Reading a tokenURI again is harmless to repeat, so a range read twice or a reorg asks nothing to be undone.
 */

/** keccak256("MetadataUpdate(uint256)") */
export const METADATA_UPDATE_TOPIC = '0xf8e1a15aba9398e019f0b49df1a4fde98ee17ae345cb5f6b5e2c27f5033e8ce7';
/** keccak256("BatchMetadataUpdate(uint256,uint256)") */
export const BATCH_METADATA_UPDATE_TOPIC = '0x6bd5c950a8d8df17f772f5af37cb3655737899cbf903264b9795592da439661c';

/** Tokens of a range queued for a tokenURI read at a time, and only while fewer than this many wait. */
export const RANGE_CHUNK = 1000;

/** One ERC-4906 log: the token ids from..to (one token: from = to) of a contract, in a block. */
export interface MetadataUpdate {
  blockNumber: bigint;
  tokenAddress: string;
  fromTokenId: bigint;
  toTokenId: bigint;
}

/** A log as eth_getLogs answers it (what of it is read here). */
interface RawLog {
  address: string;
  topics: readonly string[];
  data: string;
  blockNumber: string | null;
  removed?: boolean;
}

/** The 32-byte word `i` of a log's data as a number, or null when the data is shorter. */
function word(data: string, i: number): bigint | null {
  const hex = data.slice(2 + i * 64, 2 + (i + 1) * 64);
  return hex.length === 64 ? BigInt(`0x${hex}`) : null;
}

/**
 * The ERC-4906 update a log carries, or null when it is none (another topic, a malformed log). The standard's
 * arguments are not indexed (they are in the data); a contract that indexed MetadataUpdate's id is read too.
 */
export function metadataUpdateOfLog(log: RawLog): MetadataUpdate | null {
  if (log.removed || log.blockNumber === null) return null;
  const base = { blockNumber: BigInt(log.blockNumber), tokenAddress: log.address.toLowerCase() };
  if (log.topics[0] === METADATA_UPDATE_TOPIC) {
    const id = log.topics.length > 1 ? BigInt(log.topics[1]) : word(log.data, 0);
    return id === null ? null : { ...base, fromTokenId: id, toTokenId: id };
  }
  if (log.topics[0] === BATCH_METADATA_UPDATE_TOPIC) {
    const [from, to] = log.topics.length > 2 ? [BigInt(log.topics[1]), BigInt(log.topics[2])] : [word(log.data, 0), word(log.data, 1)];
    if (from === null || to === null) return null;
    return { ...base, fromTokenId: from < to ? from : to, toTokenId: from < to ? to : from };
  }
  return null;
}

/** Gives each step of a range the updates of its blocks (after the previous step's last block, up to its own). */
export function withMetadataUpdates<S extends { toBlock: bigint; metadataUpdates?: MetadataUpdate[] }>(steps: S[], fromBlock: bigint, updates: MetadataUpdate[]): S[] {
  let after = fromBlock - 1n;
  for (const step of steps) {
    const low = after;
    step.metadataUpdates = updates.filter((u) => u.blockNumber > low && u.blockNumber <= step.toBlock);
    after = step.toBlock;
  }
  return steps;
}

/**
 * In a step's transaction, after its transfers (a token minted and updated in one range is known by then):
 * each known token a MetadataUpdate names is listed for a tokenURI read; each BatchMetadataUpdate is kept as a
 * range for the reader to expand. A token the gateway does not know is left alone (its mint will read its URI).
 */
export async function queueMetadataUpdates(m: EntityManager, chainId: string, collections: { id: string; contractAddress: string }[], updates: MetadataUpdate[] | undefined): Promise<void> {
  if (!updates?.length) return;
  const ids = new Map(collections.map((c) => [c.contractAddress, c.id]));
  const known = updates.filter((u) => ids.has(u.tokenAddress));
  const singles = known.filter((u) => u.fromTokenId === u.toTokenId);
  const batches = known.filter((u) => u.fromTokenId !== u.toTokenId);
  if (singles.length) {
    await m.query(
      `INSERT INTO chain_token_uris_pending (asset_id, chain_id)
       SELECT a.id, $1 FROM unnest($2::uuid[], $3::numeric[]) u(collection_id, token_id)
       JOIN assets a ON a.collection_id = u.collection_id AND a.token_id = u.token_id
       ON CONFLICT (asset_id) DO NOTHING`,
      [chainId, singles.map((u) => ids.get(u.tokenAddress)), singles.map((u) => u.fromTokenId.toString())],
    );
  }
  if (batches.length) {
    await m.query(
      `INSERT INTO chain_metadata_update_ranges (chain_id, collection_id, next_token_id, to_token_id)
       SELECT $1, unnest($2::uuid[]), unnest($3::numeric[]), unnest($4::numeric[])`,
      [chainId, batches.map((u) => ids.get(u.tokenAddress)), batches.map((u) => u.fromTokenId.toString()), batches.map((u) => u.toTokenId.toString())],
    );
  }
}

/**
 * Expands the oldest range of the chain by one chunk: the next RANGE_CHUNK known tokens of its collection in
 * it (by token id, on the collection's token index) are listed for a tokenURI read, and the range moves past
 * them, or goes when none is left. Only while fewer than RANGE_CHUNK reads wait, so the list stays short
 * whatever the size of the batch. Returns the tokens listed.
 */
export async function expandMetadataUpdateRange(ds: DataSource, chainId: string): Promise<number> {
  const [{ listed }]: { listed: number }[] = await ds.query(
    `WITH backlog AS (SELECT count(*) AS n FROM (SELECT 1 FROM chain_token_uris_pending WHERE chain_id = $1 LIMIT $2) p),
     r AS (SELECT id, collection_id, next_token_id, to_token_id FROM chain_metadata_update_ranges
           WHERE chain_id = $1 AND (SELECT n FROM backlog) < $2 ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED),
     chunk AS (SELECT a.id, a.token_id FROM r CROSS JOIN LATERAL (
                 SELECT x.id, x.token_id FROM assets x
                 WHERE x.collection_id = r.collection_id AND x.token_id >= r.next_token_id AND x.token_id <= r.to_token_id
                 ORDER BY x.token_id LIMIT $2) a),
     listed AS (INSERT INTO chain_token_uris_pending (asset_id, chain_id) SELECT id, $1 FROM chunk ON CONFLICT (asset_id) DO NOTHING RETURNING 1),
     last AS (SELECT max(token_id) AS token_id, count(*) AS n FROM chunk),
     moved AS (UPDATE chain_metadata_update_ranges x SET next_token_id = last.token_id + 1 FROM r, last WHERE x.id = r.id AND last.n = $2 RETURNING 1),
     done AS (DELETE FROM chain_metadata_update_ranges x USING r, last WHERE x.id = r.id AND last.n < $2 RETURNING 1)
     SELECT (SELECT count(*) FROM chunk)::int + (SELECT count(*) FROM done)::int AS listed`,
    [chainId, RANGE_CHUNK],
  );
  return listed;
}

/** The largest token id (2^256 - 1): a range from 0 to it is every token of a collection. */
const MAX_TOKEN_ID = (1n << 256n) - 1n;

/** Asks for the tokenURI of every known token of a collection to be read again (a collection refresh), as one range. */
export async function queueCollectionTokenUriReads(q: Pick<DataSource, 'query'>, chainId: string, collectionId: string): Promise<void> {
  await q.query(`INSERT INTO chain_metadata_update_ranges (chain_id, collection_id, next_token_id, to_token_id) VALUES ($1, $2, 0, $3)`, [
    chainId,
    collectionId,
    MAX_TOKEN_ID.toString(),
  ]);
}
