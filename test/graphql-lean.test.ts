import { startServer, TestServer } from './setup/server';
import { saveAsset, saveCollection } from './factories/marketplace';

/**
 * A query document that Apollo has validated and graphql-jit compiled runs without Apollo's pipeline
 * from its third use on (src/app/graphql/lean.ts). The client must not be able to tell: these tests send
 * the same document many times and hold every answer to the first ones.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

async function post(body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

describe('compiled queries on the lean path', () => {
  test('when the same query is sent again and again, then every answer has the same body, status and headers', async () => {
    const { key, address } = await server.key();
    const collection = await saveCollection(server, key);
    await saveAsset(server, key, collection, address);
    const body = {
      query: `query Lean($a: Address!, $t: TokenId!) { asset(tokenAddress: $a, tokenId: $t) { name owner collection { name } } }`,
      variables: { a: collection.contractAddress, t: '1' },
      operationName: 'Lean',
    };
    const answers = [];
    for (let i = 0; i < 5; i += 1) answers.push(await post(body));
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.text).toBe(answers[0].text);
      expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(answer.headers.get('x-sql-statements')).toBe('1');
      expect(answer.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect(JSON.parse(answers[0].text).data.asset.owner).toBe(address);
    expect(answers[0].text.endsWith('}\n')).toBe(true);
  });

  test('when a known query gets variables that fail, then the error is the one Apollo gives, with the request id, and counts only its own statements', async () => {
    const query = `query ($limit: Int!) { collections(limit: $limit) { result { name } } }`;
    for (let i = 0; i < 3; i += 1) expect((await post({ query, variables: { limit: 1 } })).status).toBe(200);
    const res = await post({ query, variables: { limit: 0 } }, { 'x-request-id': 'lean-test-request-0001' });
    const body = JSON.parse(res.text);
    expect(body.errors[0].extensions).toMatchObject({ code: 'BAD_REQUEST', requestId: 'lean-test-request-0001' });
    expect(body.data).toBeNull();
    expect(res.headers.get('x-sql-statements')).toBe('0');
    const wrongType = JSON.parse((await post({ query, variables: { limit: 'many' } })).text);
    expect(wrongType.errors[0].extensions.code).toBe('BAD_REQUEST');
    expect(wrongType.data).toBeUndefined();
  });

  test('when a known query comes with an unknown API key, then it is refused as before (401)', async () => {
    const query = `{ collections(limit: 1) { result { name } } }`;
    for (let i = 0; i < 3; i += 1) expect((await post({ query })).status).toBe(200);
    const res = await post({ query }, { 'access-token': 'not-a-key-at-all' });
    expect(res.status).toBe(401);
    expect(JSON.parse(res.text).errors[0].extensions.code).toBe('UNAUTHENTICATED');
  });

  test('when a known query asks for application/graphql-response+json, then it gets that media type', async () => {
    const query = `{ collections(limit: 2) { result { name } } }`;
    for (let i = 0; i < 3; i += 1) expect((await post({ query })).status).toBe(200);
    const res = await post({ query }, { accept: 'application/graphql-response+json' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/graphql-response+json');
  });
});
