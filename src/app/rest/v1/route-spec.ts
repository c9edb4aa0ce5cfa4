/**
 * A /v1 route (the table: routes.ts): each documented path runs one GraphQL operation against the same
 * schema as /graphql. Each variable takes its value by name from one place (variablePlaces): the path, the
 * query string or the JSON body; a `$input` variable takes the whole body (snake_case keys become camelCase).
 */
export interface RouteSpec {
  method: 'get' | 'post' | 'put' | 'delete';
  path: string;
  /** What the route does, in REST's words (its OpenAPI summary). */
  summary: string;
  operation: string;
  /**
   * Other names a variable is also taken from, in its place: the accept body's legacy `asset_id` for
   * `offer_id`; the events' `page`, the parameter every other list reads on with, for `after`.
   */
  aliases?: Record<string, string[]>;
  /** List parameters given once per value (trait=a:b&trait=c:d), never split at commas (values may hold them). */
  repeated?: string[];
  /** A variable of type Upload filled from the request's file (form field or multipart part). */
  upload?: string;
  /** A create's `Location` header: the /v1 path of what it made, from the response body. */
  location?: (created: Body) => string;
  /** Answers 201 Created (the routes the legacy interface documents answer 200, creates included). */
  created?: true;
  /** A read that needs an API key (401 without one), as every write does. */
  needsKey?: true;
}

/** Where a route reads a variable from. */
export type VariablePlace = 'path' | 'query' | 'body';

/**
 * Each variable's place: a path parameter from the path; `$input` (the whole body) and, on a POST or PUT
 * without `$input`, every other variable from the body; the rest from the query string. The router reads
 * each from there alone and refuses a query parameter that is no query variable or alias (400 naming it);
 * the OpenAPI description lists them so.
 */
export function variablePlaces(spec: RouteSpec, variables: readonly string[]): Map<string, VariablePlace> {
  const pathNames = new Set([...spec.path.matchAll(/:(\w+)/g)].map((m) => m[1]));
  const bodyFromVariables = (spec.method === 'post' || spec.method === 'put') && !variables.includes('input');
  return new Map(variables.map((name) => [name, pathNames.has(name) ? 'path' : name === 'input' || bodyFromVariables ? 'body' : 'query']));
}

/** A response body, read by its documented field names. */
export type Body = Record<string, any>;
