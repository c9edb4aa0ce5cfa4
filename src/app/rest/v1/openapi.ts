import {
  ArgumentNode,
  FieldNode,
  GraphQLEnumType,
  GraphQLField,
  GraphQLInputType,
  GraphQLNamedType,
  GraphQLNonNull,
  GraphQLOutputType,
  GraphQLSchema,
  OperationDefinitionNode,
  SelectionSetNode,
  getNamedType,
  isCompositeType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  parse,
  typeFromAST,
  valueFromAST,
} from 'graphql';
import { camelToSnake } from '../../../common/names';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../../../common/pagination';
import { RouteSpec, variablePlaces } from './route-spec';
import { restNamesOf } from './words';

/** A JSON Schema (2020-12, as OpenAPI 3.1 uses it). */
type Schema = Record<string, unknown>;

const ADDRESS = { type: 'string', pattern: '^0x[0-9a-fA-F]{40}$', description: 'An EVM address, returned lower-case' };
const TOKEN_ID = { type: 'string', pattern: '^[0-9]+$', description: 'A decimal unsigned 256-bit integer' };
const DECIMAL = { type: 'string', pattern: '^-?[0-9]+(\\.[0-9]+)?$', description: 'An exact decimal' };

/** The JSON shape of a scalar on the way out; `name` is the response key (documented prices are numbers). */
function outputScalar(type: GraphQLNamedType, name: string): Schema {
  switch (type.name) {
    case 'String':
    case 'ID':
      return { type: 'string' };
    case 'Int':
      return { type: 'integer' };
    case 'Float':
    case 'Price':
      return { type: 'number' };
    case 'Boolean':
      return { type: 'boolean' };
    case 'Address':
      return ADDRESS;
    case 'TokenId':
      return TOKEN_ID;
    case 'Decimal':
      // See shapes.ts: a Decimal under a documented name is written as a JSON number of its own digits.
      return name.endsWith('_decimal') ? DECIMAL : { type: 'number', description: 'Written with the exact digits of its _decimal twin' };
    case 'DateTimeISO':
      return { type: 'string', format: 'date-time' };
    case 'JSONObject':
      return { type: 'object' };
    default:
      return {};
  }
}

/** The JSON shape of a scalar on the way in: REST takes what the GraphQL variable accepts. */
function inputScalar(type: GraphQLNamedType): Schema {
  switch (type.name) {
    case 'Price':
    case 'Decimal':
      return { oneOf: [{ type: 'number', exclusiveMinimum: 0 }, DECIMAL], description: 'A decimal amount; a string keeps every digit' };
    case 'Upload':
      return { type: 'string', format: 'binary' };
    default:
      return outputScalar(type, '');
  }
}

/** REST spells an enum by its value (`fixed_price`, `24h`); the router maps them both ways. */
function enumSchema(type: GraphQLEnumType): Schema {
  return { type: 'string', enum: type.getValues().map((v) => String(v.value)) };
}

function nullable(schema: Schema): Schema {
  return { anyOf: [schema, { type: 'null' }] };
}

/** A value that is there: a path parameter, a request body. */
const present = (type: GraphQLInputType): GraphQLInputType => (isNonNullType(type) ? type : new GraphQLNonNull(type));

function inputSchema(type: GraphQLInputType): Schema {
  const inner = isNonNullType(type) ? type.ofType : type;
  let schema: Schema;
  if (isListType(inner)) schema = { type: 'array', items: inputSchema(inner.ofType) };
  else if (isEnumType(inner)) schema = enumSchema(inner);
  else if (isInputObjectType(inner)) {
    const properties: Record<string, Schema> = {};
    const required: string[] = [];
    for (const field of Object.values(inner.getFields())) {
      const key = camelToSnake(field.name);
      properties[key] = { ...inputSchema(field.type), ...(field.description ? { description: field.description } : {}) };
      if (isNonNullType(field.type)) required.push(key);
    }
    schema = { type: 'object', properties, ...(required.length ? { required } : {}) };
    if (inner.description) schema.description = inner.description;
  } else schema = inputScalar(inner);
  return isNonNullType(type) ? schema : nullable(schema);
}

