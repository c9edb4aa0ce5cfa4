import fc from 'fast-check';
import {
  getNamedType,
  GraphQLInputType,
  GraphQLSchema,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  OperationDefinitionNode,
  parse,
  typeFromAST,
} from 'graphql';
import { openApiDocument, openApiPath } from '../../src/app/rest/v1/openapi';
import type { RouteSpec } from '../../src/app/rest/v1/route-spec';
import { routes } from '../../src/app/rest/v1/routes';
import { camelToSnake } from '../../src/common/names';
import { forgedCursorQuery, hostileString, internalWebhookTarget } from './hostile';
import { graphqlUploadCase, restUploadCase } from './multipart';

/** Texts no error body may contain: a stack, SQL, or a driver's words. */
const LEAKS = [/at Object\./, /at async /, /\bSELECT\b/, /\bINSERT INTO\b/, /\bUPDATE \w+ SET\b/, /violates/, /syntax error at/, /duplicate key/, /QueryFailedError/, /node_modules/];

const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.integer(),
  fc.constantFrom(0, -1, 2 ** 31, 2 ** 53 + 2, -(2 ** 63), Number.MAX_VALUE, 1e-300),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** Any JSON value, nested up to 40 levels now and then (the limit is 32). */
const hostileJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  fc.constant(null),
  fc.integer({ min: 30, max: 40 }).map((n) => Array.from({ length: n }).reduce<unknown>((inner) => ({ a: inner }), 'x')),
  fc.array(hostileString, { maxLength: 3 }).map((strings) => ({ strings })),
);

function scalarFor(name: string): fc.Arbitrary<unknown> {
  const typed: Record<string, fc.Arbitrary<unknown>> = {
    Int: fc.oneof(hostileNumber, hostileString),
    Float: fc.oneof(hostileNumber, hostileString),
    Boolean: fc.oneof(fc.boolean(), hostileString),
    JSON: hostileJson,
    JSONObject: hostileJson,
  };
  return fc.oneof({ weight: 4, arbitrary: typed[name] ?? hostileString }, { weight: 1, arbitrary: fc.oneof(hostileNumber, fc.constant(null)) });
}

/** Values for a GraphQL input type: mostly of the right shape with hostile leaves, sometimes of the wrong shape. */
export function valueFor(type: GraphQLInputType, depth = 0, snake = false): fc.Arbitrary<unknown> {
  if (isNonNullType(type)) return valueFor(type.ofType, depth, snake);
  if (isListType(type)) {
    const item = valueFor(type.ofType as GraphQLInputType, depth + 1, snake);
    return fc.oneof(fc.array(item, { maxLength: 3 }), fc.constant(null), fc.constant(Array.from({ length: 1001 }, () => 1)));
  }
  const named = getNamedType(type);
  if (isEnumType(named)) return fc.oneof(fc.constantFrom(...named.getValues().map((v) => v.name)), hostileString);
  if (isInputObjectType(named)) {
    if (depth > 4) return fc.constant(null);
    const fields = Object.values(named.getFields());
    const record: Record<string, fc.Arbitrary<unknown>> = {};
    for (const field of fields) record[snake ? camelToSnake(field.name) : field.name] = valueFor(field.type, depth + 1, snake);
    return fc.oneof({ weight: 5, arbitrary: fc.record(record, { requiredKeys: [] }) }, { weight: 1, arbitrary: hostileJson });
  }
  return scalarFor(named.name);
}

/** A path segment: percent-encoded; a lone surrogate (which UTF-8 cannot encode) is sent as its CESU-8 bytes. */
function pathSegment(value: string): string {
  const encoded = value.replace(/[\ud800-\udfff]/g, (c) => `\u0000${c.charCodeAt(0).toString(16)}`);
  return encodeURIComponent(encoded).replace(/%00(d[89a-f][0-9a-f]{2})/g, (_m, hex: string) => {
    const code = parseInt(hex, 16);
    return `%ED%${(0xa0 | ((code >> 6) & 0x1f)).toString(16).toUpperCase()}%${(0x80 | (code & 0x3f)).toString(16).toUpperCase()}`;
  }) || 'x';
}

export interface FuzzRequest {
  label: string;
  method: string;
  path: string;
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as it is (multipart, form-urlencoded), with `headers`. */
  raw?: Buffer;
  headers?: Record<string, string>;
  /** What the request asks that must be refused (a 4xx, or GraphQL errors without data), whoever sends it. */
  mustRefuse?: string;
}

export interface FuzzCase {
  label: string;
  arbitrary: fc.Arbitrary<FuzzRequest>;
}

