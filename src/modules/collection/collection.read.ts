import { keyOf } from '../../common/graphql/node';
import { SortDirection } from '../../common/pagination';
import { equalsFilter, ReadFilter, ReadModel, SqlScope } from '../../common/read-model';
import { modelColumns } from '../../common/read-model-sql';
import { ADDRESS, UUID } from '../../common/validate';
import { CollectionOrderBy } from './collection.inputs';
import { feesRelation } from './fee.type';

/**
 * A filter of rows by their collection (`collectionId`, over their `collection_id`): its UUID, which plans
 * read, or its contract address, which the resolvers look up first; an unknown one is their error.
 */
export const collectionIdFilter = (note?: string): ReadFilter => ({
  arg: 'collectionId',
  type: 'String',
  note,
  plan: 'sql',
  where: (s, row, id: string) => `${row}.collection_id = ${s.p.add(id)}`,
  equals: { column: 'collection_id' },
  names: { table: 'collections', keyType: 'uuid', key: (value) => (typeof value === 'string' && UUID.test(value) ? value.toLowerCase() : undefined) },
});

/**
 * How collections are read: by collection.service.ts and its loaders (filters, sorts), and by the SQL
 * plans (fields, relations, roots). The service selects the entity's columns (collection.entity.ts), which
 * `fields` states as SQL for the plans.
 */
export const COLLECTION_READ: ReadModel = {
  type: 'Collection',
  list: 'collections',
  search: 'searchCollections',
  table: 'collections',
  alias: 't',
  fields: {
    id: { sql: 'id', kind: 'text' },
    chainId: { sql: 'chain_id', kind: 'value' },
    contractAddress: { sql: 'contract_address', kind: 'value' },
    owner: { sql: 'owner', kind: 'value' },
    totalSupply: { sql: 'total_supply', kind: 'value' },
    // A bigint, a JSON number (a block number stays below 2^53), as SafeInt serializes the service's text.
    startBlock: { sql: 'start_block', kind: 'value' },
    categoryId: { sql: 'category_id', kind: 'value' },
    name: { sql: 'name', kind: 'value' },
    slug: { sql: 'slug', kind: 'value' },
    description: { sql: 'description', kind: 'value' },
    imageUrl: { sql: 'image_url', kind: 'value' },
    discordUrl: { sql: 'discord_url', kind: 'value' },
    telegramUrl: { sql: 'telegram_url', kind: 'value' },
    externalUrl: { sql: 'external_url', kind: 'value' },
    twitterUsername: { sql: 'twitter_username', kind: 'value' },
    instagramUsername: { sql: 'instagram_username', kind: 'value' },
    royaltyFees: { sql: 'fees', kind: 'value', serviceOnly: true },
    status: { sql: 'status', kind: 'enum' },
    ownerVerification: { sql: 'owner_verification', kind: 'enum' },
    contractOwner: { sql: 'contract_owner', kind: 'value' },
    ownerCheckedAt: { sql: 'owner_checked_at', kind: 'timestamp' },
    ownerCheckedBlock: { sql: 'owner_checked_block', kind: 'value' },
    createdAt: { sql: 'created_at', kind: 'timestamp' },
    updatedAt: { sql: 'updated_at', kind: 'timestamp' },
  },
  filters: [
    {
      arg: 'categoryId',
      type: 'String',
      plan: 'sql',
      where: (s, t, category: string) => `${t}.category_id = ${s.p.add(keyOf('Category', category))}`,
    },
    equalsFilter('status', 'CollectionStatus', 'status'),
  ],
  rootFilters: [
    // The resolvers check that the chain exists (collection.service.ts writes its condition).
    { arg: 'chainId', type: 'String', plan: 'aside' },
    equalsFilter('ownerAddress', 'Address', 'owner'),
  ],
  sorts: {
    [CollectionOrderBy.CREATED_AT]: { expression: 't.created_at', sqlType: 'timestamptz' },
    // A name reads A to Z unless a direction is given.
    [CollectionOrderBy.NAME]: { expression: 't.name', sqlType: 'text', defaultDirection: SortDirection.ASC },
    [CollectionOrderBy.TOTAL_SUPPLY]: { expression: 't.total_supply', sqlType: 'integer', nullable: true },
  },
  relations: {
    chain: { kind: 'byId', type: 'Chain', table: 'chains', key: 'chain_id' },
    category: { kind: 'byId', type: 'Category', table: 'categories', key: 'category_id' },
    // Royalty fees, stored as JSON.
    fees: feesRelation((c) => [`${c}.fees`]),
  },
  // The kept counts by chain, category and status (migration 1765840000000): the list's `remaining` and `totalCount`.
  count: { filters: ['chainId', 'categoryId', 'status'], sql: (s, args) => collectionCountSql(s, args) },
  pagesOf: {
    // The collections an account owns.
    'Account.collections': (t, account) => `${t}.owner = ${account}.id`,
  },
  // Its chain and category as `chain` and `category`.
  rest: {
    shape: [
      'id',
      'contractAddress',
      'owner',
      'totalSupply',
      'category',
      'name',
      'slug',
      'description',
      'imageUrl',
      'discordUrl',
      'telegramUrl',
      'externalUrl',
      'twitterUsername',
      'instagramUsername',
      'fees',
      'chain',
      'startBlock',
      'status',
      'ownerVerification',
      'contractOwner',
      'ownerCheckedAt',
      'ownerCheckedBlock',
      'createdAt',
      'updatedAt',
    ],
    omits: ['chainId', 'categoryId'],
  },
  // includeAssets: false answers each collection's `assets` with null.
  omits: { arg: 'includeAssets', field: 'assets' },
  one: {
    field: 'collection',
    args: ['address', 'id', 'chainId'],
    /** As collection.service.ts's findNamedCollection finds it: by UUID, contract address or slug. */
    where: (s, t, args) => {
      const { address, id } = args;
      // Named twice or not at all: the resolver's error.
      if ((typeof address === 'string') === (typeof id === 'string')) return undefined;
      const ref = (id ?? address) as string;
      const where = [
        UUID.test(ref)
          ? `${t}.id = ${s.p.add(ref.toLowerCase())}::uuid`
          : typeof address === 'string' || ADDRESS.test(ref)
            ? `${t}.contract_address = ${s.p.add(ref.toLowerCase())}`
            : `${t}.slug = ${s.p.add(ref)}`,
      ];
      if (args.chainId != null) where.push(`${t}.chain_id = ${s.p.add(args.chainId)}`);
      return where;
    },
    order: (t) => `${t}.chain_id`,
  },
};

/** Every field of a collection over `row`, as the service reads a whole row (the columns of collection.entity.ts). */
export const collectionColumns = (row = 't'): string => modelColumns(COLLECTION_READ, row);

/**
 * How many collections match `args` (chainId as its EIP-155 id, categoryId as the API gives it, status), from
 * `collection_counts`: a few rows per chain whatever the number of collections.
 */
export function collectionCountSql(s: SqlScope, args: Record<string, unknown>): string {
  const where: string[] = [];
  if (args.chainId != null) where.push(`k.chain_id = ${s.p.add(args.chainId)}`);
  if (args.categoryId != null) where.push(`k.category_id = ${s.p.add(keyOf('Category', args.categoryId as string))}`);
  if (args.status != null) where.push(`k.status = ${s.p.add(args.status)}`);
  return `(SELECT COALESCE(sum(k.collections), 0)::bigint FROM collection_counts k${where.length ? ` WHERE ${where.join(' AND ')}` : ''})`;
}
