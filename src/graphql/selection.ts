import { GraphQLResolveInfo, Kind, SelectionSetNode } from 'graphql';

/**
 * The names of the fields a request selects under the field being resolved (following fragments),
 * optionally under one of its subfields first (`result` of a page). A superset when @skip/@include are
 * used: it decides which columns to read, never what is returned.
 */
export function selectedFields(info: GraphQLResolveInfo, through?: string): Set<string> {
  const names = new Set<string>();
  const visit = (set: SelectionSetNode | undefined, descend: string | undefined) => {
    if (!set) return;
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        if (descend === undefined) names.add(selection.name.value);
        else if (selection.name.value === descend) visit(selection.selectionSet, undefined);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        visit(selection.selectionSet, descend);
      } else {
        visit(info.fragments[selection.name.value]?.selectionSet, descend);
      }
    }
  };
  for (const node of info.fieldNodes) visit(node.selectionSet, through);
  return names;
}
