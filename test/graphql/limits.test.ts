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

  test('when a list of collections reads charts or price ranges, then each bucket counts: 20 charts of 2,000 hours are refused, 2 are not', async () => {
    const from = new Date(Date.now() - 1999 * 3600 * 1000).toISOString();
    const charts = (limit: number) => `{ collections(limit: ${limit}) { result { series(interval: HOUR, from: "${from}") { buckets { startTime volume sales } } } } }`;
    const refused = await server.gql(charts(20));
    expect(refused.status).toBe(400);
    expect(refused.body.errors![0].message).toMatch(/may return about \d+ items; the limit is 50000/);
    expect(refused.sql).toBe(0);
    const allowed = await server.gql(charts(2));
    expect(allowed.body.errors).toBeUndefined();

    // By a variable: counted at the most a chart can have (2,000 buckets) until the variables are known.
    const byVariable = await server.gql(
      'query ($from: DateTimeISO) { collections(limit: 20) { result { series(interval: HOUR, from: $from) { buckets { startTime volume } } } } }',
      { from },
    );
    expect(byVariable.status).toBe(400);
    expect(byVariable.body.errors![0].message).toMatch(/the limit is 50000/);

    const depth = (buckets: number) => `{ collections(limit: 100) { result { priceDepth(buckets: ${buckets}) { minPrice minPriceDecimal maxPrice maxPriceDecimal listings offers } } } }`;
    expect((await server.gql(depth(100))).body.errors![0].message).toMatch(/the limit is 50000/);
    expect((await server.gql(depth(10))).body.errors).toBeUndefined();
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
