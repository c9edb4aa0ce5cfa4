import {
  ASTVisitor,
  DocumentNode,
  FieldNode,
  FragmentDefinitionNode,
  GraphQLArgument,
  GraphQLError,
  GraphQLField,
  GraphQLNamedType,
  GraphQLSchema,
  Kind,
  OperationDefinitionNode,
  SelectionSetNode,
  TypeInfo,
  ValidationContext,
  getArgumentValues,
  getNamedType,
  isInterfaceType,
  isNonNullType,
  isObjectType,
  visit,
  visitWithTypeInfo,
} from 'graphql';
import { BadRequestError } from '../../common/errors';
import { ItemsOf, LimitRange, PAGE_LIMIT_RANGE } from '../../common/pagination';

export const MAX_DEPTH = 10;
export const MAX_COST = 50_000;

type Fragments = Map<string, FragmentDefinitionNode>;

function fragmentsOf(document: DocumentNode): Fragments {
  return new Map(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])));
}

/**
 * A `limit` outside its list's range: where it was given (a variable's name, or the list's response path)
 * and what; or a list given both names of one argument (`limit` and `first`, `page` and `after`).
 */
export type LimitProblem = { field: string; range: LimitRange; got: unknown } | { both: readonly [ours: string, relays: string] };

/** Our name of a list argument and Relay's name of it: a list takes one or the other. */
const RELAY_NAMES = [
  ['limit', 'first'],
  ['page', 'after'],
] as const;

interface Measure {
  depth: number;
  cost: number;
}

/**
 * The depth of a selection and an estimate of the items it can return: a field with a `limit` argument
 * (or that counts its items: `itemsOf`) multiplies the cost of its selection by that limit (its default when omitted; a variable's value when
 * `variables` are known, else the list's maximum). A limit outside its list's range counts as the maximum
 * and is added to `problems`: a value that the list would refuse must not lower the estimate.
 */
function measure(
  schema: GraphQLSchema,
  fragments: Fragments,
  variables: Record<string, unknown> | undefined,
  set: SelectionSetNode | undefined,
  parent: GraphQLNamedType | undefined,
  depth: number,
  seen: Set<string>,
  path: string,
  problems: LimitProblem[],
): Measure {
  if (!set) return { depth, cost: 0 };
  let maxDepth = depth;
  let cost = 0;
  for (const selection of set.selections) {
    let inner: Measure;
    if (selection.kind === Kind.FIELD && selection.name.value.startsWith('__')) {
      // Introspection (__schema, __type, __typename) reads the schema, not the data: its size is the
      // schema's, and Apollo Sandbox's own introspection query is nested 15 levels deep.
      continue;
    } else if (selection.kind === Kind.FIELD) {
      const def = parent && (isObjectType(parent) || isInterfaceType(parent)) ? parent.getFields()[selection.name.value] : undefined;
      const at = `${path}${(selection.alias ?? selection.name).value}`;
      inner = measure(schema, fragments, variables, selection.selectionSet, def ? getNamedType(def.type) : undefined, depth + 1, seen, `${at}.`, problems);
      if (def) bothNames(def, selection, variables, problems);
      cost += 1 + multiplier(def, selection, variables, at, problems) * inner.cost;
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      const typeName = selection.typeCondition?.name.value;
      inner = measure(schema, fragments, variables, selection.selectionSet, typeName ? schema.getType(typeName) ?? undefined : parent, depth, seen, path, problems);
      cost += inner.cost;
    } else {
      const fragment = fragments.get(selection.name.value);
      if (!fragment || seen.has(selection.name.value)) continue;
      const type = schema.getType(fragment.typeCondition.name.value) ?? undefined;
      inner = measure(schema, fragments, variables, fragment.selectionSet, type, depth, new Set([...seen, selection.name.value]), path, problems);
      cost += inner.cost;
    }
    maxDepth = Math.max(maxDepth, inner.depth);
  }
  return { depth: maxDepth, cost };
}

const inRange = (value: unknown, range: LimitRange): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= range.min && value <= range.max;

