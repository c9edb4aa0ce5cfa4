import { EntityManager } from 'typeorm';
import { Context, isAdmin } from '../../common/request/context';
import { ConflictError, ForbiddenError, NotFoundError, Problems, ValidationError, isUniqueViolation } from '../../common/errors';
import { Page } from '../../common/pagination';
import { fetchPage } from '../../common/list-page';
import { nameSearch, RELEVANCE, StartsWalk } from '../../common/name-search';
import { Params } from '../../common/sql';
import { UUID, uuidOf, checkText, checkUrl, required } from '../../common/validate';
import { MAX_LENGTH } from '../../common/limits';
import { MAX_TOKEN_ID } from '../../common/scalars';
import { Collection } from '../collection/collection.entity';
import { assertChainExists, chainCondition, findCollectionByRef } from '../collection/collection.service';
import { assertSpeaksFor } from '../collection/collection.claim';
import { Asset, AssetStatus, MetadataStatus } from './asset.entity';
import { AssetRelation, assetListQuery, prefetchAssetRelations, TokenRef } from './asset.loaders';
import { ASSET_READ, keptAssetCountSql } from './asset.read';
import { keyOf } from '../../common/graphql/node';
import { sqlScope } from '../../common/read-model';
import { boundsRows, checkFilters, joinAliases, modelColumns } from '../../common/read-model-sql';
import { collectionColumns } from '../collection/collection.read';
import { checkCurrencyFilter } from '../currency/currency.service';
import { listedByNameSql } from '../listing/listing.sql';
import { EventLog, withEvents } from '../event/event.log';
import { indexAssetTraits } from './asset.traits';
import { AssetListArgs, CreateAssetInput } from './asset.types';
import { queueFetches, queuedNow } from '../metadata/metadata.queue';

/** The filters of the root lists (`assets`, `searchAssets`). */
const LIST_FILTERS = [...ASSET_READ.rootFilters, ...ASSET_READ.filters];

export async function listAssets(ctx: Context, args: AssetListArgs, fields?: string[], relations?: AssetRelation[]): Promise<Page<Asset>> {
  checkFilters(LIST_FILTERS, args);
  await checkCurrencyFilter(ctx, args.currency);
  const s = sqlScope(undefined, undefined, joinAliases(ASSET_READ));
  const where: string[] = [];
  const chain = await chainCondition(ctx, s.p, 't.chain_id', args.chainId);
  if (chain) where.push(chain);
  // A collection given by id on a first page is checked only when the page comes back empty: a page with
  // rows proves it exists (foreign key), and the common case costs one statement instead of two.
  const checkAfter = args.collectionId != null && UUID.test(args.collectionId) && (args.page == null || args.page === '');
  const collectionId =
    args.collectionId == null ? null : checkAfter ? args.collectionId.toLowerCase() : (await findCollectionByRef(ctx, args.collectionId)).id;
  // The collection also picks the index of the walk of listed assets by price (assetListQuery).
  const list = assetListQuery({ ...args, collectionId, fields }, s, where, LIST_FILTERS, collectionId == null ? { market: true } : { collection: () => s.p.add(collectionId) });
  list.count = () => keptAssetCountSql(s, { ...args, collectionId, chainId: args.chainId == null ? null : keyOf('Chain', args.chainId) });
  const search = args.search !== undefined ? nameSearch(s.p, 't', args.search) : undefined;
  // Among listed assets the names that start with the query are read from the listings' own names.
  const listedOnly = args.status === AssetStatus.LISTED || (args.status == null && args.currency != null);
  const walk: StartsWalk | undefined = listedOnly ? (starts, limit) => listedByNameSql(s.p, { now: s.now(), currency: args.currency, filters: list.where }, starts, limit) : undefined;
  // A search's candidates are the rows of the list's FROM that pass its filters, found in the same statement
  // (one snapshot): the page reads them by their row addresses alone, without the filters and their joins a
  // second time (among listed assets, 1,000 active listings looked up again: 16 of 76 ms at 10,000,000 assets).
  const searched = search && { from: `${ASSET_READ.table} t`, where: [search.where(list.from, list.where, boundsRows(LIST_FILTERS, args), walk)] };
  const page = await fetchPage<Asset>(ctx.ds, { ...list, ...(search && { ...searched, sort: search.sort, orderBy: RELEVANCE, countAllRead: true, pageFrom: undefined, countFrom: undefined }) });
  if (checkAfter && page.result.length === 0) await findCollectionByRef(ctx, args.collectionId!);
  await prefetchAssetRelations(ctx.loaders, page.result, relations);
  return page;
}

