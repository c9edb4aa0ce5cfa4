import { buildClientSchema, buildSchema, getIntrospectionQuery, GraphQLSchema } from 'graphql';
import { readFileSync } from 'node:fs';
import { startServer, TestServer } from '../setup/server';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

describe('GraphQL operation limits', () => {
  test('when an operation nests deeper than 10 levels, then it is refused with a 400 naming the limit', async () => {
    const res = await server.gql(TOO_DEEP);
    expect(res.status).toBe(400);
    expect(res.body.errors![0].extensions.code).toBe('BAD_REQUEST');
    expect(res.body.errors![0].message).toMatch(/nested 1[1-9] levels deep; the limit is 10/);
    expect(res.body.data).toBeUndefined();
  });

  test('when an operation may return more than 50,000 items, then it is refused with a 400 naming the limit', async () => {
    const res = await server.gql(TOO_COSTLY);
    expect(res.status).toBe(400);
    expect(res.body.errors![0].extensions.code).toBe('BAD_REQUEST');
    expect(res.body.errors![0].message).toMatch(/may return about \d+ items; the limit is 50000/);
  });

  test('when the cost comes through a fragment, then it is counted the same', async () => {
    const res = await server.gql(TOO_COSTLY_BY_FRAGMENT);
    expect(res.status).toBe(400);
    expect(res.body.errors![0].message).toMatch(/the limit is 50000/);
  });

  test('when Apollo Sandbox (or any client) sends the full introspection query, then it gets the schema, every time', async () => {
    // 15 levels deep: introspection reads the schema, not the data, and is not limited.
    for (let i = 0; i < 3; i += 1) {
      const res = await server.gql(getIntrospectionQuery());
      expect(res.status).toBe(200);
      expect(res.body.errors).toBeUndefined();
      expect(outline(buildClientSchema(res.body.data as never))).toEqual(outline(buildSchema(readFileSync('schema.graphql', 'utf8'))));
    }
  });

  test('when introspection sits under a data field that is too deep, then the data field still counts', async () => {
    const res = await server.gql(`{ __typename ${TOO_DEEP.trim().slice(1)}`);
    expect(res.status).toBe(400);
    expect(res.body.errors![0].message).toMatch(/levels deep/);
  });

  test('when a page of collections asks for a page of assets each, then it is within the limits', async () => {
    const res = await server.gql(COLLECTIONS_WITH_ASSETS);
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
    expect(Array.isArray(res.body.data.collections.result)).toBe(true);
  });
});

/** Every type of a schema, with the names of its fields (for object, input and interface types). */
function outline(schema: GraphQLSchema): Record<string, string[]> {
  const types: Record<string, string[]> = {};
  for (const [name, type] of Object.entries(schema.getTypeMap())) {
    if (name.startsWith('__')) continue;
    types[name] = 'getFields' in type ? Object.keys(type.getFields()).sort() : [];
  }
  return types;
}

const COLLECTIONS_WITH_ASSETS = /* GraphQL */ `
  { collections(limit: 20) { result { name assets(limit: 20) { result { tokenId collection { name } chain { name } } } } } }`;

const TOO_COSTLY = /* GraphQL */ `
  { collections(limit: 100) { result { assets(limit: 100) { result { collection { assets(limit: 100) { result { name } } } } } } } }`;

const TOO_COSTLY_BY_FRAGMENT = /* GraphQL */ `
  { collections(limit: 100) { result { ...Deep } } }
  fragment Deep on Collection { assets(limit: 100) { result { collection { assets(limit: 100) { result { name } } } } } }`;

const TOO_DEEP = /* GraphQL */ `
  { assets(limit: 1) { result { collection { assets(limit: 1) { result { collection { assets(limit: 1) { result {
      collection { assets(limit: 1) { result { name } } } } } } } } } } } }`;