/** The JSON shape a selection produces: one property per response key, exactly those. */
function selectionSchema(schema: GraphQLSchema, parent: GraphQLNamedType, selectionSet: SelectionSetNode): Schema {
  const properties: Record<string, Schema> = {};
  const fields = isObjectType(parent) ? parent.getFields() : {};
  for (const selection of selectionSet.selections) {
    if (selection.kind !== 'Field') continue;
    const key = selection.alias?.value ?? selection.name.value;
    const field = fields[selection.name.value];
    if (!field) continue;
    properties[key] = fieldSchema(schema, field, selection, key);
  }
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false };
}

function fieldSchema(schema: GraphQLSchema, field: GraphQLField<unknown, unknown>, node: FieldNode, key: string): Schema {
  const shape = (type: GraphQLOutputType): Schema => {
    const inner = isNonNullType(type) ? type.ofType : type;
    let result: Schema;
    if (isListType(inner)) result = { type: 'array', items: shape(inner.ofType) };
    else if (isEnumType(inner)) result = enumSchema(inner);
    else if (isCompositeType(inner) && node.selectionSet) result = selectionSchema(schema, inner, node.selectionSet);
    else result = outputScalar(inner, key);
    return isNonNullType(type) ? result : nullable(result);
  };
  const result = shape(field.type);
  return field.description ? { ...result, description: field.description } : result;
}

/** Where a variable is passed to the root field: that argument's default is the variable's. */
function argumentDefaults(schema: GraphQLSchema, operation: OperationDefinitionNode, root: FieldNode): Map<string, unknown> {
  const rootType = operation.operation === 'mutation' ? schema.getMutationType() : schema.getQueryType();
  const field = rootType?.getFields()[root.name.value];
  const defaults = new Map<string, unknown>();
  for (const arg of root.arguments ?? ([] as readonly ArgumentNode[])) {
    const definition = field?.args.find((a) => a.name === arg.name.value);
    if (arg.value.kind !== 'Variable' || !definition || definition.defaultValue === undefined) continue;
    let value = definition.defaultValue;
    const named = getNamedType(definition.type);
    if (isEnumType(named)) value = String(value);
    defaults.set(arg.value.name.value, value);
  }
  return defaults;
}

/** The description of the root field's argument a variable is passed to (a path parameter's meaning). */
function argumentDescription(field: GraphQLField<unknown, unknown>, root: FieldNode, variable: string): string | undefined {
  const arg = root.arguments?.find((a) => a.value.kind === 'Variable' && a.value.name.value === variable);
  return (arg && field.args.find((a) => a.name === arg.name.value)?.description) ?? undefined;
}

const LIMITS: Record<string, Schema> = {
  limit: { minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT },
  assets_limit: { minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT },
  // No default of its own: absent, the sort's (SortKey.defaultDirection).
  direction: { description: 'asc or desc; when absent, asc (A to Z) for order_by=name, desc for every other order' },
};

/** Per status: its error codes and what they mean. */
const ERROR_CODES: Record<number, [string | string[], string]> = {
  400: ['BAD_REQUEST', 'A malformed body, a wrong type, an unknown enum value, a bad address, token id, limit or page, a query parameter the route does not take'],
  401: ['UNAUTHENTICATED', 'No API key, or one that is unknown or revoked'],
  403: ['FORBIDDEN', 'The key\'s account does not own what it acts on'],
  404: ['NOT_FOUND', 'No such resource (or collection_id)'],
  409: ['CONFLICT', 'A unique resource exists already, a race was lost (nothing was written), or an address names several chains'],
  413: ['PAYLOAD_TOO_LARGE', 'The body is over its limit'],
  415: ['UNSUPPORTED_MEDIA_TYPE', 'The body is not of an accepted content type'],
  422: ['VALIDATION_FAILED', 'A rule of the API is broken; details name each field'],
  429: ['RATE_LIMITED', 'Over the rate limit; see Retry-After'],
  500: ['INTERNAL', 'A fault of the server; quote the request id'],
  503: [['UNAVAILABLE', 'TIMEOUT'], 'The database cannot be reached now (UNAVAILABLE), or cancelled a statement that ran over its time (TIMEOUT); retry after Retry-After'],
};

