import {
  ASTVisitor,
  DocumentNode,
  FieldNode,
  FragmentDefinitionNode,
  GraphQLError,
  GraphQLField,
  GraphQLNamedType,
  GraphQLSchema,
  Kind,
  OperationDefinitionNode,
  SelectionSetNode,
  ValidationContext,
  getNamedType,
  isInterfaceType,
  isObjectType,
  visit,
} from 'graphql';

export const MAX_DEPTH = 10;
export const MAX_COST = 50_000;
/** A `limit` given as a variable is not known at validation time: count it at its maximum. */
const VARIABLE_LIST_SIZE = 100;

type Fragments = Map<string, FragmentDefinitionNode>;

function fragmentsOf(document: DocumentNode): Fragments {
  return new Map(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])));
}

/**
 * The depth of a selection and an estimate of the items it can return: a field with a `limit` argument
 * multiplies the cost of its selection by that limit (its default when omitted; a variable's value when
 * `variables` are known, else VARIABLE_LIST_SIZE).
 */
function measure(
  schema: GraphQLSchema,
  fragments: Fragments,
  variables: Record<string, unknown> | undefined,
  set: SelectionSetNode | undefined,
  parent: GraphQLNamedType | undefined,
  depth: number,
  seen: Set<string>,
): { depth: number; cost: number } {
  if (!set) return { depth, cost: 0 };
  let maxDepth = depth;
  let cost = 0;
  for (const selection of set.selections) {
    let inner: { depth: number; cost: number };
    if (selection.kind === Kind.FIELD && selection.name.value.startsWith('__')) {
      // Introspection (__schema, __type, __typename) reads the schema, not the data: its size is the
      // schema's, and Apollo Sandbox's own introspection query is nested 15 levels deep.
      continue;
    } else if (selection.kind === Kind.FIELD) {
      const def = parent && (isObjectType(parent) || isInterfaceType(parent)) ? parent.getFields()[selection.name.value] : undefined;
      inner = measure(schema, fragments, variables, selection.selectionSet, def ? getNamedType(def.type) : undefined, depth + 1, seen);
      cost += 1 + multiplier(def, selection, variables) * inner.cost;
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      const typeName = selection.typeCondition?.name.value;
      inner = measure(schema, fragments, variables, selection.selectionSet, typeName ? schema.getType(typeName) ?? undefined : parent, depth, seen);
      cost += inner.cost;
    } else {
      const fragment = fragments.get(selection.name.value);
      if (!fragment || seen.has(selection.name.value)) continue;
      const type = schema.getType(fragment.typeCondition.name.value) ?? undefined;
      inner = measure(schema, fragments, variables, fragment.selectionSet, type, depth, new Set([...seen, selection.name.value]));
      cost += inner.cost;
    }
    maxDepth = Math.max(maxDepth, inner.depth);
  }
  return { depth: maxDepth, cost };
}

function multiplier(def: GraphQLField<unknown, unknown> | undefined, field: FieldNode, variables: Record<string, unknown> | undefined): number {
  const limitArg = def?.args.find((a) => a.name === 'limit');
  if (!limitArg) return 1;
  const given = field.arguments?.find((a) => a.name.value === 'limit');
  if (!given) return Number(limitArg.defaultValue ?? VARIABLE_LIST_SIZE);
  if (given.value.kind === Kind.INT) return Number(given.value.value);
  if (given.value.kind === Kind.VARIABLE && variables) {
    const value = variables[given.value.name.value];
    if (typeof value === 'number' && Number.isFinite(value)) return value;
    if (value === undefined || value === null) return Number(limitArg.defaultValue ?? VARIABLE_LIST_SIZE);
  }
  return VARIABLE_LIST_SIZE;
}

function rootOf(schema: GraphQLSchema, operation: OperationDefinitionNode): GraphQLNamedType | undefined {
  const root = { query: schema.getQueryType(), mutation: schema.getMutationType(), subscription: schema.getSubscriptionType() }[operation.operation];
  return root ?? undefined;
}

/** Whether a variable gives some `limit` of the document, so that the estimate depends on the variables. */
function limitsFromVariables(document: DocumentNode): boolean {
  let found = false;
  visit(document, {
    Argument(node) {
      if (node.name.value === 'limit' && node.value.kind === Kind.VARIABLE) found = true;
    },
  });
  return found;
}

/** An operation whose estimate some variable gives: measured on every request. */
const VARIES = -1;
/** Per schema and operation: its estimate when no variable can change it, measured once, else VARIES. */
const fixedEstimates = new WeakMap<GraphQLSchema, WeakMap<OperationDefinitionNode, number>>();

/** The items an operation may return with these variables (see measure): what decides whether it is large. */
export function estimatedItems(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown>,
): number {
  let fixed = fixedEstimates.get(schema);
  if (!fixed) fixedEstimates.set(schema, (fixed = new WeakMap()));
  const known = fixed.get(operation);
  if (known !== undefined && known !== VARIES) return known;
  const cost = measure(schema, fragmentsOf(document), variables, operation.selectionSet, rootOf(schema, operation), 0, new Set()).cost;
  if (known === undefined) fixed.set(operation, limitsFromVariables(document) ? VARIES : cost);
  return cost;
}

/**
 * Bounds each operation: its nesting depth, and an estimate of the items it can return, where a field
 * with a `limit` argument multiplies the cost of its selection by that limit (its default when omitted).
 */
export function operationLimits(context: ValidationContext): ASTVisitor {
  const fragments = fragmentsOf(context.getDocument());
  const schema = context.getSchema();
  return {
    OperationDefinition(node) {
      const { depth, cost } = measure(schema, fragments, undefined, node.selectionSet, rootOf(schema, node), 0, new Set());
      if (depth > MAX_DEPTH) {
        context.reportError(new GraphQLError(`operation is nested ${depth} levels deep; the limit is ${MAX_DEPTH}`, { nodes: [node] }));
      } else if (cost > MAX_COST) {
        context.reportError(
          new GraphQLError(`operation may return about ${cost} items; the limit is ${MAX_COST} (lower the limit arguments)`, {
            nodes: [node],
          }),
        );
      }
    },
  };
}
