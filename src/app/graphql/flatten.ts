import {
  DocumentNode,
  FieldNode,
  FragmentDefinitionNode,
  getNamedType,
  GraphQLCompositeType,
  GraphQLSchema,
  isAbstractType,
  isCompositeType,
  isObjectType,
  Kind,
  OperationDefinitionNode,
  SelectionNode,
  SelectionSetNode,
} from 'graphql';

/**
 * An operation as the SQL plans read it: every selection set a list of fields with distinct response
 * keys, in the order graphql-js's collectFields gives them (a key's first appearance), fragments (named
 * and inline) put in place and fields of one key merged into one with their sub-selections joined, as
 * execution does. What execution would decide per request, a plan cannot decide once: a directive
 * (`@skip`/`@include` with a variable, or any other) or a fragment whose type condition is not the
 * selection's own concrete type (nor an abstract type that contains it) gives undefined, and the
 * resolvers answer. Validation has run before: fields of one key have one name and the same arguments.
 */
export function flattenOperation(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode): OperationDefinitionNode | undefined {
  const root = schema.getRootType(operation.operation);
  if (!root) return undefined;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const flattened = flattenSet(schema, fragments, root, [operation.selectionSet]);
  return flattened && { ...operation, selectionSet: flattened };
}

/** The fields of `sets` (one selection of `type`, given in parts) flattened, or undefined. */
function flattenSet(schema: GraphQLSchema, fragments: Map<string, FragmentDefinitionNode>, type: GraphQLCompositeType, sets: readonly SelectionSetNode[]): SelectionSetNode | undefined {
  if (!isObjectType(type)) return undefined;
  const byKey = new Map<string, FieldNode[]>();
  const visiting = new Set<string>();
  const collect = (selections: readonly SelectionNode[]): boolean => {
    for (const node of selections) {
      if (node.directives?.length) return false;
      if (node.kind === Kind.FIELD) {
        const key = node.alias?.value ?? node.name.value;
        const same = byKey.get(key);
        if (same) same.push(node);
        else byKey.set(key, [node]);
        continue;
      }
      const fragment = node.kind === Kind.FRAGMENT_SPREAD ? fragments.get(node.name.value) : node;
      if (!fragment || fragment.directives?.length) return false;
      const condition = fragment.typeCondition && schema.getType(fragment.typeCondition.name.value);
      if (condition && condition !== type && !(isAbstractType(condition) && schema.isSubType(condition, type))) return false;
      if (node.kind === Kind.FRAGMENT_SPREAD) {
        // Validation refuses cycles; this only keeps a mistake from looping.
        if (visiting.has(node.name.value)) return false;
        visiting.add(node.name.value);
      }
      const ok = collect(fragment.selectionSet.selections);
      if (node.kind === Kind.FRAGMENT_SPREAD) visiting.delete(node.name.value);
      if (!ok) return false;
    }
    return true;
  };
  for (const set of sets) if (!collect(set.selections)) return undefined;
  const fields: FieldNode[] = [];
  for (const nodes of byKey.values()) {
    const [first] = nodes;
    const subs = nodes.map((n) => n.selectionSet).filter((s): s is SelectionSetNode => s !== undefined);
    if (!subs.length) {
      fields.push(nodes.length === 1 ? first : { ...first, directives: undefined });
      continue;
    }
    const fieldType = first.name.value === '__typename' ? undefined : type.getFields()[first.name.value]?.type;
    const named = fieldType && getNamedType(fieldType);
    if (!named || !isCompositeType(named)) return undefined;
    const selectionSet = flattenSet(schema, fragments, named, subs);
    if (!selectionSet) return undefined;
    fields.push({ ...first, directives: undefined, selectionSet });
  }
  return { kind: Kind.SELECTION_SET, selections: fields };
}