/** A read answers 401 for a key that is wrong (a key is optional), 409 for an address on several chains, 422 for an unknown chain. */
const READ_STATUSES = [400, 401, 404, 409, 422, 429, 500, 503];
const WRITE_STATUSES = [400, 401, 403, 404, 409, 413, 415, 422, 429, 500, 503];

const ERROR_BODY: Schema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'details', 'request_id'],
      properties: {
        code: { type: 'string', enum: Object.values(ERROR_CODES).flatMap(([codes]) => codes) },
        message: { type: 'string' },
        details: {
          type: 'array',
          items: {
            type: 'object',
            required: ['message'],
            properties: {
              field: { type: 'string' },
              message: { type: 'string' },
              line: { type: 'integer' },
              index: { type: 'integer', description: "A bulk request's refused item: its place in the request's list, from 0" },
              code: { type: 'string', description: "A bulk request's refused item: its own error code" },
            },
          },
        },
        request_id: { type: 'string' },
      },
    },
  },
};

/** `/v1/assets/:token_address` -> `/v1/assets/{token_address}` */
export function openApiPath(path: string): string {
  return path.replace(/:(\w+)/g, '{$1}');
}

function operationOf(schema: GraphQLSchema, spec: RouteSpec): Schema {
  const document = parse(spec.operation);
  const operation = document.definitions[0] as OperationDefinitionNode;
  const root = operation.selectionSet.selections[0] as FieldNode;
  const rootType = operation.operation === 'mutation' ? schema.getMutationType()! : schema.getQueryType()!;
  const rootField = rootType.getFields()[root.name.value];
  const defaults = argumentDefaults(schema, operation, root);
  const places = variablePlaces(spec, (operation.variableDefinitions ?? []).map((d) => d.variable.name.value));
  const isWrite = spec.method !== 'get';
  const bodyFromVariables = (spec.method === 'post' || spec.method === 'put') && !places.has('input');

  const parameters: Schema[] = [];
  const bodyProperties: Record<string, Schema> = {};
  const bodyRequired: string[] = [];
  let body: Schema | undefined;
  for (const definition of operation.variableDefinitions ?? []) {
    const name = definition.variable.name.value;
    const type = typeFromAST(schema, definition.type as never) as GraphQLInputType;
    const given = definition.defaultValue ? valueFromAST(definition.defaultValue, type) : defaults.get(name);
    const valueSchema: Schema = { ...inputSchema(type), ...(LIMITS[name] ?? {}), ...(given !== undefined ? { default: given } : {}) };
    const aliases = spec.aliases?.[name] ?? [];
    if (name === 'input') {
      body = inputSchema(present(type));
    } else if (places.get(name) === 'path') {
      const described = argumentDescription(rootField, root, name);
      parameters.push({ name, in: 'path', required: true, schema: inputSchema(present(type)), ...(described ? { description: described } : {}) });
    } else if (places.get(name) === 'body') {
      for (const key of [name, ...aliases]) bodyProperties[key] = valueSchema;
      if (isNonNullType(type) && !aliases.length) bodyRequired.push(name);
    } else {
      // A list parameter is one comma-separated value (types=a,b), as the router reads it, unless the route repeats it (trait=a&trait=b).
      const listed = isListType(isNonNullType(type) ? type.ofType : type);
      const explode = spec.repeated?.includes(name) ?? false;
      const form = listed ? { style: 'form', explode } : {};
      const described = argumentDescription(rootField, root, name);
      parameters.push({ name, in: 'query', required: isNonNullType(type) && !aliases.length, schema: valueSchema, ...form, ...(described ? { description: described } : {}) });
      for (const alias of aliases) {
        parameters.push({ name: alias, in: 'query', required: false, schema: valueSchema, description: `The same as \`${name}\` (give one of them)`, ...form });
      }
    }
  }

  const requestBody = requestBodyOf(spec, body, bodyFromVariables ? { type: 'object', properties: bodyProperties, required: bodyRequired } : undefined);
  // The root field's description is GraphQL's account of the operation; the summary is REST's.
  const { description: _graphqlAccount, ...ok } = fieldSchema(schema, rootField, root, root.alias?.value ?? root.name.value);
  const responses: Record<string, Schema> = {
    [spec.created ? 201 : 200]: { description: spec.created ? 'Created' : 'OK', content: { 'application/json': { schema: ok } } },
  };
  for (const status of isWrite ? WRITE_STATUSES : READ_STATUSES) {
    responses[status] = { description: ERROR_CODES[status][1], content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
  }
  return {
    operationId: `${spec.method}${spec.path.replace(/\/:?(\w)/g, (_, c: string) => c.toUpperCase()).replace(/\W/g, '')}`,
    summary: spec.summary,
    description: `Runs the GraphQL ${operation.operation} \`${root.name.value}\` (the same resolvers as /graphql).`,
    tags: [spec.path.split('/')[2]],
    parameters,
    ...(requestBody ? { requestBody } : {}),
    responses,
    security: isWrite || spec.needsKey ? [{ accessToken: [] }, { bearer: [] }] : [{}, { accessToken: [] }, { bearer: [] }],
  };
}

function requestBodyOf(spec: RouteSpec, input: Schema | undefined, variables: Schema | undefined): Schema | undefined {
  const schema = input ?? variables;
  if (!schema) return undefined;
  if (spec.upload) {
    return {
      required: true,
      content: {
        'application/x-www-form-urlencoded': { schema: { ...schema, properties: { ...(schema.properties as object), file: { type: 'string', description: 'The CSV text' } } } },
        'multipart/form-data': { schema },
      },
    };
  }
  return { required: true, content: { 'application/json': { schema } } };
}

/** Every `description` under `value`, written by `change` (in place). */
function changeDescriptions(value: unknown, change: (text: string) => string): void {
  if (!value || typeof value !== 'object') return;
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    if (key === 'description' && typeof item === 'string') (value as Record<string, unknown>)[key] = change(item);
    else changeDescriptions(item, change);
  }
}

/** The OpenAPI 3.1 description of every /v1 route, made from the route table and the schema: one source. */
export function openApiDocument(schema: GraphQLSchema, specs: readonly RouteSpec[]): Schema {
  const paths: Record<string, Record<string, Schema>> = {};
  for (const spec of specs) {
    const path = openApiPath(spec.path);
    paths[path] ??= {};
    paths[path][spec.method] = operationOf(schema, spec);
  }
  // The schema's descriptions name its fields in GraphQL's words; REST clients read the snake_case names.
  changeDescriptions(paths, restNamesOf(schema));
  return {
    openapi: '3.1.0',
    info: {
      title: 'NFT marketplace gateway: /v1 REST',
      version: '1',
      description:
        'The documented REST interface. Every route runs a GraphQL operation against the schema served at /graphql. ' +
        'Reads need no key; writes need an API key. Prices are JSON numbers written with exact digits, each with an exact `_decimal` string twin.',
    },
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas: { Error: ERROR_BODY },
      securitySchemes: {
        accessToken: { type: 'apiKey', in: 'header', name: 'access-token' },
        bearer: { type: 'http', scheme: 'bearer' },
      },
    },
  };
}