/** The arguments that size a list: `limit`, and Relay's `first`, which stands for it. */
const SIZE_ARGUMENTS = ['limit', 'first'] as const;

/**
 * How many times a field's selection counts: its `limit` (or `first`), within the list's range; the
 * larger when both are given (the list refuses that, but not before the estimate). Neither given: the
 * default of `limit`. A variable not known yet (validation) counts as the maximum; a value out of range
 * counts as the maximum and is a problem (a literal, named by the list's response path; a variable, by
 * its name, as the client sent it).
 */
function multiplier(
  def: GraphQLField<unknown, unknown> | undefined,
  field: FieldNode,
  variables: Record<string, unknown> | undefined,
  at: string,
  problems: LimitProblem[],
): number {
  const items = def && itemsOfField(def);
  if (items) return itemsCount(def, items, field, variables);
  const listed = def?.args.find((a) => listedItemsOf(a) !== undefined);
  if (listed) return listedCount(listed, field, variables);
  let sized: number | undefined;
  let fallback: number | undefined;
  for (const name of SIZE_ARGUMENTS) {
    const arg = def?.args.find((a) => a.name === name);
    if (!arg) continue;
    const range = limitRangeOf(arg);
    fallback ??= inRange(arg.defaultValue, range) ? arg.defaultValue : range.max;
    const size = givenSize(arg, field, variables, `${at}.${name}`, problems);
    if (size !== undefined) sized = Math.max(sized ?? 0, size);
  }
  return sized ?? fallback ?? 1;
}

/**
 * The size an argument gives; undefined when it is not given (omitted, a variable without a value, or
 * null for a nullable one: `first: null` is no `first`; a null `limit` is refused).
 */
function givenSize(
  arg: GraphQLArgument,
  field: FieldNode,
  variables: Record<string, unknown> | undefined,
  at: string,
  problems: LimitProblem[],
): number | undefined {
  const range = limitRangeOf(arg);
  const given = field.arguments?.find((a) => a.name.value === arg.name);
  const optional = !isNonNullType(arg.type);
  if (!given || (given.value.kind === Kind.NULL && optional)) return undefined;
  if (given.value.kind === Kind.VARIABLE) {
    if (!variables) return range.max;
    const name = given.value.name.value;
    const value = variables[name];
    if (value === undefined || (value === null && optional)) return undefined;
    if (inRange(value, range)) return value;
    problems.push({ field: name, range, got: value });
    return range.max;
  }
  // Another kind of literal is not an Int: graphql-js's own validation refuses it.
  if (given.value.kind !== Kind.INT) return range.max;
  const literal = Number(given.value.value);
  if (inRange(literal, range)) return literal;
  problems.push({ field: at, range, got: literal });
  return range.max;
}

/**
 * A list given an argument under both its names (`limit: 5, first: 5`) is refused before anything runs, as
 * an out-of-range limit is: each of its items would otherwise fail alone (the list's resolver refuses it
 * too, see connection-arguments.ts). A variable counts when the request gives it a value other than null;
 * while validating (no variables yet), only literals count.
 */
function bothNames(def: GraphQLField<unknown, unknown>, field: FieldNode, variables: Record<string, unknown> | undefined, problems: LimitProblem[]): void {
  for (const pair of RELAY_NAMES) {
    if (pair.every((name) => def.args.some((a) => a.name === name) && argumentGiven(field, name, variables))) problems.push({ both: pair });
  }
}

function argumentGiven(field: FieldNode, name: string, variables: Record<string, unknown> | undefined): boolean {
  const given = field.arguments?.find((a) => a.name.value === name)?.value;
  if (!given || given.kind === Kind.NULL) return false;
  if (given.kind !== Kind.VARIABLE) return true;
  const value = variables?.[given.name.value];
  return value !== undefined && value !== null;
}

/** The items a field without a `limit` returns for its arguments (its `itemsOf` extension: Collection.series, .priceDepth). */
function itemsOfField(def: GraphQLField<unknown, unknown>): ItemsOf | undefined {
  return (def.extensions as { itemsOf?: ItemsOf }).itemsOf;
}