/** The prefix of a joined collection's columns in a row of `getAsset` (`"c:name"`). */
const JOINED = 'c:';
/** A collection's fields as its read model states them (collectionById's rows), over `c`, each under JOINED. */
const JOINED_COLLECTION = collectionColumns('c').replace(/ AS "/g, ` AS "${JOINED}`);

/**
 * The asset with this token; `chainId` decides when the same contract and id exist on several chains.
 * `withCollection` (the request reads the asset's collection): the collection comes in the same statement
 * (a join) and is primed in the request's loader, so `asset.collection` costs no statement of its own.
 */
export async function getAsset(ctx: Context, tokenAddress: string, tokenId: string, chainId?: string | null, withCollection = false): Promise<Asset> {
  const p = new Params();
  const where = ASSET_READ.one!.where(sqlScope(p), 't', { tokenAddress, tokenId, chainId })!;
  const rows: Record<string, unknown>[] = await ctx.ds.query(
    withCollection
      ? `SELECT ${modelColumns(ASSET_READ)}, ${JOINED_COLLECTION}
         FROM assets t JOIN collections c ON c.id = t.collection_id WHERE ${where.join(' AND ')} ORDER BY ${ASSET_READ.one!.order!('t')} LIMIT 10`
      : `SELECT ${modelColumns(ASSET_READ)} FROM assets t WHERE ${where.join(' AND ')} ORDER BY ${ASSET_READ.one!.order!('t')} LIMIT 10`,
    p.values,
  );
  oneAssetOfToken(rows, { tokenAddress, tokenId, chainId: chainId ?? null });
  if (!withCollection) return rows[0] as unknown as Asset;
  const asset: Record<string, unknown> = {};
  const collection: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(rows[0])) {
    if (key.startsWith(JOINED)) collection[key.slice(JOINED.length)] = value;
    else asset[key] = value;
  }
  ctx.loaders.collectionById.prime(collection.id as string, collection as unknown as Collection);
  return asset as unknown as Asset;
}

/** The rows of one token reference: 404 when none, 409 naming the chains when it exists on several and no chain was given. */
function oneAssetOfToken<T extends { chainId?: unknown }>(rows: T[], ref: TokenRef): T {
  const { tokenAddress, tokenId, chainId } = ref;
  if (!rows.length) {
    throw new NotFoundError(`no asset ${tokenAddress}/${tokenId}${chainId != null ? ` on chain ${chainId}` : ''}`);
  }
  if (rows.length > 1) {
    const chains = rows.map((r) => r.chainId).join(', ');
    throw new ConflictError(`asset ${tokenAddress}/${tokenId} exists on several chains (${chains}); pass chainId to choose one`, [
      { field: 'chainId', message: `one of ${chains}` },
    ]);
  }
  return rows[0];
}

/**
 * getAsset through the request's loader (assetsByToken): the assets of many requests' items are read by
 * one statement (a bulk listing), with getAsset's answers.
 */
export async function loadAssetByToken(ctx: Context, tokenAddress: string, tokenId: string, chainId?: string | null): Promise<Asset> {
  const ref = { tokenAddress, tokenId, chainId: chainId ?? null };
  return oneAssetOfToken(await ctx.loaders.assetsByToken.load(ref), ref);
}

export async function getAssetById(ctx: Context, id: string): Promise<Asset> {
  const asset = await ctx.loaders.assetById.load(uuidOf('id', id, 'an asset'));
  if (!asset) throw new NotFoundError(`no asset with id ${id}`);
  return asset;
}

/** Checks a new asset's own fields (not its collection); shared with the CSV import. */
export function checkAssetFields(
  problems: Problems,
  input: Pick<CreateAssetInput, 'name' | 'description' | 'imageUrl' | 'animationUrl' | 'externalLink' | 'metadata'>,
): void {
  checkText(problems, 'name', input.name, { required: true, max: MAX_LENGTH.assetName });
  checkText(problems, 'description', input.description, { required: true, max: MAX_LENGTH.description });
  if (required(problems, 'imageUrl', input.imageUrl)) checkUrl(problems, 'imageUrl', input.imageUrl);
  checkUrl(problems, 'animationUrl', input.animationUrl);
  checkUrl(problems, 'externalLink', input.externalLink);
  if (required(problems, 'metadata', input.metadata)) {
    const m = input.metadata;
    if (typeof m !== 'object' || Array.isArray(m)) problems.add('metadata', 'must be a JSON object');
  }
}

/** The longest tokenURI taken (a data: URI holds its whole document). */
const TOKEN_URI_MAX_LENGTH = 65_536;

/** A tokenURI given to createAsset: one of the schemes the metadata fetch reads; undefined when none is given. */
export function checkTokenUri(problems: Problems, uri: string | null | undefined): string | undefined {
  if (uri === undefined || uri === null) return undefined;
  if (uri.length > TOKEN_URI_MAX_LENGTH || !/^(https?:\/\/[^/]|ipfs:\/\/.|ar:\/\/.|data:application\/json[;,])/i.test(uri)) {
    problems.add(
      'tokenUri',
      `must be an http(s)://, ipfs://, ar:// or data:application/json URI of at most ${TOKEN_URI_MAX_LENGTH} characters, got ${JSON.stringify(uri.slice(0, 80))}`,
    );
    return undefined;
  }
  return uri;
}

