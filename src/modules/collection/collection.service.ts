import { Context, isAdmin } from '../../common/request/context';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError, Problems, isUniqueViolation } from '../../common/errors';
import { Page } from '../../common/pagination';
import { fetchPage } from '../../common/list-page';
import { sqlScope } from '../../common/read-model';
import { filterConditions, fixedSort, keptCountSql, selectList, selectsEveryField } from '../../common/read-model-sql';
import { nameSearch, RELEVANCE } from '../../common/name-search';
import { Params, prefixedColumns, takeJoined } from '../../common/sql';
import { Category } from '../catalog/category.entity';
import { Chain } from '../chain/chain.entity';
import { ADDRESS, UUID, checkText, checkUrl, required } from '../../common/validate';
import { MAX_LENGTH } from '../../common/limits';
import { keyOf } from '../../common/graphql/node';
import { Collection, StoredFee, CollectionStatus } from './collection.entity';
import { withEvents } from '../event/event.log';
import { COLLECTION_READ, collectionColumns } from './collection.read';
import { claimChanged, claimCollection, claimOfChange, claimOfRegistration, lockedClaim } from './collection.claim';
import { ClaimCollectionInput, CollectionListArgs, CreateCollectionInput, FeeInput, NestedCollectionArgs, UpdateCollectionInput } from './collection.inputs';

/** Collections marked this way answer `assets` with null (REST include_assets=false, GraphQL includeAssets: false). */
export const OMIT_ASSETS = Symbol('omitAssets');

/**
 * The collections a root answers, marked when it omits their assets. Marked copies: the rows also stand in
 * the request's loader (collectionById), where another root of the same document (an asset's collection)
 * finds the same object, whose assets it must still answer.
 */
function markAssets(collections: Collection[], include: boolean): Collection[] {
  return include ? collections : collections.map((c) => ({ ...c, [OMIT_ASSETS]: true }));
}

/** The collection, with its `assets` field null unless `include` (an `includeAssets` argument). */
export function showingAssets(collection: Collection, include: boolean): Collection {
  return markAssets([collection], include)[0];
}

export async function assertChainExists(ctx: Context, problems: Problems, field: string, chainId: string): Promise<boolean> {
  const chain = await ctx.loaders.chainById.load(chainId);
  if (!chain) problems.add(field, `unknown chain "${chainId}"; chains are EIP-155 ids such as "1" (Ethereum) or "137" (Polygon), see the chains query`);
  return Boolean(chain);
}

/**
 * Columns every collection row carries: its field resolvers (chain, category, assets, statistics) use them.
 */
const COLLECTION_KEYS = ['id', 'chainId', 'categoryId'];

/** The condition of a list's `chain_id` filter (null without one): the chain's EIP-155 id or its Node id; an unknown chain is a 422. */
export async function chainCondition(ctx: Context, p: Params, column: string, given: string | null | undefined): Promise<string | null> {
  if (given == null) return null;
  const chainId = keyOf('Chain', given);
  const problems = new Problems();
  await assertChainExists(ctx, problems, 'chainId', chainId);
  problems.throwIfAny();
  return `${column} = ${p.add(chainId)}`;
}

/** The conditions of a collection list's filters that need no look-up (COLLECTION_READ's), over `collections t`. */
export function collectionConditions(p: Params, args: NestedCollectionArgs & { ownerAddress?: string | null }): string[] {
  return filterConditions([...COLLECTION_READ.filters, ...COLLECTION_READ.rootFilters], sqlScope(p), 't', args);
}