/** The count `items` gives for the field's arguments; its maximum while a variable among them is not known, or past it. */
function itemsCount(def: GraphQLField<unknown, unknown>, items: ItemsOf, field: FieldNode, variables: Record<string, unknown> | undefined): number {
  if (!variables && field.arguments?.some((a) => a.value.kind === Kind.VARIABLE)) return items.max;
  try {
    const count = items.count(getArgumentValues(def, field, variables));
    return Number.isInteger(count) && count >= 0 && count <= items.max ? count : items.max;
  } catch {
    // Arguments the field refuses: it fails alone when it runs; counted at its maximum until then.
    return items.max;
  }
}

/** At most how many items a field returns per value of this list argument (its `listedItems` extension: `nodes(ids)`). */
function listedItemsOf(arg: GraphQLArgument): number | undefined {
  return (arg.extensions as { listedItems?: number }).listedItems;
}

/** How many values a list argument gives, at most its `listedItems` (a variable not known yet: that many). */
function listedCount(arg: GraphQLArgument, field: FieldNode, variables: Record<string, unknown> | undefined): number {
  const max = listedItemsOf(arg)!;
  const given = field.arguments?.find((a) => a.name.value === arg.name)?.value;
  let count = max;
  if (given?.kind === Kind.LIST) count = given.values.length;
  else if (given?.kind === Kind.VARIABLE && variables && Array.isArray(variables[given.name.value])) count = (variables[given.name.value] as unknown[]).length;
  return Math.min(count, max);
}

/** The range a list's `limit` argument declares (its `limitRange` extension, see common/pagination.ts). */
function limitRangeOf(arg: GraphQLArgument): LimitRange {
  return (arg.extensions as { limitRange?: LimitRange }).limitRange ?? PAGE_LIMIT_RANGE;
}

/** One 400 that names every out-of-range limit and its range, and every argument given under both names, as the lists themselves would word them. */
export function limitsError(problems: readonly LimitProblem[]): BadRequestError {
  // Worded as the list itself words it (connection-arguments.ts), with each name a detail of its own.
  const sentence = (p: LimitProblem) =>
    'both' in p
      ? `give ${p.both[0]} or ${p.both[1]}, not both (${p.both[1]} is Relay's name of ${p.both[0]})`
      : `${p.field} must be an integer from ${p.range.min} to ${p.range.max}, got ${JSON.stringify(p.got)}`;
  const details = (p: LimitProblem) =>
    'both' in p
      ? [
          { field: p.both[0], message: `not with ${p.both[1]}` },
          { field: p.both[1], message: `not with ${p.both[0]}` },
        ]
      : [{ field: p.field, message: `must be an integer from ${p.range.min} to ${p.range.max}, got ${JSON.stringify(p.got)}` }];
  return new BadRequestError([...new Set(problems.map(sentence))].join('; '), problems.flatMap(details));
}

function rootOf(schema: GraphQLSchema, operation: OperationDefinitionNode): GraphQLNamedType | undefined {
  const root = { query: schema.getQueryType(), mutation: schema.getMutationType(), subscription: schema.getSubscriptionType() }[operation.operation];
  return root ?? undefined;
}

/**
 * The variables an operation's estimate depends on: those that give some `limit`, `first`, `page`, `after`,
 * list of ids (or another argument with `listedItems`), or an argument of a field that counts its items
 * (`itemsOf`). None: the estimate is the same for every request of the operation.
 */
function estimateVariables(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode): string[] {
  const names = new Set<string>();
  const types = new TypeInfo(schema);
  const fragments = fragmentsOf(document);
  const visitor = visitWithTypeInfo(types, {
    Argument(node) {
      if (node.value.kind !== Kind.VARIABLE) return;
      const name = node.name.value;
      const field = types.getFieldDef();
      const arg = types.getArgument();
      if (RELAY_NAMES.some((pair) => (pair as readonly string[]).includes(name)) || name === 'ids' || (arg && listedItemsOf(arg) !== undefined) || (field && itemsOfField(field))) {
        names.add(node.value.name.value);
      }
    },
  });
  visit(operation, visitor);
  for (const fragment of fragments.values()) visit(fragment, visitor);
  return [...names].sort();
}