/**
 * Mints the next token ids of a collection (highest + 1; past 2^256-1, the lowest unused) or takes the given ones. The collection row is
 * locked (`FOR UPDATE`) for the rest of the transaction, so concurrent mints and imports queue up and
 * ids stay unique and consecutive; the unique constraint on (chain, contract, token id) is the backstop.
 */
export async function lockCollectionForMint(
  m: EntityManager,
  collection: Collection,
  count: number,
  minting: number = count,
): Promise<{ nextTokenId: bigint }> {
  await m.query('SELECT id FROM collections WHERE id = $1 FOR UPDATE', [collection.id]);
  const [row]: { max: string | null; count: string | null }[] = await m.query(
    `SELECT (SELECT max(token_id) FROM assets WHERE collection_id = $1)::text AS max,
            CASE WHEN $2::boolean THEN (SELECT count(*) FROM assets WHERE collection_id = $1) END AS count`,
    [collection.id, collection.totalSupply !== null],
  );
  if (collection.totalSupply !== null && Number(row.count) + count > collection.totalSupply) {
    throw new ValidationError([
      {
        field: 'collectionId',
        message:
          `collection ${collection.contractAddress} has ${row.count} of its total_supply of ${collection.totalSupply} assets; ` +
          `${count} more would exceed it`,
      },
    ]);
  }
  let nextTokenId = row.max === null ? 1n : BigInt(row.max) + 1n;
  // One given id near the top (2^256-1) must not end minting for good: past the top, minting goes on at
  // the lowest unused id from 1 (rarely: this reads the collection's ids in order).
  if (minting > 0 && nextTokenId + BigInt(minting) - 1n > MAX_TOKEN_ID) nextTokenId = await lowestUnusedTokenId(m, collection.id);
  if (minting > 0 && nextTokenId + BigInt(minting) - 1n > MAX_TOKEN_ID) {
    throw new ValidationError([
      { field: 'tokenId', message: `contract ${collection.contractAddress} has no free token id left; every id from 0 to 2^256-1 is taken` },
    ]);
  }
  return { nextTokenId };
}

/** The lowest token id from 1 that no asset of the collection has. */
async function lowestUnusedTokenId(m: EntityManager, collectionId: string): Promise<bigint> {
  const [row]: { id: string }[] = await m.query(
    `SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM assets WHERE collection_id = $1 AND token_id = 1) THEN '1'
            ELSE (SELECT (min(a.token_id) + 1)::text FROM assets a
                  WHERE a.collection_id = $1 AND a.token_id >= 1
                    AND NOT EXISTS (SELECT 1 FROM assets b WHERE b.collection_id = $1 AND b.token_id = a.token_id + 1)) END AS id`,
    [collectionId],
  );
  return BigInt(row.id);
}

/** A new asset's own fields, checked (checkAssetFields) or made by the gateway (a token minted on chain). */
export type NewAsset = Pick<CreateAssetInput, 'name' | 'description' | 'imageUrl' | 'animationUrl' | 'externalLink' | 'metadata'> & {
  tokenId: string;
  owner: string;
};