export async function listCollections(ctx: Context, args: CollectionListArgs, fields?: Set<string>): Promise<Page<Collection>> {
  const p = new Params();
  const where: string[] = [];
  const chain = await chainCondition(ctx, p, 't.chain_id', args.chainId);
  if (chain) where.push(chain);
  where.push(...collectionConditions(p, args));
  const search = args.search !== undefined ? nameSearch(p, 't', args.search) : undefined;
  if (search) where.push(search.where('collections t', where));
  const always = fields?.has('fees') ? [...COLLECTION_KEYS, 'royaltyFees'] : COLLECTION_KEYS;
  const columns = selectList(COLLECTION_READ, sqlScope(p), 't', fields, always);
  // The chains and categories the selection reads come in the page's statement (one row each per collection).
  const joins = [
    fields?.has('chain') && { sql: 'LEFT JOIN chains ch ON ch.id = t.chain_id', entity: Chain, alias: 'ch', prefix: 'ch:' },
    fields?.has('category') && { sql: 'LEFT JOIN categories cat ON cat.id = t.category_id', entity: Category, alias: 'cat', prefix: 'cat:' },
  ].filter((j) => j !== false && j !== undefined);
  const page = await fetchPage<Collection>(ctx.ds, {
    from: ['collections t', ...joins.map((j) => j.sql)].join(' '),
    columns: [columns, ...joins.map((j) => prefixedColumns(ctx.ds.getMetadata(j.entity), j.alias, j.prefix))].join(', '),
    idExpression: 't.id',
    where,
    params: p,
    sort: search?.sort ?? fixedSort(COLLECTION_READ, args.orderBy)!,
    orderBy: search ? RELEVANCE : args.orderBy,
    countAllRead: search !== undefined,
    // The kept count by chain, category and status (a search ranks its own rows; an owner's are counted).
    count: search ? undefined : () => keptCountSql(COLLECTION_READ, sqlScope(p), { ...args, chainId: args.chainId == null ? null : keyOf('Chain', args.chainId) }),
    args,
  });
  if (joins.length) {
    const prefixes = joins.map((j) => j.prefix);
    for (const c of page.result) {
      takeJoined(c as unknown as Record<string, unknown>, prefixes).forEach((row, i) => {
        if (!row) return;
        if (joins[i].entity === Chain) ctx.loaders.chainById.prime(row.id as string, row as unknown as Chain);
        else ctx.loaders.categoryById.prime(row.id as string, row as unknown as Category);
      });
    }
  }
  // Only whole rows may stand in the loader's cache: asset.collection may ask for any field.
  if (selectsEveryField(COLLECTION_READ, fields, always)) for (const c of page.result) ctx.loaders.collectionById.prime(c.id, c);
  return { ...page, result: markAssets(page.result, args.includeAssets) };
}

/** The collection with this contract address; `chainId` decides when the address exists on several chains. */
export async function findCollectionByAddress(
  ctx: Context,
  address: string,
  chainId?: string | null,
  field = 'address',
): Promise<Collection> {
  const p = new Params();
  const where = [`t.contract_address = ${p.add(address.toLowerCase())}`];
  if (chainId != null) where.push(`t.chain_id = ${p.add(chainId)}`);
  const rows: Collection[] = await ctx.ds.query(
    `SELECT ${collectionColumns()} FROM collections t WHERE ${where.join(' AND ')} ORDER BY t.chain_id LIMIT 10`,
    p.values,
  );
  if (rows.length === 0) {
    throw new NotFoundError(`no collection with ${field} ${address}${chainId != null ? ` on chain ${chainId}` : ''}`);
  }
  if (rows.length > 1) {
    throw new ConflictError(
      `${field} ${address} is a collection on several chains (${rows.map((r) => r.chainId).join(', ')}); pass chainId to choose one`,
      [{ field: 'chainId', message: `one of ${rows.map((r) => r.chainId).join(', ')}` }],
    );
  }
  ctx.loaders.collectionById.prime(rows[0].id, rows[0]);
  return rows[0];
}

/** What slugify can write: letters (of any script), digits and marks, in words joined by single hyphens. */
const SLUG_SHAPE = /^[\p{L}\p{N}\p{M}]+(?:-[\p{L}\p{N}\p{M}]+)*$/u;

/**
 * A collection named by a client: its UUID, its contract address (`chainId` decides when the address is on
 * several chains) or its slug. The one rule for every place a collection is named (`collection_id`, a
 * /v1/collections/{address} path, GraphQL's `collection(id)`).
 */
export async function findCollectionByRef(ctx: Context, ref: string, chainId?: string | null, field = 'collectionId'): Promise<Collection> {
  const onChain = (found: Collection | undefined | null) => (found && (chainId == null || found.chainId === chainId) ? found : null);
  const where = chainId != null ? ` on chain ${chainId}` : '';
  if (UUID.test(ref)) {
    const found = onChain(await ctx.loaders.collectionById.load(ref.toLowerCase()));
    if (!found) throw new NotFoundError(`no collection with UUID ${ref}${where}`);
    return found;
  }
  if (ADDRESS.test(ref)) return findCollectionByAddress(ctx, ref, chainId, 'contract address');
  if (!SLUG_SHAPE.test(ref) || ref !== ref.toLowerCase()) {
    // Could be no collection's: slugify writes lower-case letters and digits joined by hyphens.
    const message = `must be a collection id (UUID), contract address or slug, got ${JSON.stringify(ref.slice(0, 60))}`;
    throw new BadRequestError(`${field}: ${message}`, [{ field, message }]);
  }
  const [bySlug]: Collection[] = await ctx.ds.query(
    `SELECT ${collectionColumns()} FROM collections t WHERE t.slug = $1`,
    [ref],
  );
  if (!onChain(bySlug)) {
    throw new NotFoundError(`no collection ${JSON.stringify(ref)}${where}: expected a collection id (UUID), a contract address or a slug`);
  }
  ctx.loaders.collectionById.prime(bySlug.id, bySlug);
  return bySlug;
}

