import {
  getNamedType,
  getNullableType,
  GraphQLArgument,
  GraphQLEnumType,
  GraphQLField,
  GraphQLInputType,
  GraphQLObjectType,
  GraphQLSchema,
  isEnumType,
  isInterfaceType,
  isListType,
  isNonNullType,
  isObjectType,
} from 'graphql';
import type { RichMarket } from '../factories/rich-market';
import { nodeId } from '../../src/common/graphql/node';

/** A seeded generator (mulberry32): the same seed gives the same requests. */
export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }

  sample<T>(items: readonly T[], count: number): T[] {
    const pool = [...items];
    const out: T[] = [];
    while (out.length < count && pool.length) out.push(pool.splice(Math.floor(this.next() * pool.length), 1)[0]);
    return out;
  }
}

/** What generated requests may ask about: the market's values, and cursors taken from earlier answers. */
export interface Pools extends RichMarket {
  cursors: string[];
}

/** An enum value in a document (written bare), as a variable's value its name. */
class EnumValue {
  constructor(readonly name: string) {}
}

const MAX_LIMIT = 100;
const LIMITS = [0, -1, 1, 2, 3, 5, 20, MAX_LIMIT, MAX_LIMIT + 1];
const EVENT_TYPES = ['asset.created', 'listing.created', 'listing.sold', 'offer.created', 'offer.accepted', 'order.completed', 'nope'];
const UUID_NONE = '00000000-0000-4000-8000-000000000000';
/** Object levels below a root, at most. */
const MAX_DEPTH = 6;
/** Roots a plan answers come more often than the others. */
const PLANNED_ROOTS = ['asset', 'collection', 'assets', 'collections', 'orders', 'offers', 'searchAssets', 'searchCollections', 'account'];
/** A price range's ends (minPrice, maxPrice): prices around the data's, 0, and ones that are no price (a 400). */
const PRICE_BOUNDS = ['0', '0.25', '0.5', '1', 1.5, '3', '3.000000000000000007', 10, '-1', 'x'];

/** A list's `currency` filter: symbols in any case, addresses (the native one, Ethereum's USDC), and one no chain has. */
const CURRENCY_FILTERS = ['ETH', 'usdc', 'WETH', 'POL', '0x0000000000000000000000000000000000000000', '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48', 'DOGE'];
/** A search's words: names of the rich market's collections and assets, prefixes, typos, and queries refused. */
const SEARCH_QUERIES = ['art', 'Art of Alice', 'art of alice #2', 'of bob', 'bob', 'ar', 'polygn things', 'The rare one', '#3', '%', '', ' ', 'x'.repeat(101)];

function literal(value: unknown): string {
  if (value === null) return 'null';
  if (value instanceof EnumValue) return value.name;
  if (Array.isArray(value)) return `[${value.map(literal).join(', ')}]`;
  if (typeof value === 'string') return JSON.stringify(value);
  return String(value);
}

const asVariable = (value: unknown): unknown => (value instanceof EnumValue ? value.name : Array.isArray(value) ? value.map(asVariable) : value);

export interface GeneratedDocument {
  query: string;
  variables: Record<string, unknown>;
}

/**
 * Query documents over the whole query type: random subsets of each type's fields, nested objects,
 * aliases (a field twice under two aliases with different selections), named and inline fragments,
 * `__typename`, arguments as literals or variables (with and without defaults, given, omitted or null),
 * limits in and out of range, every enum value, the market's own addresses, ids, traits and cursors.
 */
