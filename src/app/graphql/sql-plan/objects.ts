import { FieldNode, getNamedType, GraphQLField, GraphQLObjectType, GraphQLSchema, isEnumType, isLeafType, Kind, SelectionSetNode } from 'graphql';
import type { DataSource, EntityMetadata } from 'typeorm';
import { ASSET_READ, assetCountSql } from '../../../modules/asset/asset.read';
import { Category } from '../../../modules/catalog/category.entity';
import { Chain } from '../../../modules/chain/chain.entity';
import { Currency } from '../../../modules/currency/currency.entity';
import type { StoredFee } from '../../../modules/collection/collection.entity';
import { COLLECTION_READ } from '../../../modules/collection/collection.read';
import { feesOf } from '../../../modules/collection/fee.type';
import { isActiveListingSql } from '../../../modules/listing/listing.sql';
import { LISTING_READ } from '../../../modules/listing/listing.read';
import { OFFER_READ } from '../../../modules/offer/offer.read';
import { ORDER_READ } from '../../../modules/order/order.read';
import { filterProblems, fixedSort, ReadFilter, ReadModel, ReadRelation } from '../../../common/read-model';
import { UUID } from '../../../common/validate';
import { argumentReader } from '../variables';
import {
  base64urlSql,
  Build,
  columnKey,
  constant,
  literal,
  MAX_FIELDS,
  nextAlias,
  nowOf,
  objectPart,
  parentRow,
  objectShape,
  PAGE_ARGUMENTS,
  plannedPage,
  readsEveryArgument,
  realias,
  Part,
  Planned,
  plain,
  Render,
  rowJson,
  scopeOf,
  Shape,
  sharedValue,
  VALUE,
  wrapped,
} from './parts';
import { columnPart, FEE_SQL, readFieldPart, TRAIT_SQL, TRAIT_TEXT } from './leaves';
import { PagePlan, PageRows, planPage, Selected } from './page';

/** The nouns whose read models (common/read-model.ts) plans read: their fields, filters, sorts, relations and nested pages. */
export const READ_MODELS: ReadModel[] = [ASSET_READ, ORDER_READ, OFFER_READ, LISTING_READ, COLLECTION_READ];
/** The rows joined to a model's row, as a plan has them: a listing's asset is the asset it is read in. */
const JOINED: Partial<Record<Planned, (b: Build, row: string) => Record<string, string>>> = { Listing: (b, l) => ({ asset: b.assetOf.get(l)! }) };
const MODEL_OF = new Map(READ_MODELS.map((model) => [model.type, model]));
/** The read model of each page nested in a parent (`Parent.field`). */
const NESTED_PAGES = new Map(READ_MODELS.flatMap((model) => Object.keys(model.pagesOf).map((at) => [at, model] as const)));

/**
 * The objects of SQL plans: a selection on Asset, Collection, Listing, Order, Offer, Chain, Category or Currency as one row's
 * JSON, with the relations a plan follows inside its statement (roots.ts plans the operation's roots).
 */
export class ObjectPlanner {
  protected readonly entities: Partial<Record<Planned, EntityMetadata>>;

  constructor(
    protected readonly schema: GraphQLSchema,
    ds: DataSource,
  ) {
    this.entities = {
      Chain: ds.getMetadata(Chain),
      Category: ds.getMetadata(Category),
      Currency: ds.getMetadata(Currency),
    };
  }

  /** The fields of a selection with their response keys (flattened by flatten.ts: fields only, keys distinct; else undefined). */
  protected fields(selectionSet: SelectionSetNode | undefined): Selected[] | undefined {
    if (!selectionSet || selectionSet.selections.length > MAX_FIELDS) return undefined;
    const out: Selected[] = [];
    const keys = new Set<string>();
    for (const node of selectionSet.selections) {
      if (node.kind !== Kind.FIELD || node.directives?.length) return undefined;
      const key = node.alias?.value ?? node.name.value;
      if (keys.has(key)) return undefined;
      keys.add(key);
      out.push({ key, node });
    }
    return out;
  }