/**
 * Writes one asset of a collection, its traits and its event (`asset.created`, with `extra` merged into its
 * data), inside the caller's transaction: the one insert of an asset, whether an API call or the chain made it.
 */
export async function insertAsset(
  m: EntityManager,
  events: EventLog,
  collection: Pick<Collection, 'id' | 'chainId' | 'contractAddress'>,
  asset: NewAsset,
  extra?: Record<string, unknown>,
): Promise<Asset> {
  const [row]: Asset[] = await m.query(
    `INSERT INTO assets (collection_id, chain_id, token_address, token_id, name, description, image_url,
       animation_url, external_link, metadata, owner)
     VALUES ($1, $2, $3, $4::numeric, $5, $6, $7, $8, $9, $10::jsonb, $11)
     RETURNING ${modelColumns(ASSET_READ, 'assets')}`,
    [
      collection.id,
      collection.chainId,
      collection.contractAddress,
      asset.tokenId,
      asset.name,
      asset.description,
      asset.imageUrl,
      asset.animationUrl ?? null,
      asset.externalLink ?? null,
      JSON.stringify(asset.metadata),
      asset.owner,
    ],
  );
  await indexAssetTraits(m, [row.id]);
  events.add('asset.created', 'asset', row.id, extra);
  return row;
}

export async function createAsset(ctx: Context, input: CreateAssetInput): Promise<Asset> {
  const caller = await ctx.requireCaller();
  const problems = new Problems();
  let collection: Collection | undefined;
  if (required(problems, 'collectionId', input.collectionId)) {
    try {
      collection = await findCollectionByRef(ctx, input.collectionId!);
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
      problems.add('collectionId', err.message);
    }
  }
  const tokenUri = checkTokenUri(problems, input.tokenUri);
  // With a tokenURI its document fills the asset's own fields: those given are checked, the others start
  // empty, as a token minted on chain does.
  const fields = tokenUri ? { ...input, description: input.description ?? '', imageUrl: input.imageUrl ?? '', metadata: input.metadata ?? {} } : input;
  const givenOnly = { name: input.name ?? '#', description: input.description ?? '-', imageUrl: input.imageUrl ?? 'ipfs://-', metadata: input.metadata ?? {} };
  checkAssetFields(problems, input.tokenUri != null ? { ...input, ...givenOnly } : input);
  required(problems, 'owner', input.owner);
  if (required(problems, 'tokenAddress', input.tokenAddress) && collection && input.tokenAddress !== collection.contractAddress) {
    problems.add('tokenAddress', `must be the collection's contract address ${collection.contractAddress}, got ${input.tokenAddress}`);
  }
  if (required(problems, 'chainId', input.chainId) && (await assertChainExists(ctx, problems, 'chainId', input.chainId!))) {
    if (collection && input.chainId !== collection.chainId) {
      problems.add('chainId', `must be the collection's chain ${collection.chainId}, got ${input.chainId}`);
    }
  }
  problems.throwIfAny();
  const target = collection!;
  await assertSpeaksFor(ctx, caller, target);
  if (input.owner !== caller.address && !isAdmin(caller)) {
    throw new ForbiddenError(`owner must be the caller (${caller.address}) unless the key is an admin's`);
  }

  try {
    const created = await withEvents(ctx.ds, async (m, events) => {
      const { nextTokenId } = await lockCollectionForMint(m, target, 1, input.tokenId == null ? 1 : 0);
      const tokenId = input.tokenId ?? nextTokenId.toString();
      const asset = tokenUri
        ? { ...fields, name: input.name ?? `#${tokenId}`, metadata: { ...(fields.metadata as Record<string, unknown>), token_uri: tokenUri } }
        : input;
      const row = await insertAsset(m, events, target, { ...asset, tokenId, owner: input.owner! });
      if (tokenUri && (await queueFetches(m, [row.id]))) row.metadataStatus = MetadataStatus.PENDING;
      return row;
    });
    if (tokenUri) queuedNow();
    ctx.invalidate();
    return created;
  } catch (err) {
    if (isUniqueViolation(err)) {
      throw new ConflictError(`token id ${input.tokenId} is already taken in contract ${target.contractAddress}`, [
        { field: 'tokenId', message: 'already taken' },
      ]);
    }
    throw err;
  }
}
