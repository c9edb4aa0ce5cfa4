import { FieldNode, getNamedType, GraphQLField, GraphQLObjectType, GraphQLSchema, isEnumType, Kind, SelectionSetNode } from 'graphql';
import { ReadModel, ReadRelation, relatedModel } from '../../../common/read-model';
import { belongingArgs, belongsTo, fixedSort, plannedFilters, withJoins } from '../../../common/read-model-sql';
import { unionOfRanges } from '../../../common/sql';
import { isPlainFirstPage } from '../../../common/pagination';
import type { PageRows } from '../../../common/list-query';
import { READ_MODELS } from '../../../modules/read-models';
import { argumentReader } from '../variables';
import { Build, constant, MAX_FIELDS, nextAlias, objectPart, PAGE_ARGUMENTS, Part, readsEveryArgument, Render, rowOf, scopeOf, sharedValue, VALUE, withinRow, wrapped } from './parts';
import { declaredField, readFieldPart } from './leaves';
import { PagePlan, planPage, Selected } from './page';

const MODEL_OF = new Map(READ_MODELS.map((model) => [model.type, model]));
/** The read model of each page nested in a parent (`Parent.field`). */
const NESTED_PAGES = new Map(READ_MODELS.flatMap((model) => Object.keys(model.pagesOf).map((at) => [at, model] as const)));

/** A column of a row, or of its joined row `on` (a listing's asset). */
const column =
  (on: string | undefined, name: string): Render =>
  (b, row) =>
    `${(on && b.rows?.get(row)?.joined?.[on]) || row}.${name}`;

/** A fresh alias for a row read within `row` (of `model`: its parent), which reads `row` joined as `joinedAs`. */
function childRow(b: Build, model: ReadModel, row: string, joinedAs?: string): string {
  const x = nextAlias(b);
  rowOf(b, x).parent = { type: model.type, row };
  if (joinedAs) rowOf(b, x).joined = { [joinedAs]: row };
  return x;
}

/**
 * The objects of SQL plans: a selection on a read model's row (READ_MODELS) as one row's JSON, with the
 * relations a plan follows inside its statement (roots.ts plans the operation's roots).
 */
export class ObjectPlanner {
  constructor(protected readonly schema: GraphQLSchema) {}

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

  /** One row of a type a read model declares (`model`: the model, when it is not among READ_MODELS), for this selection. */
  object(typeName: string, selectionSet: SelectionSetNode | undefined, model = MODEL_OF.get(typeName)): Part | undefined {
    const type = this.schema.getType(typeName) as GraphQLObjectType;
    const fields = this.fields(selectionSet);
    if (!fields || !model) return undefined;
    const shared = this.sharedRelation(model, type, fields);
    if (shared === null) return undefined;
    const parts: [string, Part][] = [];
    for (const { key, node } of fields) {
      const name = node.name.value;
      const field = type.getFields()[name];
      let part: Part | undefined;
      if (name === '__typename') part = constant(typeName);
      // Only the selection the shared value was built for: another alias of the relation selects other fields.
      else if (shared && node === shared.node) part = { ...shared.part, render: sharedValue, text: sharedValue };
      else if (shared && shared.presence.includes(name) && field && !node.selectionSet && !node.arguments?.length) part = this.presence(field, model, shared.of, true);
      else part = field && this.field(model, field, node, key);
      if (!part) return undefined;
      parts.push([key, part]);
    }
    return objectPart(parts, shared?.part);
  }

  /**
   * A relation selected beside a `presence` of it (an asset's listing and status): read once per row, as
   * the object's shared value (objectPart); null when the relation cannot be planned.
   */
  private sharedRelation(model: ReadModel, type: GraphQLObjectType, fields: Selected[]) {
    const relation = (name: string) => (Object.hasOwn(model.relations, name) ? model.relations[name] : undefined);
    const presence = fields.map((f) => f.node.name.value).filter((name) => relation(name)?.kind === 'presence');
    for (const name of presence) {
      const of = (relation(name) as { of: string }).of;
      const node = fields.find((f) => f.node.name.value === of && !f.node.arguments?.length)?.node;
      if (!node) continue;
      const part = this.relation(model, relation(of)!, type.getFields()[of], node);
      if (!part) return null;
      return { node, part, of, presence: presence.filter((p) => (relation(p) as { of: string }).of === of) };
    }
    return undefined;
  }