  /** One row of a planned type for this selection. */
  object(typeName: Planned, selectionSet: SelectionSetNode | undefined): Part | undefined {
    const type = this.schema.getType(typeName) as GraphQLObjectType;
    const fields = this.fields(selectionSet);
    if (!fields) return undefined;
    // An asset's status and listing both come from its active listing: looked up once, when both are asked.
    const listingNode = typeName === 'Asset' ? fields.find((f) => f.node.name.value === 'listing' && !f.node.arguments?.length)?.node : undefined;
    const shared = listingNode && fields.some((f) => f.node.name.value === 'status') ? this.assetListing(listingNode) : undefined;
    const parts: [string, Part][] = [];
    for (const { key, node } of fields) {
      const name = node.name.value;
      const field = type.getFields()[name];
      let part: Part | undefined;
      if (name === '__typename') part = constant(typeName);
      // Only the selection the shared value was built for: another alias of `listing` selects other fields.
      else if (shared && node === listingNode) part = { ...shared, render: sharedValue, text: sharedValue };
      else if (shared && name === 'status' && !node.selectionSet && !node.arguments?.length) part = this.assetStatus(field, true);
      else part = field && this.field(typeName, field, node, key);
      if (!part) return undefined;
      parts.push([key, part]);
    }
    return objectPart(parts, shared);
  }

  private field(typeName: Planned, field: GraphQLField<unknown, unknown>, node: FieldNode, key: string): Part | undefined {
    const nested = NESTED_PAGES.get(`${typeName}.${field.name}`);
    if (nested) return this.modelPage(nested, `${typeName}.${field.name}`, field, node);
    // A field that takes arguments (given or by default) is planned only where its arguments are read.
    if (node.arguments?.length || field.args.length) return undefined;
    const leaf = !node.selectionSet;
    switch (`${typeName}.${field.name}`) {
      case 'Asset.collection':
        return this.assetCollection(node);
      case 'Asset.chain':
        // Inside collection.assets, the collection's chain (read once per collection) when it is the asset's.
        return this.byId('Chain', 'chains', node, (_b, row) => `${row}.chain_id`, (b, row) => parentRow(b, row, 'Collection'));
      case 'Listing.chain':
        // Its asset's chain; inside collection.assets, the collection's (read once per collection) when it is the asset's.
        return this.byId(
          'Chain',
          'chains',
          node,
          (b, row) => `${b.assetOf.get(row) ?? row}.chain_id`,
          (b, l) => parentRow(b, b.assetOf.get(l)!, 'Collection'),
        );
      case 'Asset.fees':
        return this.fees(node, (b, a) => [this.collectionFees(b, a)]);
      case 'Listing.fees':
        // The collection's royalty fees, then the listing's maker fees.
        return this.fees(node, (b, l) => {
          const collection = `(SELECT x.fees FROM collections x WHERE x.id = ${l}.collection_id)`;
          const parent = parentRow(b, b.assetOf.get(l)!, 'Collection');
          return [parent ? `CASE WHEN ${l}.collection_id = ${parent}.id THEN ${parent}.fees ELSE ${collection} END` : collection, `${l}.maker_fees`];
        });
      case 'Asset.status':
        return leaf ? this.assetStatus(field) : undefined;
      case 'Asset.listing':
        return this.assetListing(node);
      case 'Asset.traits':
        return this.assetTraits(node);
      case 'Chain.chainId':
      case 'Category.categoryId':
        // The key, which is the row's id column (GraphQL's `id` of these is their Node id).
        return leaf ? plain((_b, row) => `${row}.id`) : undefined;
      case 'Chain.id':
      case 'Category.id':
        // nodeId(type, key): base64url of `<type>:<key>`.
        return leaf ? plain((_b, row) => base64urlSql(`${literal(`${typeName}:`)} || ${row}.id`)) : undefined;
      case 'Listing.currency':
        // Its asset's chain, as Listing.chain.
        return this.currency(node, (b, l) => `${b.assetOf.get(l) ?? l}.chain_id`);
    }
    const model = MODEL_OF.get(typeName);
    if (model && Object.hasOwn(model.relations, field.name)) return this.relation(model.relations[field.name], node);
    if (model) return leaf ? readFieldPart(model, field, key, JOINED[typeName]) : undefined;
    if (field.resolve || !leaf) return undefined;
    return columnPart(this.entities[typeName]!, field);
  }

