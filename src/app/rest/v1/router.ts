import express, { Request, Response } from 'express';
import {
  DocumentNode,
  GraphQLInputType,
  GraphQLSchema,
  OperationDefinitionNode,
  TypeInfo,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  parse,
  typeFromAST,
  validate,
  visit,
  visitWithTypeInfo,
  GraphQLEnumType,
  GraphQLError,
  GraphQLNamedType,
} from 'graphql';
import type { CompiledQuery } from 'graphql-jit';
import { DataSource } from 'typeorm';
import { DECIMAL_TWINS, exactNumber, jsonWithExactNumbers, withExactTwins } from '../../../common/decimal';
import { AppError, BadRequestError } from '../../../common/errors';
import { InFlight } from '../../../common/in-flight';
import { QueryGate } from '../../../common/query-gate';
import { compileOperation, runOperation } from '../../graphql/execute';
import type { SqlPlan } from '../../graphql/sql-plan';
import { RawJson } from '../../http/chunked-text';
import { snakeToCamel } from '../../../common/names';
import { ContextOptions, createContext } from '../../context';
import { readRouterOf, RequestScope } from '../../../common/request/scope';
import { keyFromHeaders } from '../../../modules/apikey/api-key.service';
import { requestErrors, restErrorAnswer, RestRequestError, sendRestError } from '../errors';
import { sendAnswer, type HttpAnswer } from '../../http/respond';
import { RouteSpec, variablePlaces, VariablePlace } from './route-spec';
import { routes } from './routes';
import { readRestUpload, RestUpload } from './uploads';
import { RestWords, restWords, unknownBodyFields } from './words';
import { pathMatcher } from './path-match';

/** Plans an operation (sql-plan/index.ts's planOperation with the app's schema and database). */
type Planner = (operation: OperationDefinitionNode, options: { restText: boolean }) => SqlPlan | undefined;

interface CompiledRoute {
  spec: RouteSpec;
  document: DocumentNode;
  operation: OperationDefinitionNode;
  /** The operation compiled to a function by graphql-jit: the same resolvers, without graphql-js's per-field work. */
  compiled: CompiledQuery;
  rootKey: string;
  variables: { name: string; type: GraphQLInputType; place: VariablePlace }[];
  /** The query parameters the route takes: its query variables and their aliases. */
  queryNames: Set<string>;
  /** Response paths whose values are enum names: REST shows each by its value, as decisions.md spells them. */
  enumPaths: { path: string[]; type: GraphQLEnumType }[];
  /** Response paths of exact decimals that REST writes as JSON numbers (documented price fields; see shapes.ts). */
  numberPaths: string[][];
  /** Response paths of stored JSON resources whose numbers with `_decimal` twins REST writes exactly (an event's `data`). */
  twinPaths: string[][];
  /** The operation as one JSON-building statement, when PostgreSQL can answer it exactly (sql-plan/). */
  plan?: SqlPlan;
  /** Its errors in REST's names and JSON's types. */
  words: RestWords;
}

/** Parses and validates a route's operation once, at start-up: a broken route stops the server from starting. */
function compileRoute(schema: GraphQLSchema, spec: RouteSpec, plans?: Planner): CompiledRoute {
  const document = parse(spec.operation);
  const errors = validate(schema, document);
  if (errors.length) throw new Error(`route ${spec.method.toUpperCase()} ${spec.path}: ${errors.map((e) => e.message).join('; ')}`);
  const operation = document.definitions[0] as OperationDefinitionNode;
  const rootSelection = operation.selectionSet.selections[0];
  if (rootSelection.kind !== 'Field') throw new Error(`route ${spec.path}: the operation must select one root field`);
  const places = variablePlaces(spec, (operation.variableDefinitions ?? []).map((def) => def.variable.name.value));
  const variables = (operation.variableDefinitions ?? []).map((def) => ({
    name: def.variable.name.value,
    type: typeFromAST(schema, def.type as never) as GraphQLInputType,
    place: places.get(def.variable.name.value)!,
  }));
  const words = restWords(
    schema,
    operation,
    (operation.variableDefinitions ?? []).map((def, i) => ({
      ...variables[i],
      hasDefault: def.defaultValue !== undefined,
      aliases: spec.aliases?.[variables[i].name] ?? [],
    })),
  );
  const queryNames = new Set(variables.filter((v) => v.place === 'query').flatMap((v) => [v.name, ...(spec.aliases?.[v.name] ?? [])]));

  const enumPaths: CompiledRoute['enumPaths'] = [];
  const numberPaths: string[][] = [];
  const twinPaths: string[][] = [];
  const typeInfo = new TypeInfo(schema);
  const path: string[] = [];
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Field: {
        enter(node) {
          path.push(node.alias?.value ?? node.name.value);
          const type = typeInfo.getType();
          const named = type && getNamedType(type);
          if (named && isEnumType(named)) enumPaths.push({ path: [...path], type: named });
          if (named?.name === 'Decimal' && !path[path.length - 1].endsWith('_decimal')) numberPaths.push([...path]);
          if (typeInfo.getFieldDef()?.extensions?.[DECIMAL_TWINS]) twinPaths.push([...path]);
        },
        leave() {
          path.pop();
        },
      },
    }),
  );
  const compiled = compileOperation(schema, document, operation);
  if (!compiled) throw new Error(`route ${spec.path}: graphql-jit cannot compile its operation`);
  // PostgreSQL writes the body itself when it can (a REST text plan); else the plan gives the data.
  const plan = spec.method === 'get' ? plans?.(operation, { restText: true }) : undefined;
  return { spec, document, operation, compiled, rootKey: rootSelection.alias?.value ?? rootSelection.name.value, variables, queryNames, enumPaths, numberPaths, twinPaths, plan, words };
}

