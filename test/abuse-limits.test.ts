import { createHash } from 'node:crypto';
import { randomAddress, startServer, TestServer, toResult } from './setup/server';
import { CREATE_COLLECTION } from './factories/marketplace';

/**
 * Issue #27, "Cost, limits and keys": what an attacker got past the cost limit, the rate limit, the token
 * limit and the idempotency records, and what production told them of the schema. Each through HTTP.
 */

let server: TestServer;
let production: TestServer;
beforeAll(async () => {
  [server, production] = await Promise.all([startServer(), startServer({ production: true })]);
});
afterAll(() => Promise.all([server.close(), production.close()]));

describe('a limit out of range', () => {
  test('when an aliased negative limit sits beside a huge nested query, then the whole document is refused with a 400 naming it, and nothing runs', async () => {
    const res = await server.gql(NEGATIVE_BESIDE_HUGE);

    expect(res.status).toBe(400);
    expect(res.body.data ?? null).toBeNull();
    expect(res.body.errors?.[0].extensions.code).toBe('BAD_REQUEST');
    expect(res.body.errors?.[0].message).toBe('a.limit must be an integer from 1 to 100, got -10000');
    expect(res.body.errors?.[0].extensions.details).toEqual([{ field: 'a.limit', message: 'must be an integer from 1 to 100, got -10000' }]);
    expect(res.sql).toBe(0);
  });

  test('when the huge query comes alone, then it is refused by the cost limit, counting each list at its limit', async () => {
    const res = await server.gql(HUGE);

    expect(res.status).toBe(400);
    expect(res.body.errors?.[0].message).toMatch(/^operation may return about \d+ items; the limit is 50000/);
  });

  test('when a limit out of range is written inside a nested list, then the message names the list by its path', async () => {
    const res = await server.gql(`{ collections(limit: 1) { result { assets(limit: 0) { result { id } } } } }`);

    expect(res.status).toBe(400);
    expect(res.body.errors?.[0].extensions.details).toEqual([{ field: 'collections.result.assets.limit', message: 'must be an integer from 1 to 100, got 0' }]);
  });

  test('when a variable gives a negative limit beside another list, then the whole operation is refused before it runs', async () => {
    const res = await server.gql(NEGATIVE_VARIABLE_BESIDE_LIST, { n: -10000 });

    expect(res.status).toBe(400);
    expect(res.body.data ?? null).toBeNull();
    expect(res.body.errors).toHaveLength(1);
    expect(res.body.errors?.[0].extensions).toMatchObject({ code: 'BAD_REQUEST', details: [{ field: 'n', message: 'must be an integer from 1 to 100, got -10000' }] });
    expect(res.sql).toBe(0);
  });

  test('when a variable gives a limit over the maximum, or null for a list that needs one, then it is refused the same way', async () => {
    const over = await server.gql(`query ($n: Int!) { chains { id } assets(limit: $n) { result { id } } }`, { n: 101 });
    const nothing = await server.gql(`query ($n: Int) { chains { id } assets(limit: $n) { result { id } } }`, { n: null });

    expect([over.status, nothing.status]).toEqual([400, 400]);
    expect(over.body.errors?.[0].message).toBe('n must be an integer from 1 to 100, got 101');
    expect(nothing.body.errors?.[0].message).toBe('n must be an integer from 1 to 100, got null');
  });

  test('when the event feed is read with a limit up to its own maximum (1000), then it is answered; over it, refused with its range', async () => {
    const ok = await server.gql(`query ($n: Int!) { events(limit: $n) { cursor } }`, { n: 1000 });
    const over = await server.rest('GET', '/v1/events?limit=1001');

    expect(ok.status).toBe(200);
    expect(ok.body.errors).toBeUndefined();
    expect(over.status).toBe(400);
    expect(over.body.error).toMatchObject({ code: 'BAD_REQUEST', message: 'limit must be an integer from 1 to 1000, got 1001', details: [{ field: 'limit' }] });
  });

  test('when a REST list gets a limit out of range for its nested list, then it is a 400 naming the parameter', async () => {
    const res = await server.rest('GET', '/v1/collections?include_assets=true&assets_limit=-5');

    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'BAD_REQUEST', message: 'assets_limit must be an integer from 1 to 100, got -5', details: [{ field: 'assets_limit' }] });
  });
});