  /**
   * An asset's traits with their counts and rarity, in asset.traits.ts's order (traitsByAssetId): its
   * asset_traits rows with their collection_traits counts; rarity = count / the collection's assets.
   */
  private assetTraits(node: FieldNode): Part | undefined {
    const type = this.schema.getType('Trait') as GraphQLObjectType;
    const fields = this.fields(node.selectionSet);
    if (!fields) return undefined;
    const columns: ((ct: string, size: string) => string)[] = [];
    const shapes: [string, Shape][] = [];
    for (const { key, node: child } of fields) {
      const name = child.name.value;
      if (child.arguments?.length || child.selectionSet || (name !== '__typename' && (!type.getFields()[name] || type.getFields()[name].resolve))) return undefined;
      const sql = TRAIT_SQL[name];
      if (!sql) return undefined;
      columns.push(sql);
      shapes.push([key, name === '__typename' ? { kind: 'constant', value: 'Trait' } : VALUE]);
    }
    const keys = fields.map((f) => f.key);
    const valued = columns.filter((_, i) => shapes[i][1].kind !== 'constant');
    const texts = fields.map((f, i) => TRAIT_TEXT[f.node.name.value] ?? columns[i]);
    const traits =
      (item: (values: string[]) => string, chosen: typeof columns): Render =>
      (b, a) => {
        // Inside collection.assets, the parent collection's count (read once per collection).
        const size = assetCountSql(parentRow(b, a, 'Collection') ? `${parentRow(b, a, 'Collection')}.id` : `${a}.collection_id`);
        const t = nextAlias(b);
        const values = chosen.map((column) => column(t, size));
        return `array_to_json(ARRAY(SELECT ${item(values)} FROM asset_traits ${t}_a JOIN collection_traits ${t} ON ${t}.collection_id = ${t}_a.collection_id AND ${t}.trait_type = ${t}_a.trait_type AND ${t}.value = ${t}_a.value WHERE ${t}_a.asset_id = ${a}.id ORDER BY ${t}.trait_type, ${t}.value))`;
      };
    return {
      shape: { kind: 'list', item: objectShape(shapes) },
      render: traits((values) => `json_build_array(${values.join(', ')})`, valued),
      text: keys.every(columnKey) ? traits((values) => rowJson(values, keys), texts) : undefined,
    };
  }

  /** An asset's collection's stored fees: the collection row's own when it is in the statement. */
  private collectionFees(b: Build, asset: string): string {
    const c = parentRow(b, asset, 'Collection');
    return c ? `${c}.fees` : `(SELECT x.fees FROM collections x WHERE x.id = ${asset}.collection_id)`;
  }

  /**
   * A row of `table` by its id (`key`), as the object of `typeName`; null when there is none. With
   * `parent` (a row in scope with the same key column, e.g. the collection of an asset in its page), the
   * parent's object stands in when the keys agree: PostgreSQL builds it once per parent, not per row.
   */
  private byId(typeName: Planned, table: string, node: FieldNode, key: Render, parent?: (b: Build, row: string) => string | undefined): Part | undefined {
    const object = this.object(typeName, node.selectionSet);
    if (!object) return undefined;
    return wrapped(object, (json) => (b, row) => {
      const of = (source: string) => {
        const x = nextAlias(b);
        const sql = json(b, x);
        return sql && `(SELECT ${sql} FROM ${table} ${x} WHERE ${x}.id = ${key(b, source)})`;
      };
      const own = of(row);
      const up = parent?.(b, row);
      if (!own || !up) return own;
      const shared = of(up);
      return shared && `CASE WHEN ${key(b, row)} = ${key(b, up)} THEN ${shared} ELSE ${own} END`;
    });
  }

  /** The currency of a row's prices: the currencies row of its chain (`chain`) and its `address` column, as currencyOf reads it. */
  private currency(node: FieldNode, chain: Render, address = 'currency'): Part | undefined {
    const object = this.object('Currency', node.selectionSet);
    if (!object) return undefined;
    return wrapped(object, (json) => (b, row) => {
      const x = nextAlias(b);
      const sql = json(b, x);
      return sql && `(SELECT ${sql} FROM currencies ${x} WHERE ${x}.chain_id = ${chain(b, row)} AND ${x}.address = ${row}.${address})`;
    });
  }

  /** A relation a read model declares. */
  private relation(relation: ReadRelation, node: FieldNode): Part | undefined {
    if (relation.kind === 'currency') return this.currency(node, (_b, row) => `${row}.${relation.chain}`, relation.address);
    if (relation.kind === 'fees') return this.fees(node, (_b, row) => relation.stored(row));
    return this.byId(relation.type as Planned, relation.table, node, (_b, row) => `${row}.${relation.key}`);
  }

