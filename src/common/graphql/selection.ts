import { GraphQLResolveInfo, Kind, SelectionSetNode } from 'graphql';

/**
 * The names of the fields a request selects under the field being resolved (following fragments),
 * optionally under a path of its subfields first (`result` of a page, `['result', 'listing']`). A superset when @skip/@include are
 * used: it decides which columns to read, never what is returned. A page's items are selected under
 * `result` and under `edges { node }` (its connection shape): a path through `result` follows both.
 */
export function selectedFields(info: GraphQLResolveInfo, through?: string | string[]): Set<string> {
  const names = new Set<string>();
  const path = through === undefined ? [] : typeof through === 'string' ? [through] : through;
  const visit = (set: SelectionSetNode | undefined, depth: number, only?: string) => {
    if (!set) return;
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        const name = selection.name.value;
        if (only !== undefined) {
          if (name === only) visit(selection.selectionSet, depth);
        } else if (depth === path.length) names.add(name);
        else if (name === path[depth]) visit(selection.selectionSet, depth + 1);
        else if (name === 'edges' && path[depth] === 'result') visit(selection.selectionSet, depth + 1, 'node');
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        visit(selection.selectionSet, depth, only);
      } else {
        visit(info.fragments[selection.name.value]?.selectionSet, depth, only);
      }
    }
  };
  for (const node of info.fieldNodes) visit(node.selectionSet, 0);
  return names;
}