/**
 * REST spells an enum by its value (`fixed_price`, `24h`: the documented spellings, which the enum's
 * values are), and takes its GraphQL name too (`FIXED_PRICE`, `H24`).
 */
function enumValueOf(type: GraphQLEnumType, raw: string, name: string): string {
  const value = type.getValues().find((v) => v.value === raw) ?? type.getValue(raw.toUpperCase());
  if (!value) {
    const allowed = type.getValues().map((v) => String(v.value));
    throw new BadRequestError(`${name} must be one of ${allowed.join(', ')}; got ${JSON.stringify(raw)}`, [
      { field: name, message: `one of ${allowed.join(', ')}` },
    ]);
  }
  return value.name;
}

/** A query-string value as the variable's type wants it; anything unconvertible goes on as given, for GraphQL to reject by name. */
function fromQueryString(type: GraphQLNamedType, raw: string, name: string): unknown {
  if (isEnumType(type)) return enumValueOf(type, raw, name);
  switch (type.name) {
    case 'Int':
      return /^-?\d+$/.test(raw) ? Number(raw) : raw;
    case 'Float':
      return raw.trim() !== '' && Number.isFinite(Number(raw)) ? Number(raw) : raw;
    case 'Boolean':
      if (['true', '1'].includes(raw.toLowerCase())) return true;
      if (['false', '0'].includes(raw.toLowerCase())) return false;
      return raw;
    default:
      return raw;
  }
}

/**
 * A JSON body as a GraphQL input value: documented snake_case keys become the input type's camelCase
 * fields, enum values are accepted in lower case; free-form JSON fields (metadata, description) stay as sent.
 */
function fromBody(type: GraphQLInputType, value: unknown, name: string): unknown {
  if (value === null || value === undefined) return value;
  if (isNonNullType(type)) return fromBody(type.ofType, value, name);
  if (isListType(type)) return Array.isArray(value) ? value.map((v, i) => fromBody(type.ofType, v, `${name}[${i}]`)) : value;
  if (isEnumType(type)) return typeof value === 'string' ? enumValueOf(type, value, name) : value;
  if (isInputObjectType(type) && typeof value === 'object' && !Array.isArray(value)) {
    const fields = type.getFields();
    // Without a prototype, a body key "__proto__" is a key like any other (an unknown field), not the
    // object's prototype, whose fields GraphQL would read past the checks on the object's own keys.
    const out: Record<string, unknown> = Object.create(null);
    for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
      const camel = snakeToCamel(key);
      const field = fields[camel] ? camel : key;
      out[field] = fields[field] ? fromBody(fields[field].type, v, key) : v;
    }
    return out;
  }
  return value;
}

/** What a route's variables are read from: express's request, or the lean door's reading of it. */
interface RestInput {
  params: Record<string, string>;
  query: Record<string, unknown>;
  body?: unknown;
}

/**
 * The query parameters a route does not take are refused, by name: a misspelt or foreign one (`pgae`,
 * `sort`) would otherwise be ignored, and the client would read an answer to another question.
 */
function refuseUnknownQuery(route: CompiledRoute, query: Record<string, unknown>): void {
  const unknown = Object.keys(query).filter((key) => !route.queryNames.has(key));
  if (!unknown.length) return;
  const takes = route.queryNames.size ? `it takes ${[...route.queryNames].join(', ')}` : 'it takes none';
  const message = `not a query parameter of ${route.spec.method.toUpperCase()} ${route.spec.path.replace(/:(\w+)/g, '{$1}')}; ${takes}`;
  throw new BadRequestError(
    `unknown query parameter${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}: ${message}`,
    unknown.map((field) => ({ field, message })),
  );
}