  /**
   * Fees from their stored JSON (collections.fees: royalty; listings.maker_fees: maker): PostgreSQL sends
   * the stored arrays (`stored`: [royalty] or [royalty, maker]), Node types them as fee.type.ts's feesOf
   * does; in REST's text PostgreSQL writes them.
   */
  private fees(node: FieldNode, stored: (b: Build, row: string) => string[]): Part | undefined {
    const type = this.schema.getType('Fee') as GraphQLObjectType;
    const fields = this.fields(node.selectionSet);
    if (!fields) return undefined;
    const picks: [string, (fee: Record<string, unknown>) => unknown][] = [];
    for (const { key, node: child } of fields) {
      const name = child.name.value;
      if (name === '__typename') {
        picks.push([key, () => 'Fee']);
        continue;
      }
      const field = type.getFields()[name];
      const leaf = field && getNamedType(field.type);
      if (!field || field.resolve || child.arguments?.length || child.selectionSet || !leaf || !isLeafType(leaf)) return undefined;
      picks.push([key, (fee) => (fee[name] === null || fee[name] === undefined ? null : leaf.serialize(fee[name]))]);
    }
    const pick = (fee: Record<string, unknown>) => {
      const out: Record<string, unknown> = {};
      for (const [key, value] of picks) out[key] = value(fee);
      return out;
    };
    const map = (value: unknown) => {
      const [royalty, maker] = value as [StoredFee[] | null, StoredFee[] | undefined];
      const fees = [...feesOf(royalty, 'royalty'), ...(maker === undefined ? [] : feesOf(maker, 'maker'))];
      return fees.map((fee) => pick(fee as unknown as Record<string, unknown>));
    };
    const keys = fields.map((f) => f.key);
    const columns = fields.map((f) => FEE_SQL[f.node.name.value]);
    const text: Render | undefined =
      keys.every(columnKey) && columns.every((c) => c !== undefined)
        ? (b, row) => {
            const sources = stored(b, row).map(
              (sql, k) => `SELECT f, ${k} AS k, i, '${k === 0 ? 'royalty' : 'maker'}'::text AS t FROM jsonb_array_elements(${sql}) WITH ORDINALITY e(f, i)`,
            );
            return `array_to_json(ARRAY(SELECT ${rowJson(columns, keys)} FROM (${sources.join(' UNION ALL ')}) u ORDER BY u.k, u.i))`;
          }
        : undefined;
    return { shape: { kind: 'map', map }, render: (b, row) => `json_build_array(${stored(b, row).join(', ')})`, text };
  }

  /**
   * listed while the asset has an active listing now (the resolver asks activeListingByAsset); `fromShared`:
   * the asset's listing, selected too, is the object's shared value (null without one).
   */
  private assetStatus(field: GraphQLField<unknown, unknown>, fromShared = false): Part | undefined {
    const type = getNamedType(field.type);
    if (!isEnumType(type)) return undefined;
    const listed = type.getValues().find((v) => v.value === 'listed');
    const unlisted = type.getValues().find((v) => v.value === 'unlisted');
    if (!listed || !unlisted || !/^[A-Z_]+$/.test(listed.name + unlisted.name)) return undefined;
    // A correlated scalar subquery probes ux_listings_one_active_per_asset per asset; EXISTS was planned
    // as a hashed subplan that reads every listing.
    const status =
      (yes: string, no: string): Render =>
      (b, a) => {
        if (fromShared) return `CASE WHEN ${b.shared.get(a)}.v IS NULL THEN '${no}' ELSE '${yes}' END`;
        const l = nextAlias(b);
        return `COALESCE((SELECT '${yes}' FROM listings ${l} WHERE ${l}.asset_id = ${a}.id AND ${isActiveListingSql(l, nowOf(b))} LIMIT 1), '${no}')`;
      };
    return { shape: VALUE, render: status(listed.name, unlisted.name), text: status('listed', 'unlisted') };
  }

  /** The asset's active listing now, or null (at most one listing of an asset is active: ux_listings_one_active_per_asset). */
  private assetListing(node: FieldNode): Part | undefined {
    const listing = this.object('Listing', node.selectionSet);
    if (!listing) return undefined;
    return wrapped(listing, (json) => (b, a) => {
      const l = nextAlias(b);
      b.assetOf.set(l, a);
      const sql = json(b, l);
      return sql && `(SELECT ${sql} FROM listings ${l} WHERE ${l}.asset_id = ${a}.id AND ${isActiveListingSql(l, nowOf(b))})`;
    });
  }

  private assetCollection(node: FieldNode): Part | undefined {
    const collection = this.object('Collection', node.selectionSet);
    if (!collection) return undefined;
    return wrapped(collection, (json) => (b, row) => {
      // Inside collection.assets the collection is the page's own parent row.
      const parent = parentRow(b, row, 'Collection');
      if (parent) return json(b, parent);
      const c = nextAlias(b);
      const sql = json(b, c);
      return sql && `(SELECT ${sql} FROM collections ${c} WHERE ${c}.id = ${row}.collection_id)`;
    });
  }


