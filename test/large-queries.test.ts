import { startServer, TestServer } from './setup/server';
import { saveAsset, saveCollection } from './factories/marketplace';

/**
 * Queries estimated to return more than LARGE_QUERY_ITEMS items run at most LARGE_QUERY_SLOTS at a time
 * (here 2 slots over 50 items); the others wait their turn, and smaller queries never wait.
 */
let server: TestServer;
let owner: string;
beforeAll(async () => {
  server = await startServer({ largeQuerySlots: 2, largeQueryItems: 50 });
  const account = await server.key();
  owner = account.address;
  const collection = await saveCollection(server, account.key);
  for (let i = 0; i < 3; i += 1) await saveAsset(server, account.key, collection, owner);
});
afterAll(() => server.close());

beforeEach(() => {
  server.app.largeQueries.peak = 0;
});

const ASSETS = 'query ($owner: Address, $limit: Int) { assets(ownerId: $owner, limit: $limit) { result { id name tokenId } } }';

test('when many large queries come at once through both doors, then all are answered and at most 2 ran at a time', async () => {
  const responses = await Promise.all([
    ...Array.from({ length: 8 }, () => server.rest('GET', `/v1/assets?owner_id=${owner}&limit=20`)),
    ...Array.from({ length: 8 }, () => server.gql(ASSETS, { owner, limit: 40 })),
  ]);
  for (const res of responses) {
    expect(res.status).toBe(200);
    const assets = res.body.result ?? res.body.data.assets.result;
    expect(assets).toHaveLength(3);
  }
  expect(server.app.largeQueries.peak).toBe(2);
});

test('when queries are small, then none of them waits for a turn, however many come at once', async () => {
  const responses = await Promise.all([
    ...Array.from({ length: 8 }, () => server.gql(ASSETS, { owner, limit: 5 })),
    ...Array.from({ length: 8 }, () => server.rest('GET', '/v1/categories?limit=5')),
  ]);
  for (const res of responses) expect(res.status).toBe(200);
  expect(server.app.largeQueries.peak).toBe(0);
});

test('when the size comes from a variable, then its value decides: limit 5 is small, limit 40 is large', async () => {
  await server.gql(ASSETS, { owner, limit: 5 });
  expect(server.app.largeQueries.peak).toBe(0);
  await server.gql(ASSETS, { owner, limit: 40 });
  expect(server.app.largeQueries.peak).toBe(1);
});

test('when the size is written in the document, then each use counts alike, the first and the compiled ones: limit 40 is large, limit 5 small', async () => {
  const written = (limit: number) => `query ($owner: Address) { assets(ownerId: $owner, limit: ${limit}) { result { id name tokenId } } }`;
  for (let use = 1; use <= 3; use += 1) {
    server.app.largeQueries.peak = 0;
    const large = await server.gql(written(40), { owner });
    expect(large.body.data.assets.result).toHaveLength(3);
    expect(server.app.largeQueries.peak).toBe(1);
    server.app.largeQueries.peak = 0;
    const small = await server.gql(written(5), { owner });
    expect(small.body.data.assets.result).toHaveLength(3);
    expect(server.app.largeQueries.peak).toBe(0);
  }
});