/** A query variable's value under its name or one alias (`after` or `page`); undefined when not given (or empty). */
function queryValueOf(route: CompiledRoute, query: Record<string, unknown>, name: string): { key: string; value: unknown } | undefined {
  const given = [name, ...(route.spec.aliases?.[name] ?? [])].filter((key) => query[key] !== undefined && query[key] !== '');
  if (given.length > 1) {
    const message = `give one of ${given.join(', ')}: they are the same parameter`;
    throw new BadRequestError(message, given.map((field) => ({ field, message })));
  }
  return given.length ? { key: given[0], value: query[given[0]] } : undefined;
}

/** A 400 about one parameter, named in `details`. */
function fieldError(field: string, message: string): BadRequestError {
  return new BadRequestError(`${field}: ${message}`, [{ field, message }]);
}

function variablesOf(route: CompiledRoute, req: RestInput, upload?: RestUpload): Record<string, unknown> {
  const body: unknown = upload ? upload.fields : req.body;
  if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body))) {
    throw new BadRequestError('the request body must be a JSON object');
  }
  refuseUnknownQuery(route, req.query);
  const bodyNames = route.variables.filter((v) => v.place === 'body').flatMap((v) => [v.name, ...(route.spec.aliases?.[v.name] ?? [])]);
  const unknownFields = bodyNames.includes('input') ? [] : unknownBodyFields(bodyNames, body);
  if (unknownFields.length) throw new RestRequestError(unknownFields);
  const values: Record<string, unknown> = {};
  for (const { name, type, place } of route.variables) {
    if (place === 'path') {
      const param = req.params[name];
      if (param !== undefined) values[name] = fromQueryString(getNamedType(type), String(param), name);
    } else if (place === 'query') {
      const given = queryValueOf(route, req.query, name);
      if (!given) continue;
      const { key, value } = given;
      if (route.spec.repeated?.includes(name)) {
        const items = Array.isArray(value) ? value : [value];
        if (items.some((item) => typeof item !== 'string')) throw fieldError(key, 'must be given as name=value, once per value');
        values[name] = (items as string[]).filter((item) => item !== '');
        continue;
      }
      if (typeof value !== 'string') throw fieldError(key, 'must be given once, as a single value');
      // A list parameter is comma-separated: types=listing.created,offer.created
      const listed = isListType(isNonNullType(type) ? type.ofType : type);
      values[name] = listed
        ? value.split(',').map((item) => fromQueryString(getNamedType(type), item.trim(), key))
        : fromQueryString(getNamedType(type), value, key);
    } else if (name === 'input') {
      values.input = fromBody(type, body ?? {}, 'body');
    } else if (body && typeof body === 'object') {
      const source = [name, ...(route.spec.aliases?.[name] ?? [])].find((key) => key in body);
      if (source) values[name] = fromBody(type, (body as Record<string, unknown>)[source], source);
    }
  }
  return values;
}

/**
 * The error of a request refused before it ran: our own (a hostile value) as it is; GraphQL's coercion
 * errors as one 400 naming each body field or parameter in REST's words.
 */
function requestError(schema: GraphQLSchema, route: CompiledRoute, errors: readonly GraphQLError[], values: Record<string, unknown>, body: unknown): unknown {
  const problems = errors.some((e) => e instanceof AppError) ? [] : route.words.coercionProblems(values, body);
  return problems.length ? new RestRequestError(problems) : requestErrors(schema, errors);
}

/** Replaces each value found at `path` (through lists and objects) by `change(value)`, in place. */
function changeValues(value: unknown, path: string[], change: (value: unknown) => unknown, depth = 0): unknown {
  if (value === null || value === undefined) return value;
  if (Array.isArray(value)) return value.map((item) => changeValues(item, path, change, depth));
  if (depth === path.length) return change(value);
  const record = value as Record<string, unknown>;
  const key = path[depth];
  if (key in record) record[key] = changeValues(record[key], path, change, depth + 1);
  return value;
}

const strings = (change: (text: string) => string) => (value: unknown) => (typeof value === 'string' ? change(value) : value);

/** An enum name as REST spells it: its value. */
const enumValue = (type: GraphQLEnumType) => (name: string) => String(type.getValue(name)?.value ?? name.toLowerCase());
const exactTwins = (value: unknown) => (typeof value === 'object' ? withExactTwins(value as Record<string, unknown>) : value);

/** The REST door's routes: the express router, and the GET routes' answers for the lean door (lean.ts). */
export interface RestRoutes {
  router: express.Router;
  /** The GET route a path is for, with its parameters; undefined when none is (or express's matching may differ). */
  matchGet(path: string): { route: string; params: Record<string, string> } | undefined;
  /**
   * The answer of a GET route without an API key, errors included, as express's handler writes it (the
   * statement count, type and length are the writer's). `scope` counts its statements.
   */
  answerGet(route: string, params: Record<string, string>, query: Record<string, unknown>, scope: RequestScope): Promise<HttpAnswer>;
}