  private field(model: ReadModel, field: GraphQLField<unknown, unknown>, node: FieldNode, key: string): Part | undefined {
    const at = `${model.type}.${field.name}`;
    const nested = NESTED_PAGES.get(at);
    if (nested) return this.modelPage(nested, at, field, node);
    // A field that takes arguments (given or by default) is planned only where its arguments are read.
    if (node.arguments?.length || field.args.length) return undefined;
    if (Object.hasOwn(model.relations, field.name)) return this.relation(model, model.relations[field.name], field, node);
    return node.selectionSet ? undefined : readFieldPart(declaredField(model.fields, field.name), field, key);
  }

  /** A relation a read model declares, of its row. */
  private relation(model: ReadModel, relation: ReadRelation, field: GraphQLField<unknown, unknown>, node: FieldNode): Part | undefined {
    switch (relation.kind) {
      case 'byId':
        return this.byId(relation, node);
      case 'one': {
        const object = this.object(relation.type, node.selectionSet);
        return object && wrapped(object, (json) => (b, row) => {
          const x = childRow(b, model, row, relation.joinedAs);
          const sql = json(b, x);
          return sql && `(SELECT ${sql} FROM ${relation.table} ${x} WHERE ${relation.where(x, row, scopeOf(b, row))})`;
        });
      }
      case 'presence':
        return node.selectionSet ? undefined : this.presence(field, model, relation.of);
      case 'rows':
        return this.rows(model, relation, node);
    }
  }

  /** A `byId` relation's row (see ReadRelation), as the object of its type; null when there is none. */
  private byId(relation: Extract<ReadRelation, { kind: 'byId' }>, node: FieldNode): Part | undefined {
    const object = this.object(relation.type, node.selectionSet);
    if (!object) return undefined;
    const key = column(relation.on, relation.key);
    return wrapped(object, (json) => (b, row) => {
      const same = relation.sameAs && withinRow(b, row, relation.sameAs);
      if (same) return json(b, same);
      const of = (source: string) => {
        const x = nextAlias(b);
        const sql = json(b, x);
        return sql && `(SELECT ${sql} FROM ${relation.table} ${x} WHERE ${x}.id = ${key(b, source)})`;
      };
      const own = of(row);
      // Within a row of `sharedWith`, that row's when the keys agree: PostgreSQL builds it once per that row, not per row.
      const up = relation.sharedWith && withinRow(b, row, relation.sharedWith);
      if (!own || !up) return own;
      const shared = of(up);
      return shared && `CASE WHEN ${key(b, row)} = ${key(b, up)} THEN ${shared} ELSE ${own} END`;
    });
  }

  /**
   * Whether the row's relation `of` (a `one`) finds a row, as `presence` declares its enum value (an asset's
   * status: listed while it has an active listing); `fromShared`: the relation, selected too, is the
   * object's shared value (null without a row).
   */
  private presence(field: GraphQLField<unknown, unknown>, model: ReadModel, of: string, fromShared = false): Part | undefined {
    const type = getNamedType(field.type);
    const presence = model.relations[field.name];
    const relation = model.relations[of];
    if (!isEnumType(type) || presence?.kind !== 'presence' || relation?.kind !== 'one') return undefined;
    const present = type.getValues().find((v) => v.value === presence.value(true));
    const absent = type.getValues().find((v) => v.value === presence.value(false));
    if (!present || !absent || !/^[A-Z_]+$/.test(present.name + absent.name) || !/^[a-z_]+$/.test(`${present.value}${absent.value}`)) return undefined;
    // A correlated scalar subquery probes the relation's index per row; EXISTS was planned as a hashed
    // subplan that reads every row of its table.
    const value =
      (yes: string, no: string): Render =>
      (b, row) => {
        if (fromShared) return `CASE WHEN ${sharedValue(b, row)} IS NULL THEN '${no}' ELSE '${yes}' END`;
        const x = nextAlias(b);
        return `COALESCE((SELECT '${yes}' FROM ${relation.table} ${x} WHERE ${relation.where(x, row, scopeOf(b, row))} LIMIT 1), '${no}')`;
      };
    return { shape: VALUE, render: value(present.name, absent.name), text: value(present.value as string, absent.value as string) };
  }

