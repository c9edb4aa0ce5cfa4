import { DocumentNode, FieldNode, Kind, OperationDefinitionNode, parse, print, SelectionSetNode, visit } from 'graphql';

/**
 * The request shapes of real clients (issue #26): the same operation as Apollo Client 4, urql and a bare
 * fetch send it. Each shape's body is built once per workload (the document parsed, transformed and
 * printed at start); autocannon then sends those bytes as they are.
 */
export const SHAPES = ['apollo', 'urql', 'fetch'] as const;
export type Shape = (typeof SHAPES)[number];

export interface ShapedRequest {
  headers: Record<string, string>;
  body: string;
}

const HEADERS: Record<Shape, Record<string, string>> = {
  apollo: { 'content-type': 'application/json', accept: 'application/graphql-response+json,application/json;q=0.9' },
  urql: {
    'content-type': 'application/json',
    accept: 'application/graphql-response+json, application/graphql+json, application/json, text/event-stream, multipart/mixed',
  },
  fetch: { 'content-type': 'application/json' },
};

/** `--shapes apollo,urql`: the shapes to run, in SHAPES' order; all when absent. */
export function parseShapes(flag: string | undefined): Shape[] {
  if (!flag) return [...SHAPES];
  const asked = flag.split(',').map((s) => s.trim().toLowerCase());
  const unknown = asked.filter((s) => !(SHAPES as readonly string[]).includes(s));
  if (unknown.length) throw new Error(`--shapes takes ${SHAPES.join(', ')} (comma-separated), got ${unknown.join(', ')}`);
  return SHAPES.filter((s) => asked.includes(s));
}

const TYPENAME: FieldNode = { kind: Kind.FIELD, name: { kind: Kind.NAME, value: '__typename' } };

/**
 * What Apollo Client's cache (addTypenameToDocument) and urql (formatDocument) do to a document before
 * sending it: `__typename` in every selection set but the operation's root one (fragments' and inline
 * fragments' included), unless the set has `__typename` or another introspection field already.
 */
export function withTypename(document: DocumentNode): DocumentNode {
  return visit(document, {
    SelectionSet(node: SelectionSetNode, _key, parent) {
      if (parent && !Array.isArray(parent) && (parent as { kind?: string }).kind === Kind.OPERATION_DEFINITION) return undefined;
      if (node.selections.some((s) => s.kind === Kind.FIELD && s.name.value.startsWith('__'))) return undefined;
      return { ...node, selections: [...node.selections, TYPENAME] };
    },
  });
}

/** A GraphQL name from a workload's: `W1 collections x assets` -> `W1CollectionsXAssets`. */
const operationNameOf = (label: string) => label.replace(/[^A-Za-z0-9]+([A-Za-z0-9]?)/g, (_, c: string) => c.toUpperCase()).replace(/^(?=\d)/, '_');

/** The document with its (single) operation named after `label` when it has no name: clients send named operations. */
function named(document: DocumentNode, label: string): { document: DocumentNode; operationName: string } {
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  if (operations.length !== 1) throw new Error(`a workload's document holds one operation, this one ${operations.length}`);
  const own = operations[0].name?.value;
  if (own) return { document, operationName: own };
  return {
    document: visit(document, { OperationDefinition: (op) => ({ ...op, name: { kind: Kind.NAME, value: operationNameOf(label) } }) }),
    operationName: operationNameOf(label),
  };
}

/**
 * The request of `shape` for a query and its variables. The clients' shapes name an anonymous operation
 * after `workload`; the bare fetch sends the document as written, as `{ query, variables }`.
 */
export function shapedRequest(shape: Shape, query: string, variables: Record<string, unknown>, workload: string): ShapedRequest {
  const headers = HEADERS[shape];
  if (shape === 'fetch') return { headers, body: JSON.stringify({ query, variables }) };
  const { document, operationName } = named(parse(query), workload);
  const text = print(withTypename(document));
  if (shape === 'apollo') {
    return {
      headers,
      body: JSON.stringify({ operationName, variables, extensions: { clientLibrary: { name: '@apollo/client', version: '4.0.0' } }, query: text }),
    };
  }
  return { headers, body: JSON.stringify({ operationName, query: text, variables }) };
}