export class DocumentGenerator {
  private variables: string[] = [];
  private values: Record<string, unknown> = {};
  private fragments: string[] = [];
  private names = 0;

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly r: Random,
    private readonly pools: Pools,
  ) {}

  document(): GeneratedDocument {
    this.variables = [];
    this.values = {};
    this.fragments = [];
    this.names = 0;
    const query = this.schema.getQueryType()!;
    const fields = Object.values(query.getFields());
    const parts: string[] = [];
    const roots = this.r.int(1, 3);
    for (let i = 0; i < roots; i += 1) {
      const field = this.r.chance(0.6) ? query.getFields()[this.r.pick(PLANNED_ROOTS)] : this.r.pick(fields);
      // The same root twice needs aliases; otherwise sometimes one anyway.
      const alias = i > 0 || this.r.chance(0.15) ? `r${i}: ` : '';
      parts.push(this.field(query, field, 0, alias));
    }
    if (this.r.chance(0.15)) parts.push('__typename');
    const body = this.group(query, parts);
    const name = this.r.chance(0.3) ? ` Q${this.r.int(1, 9)}` : '';
    const header = this.variables.length ? `query${name}(${this.variables.join(', ')})` : name ? `query${name}` : this.r.chance(0.5) ? 'query' : '';
    return { query: `${header} { ${body} }${this.fragments.map((f) => `\n${f}`).join('')}`, variables: this.values };
  }

  /** A field with its arguments and (for an object) a selection. */
  private field(parent: GraphQLObjectType, field: GraphQLField<unknown, unknown>, depth: number, alias = ''): string {
    const args = this.arguments(parent, field);
    const type = getNamedType(field.type);
    // A Node (node, nodes): its type and id; objects of each type are the rest of the schema's.
    if (isInterfaceType(type)) return `${alias}${field.name}${args} { __typename id }`;
    if (!isObjectType(type)) return `${alias}${field.name}${args}`;
    return `${alias}${field.name}${args} { ${this.selection(type, depth + 1)} }`;
  }

  private selection(type: GraphQLObjectType, depth: number): string {
    const all = Object.values(type.getFields());
    // Deep down, leaves only (and fewer fields): the documents stay within the operation limits.
    const fields = depth >= MAX_DEPTH ? all.filter((f) => !isObjectType(getNamedType(f.type))) : all;
    const page = type.name.endsWith('Page') || type.name === 'EventFeed';
    const chosen = this.r.sample(fields, this.r.int(1, Math.max(1, 5 - Math.floor(depth / 2))));
    // A page's items are what it is for.
    const result = fields.find((f) => f.name === 'result');
    if (page && result && !chosen.includes(result) && this.r.chance(0.8)) chosen.push(result);
    const parts: string[] = [];
    for (const field of chosen) {
      const object = isObjectType(getNamedType(field.type));
      const alias = this.r.chance(0.12) ? `a${(this.names += 1)}: ` : '';
      parts.push(this.field(type, field, depth, alias));
      // The same field again under another alias, with its own arguments or selection.
      if (this.r.chance(object ? 0.08 : 0.1)) parts.push(this.field(type, field, depth, `b${(this.names += 1)}: `));
    }
    if (this.r.chance(0.2)) parts.splice(this.r.int(0, parts.length), 0, '__typename');
    return parts.length ? this.group(type, parts) : '__typename';
  }

  /** Some of the parts moved into an inline fragment (with or without a type condition) or a named one. */
  private group(type: GraphQLObjectType, parts: string[]): string {
    const roll = this.r.next();
    if (roll > 0.25 || parts.length === 0) return parts.join(' ');
    const cut = this.r.int(0, parts.length - 1);
    const inside = parts.slice(cut).join(' ');
    const outside = parts.slice(0, cut);
    if (roll < 0.08) {
      const name = `F${this.fragments.length + 1}`;
      this.fragments.push(`fragment ${name} on ${type.name} { ${inside} }`);
      return [...outside, `...${name}`].join(' ');
    }
    return [...outside, roll < 0.16 ? `... on ${type.name} { ${inside} }` : `... { ${inside} }`].join(' ');
  }

  private arguments(parent: GraphQLObjectType, field: GraphQLField<unknown, unknown>): string {
    const out: string[] = [];
    for (const arg of field.args) {
      const required = isNonNullType(arg.type) && arg.defaultValue === undefined;
      if (!required && this.r.chance(0.45)) continue;
      const value = !isNonNullType(arg.type) && this.r.chance(0.06) ? null : this.value(parent, field, arg, arg.type);
      out.push(`${arg.name}: ${this.r.chance(0.35) ? this.variable(parent, field, arg, value) : literal(value)}`);
    }
    return out.length ? `(${out.join(', ')})` : '';
  }

  /** A variable for an argument: declared with or without a default, then given, omitted or null. */
  private variable(parent: GraphQLObjectType, field: GraphQLField<unknown, unknown>, arg: GraphQLArgument, value: unknown): string {
    const name = `v${this.variables.length + 1}`;
    const nonNull = isNonNullType(arg.type);
    const withDefault = this.r.chance(0.3);
    const fallback = withDefault ? this.value(parent, field, arg, arg.type) : undefined;
    this.variables.push(`$${name}: ${String(arg.type)}${withDefault ? ` = ${literal(fallback)}` : ''}`);
    const roll = this.r.next();
    if (roll < 0.15 && (withDefault || !nonNull || this.r.chance(0.2))) return `$${name}`;
    if (roll < 0.22 && (!nonNull || this.r.chance(0.2))) this.values[name] = null;
    else this.values[name] = asVariable(value);
    return `$${name}`;
  }

  private value(parent: GraphQLObjectType, field: GraphQLField<unknown, unknown>, arg: GraphQLArgument, type: GraphQLInputType): unknown {
    const nullable = getNullableType(type);
    if (isListType(nullable)) {
      if (this.r.chance(0.15)) return [];
      return Array.from({ length: this.r.int(1, 2) }, () => this.value(parent, field, arg, nullable.ofType as GraphQLInputType));
    }
    const named = getNamedType(type);
    if (isEnumType(named)) return this.enumValue(named);
    const p = this.pools;
    const r = this.r;
    switch (arg.name) {
      case 'limit':
      case 'first':
        return field.name === 'events' ? r.pick([...LIMITS, 1000, 1001]) : r.pick(LIMITS);
      case 'query':
        return r.pick(SEARCH_QUERIES);
      case 'isTrending':
        return r.pick([0, 1, 2, -1]);
      case 'includeAssets':
        return r.chance(0.5);
      case 'page':
        return r.chance(0.5) && p.cursors.length ? r.pick(p.cursors) : r.pick(['1', '2', '0', '-1', 'x', '']);
      case 'address':
        // An account's: an owner's address, sometimes in capitals or of no one.
        if (field.name === 'account') return r.chance(0.85) ? r.pick(p.owners) : r.pick([p.owners[0].toUpperCase().replace('0X', '0x'), '0x' + 'ab'.repeat(20), '0x12']);
      // falls through
      case 'tokenAddress':
      case 'assetContract':
        return r.chance(0.85) ? r.pick(p.contracts) : r.pick([UUID_NONE.slice(0, 10), '0x' + 'ab'.repeat(20), p.contracts[0].toUpperCase().replace('0X', '0x')]);
      case 'ownerAddress':
      case 'ownerId':
        return r.chance(0.9) ? r.pick(p.owners) : r.pick(['0x12', '0x' + '00'.repeat(20)]);
      case 'tokenId':
        return r.chance(0.9) ? r.pick(p.tokenIds) : r.pick(['999999', '-1', 'x', ((1n << 256n) - 1n).toString()]);
      case 'chainId':
        return r.pick(['1', '137', '56', '999', '']);
      case 'collectionId':
        return r.chance(0.85) ? r.pick([...p.collectionIds, ...p.contracts]) : r.pick([UUID_NONE, 'nope', p.collectionIds[0].toUpperCase()]);
      case 'categoryId':
        // A category's key or its Node id (a plan reads both).
        return r.pick([...p.categoryIds, ...p.categoryIds.map((k) => nodeId('Category', k)), 'nope']);
      case 'trait':
        return r.chance(0.9) ? r.pick(p.traits) : r.pick(['Background', 'Nope:Nope', ':']);
      case 'types':
        return r.pick(EVENT_TYPES);
      case 'after':
        // The feed's `after` is a position; a list's, a cursor (as `page`'s).
        if (field.name !== 'events') return r.chance(0.6) && p.cursors.length ? r.pick(p.cursors) : r.pick(['2', 'x', '']);
        return r.chance(0.85) && p.eventIds.length ? r.pick(p.eventIds) : r.pick(['0', 'x']);
      case 'currency':
        return r.pick(CURRENCY_FILTERS);
      case 'minPrice':
      case 'maxPrice':
        return r.pick(PRICE_BOUNDS);
      case 'assetId':
        return r.pick([...p.assetIds, UUID_NONE]);
      case 'webhookId':
        return UUID_NONE;
    }
    if (arg.name === 'id' || arg.name === 'ids') {
      if (field.name === 'node' || field.name === 'nodes') return r.pick([...p.assetIds, ...p.collectionIds, ...p.offerIds, nodeId('Chain', '1'), UUID_NONE, 'x']);
      if (field.name === 'assetById') return r.pick([...p.assetIds, UUID_NONE, 'x']);
      if (field.name === 'offer') return r.pick([...p.offerIds, UUID_NONE, 'x']);
      if (field.name === 'order') return r.pick([...p.orderIds, UUID_NONE]);
      return UUID_NONE;
    }
    if (named.name === 'Int') return r.pick([0, 1, 5]);
    if (named.name === 'Boolean') return r.chance(0.5);
    return r.pick(['x', '1']);
  }

  private enumValue(type: GraphQLEnumType): EnumValue {
    return new EnumValue(this.r.pick(type.getValues()).name);
  }
}

