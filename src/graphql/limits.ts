import {
  ASTVisitor,
  FieldNode,
  GraphQLError,
  GraphQLNamedType,
  Kind,
  SelectionSetNode,
  ValidationContext,
  getNamedType,
  isInterfaceType,
  isObjectType,
} from 'graphql';

export const MAX_DEPTH = 10;
export const MAX_COST = 50_000;
/** A `limit` given as a variable is not known at validation time: count it at its maximum. */
const VARIABLE_LIST_SIZE = 100;

/**
 * Bounds each operation: its nesting depth, and an estimate of the items it can return, where a field
 * with a `limit` argument multiplies the cost of its selection by that limit (its default when omitted).
 */
export function operationLimits(context: ValidationContext): ASTVisitor {
  const fragments = new Map(
    context.getDocument().definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])),
  );
  const schema = context.getSchema();

  function multiplier(field: FieldNode, parent: GraphQLNamedType | undefined): number {
    const def = parent && (isObjectType(parent) || isInterfaceType(parent)) ? parent.getFields()[field.name.value] : undefined;
    const limitArg = def?.args.find((a) => a.name === 'limit');
    if (!limitArg) return 1;
    const given = field.arguments?.find((a) => a.name.value === 'limit');
    if (!given) return Number(limitArg.defaultValue ?? VARIABLE_LIST_SIZE);
    return given.value.kind === Kind.INT ? Number(given.value.value) : VARIABLE_LIST_SIZE;
  }

  function measure(
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
      if (selection.kind === Kind.FIELD) {
        const def = parent && (isObjectType(parent) || isInterfaceType(parent)) ? parent.getFields()[selection.name.value] : undefined;
        inner = measure(selection.selectionSet, def ? getNamedType(def.type) : undefined, depth + 1, seen);
        cost += 1 + multiplier(selection, parent) * inner.cost;
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const typeName = selection.typeCondition?.name.value;
        inner = measure(selection.selectionSet, typeName ? schema.getType(typeName) ?? undefined : parent, depth, seen);
        cost += inner.cost;
      } else {
        const fragment = fragments.get(selection.name.value);
        if (!fragment || seen.has(selection.name.value)) continue;
        const type = schema.getType(fragment.typeCondition.name.value) ?? undefined;
        inner = measure(fragment.selectionSet, type, depth, new Set([...seen, selection.name.value]));
        cost += inner.cost;
      }
      maxDepth = Math.max(maxDepth, inner.depth);
    }
    return { depth: maxDepth, cost };
  }

  return {
    OperationDefinition(node) {
      const root = node.operation === 'mutation' ? schema.getMutationType() : schema.getQueryType();
      const { depth, cost } = measure(node.selectionSet, root ?? undefined, 0, new Set());
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