  /**
   * A read model's page nested in its parent (`at`, e.g. Asset.offers): the first page, in the parent's
   * own row, of the rows its `pagesOf` joins to it, filtered by its `filters` as its service filters them;
   * without filters, counted by the count it keeps of the parent's rows (`counts.pagesOf`), if any. A
   * collection read with includeAssets: false answers its `assets` with null.
   */
  private modelPage(model: ReadModel, at: string, field: GraphQLField<unknown, unknown>, node: FieldNode): Part | undefined {
    const names = [...PAGE_ARGUMENTS, ...model.filters.map((f) => f.arg)];
    const [parentType] = at.split('.');
    const kept = model.counts?.pagesOf?.[at];
    return this.nestedPage(field, node, `${model.type}Page`, model.type as Planned, names, (b, row, args) => {
      const sort = fixedSort(model.sorts[args.orderBy as string]);
      if (!sort || !plannedPage(args)) return undefined;
      const o = nextAlias(b);
      const filtered = plannedFilters(b, model.filters, args, o);
      if (!filtered || filtered.checkEmpty) return undefined;
      b.parentOf.set(o, { type: parentType, row });
      const count = kept && !filtered.where.length ? () => kept(row) : undefined;
      return { table: model.table, alias: o, where: [model.pagesOf[at](o, row), ...filtered.where], sort: realias(sort, 't', model.alias), args, count };
    });
  }

  /**
   * A nested list's first page inside its parent's row: planned when the planner reads every argument
   * the field takes (`names`); `rowsOf` gives the page's rows for the request's arguments ('NULL': the
   * field answers null; undefined: the resolvers answer).
   */
  private nestedPage(
    field: GraphQLField<unknown, unknown>,
    node: FieldNode,
    pageType: string,
    itemType: Planned,
    names: readonly string[],
    rowsOf: (b: Build, row: string, args: Record<string, unknown>) => PageRows | 'NULL' | undefined,
  ): Part | undefined {
    if (!readsEveryArgument(field, names)) return undefined;
    const page = this.page(pageType, itemType, node);
    if (!page) return undefined;
    const argumentsOf = argumentReader(field, node);
    const within =
      (json: PagePlan['render'] | undefined): Render | undefined =>
      json &&
      ((b, row) => {
        // Read with its model's `omits` argument false (includeAssets: false): null.
        if (b.omitted.get(row) === field.name) return 'NULL';
        const rows = rowsOf(b, row, argumentsOf(b.variables));
        return rows === 'NULL' ? rows : rows && json(b, rows);
      });
    return { shape: page.shape, render: within(page.render), text: within(page.text) };
  }

  /** A first page of `itemType` (page.ts) for this selection. */
  protected page(pageType: string, itemType: Planned, node: FieldNode, asRows = false): PagePlan | undefined {
    const fields = this.fields(node.selectionSet);
    return fields && planPage(pageType, fields, (child) => this.object(itemType, child.selectionSet), asRows);
  }
}

/**
 * The conditions of a read model's `filters` for the request's arguments over rows `a`, or undefined when
 * the resolvers must answer: a value with a problem (their error), a filter read `aside`, a collection by
 * its address. Given a collection's id, an empty page must be checked (`checkEmpty`, `exists`): the
 * resolvers answer an unknown collection with an error. `id` adds its parameter when it is used.
 */
export function plannedFilters(b: Build, filters: readonly ReadFilter[], args: Record<string, unknown>, a: string) {
  if (filterProblems(filters, args).length) return undefined;
  const s = scopeOf(b);
  const where: string[] = [];
  const given: ReadFilter[] = [];
  let collectionId: string | undefined;
  for (const filter of filters) {
    const value = args[filter.arg];
    if (value == null) continue;
    if (filter.plan === 'aside' || filter.joins?.length) return undefined;
    given.push(filter);
    if (filter.plan === 'collection') {
      if (typeof value !== 'string' || !UUID.test(value)) return undefined;
      collectionId = value.toLowerCase();
      where.push(filter.where!(s, a, collectionId));
    } else where.push(filter.where!(s, a, value));
  }
  if (collectionId === undefined) return { where, given, checkEmpty: false, id: () => '', exists: undefined };
  const id = () => `${b.p.add(collectionId)}::uuid`;
  return { where, given, checkEmpty: true, id, exists: () => `EXISTS (SELECT 1 FROM collections x WHERE x.id = ${id()})` };
}
