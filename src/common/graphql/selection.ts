import { GraphQLResolveInfo, Kind, SelectionSetNode } from 'graphql';

/**
 * The names of the fields a request selects under the field being resolved (following fragments),
 * optionally under a path of its subfields first (`result` of a page, `['result', 'listing']`). A superset when @skip/@include are
 * used: it decides which columns to read, never what is returned.
 */
export function selectedFields(info: GraphQLResolveInfo, through?: string | string[]): Set<string> {
  const names = new Set<string>();
  const path = through === undefined ? [] : typeof through === 'string' ? [through] : through;
  const visit = (set: SelectionSetNode | undefined, depth: number) => {
    if (!set) return;
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        if (depth === path.length) names.add(selection.name.value);
        else if (selection.name.value === path[depth]) visit(selection.selectionSet, depth + 1);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        visit(selection.selectionSet, depth);
      } else {
        visit(info.fragments[selection.name.value]?.selectionSet, depth);
      }
    }
  };
  for (const node of info.fieldNodes) visit(node.selectionSet, 0);
  return names;
}