/**
 * GraphQL's `collection(address | id)` and `updateCollection(address | id)`: exactly one of them, `address`
 * (typed Address, as before) or `id` (a UUID, contract address or slug).
 */
export async function findNamedCollection(ctx: Context, named: { address?: string | null; id?: string | null }, chainId: string | null | undefined) {
  if ((named.address == null) === (named.id == null)) {
    const message = 'name the collection once: by its UUID, contract address or slug (id), or by its address';
    throw new BadRequestError(message, [{ field: 'id', message }]);
  }
  return named.id != null ? findCollectionByRef(ctx, named.id, chainId, 'id') : findCollectionByAddress(ctx, named.address!, chainId);
}

export async function getCollection(
  ctx: Context,
  named: { address?: string | null; id?: string | null },
  chainId: string | null | undefined,
  includeAssets: boolean,
) {
  return showingAssets(await findNamedCollection(ctx, named, chainId), includeAssets);
}

export function checkFees(problems: Problems, field: string, fees: FeeInput[] | null | undefined): StoredFee[] {
  if (!fees) return [];
  let total = 0;
  fees.forEach((fee, i) => {
    if (!Number.isInteger(fee.basisPoints) || fee.basisPoints < 0 || fee.basisPoints > 10000) {
      problems.add(`${field}[${i}].basisPoints`, `must be an integer from 0 to 10000, got ${fee.basisPoints}`);
    }
    total += fee.basisPoints;
  });
  if (total > 10000) problems.add(field, `add up to ${total} basis points; at most 10000 are allowed`);
  return fees.map((f) => ({ address: f.address, basisPoints: f.basisPoints }));
}

function checkCommonFields(problems: Problems, input: CreateCollectionInput | UpdateCollectionInput): void {
  checkText(problems, 'name', input.name, { max: MAX_LENGTH.collectionName });
  for (const field of ['imageUrl', 'discordUrl', 'telegramUrl', 'externalUrl'] as const) {
    checkUrl(problems, field, input[field]);
  }
  checkText(problems, 'twitterUsername', input.twitterUsername, { max: MAX_LENGTH.username });
  checkText(problems, 'instagramUsername', input.instagramUsername, { max: MAX_LENGTH.username });
}

/**
 * A name as a slug of letters and digits of any script, joined by hyphens: "Café Crème" is `cafe-creme`,
 * "日本語 コレクション" is `日本語-コレクション`. Only Latin letters lose their accents (what URLs of Latin
 * names customarily do); in other scripts a mark is part of the letter (ガ is not カ, й is not и).
 */
export function slugify(name: string): string {
  const words = name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/(\p{Script=Latin})\p{M}+/gu, '$1')
    .normalize('NFC')
    .replace(/[^\p{L}\p{M}\p{N}]+/gu, '-')
    .replace(/^-+/, '');
  // By code point, so that a letter outside the BMP is never cut in half.
  return Array.from(words).slice(0, MAX_LENGTH.slug).join('').replace(/-+$/, '') || 'collection';
}

/** The slug of a name, made unique with a numeric suffix ("punks", "punks-2", ...). */
async function freeSlug(ctx: Context, name: string): Promise<string> {
  const base = slugify(name);
  const rows: { slug: string }[] = await ctx.ds.query(
    `SELECT slug FROM collections WHERE slug = $1 OR slug ~ ('^' || $1 || '-[0-9]+$')`,
    [base],
  );
  if (!rows.length) return base;
  const taken = new Set(rows.map((r) => r.slug));
  let n = 2;
  while (taken.has(`${base}-${n}`)) n += 1;
  return `${base}-${n}`;
}