/** One GET of a /v1 route, with generated query parameters. */
export function restPath(schema: GraphQLSchema, r: Random, p: Pools): string {
  const orderBy = (name: string) => [...(schema.getType(name) as GraphQLEnumType).getValues().map((v) => String(v.value)), 'nope'];
  const page = () => ({
    limit: r.pick([...LIMITS, 'x']),
    page: r.chance(0.4) && p.cursors.length ? r.pick(p.cursors) : r.pick(['1', '2', '0', 'x']),
    direction: r.pick(['asc', 'desc', 'ASC', 'sideways']),
  });
  const asset = () => [r.chance(0.9) ? r.pick(p.contracts) : '0x12', r.chance(0.9) ? r.pick(p.tokenIds) : '999999'];
  const routes: [string, Record<string, unknown[] | (() => unknown)>][] = [
    ['/v1/categories', { order_by: orderBy('CatalogOrderBy') }],
    ['/v1/tags', { order_by: orderBy('CatalogOrderBy') }],
    [
      '/v1/collections',
      {
        order_by: orderBy('CollectionOrderBy'),
        chain_id: ['1', '137', '56', '999'],
        category_id: [...p.categoryIds, 'nope'],
        owner_address: [...p.owners, '0x12'],
        status: ['verified', 'unverified', 'VERIFIED', 'nope'],
        include_assets: ['true', 'false', 'x'],
        assets_limit: [1, 3, 0, 101],
      },
    ],
    [`/v1/collections/${r.pick([...p.contracts, '0x12', '0x' + '00'.repeat(20)])}`, { chain_id: ['1', '137', '999'], include_assets: ['true', 'false'], assets_limit: [1, 2, 0] }],
    [
      '/v1/assets',
      {
        order_by: orderBy('AssetOrderBy'),
        asset_contract: [...p.contracts, '0x12'],
        collection_id: [...p.collectionIds, ...p.contracts, UUID_NONE, 'nope'],
        owner_id: p.owners,
        status: ['listed', 'unlisted', 'nope'],
        chain_id: ['1', '137', '56', '999'],
        trait: [...p.traits, 'Background', 'Nope:Nope'],
        currency: CURRENCY_FILTERS,
        min_price: PRICE_BOUNDS,
        max_price: PRICE_BOUNDS,
      },
    ],
    [
      `/v1/search/assets?query=${encodeURIComponent(r.pick(SEARCH_QUERIES))}`,
      {
        asset_contract: [...p.contracts, '0x12'],
        collection_id: [...p.collectionIds, ...p.contracts, UUID_NONE],
        owner_id: p.owners,
        status: ['listed', 'unlisted'],
        chain_id: ['1', '137'],
        trait: p.traits,
        currency: CURRENCY_FILTERS,
        min_price: PRICE_BOUNDS,
        max_price: PRICE_BOUNDS,
      },
    ],
    [
      `/v1/search/collections?query=${encodeURIComponent(r.pick(SEARCH_QUERIES))}`,
      { chain_id: ['1', '56'], category_id: p.categoryIds, owner_address: p.owners, status: ['verified', 'unverified'], include_assets: ['true', 'false'], assets_limit: [1, 3] },
    ],
    [`/v1/assets/${asset().join('/')}`, { chain_id: ['1', '137', '56', '999'] }],
    [`/v1/assets/${asset().join('/')}/history`, { chain_id: ['1', '137'], types: EVENT_TYPES }],
    [
      '/v1/offers',
      {
        order_by: orderBy('OfferOrderBy'),
        chain_id: ['1', '56'],
        token_address: p.contracts,
        token_id: p.tokenIds,
        owner_id: p.owners,
        status: ['active', 'accepted', 'cancelled', 'expired', 'nope'],
        collection_id: [...p.collectionIds, ...p.contracts],
        kind: ['item', 'collection', 'trait', 'nope'],
        currency: CURRENCY_FILTERS,
        min_price: PRICE_BOUNDS,
        max_price: PRICE_BOUNDS,
      },
    ],
    [`/v1/offers/${r.pick([...p.offerIds, UUID_NONE, 'x'])}`, {}],
    [
      '/v1/orders',
      { order_by: orderBy('OrderOrderBy'), chain_id: ['1', '137'], token_address: p.contracts, token_id: p.tokenIds, collection_id: p.collectionIds, owner_id: p.owners, status: ['completed', 'nope'], currency: CURRENCY_FILTERS, min_price: PRICE_BOUNDS, max_price: PRICE_BOUNDS },
    ],
    [`/v1/orders/${r.pick([...p.orderIds, UUID_NONE])}`, {}],
    ['/v1/events', { after: [...p.eventIds, 'x'], types: EVENT_TYPES, collection_id: [...p.collectionIds, ...p.contracts], asset_id: p.assetIds, limit: [1, 5, 1000, 1001, 0] }],
    ['/v1/webhooks', {}],
    [`/v1/webhooks/${UUID_NONE}`, {}],
    [`/v1/webhooks/${UUID_NONE}/deliveries`, {}],
    ['/v1/statistics', { order_by: orderBy('StatisticsOrderBy'), chain_id: ['1', '56', '999'], period: ['1h', '24h', '7d', '30d', 'all', 'nope'], is_trending: [0, 1, 'x'] }],
  ];
  // The lists and the collections (which a plan answers) more often than the rest.
  const [path, filters] = r.chance(0.5) ? r.pick(routes.filter(([route]) => route === '/v1/collections' || route === '/v1/assets' || route.split('/').length === 5)) : r.pick(routes);
  const params = new URLSearchParams();
  const paged = !/\/v1\/(assets|offers|orders|collections)\/[^/]+(\/[^/]+)?$/.test(path) && !path.startsWith('/v1/events');
  const candidates: [string, () => unknown][] = Object.entries(filters).map(([key, values]) => [key, () => (typeof values === 'function' ? values() : r.pick(values))]);
  if (paged) for (const [key, value] of Object.entries(page())) candidates.push([key, () => value]);
  for (const [key, value] of candidates) {
    if (!r.chance(0.35)) continue;
    params.append(key, String(value()));
    // A repeated parameter (trait=a:b&trait=c:d).
    if (key === 'trait' && r.chance(0.3)) params.append(key, String(value()));
  }
  const query = params.toString();
  return query ? `${path}${path.includes('?') ? '&' : '?'}${query}` : path;
}