export function restRouter(
  schema: GraphQLSchema,
  ds: DataSource,
  inFlight: InFlight,
  largeQueries: QueryGate,
  contextOptions: ContextOptions,
  production: boolean,
  plans?: Planner,
): RestRoutes {
  const readRouter = readRouterOf(ds);
  const router = express.Router();
  const compiledGets = new Map<string, CompiledRoute>();
  const getMatchers: { path: string; match: ReturnType<typeof pathMatcher> }[] = [];

  /** Runs a route's operation; `data` is the REST body's value, or the errors to answer with. */
  async function execute(route: CompiledRoute, variableValues: Record<string, unknown>, key: string | undefined, scope: RequestScope) {
    const context = createContext(ds, scope, key, contextOptions);
    // A wrong or revoked key is a 401 on every request, reads too.
    if (key) await context.requireCaller();
    const result = await runOperation(schema, largeQueries, route.document, route.operation, variableValues, context, route.compiled, route.plan);
    if (result.errors?.length) return { errors: result.errors, requestError: !('data' in result) };
    const data = result.data as Record<string, unknown>;
    const root = data[route.rootKey];
    if (root instanceof RawJson) return { data, body: root.text };
    for (const { path, type } of route.enumPaths) changeValues(data, path, strings(enumValue(type)));
    for (const path of route.numberPaths) changeValues(data, path, strings(exactNumber));
    for (const path of route.twinPaths) changeValues(data, path, exactTwins);
    return { data, body: jsonWithExactNumbers(root) };
  }

  /** The error a route's failed operation is answered with: without `data` (a bad parameter) the request's own. */
  function errorOf(route: CompiledRoute, outcome: { errors: readonly GraphQLError[]; requestError: boolean }, values: Record<string, unknown>, body: unknown): unknown {
    return outcome.requestError ? requestError(schema, route, outcome.errors, values, body) : outcome.errors[0];
  }

  for (const spec of routes) {
    const route = compileRoute(schema, spec, plans);
    if (spec.method === 'get') {
      compiledGets.set(spec.path, route);
      getMatchers.push({ path: spec.path, match: pathMatcher(spec.path) });
    }
    router[spec.method](spec.path, (req: Request, res: Response) => inFlight.track(() => handle(req, res)));
    async function handle(req: Request, res: Response): Promise<void> {
      const scope = req.scope;
      scope.route = spec.path;
      let upload: RestUpload | undefined;
      try {
        let variableValues: Record<string, unknown>;
        if (spec.upload) {
          upload = await readRestUpload(req, spec.upload);
          variableValues = { ...variablesOf(route, req as RestInput, upload), [spec.upload]: upload.upload };
        } else {
          variableValues = variablesOf(route, req as RestInput);
        }
        const outcome = await execute(route, variableValues, keyFromHeaders(req.headers), scope);
        if (outcome.errors) {
          sendRestError(res, schema, errorOf(route, outcome, variableValues, upload ? upload.fields : req.body), outcome.requestError, route.words.text);
          return;
        }
        const headers: string[] = [];
        if (readRouter && spec.method !== 'get') headers.push('x-min-lsn', await readRouter.consistencyToken());
        if (spec.location) headers.push('location', spec.location(outcome.data[route.rootKey] as Record<string, unknown>));
        sendAnswer(res, { status: spec.created ? 201 : 200, headers, body: outcome.body }, scope);
      } catch (err) {
        sendRestError(res, schema, err, false, route.words.text);
      } finally {
        upload?.cleanup();
      }
    }
  }
  return {
    router,
    matchGet(path) {
      // Literal segments match exactly here: paths express would also take in another case or with a
      // trailing slash find no match, and go to express. The reference pages are served before the router.
      if (path === '/v1/openapi.json' || path.startsWith('/v1/docs')) return undefined;
      for (const { path: route, match } of getMatchers) {
        const params = match(path);
        if (params) return { route, params };
      }
      return undefined;
    },
    async answerGet(path, params, query, scope) {
      const route = compiledGets.get(path)!;
      scope.route = path;
      try {
        const variableValues = variablesOf(route, { params, query });
        const outcome = await execute(route, variableValues, undefined, scope);
        if (!outcome.errors) return { status: 200, headers: [], body: outcome.body };
        return restErrorAnswer(schema, errorOf(route, outcome, variableValues, undefined), outcome.requestError, scope.requestId, production, route.words.text);
      } catch (err) {
        return restErrorAnswer(schema, err, false, scope.requestId, production, route.words.text);
      }
    },
  };
}