export async function createCollection(ctx: Context, input: CreateCollectionInput): Promise<Collection> {
  const caller = await ctx.requireCaller();
  const problems = new Problems();
  required(problems, 'contractAddress', input.contractAddress);
  if (required(problems, 'chainId', input.chainId)) await assertChainExists(ctx, problems, 'chainId', input.chainId!);
  if (input.totalSupply != null && input.totalSupply < 0) problems.add('totalSupply', `must be 0 or more, got ${input.totalSupply}`);
  if (input.startBlock != null && input.startBlock < 0) problems.add('startBlock', `must be a block number, 0 or more, got ${input.startBlock}`);
  if (input.categoryId != null && !(await ctx.loaders.categoryById.load(input.categoryId))) {
    problems.add('categoryId', `unknown category "${input.categoryId}"; see GET /v1/categories`);
  }
  checkCommonFields(problems, input);
  const fees = checkFees(problems, 'fees', input.fees);
  problems.throwIfAny();
  const claim = await claimOfRegistration(ctx, caller, input.chainId!, input.contractAddress!);

  const name = input.name?.trim() || input.contractAddress!;
  for (let attempt = 0; ; attempt += 1) {
    const slug = await freeSlug(ctx, name);
    try {
      const saved = await withEvents(ctx.ds, async (m, events) => {
        const repo = m.getRepository(Collection);
        const row = await repo.save(
          repo.create({
            chainId: input.chainId!,
            contractAddress: input.contractAddress!,
            ...claim,
            totalSupply: input.totalSupply ?? null,
            startBlock: input.startBlock != null ? String(input.startBlock) : null,
            categoryId: input.categoryId ?? null,
            name,
            slug,
            description: input.description ?? null,
            imageUrl: input.imageUrl ?? null,
            discordUrl: input.discordUrl ?? null,
            telegramUrl: input.telegramUrl ?? null,
            externalUrl: input.externalUrl ?? null,
            twitterUsername: input.twitterUsername ?? null,
            instagramUsername: input.instagramUsername ?? null,
            royaltyFees: fees,
          }),
        );
        events.add('collection.created', 'collection', row.id);
        return row;
      });
      return saved;
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      const constraint = (err as { constraint?: string; driverError?: { constraint?: string } }).driverError?.constraint;
      if (constraint === 'uq_collections_slug' && attempt < 5) continue;
      throw new ConflictError(
        `a collection with contractAddress ${input.contractAddress} already exists on chain ${input.chainId}` +
          ` (if the contract is yours, claim it: POST /v1/collections/${input.contractAddress}/claim, claimCollection; docs/chain.md)`,
        [{ field: 'contractAddress', message: 'already taken on this chain' }],
      );
    }
  }
}

export async function updateCollection(
  ctx: Context,
  named: { address?: string | null; id?: string | null },
  chainId: string | null | undefined,
  input: UpdateCollectionInput,
): Promise<Collection> {
  const caller = await ctx.requireCaller();
  const collection = await findNamedCollection(ctx, named, chainId);
  const claim = await claimOfChange(ctx, caller, collection);
  const problems = new Problems();
  // Absent leaves the status as it is; null would clear it, and a collection always has one.
  if (input.status === null) problems.add('status', 'must be unverified or verified; it cannot be cleared');
  else if (input.status !== undefined && !isAdmin(caller)) {
    throw new ForbiddenError('only an admin key may change the status of a collection');
  }
  if (input.name !== undefined && (input.name === null || input.name.trim() === '')) problems.add('name', 'must not be empty');
  checkCommonFields(problems, input);
  problems.throwIfAny();

  const changes: Partial<Collection> = {};
  for (const key of Object.keys(input) as (keyof UpdateCollectionInput)[]) {
    if (input[key] !== undefined) (changes as Record<string, unknown>)[key] = input[key];
  }
  if (typeof changes.name === 'string') changes.name = changes.name.trim();
  const edited = Object.keys(changes).length > 0;
  if (edited || claimChanged(collection, claim)) {
    await withEvents(ctx.ds, async (m, events) => {
      const current = await lockedClaim(m, collection.id);
      if (!edited && !claimChanged(current, claim)) return;
      // A key acting for the contract's owner() takes over a claim that was another's (collection.claim.ts).
      const taken = claim.owner !== undefined && claim.owner !== current.owner;
      await m.getRepository(Collection).update({ id: collection.id }, { ...changes, ...claim } as never);
      if (edited || !taken) events.add('collection.updated', 'collection', collection.id);
      if (taken) events.add('collection.claimed', 'collection', collection.id, { previous_owner: current.owner });
      if (changes.status === CollectionStatus.VERIFIED && collection.status !== CollectionStatus.VERIFIED) {
        events.add('collection.verified', 'collection', collection.id);
      }
    });
  }
  return reloaded(ctx, collection.id);
}

/** claimCollection and POST /v1/collections/{address}/claim (collection.claim.ts): the collection as the claim left it. */
export async function claimNamedCollection(
  ctx: Context,
  named: { address?: string | null; id?: string | null },
  chainId: string | null | undefined,
  input: ClaimCollectionInput | null | undefined,
): Promise<Collection> {
  const collection = await findNamedCollection(ctx, named, chainId);
  await claimCollection(ctx, collection, input);
  return reloaded(ctx, collection.id);
}

/** The collection as it stands after a write, in the request's loader too. */
async function reloaded(ctx: Context, id: string): Promise<Collection> {
  const updated = await ctx.ds.getRepository(Collection).findOneByOrFail({ id });
  ctx.loaders.collectionById.clear(updated.id).prime(updated.id, updated);
  return updated;
}