describe('a persisted query whose hash is not its text', () => {
  test('when the hash does not match the query, then it is a 400 BAD_REQUEST saying so, not INTERNAL', async () => {
    const query = '{ chains { id } }';
    const wrong = createHash('sha256').update(`${query} `).digest('hex');

    const { status, body } = await toResult(
      await fetch(`${server.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query, extensions: { persistedQuery: { version: 1, sha256Hash: wrong } } }),
      }),
    );

    expect(status).toBe(400);
    expect(body.errors?.[0].extensions.code).toBe('BAD_REQUEST');
    expect(body.errors?.[0].message).toContain('sha256Hash');
  });
});

describe('field suggestions in production', () => {
  /** Every "Did you mean" of an answer: message, details and anything else it carries. */
  const suggestions = (body: unknown) => JSON.stringify(body).match(/Did you mean/g) ?? [];

  test('when a GraphQL input field is misspelt, then development suggests the name and production says only what is wrong, in message and details', async () => {
    const { key } = await production.key();
    const variables = { input: { contractAddress: randomAddress(), chainId: '1', nam: 'x' } };
    const [dev, prod] = await Promise.all([server.gql(CREATE_COLLECTION, variables, key), production.gql(CREATE_COLLECTION, variables, key)]);

    expect(suggestions(dev.body)).not.toEqual([]);
    expect(prod.status).toBe(400);
    expect(prod.body.errors?.[0].extensions.code).toBe('BAD_REQUEST');
    expect(prod.body.errors?.[0].message).toContain('"nam"');
    expect(prod.body.errors?.[0].extensions.details).toEqual([expect.objectContaining({ field: 'input' })]);
    expect(suggestions(prod.body)).toEqual([]);
  });

  test('when a misspelt field or enum value is asked in production, then no answer suggests another', async () => {
    const answers = await Promise.all([
      production.gql('{ collections(limit: 1) { result { nme } } }'),
      production.gql('{ collections(limit: 1, orderBy: NAM) { result { name } } }'),
      production.gql('query ($d: SortDirection!) { collections(direction: $d) { result { name } } }', { d: 'ASCC' }),
      production.gql('{ colections { result { name } } }'),
    ]);

    for (const answer of answers) {
      expect(answer.status).toBe(400);
      expect(answer.body.errors?.[0].extensions.code).toBe('BAD_REQUEST');
      expect(suggestions(answer.body)).toEqual([]);
    }
  });

  test('when a REST body has an unknown field in production, then the 400 names it and suggests nothing, in message and details', async () => {
    const { key } = await production.key();
    const body = { contract_address: randomAddress(), chain_id: '1', nam: 'x' };
    const [dev, prod] = await Promise.all([server.rest('POST', '/v1/collections', body, key), production.rest('POST', '/v1/collections', body, key)]);

    expect(suggestions(dev.body)).not.toEqual([]);
    expect(prod.status).toBe(400);
    expect(prod.body.error.code).toBe('BAD_REQUEST');
    expect(prod.body.error.message).toContain('"nam"');
    expect(suggestions(prod.body)).toEqual([]);
  });
});

const HUGE_SELECTION = `collections(limit: 100) { result { assets(limit: 100) { result { history(limit: 100) { result { type } } } } } }`;
const HUGE = `{ ${HUGE_SELECTION} }`;
const NEGATIVE_BESIDE_HUGE = `{ a: assets(limit: -10000) { result { id } } ${HUGE_SELECTION} }`;
const NEGATIVE_VARIABLE_BESIDE_LIST = `query ($n: Int!) { a: assets(limit: $n) { result { id } } collections(limit: 100) { result { id } } }`;