/**
 * Every operation of the OpenAPI document (`GET /v1/openapi.json`), as its route: a route added to the
 * route table is described there and so fuzzed without a change here; an operation the fuzzer cannot
 * map to a route is an error, not a silent skip.
 */
export function openApiRoutes(schema: GraphQLSchema): RouteSpec[] {
  const paths = openApiDocument(schema, routes).paths as Record<string, Record<string, unknown>>;
  return Object.entries(paths).flatMap(([path, operations]) =>
    Object.keys(operations).map((method) => {
      const route = routes.find((r) => r.method === method && openApiPath(r.path) === path);
      if (!route) throw new Error(`the OpenAPI document describes ${method.toUpperCase()} ${path}, which no route of the table serves`);
      return route;
    }),
  );
}

export const routeLabel = (route: RouteSpec) => `${route.method.toUpperCase()} ${openApiPath(route.path)}`;

/** A webhook registration that names an internal target: refused whatever the key (WEBHOOK_ALLOW_PRIVATE is off). */
function internalWebhook(label: string, request: (url: string) => Pick<FuzzRequest, 'method' | 'path' | 'body'>): fc.Arbitrary<FuzzRequest> {
  return internalWebhookTarget.map(({ url, why }) => ({ label, ...request(url), mustRefuse: `the internal webhook target ${url} (${why})` }));
}

/** Cases aimed at one route or mutation, sent beside its generic ones. */
const TARGETED: Record<string, (label: string) => fc.Arbitrary<FuzzRequest>> = {
  'POST /v1/webhooks': (label) => internalWebhook(label, (url) => ({ method: 'POST', path: '/v1/webhooks', body: { url } })),
  'mutation createWebhook': (label) =>
    internalWebhook(label, (url) => ({ method: 'POST', path: '/graphql', body: { query: 'mutation ($input: CreateWebhookInput!) { createWebhook(input: $input) { id } }', variables: { input: { url } } } })),
};

function withTargeted(label: string, generic: fc.Arbitrary<FuzzRequest>): fc.Arbitrary<FuzzRequest> {
  const targeted = TARGETED[label];
  return targeted ? fc.oneof({ weight: 3, arbitrary: generic }, { weight: 1, arbitrary: targeted(label) }) : generic;
}

/** The values REST accepts for a route's `order_by` (the enum's values), none when it has no order_by. */
function orderByValues(schema: GraphQLSchema, operation: OperationDefinitionNode): string[] {
  const def = operation.variableDefinitions?.find((d) => d.variable.name.value === 'order_by');
  const type = def && getNamedType(typeFromAST(schema, def.type as never) as GraphQLInputType);
  return type && isEnumType(type) ? type.getValues().map((v) => String(v.value)) : [];
}

/**
 * One arbitrary per /v1 route of the OpenAPI document: its path and query parameters and its JSON body,
 * from the route's variables; upload routes get multipart bodies (multipart.ts), importing into `own`
 * collections or hostile ids. A paged list also gets forged cursors that agree with its ordering.
 */
export function restCases(schema: GraphQLSchema, own: string[] = []): FuzzCase[] {
  return openApiRoutes(schema).map((route) => {
      if (route.upload) return { label: routeLabel(route), arbitrary: restUploadCase(routeLabel(route), route.path, route.upload, own) };
      const operation = parse(route.operation).definitions[0] as OperationDefinitionNode;
      const params = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1]);
      const pathArbs = params.map(() => hostileString.map(pathSegment));
      const queryArbs: Record<string, fc.Arbitrary<string>> = {};
      const bodyArbs: Record<string, fc.Arbitrary<unknown>> = {};
      let inputArb: fc.Arbitrary<unknown> = fc.constant({});
      for (const def of operation.variableDefinitions ?? []) {
        const name = def.variable.name.value;
        if (params.includes(name)) continue;
        const type = typeFromAST(schema, def.type as never) as GraphQLInputType;
        if (route.method === 'get' || route.method === 'delete') queryArbs[name] = hostileString;
        else if (name === 'input') inputArb = valueFor(type, 0, true);
        else bodyArbs[name] = valueFor(type, 0, true);
      }
      const label = routeLabel(route);
      const paged = route.method === 'get' && 'page' in queryArbs;
      // A forged cursor alone: the other parameters' hostile values would be refused before the cursor is read.
      const cursorArb = paged ? fc.option(forgedCursorQuery(orderByValues(schema, operation)), { freq: 2, nil: undefined }) : fc.constant(undefined);
      const arbitrary = fc
        .record({ pathValues: fc.tuple(...pathArbs), query: fc.record(queryArbs, { requiredKeys: [] }), cursor: cursorArb, input: inputArb, body: fc.record(bodyArbs, { requiredKeys: [] }) })
        .map(({ pathValues, query, cursor, input, body }) => {
          let path = route.path;
          params.forEach((p, i) => (path = path.replace(`:${p}`, pathValues[i] as string)));
          const search = new URLSearchParams(cursor ?? (query as Record<string, string>)).toString();
          const merged = input && typeof input === 'object' && !Array.isArray(input) ? { ...input, ...body } : input;
          return { label, method: route.method.toUpperCase(), path: search ? `${path}?${search}` : path, body: route.method === 'get' ? undefined : merged };
        });
      return { label, arbitrary: withTargeted(label, arbitrary) };
    });
}