/** What an operation may return with given variables, and the limits among them that are out of range. */
export interface Estimate {
  items: number;
  outOfRange: LimitProblem[];
}

/**
 * An operation whose estimate some variables give (`names`): its estimates by their values, measured once
 * each (a REST route's operation, or a client's query, is sent with the same few limits again and again).
 */
interface Varying {
  names: readonly string[];
  byValues: Map<string, Estimate>;
}
/** Estimates kept per varying operation (then the oldest half is dropped): enough for the limits clients send. */
const KEPT_ESTIMATES = 64;
/** A key of values longer than this (a long list of ids) is measured, not kept. */
const MAX_KEY_LENGTH = 256;
/** Per schema and operation: its estimate when no variable can change it, measured once, else the varying one's. */
const estimates = new WeakMap<GraphQLSchema, WeakMap<OperationDefinitionNode, Estimate | Varying>>();

function measureOperation(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode, variables: Record<string, unknown> | undefined) {
  const outOfRange: LimitProblem[] = [];
  const { depth, cost } = measure(schema, fragmentsOf(document), variables, operation.selectionSet, rootOf(schema, operation), 0, new Set(), '', outOfRange);
  return { depth, items: cost, outOfRange };
}

/** The values of the variables an estimate depends on, as a key (undefined and null told apart). */
function keyOf(names: readonly string[], variables: Record<string, unknown>): string {
  let key = '';
  for (const name of names) {
    const value = variables[name];
    key += value === undefined ? 'u,' : `${JSON.stringify(value)},`;
  }
  return key;
}

/**
 * The items an operation may return with these variables (see measure): what decides whether it is large;
 * and its limits that are out of range, for which the whole operation is refused before it runs.
 */
export function estimate(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode, variables: Record<string, unknown>): Estimate {
  let kept = estimates.get(schema);
  if (!kept) estimates.set(schema, (kept = new WeakMap()));
  let known = kept.get(operation);
  if (!known) {
    const names = estimateVariables(schema, document, operation);
    if (!names.length) {
      const { items, outOfRange } = measureOperation(schema, document, operation, variables);
      kept.set(operation, { items, outOfRange });
      return { items, outOfRange };
    }
    kept.set(operation, (known = { names, byValues: new Map() }));
  }
  if (!('names' in known)) return known;
  const key = keyOf(known.names, variables);
  const seen = known.byValues.get(key);
  if (seen) return seen;
  const { items, outOfRange } = measureOperation(schema, document, operation, variables);
  if (key.length <= MAX_KEY_LENGTH) {
    if (known.byValues.size >= KEPT_ESTIMATES) {
      for (const old of [...known.byValues.keys()].slice(0, KEPT_ESTIMATES / 2)) known.byValues.delete(old);
    }
    known.byValues.set(key, { items, outOfRange });
  }
  return { items, outOfRange };
}

/**
 * Bounds each operation: its nesting depth, and an estimate of the items it can return, where a field
 * with a `limit` argument multiplies the cost of its selection by that limit (its default when omitted,
 * the list's maximum when given by a variable). A limit written out of its list's range refuses the
 * document: it would fail alone while the rest ran.
 */
export function operationLimits(context: ValidationContext): ASTVisitor {
  const document = context.getDocument();
  const schema = context.getSchema();
  return {
    OperationDefinition(node) {
      const { depth, items, outOfRange } = measureOperation(schema, document, node, undefined);
      if (outOfRange.length) context.reportError(limitsError(outOfRange));
      if (depth > MAX_DEPTH) {
        context.reportError(new GraphQLError(`operation is nested ${depth} levels deep; the limit is ${MAX_DEPTH}`, { nodes: [node] }));
      } else if (items > MAX_COST) {
        context.reportError(
          new GraphQLError(`operation may return about ${items} items; the limit is ${MAX_COST} (lower the limit arguments)`, {
            nodes: [node],
          }),
        );
      }
    },
  };
}