  /** Rows a `rows` relation declares (an asset's traits), each an object of its declared fields, in their order. */
  private rows(model: ReadModel, relation: Extract<ReadRelation, { kind: 'rows' }>, node: FieldNode): Part | undefined {
    const item = this.object(relation.type, node.selectionSet, relatedModel(relation.type, '', '', relation.fields));
    const list =
      (json: Render): Render =>
      (b, row) => {
        const x = childRow(b, model, row, relation.joinedAs);
        const sql = json(b, x);
        return sql && `array_to_json(ARRAY(SELECT ${sql} FROM ${relation.from(x, row, scopeOf(b, row))}))`;
      };
    return item && { shape: { kind: 'list', item: item.shape }, render: list(item.render!), text: item.text && list(item.text) };
  }

  /**
   * A read model's page nested in its parent (`at`, e.g. Asset.offers), planned when the planner reads every
   * argument the field takes: the first page, in the parent's own row, of the rows its `pagesOf` joins to it
   * (for the argument it names, if any; disjoint ranges: their union), filtered by its `filters` as its
   * service filters them; without filters, counted by the count it keeps of the parent's rows
   * (`counts.pagesOf`), if any. Read with its parent's `omits` argument false
   * (includeAssets: false), it answers null.
   */
  private modelPage(model: ReadModel, at: string, field: GraphQLField<unknown, unknown>, node: FieldNode): Part | undefined {
    if (!readsEveryArgument(field, [...PAGE_ARGUMENTS, ...model.filters.map((f) => f.arg), ...belongingArgs(model.pagesOf[at])])) return undefined;
    const page = this.page(`${model.type}Page`, model.type, node);
    if (!page) return undefined;
    const [parentType] = at.split('.');
    const kept = model.counts?.pagesOf?.[at];
    const argumentsOf = argumentReader(field, node);
    const rowsOf = (b: Build, row: string): PageRows | undefined => {
      const args = argumentsOf(b.variables);
      const o = nextAlias(b);
      const sort = fixedSort(model, args.orderBy, o);
      const belongs = belongsTo(model, at, o, row, args);
      if (!sort || belongs === undefined || !isPlainFirstPage(args)) return undefined;
      const filtered = plannedFilters(model.filters, scopeOf(b), o, args);
      if (!filtered || filtered.checkEmpty) return undefined;
      rowOf(b, o).parent = { type: parentType, row };
      const count = kept && !filtered.where.length ? () => kept(row) : undefined;
      const joined = Object.fromEntries(Object.keys(model.with ?? {}).map((name) => [name, nextAlias(b)]));
      if (model.with) rowOf(b, o).joined = joined;
      const ranges = typeof belongs === 'string' ? undefined : belongs;
      const table = ranges ? unionOfRanges(`${model.table} ${o}`, o, ranges) : model.table!;
      const where = [...(typeof belongs === 'string' ? [belongs] : []), ...filtered.where];
      return { from: `${table} ${o}${withJoins(model, o, joined)}`, alias: o, idExpression: `${o}.id`, where, sort, args, count };
    };
    const within =
      (json: PagePlan['render'] | undefined): Render | undefined =>
      json &&
      ((b, row) => {
        if (b.rows?.get(row)?.omitted === field.name) return 'NULL';
        const rows = rowsOf(b, row);
        return rows && json(b, rows);
      });
    return { shape: page.shape, render: within(page.render), text: within(page.text) };
  }

  /** A first page of `itemType` (page.ts) for this selection. */
  protected page(pageType: string, itemType: string, node: FieldNode, asRows = false): PagePlan | undefined {
    const fields = this.fields(node.selectionSet);
    return fields && planPage(pageType, fields, (child) => this.object(itemType, child.selectionSet), asRows);
  }
}