/**
 * One arbitrary per GraphQL mutation: every argument as a variable of its declared type, with hostile
 * values; a mutation that takes an `Upload` is sent as a multipart request (multipart.ts).
 */
export function mutationCases(schema: GraphQLSchema, own: string[] = []): FuzzCase[] {
  const mutation = schema.getMutationType();
  if (!mutation) return [];
  return Object.values(mutation.getFields()).map((field) => {
      if (field.args.some((a) => getNamedType(a.type).name === 'Upload')) {
        if (field.name !== 'importAssets') throw new Error(`mutation ${field.name} takes an Upload: give it a multipart case in bench/fuzz/multipart.ts`);
        return { label: `mutation ${field.name} (multipart)`, arbitrary: graphqlUploadCase(`mutation ${field.name} (multipart)`, own) };
      }
      const defs = field.args.map((a) => `$${a.name}: ${a.type.toString()}`).join(', ');
      const args = field.args.map((a) => `${a.name}: $${a.name}`).join(', ');
      const query = `mutation${defs ? `(${defs})` : ''} { ${field.name}${args ? `(${args})` : ''} { __typename } }`;
      const variables: Record<string, fc.Arbitrary<unknown>> = {};
      for (const arg of field.args) variables[arg.name] = valueFor(arg.type);
      const label = `mutation ${field.name}`;
      return { label, arbitrary: withTargeted(label, fc.record(variables, { requiredKeys: [] }).map((v) => ({ label, method: 'POST', path: '/graphql', body: { query, variables: v } }))) };
    });
}

/** Why a response breaks the properties, or undefined when it keeps them. */
export function violation(request: FuzzRequest, status: number, text: string): string | undefined {
  if (status >= 500) return `status ${status}: ${text.slice(0, 300)}`;
  const leak = LEAKS.find((re) => re.test(text));
  if (leak) return `the body shows ${leak}: ${text.slice(0, 300)}`;
  let body: { error?: { code?: string }; errors?: { extensions?: { code?: string } }[] };
  try {
    body = JSON.parse(text);
  } catch {
    return status >= 400 ? `status ${status} without a JSON body: ${text.slice(0, 120)}` : undefined;
  }
  if (request.mustRefuse && status < 400 && !body.errors?.length) return `accepted ${request.mustRefuse}: ${text.slice(0, 200)}`;
  if (request.path === '/graphql') {
    const uncoded = body.errors?.find((e) => !e.extensions?.code);
    if (uncoded) return `a GraphQL error without a code: ${JSON.stringify(uncoded).slice(0, 200)}`;
    if (status >= 400 && !body.errors?.length) return `status ${status} without errors: ${text.slice(0, 200)}`;
    // An INTERNAL inside a 200 (a resolver's unexpected error beside partial data) is a 5xx in disguise.
    const internal = body.errors?.find((e) => e.extensions?.code === 'INTERNAL');
    if (internal) return `status ${status} with an INTERNAL error: ${JSON.stringify(internal).slice(0, 200)}`;
  } else if (status >= 400 && !body.error?.code) {
    return `status ${status} without error.code: ${text.slice(0, 200)}`;
  } else if (body.error?.code === 'INTERNAL') {
    return `status ${status} with code INTERNAL: ${text.slice(0, 200)}`;
  }
  return undefined;
}

/**
 * The label of every case list fuzz() must run, read apart from the case builders: each operation of the
 * OpenAPI document and each mutation field of the schema (the one taking an Upload sent as multipart).
 */
export function fuzzedLabels(schema: GraphQLSchema): string[] {
  const paths = openApiDocument(schema, routes).paths as Record<string, Record<string, unknown>>;
  const rest = Object.entries(paths).flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`));
  const mutations = Object.values(schema.getMutationType()?.getFields() ?? {}).map(
    (field) => `mutation ${field.name}${field.args.some((a) => getNamedType(a.type).name === 'Upload') ? ' (multipart)' : ''}`,
  );
  return [...rest, ...mutations];
}
