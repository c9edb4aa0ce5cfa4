import { startServer, TestServer } from './setup/server';
import { saveAsset, saveCollection } from './factories/marketplace';

/**
 * One path for every standard request (issue #26): whatever the client's spelling (Accept, extensions,
 * fragments, __typename, defaults, GET, Origin, an API key), a known query is answered the same way, with
 * the same body, and after its first uses on the fast road.
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

describe('variables with defaults', () => {
  test('when a query with a defaulted variable is sent without it again and again, then every answer is the first one', async () => {
    const { key, address } = await server.key();
    const collection = await saveCollection(server, key);
    await saveAsset(server, key, collection, address);
    const query = `query ($l: Int! = 3) { assets(limit: $l) { remaining result { __typename } } }`;
    const answers = [];
    for (let i = 0; i < 5; i += 1) answers.push(await post({ query }));
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.text).errors).toBeUndefined();
      expect(answer.text).toBe(answers[0].text);
    }
  });
});
