import { SEARCH_CANDIDATES } from '../src/common/name-search';
import { saveListing } from './factories/market';
import { CollectionRow, saveAsset, saveCollection } from './factories/marketplace';
import { startServer, TestServer } from './setup/server';

/**
 * Issue #31: search by name, on both doors and both databases: prefix, substring and fuzzy matches in any
 * script, ranked, with the lists' filters and cursors.
 */
let server: TestServer;
let owner: { key: string; address: string };
let sea: CollectionRow;
const ids: Record<string, string> = {};

const NAMES = ['Blue Whale', 'Whale Song', 'Killer whale', 'Whales', 'Whael', 'Dolphin', 'Whalé', 'Кибер Коты', '猫の家', '50% off', '500 club'];

beforeAll(async () => {
  server = await startServer();
  owner = await server.key();
  sea = await saveCollection(server, owner.key, { name: 'Search Sea' });
  for (const name of NAMES) ids[name] = (await saveAsset(server, owner.key, sea, owner.address, { name })).id;
});
afterAll(() => server.close());

const SEARCH_ASSETS = `query ($query: String!, $collectionId: String, $status: AssetStatus, $currency: String, $limit: Int = 20, $page: String) {
  searchAssets(query: $query, collectionId: $collectionId, status: $status, currency: $currency, limit: $limit, page: $page) { cursor remaining result { id name } }
}`;

async function namesFor(query: string, extra: Record<string, unknown> = {}): Promise<string[]> {
  const res = await server.gql(SEARCH_ASSETS, { query, collectionId: sea.id, ...extra });
  expect(res.body.errors).toBeUndefined();
  return res.body.data.searchAssets.result.map((a: { name: string }) => a.name);
}

test('when assets are searched by a word, then the name that starts with it comes first, then names holding it, then similar names, and nothing else', async () => {
  expect(await namesFor('whale')).toEqual(['Whales', 'Whale Song', 'Blue Whale', 'Killer whale', 'Whalé', 'Whael']);
  // Case is ignored, and spaces around the query too.
  expect(await namesFor('  WHALE ')).toEqual(await namesFor('whale'));
});

test('when the query has one or two characters, then it matches the names it starts', async () => {
  expect((await namesFor('wh')).sort()).toEqual(['Whael', 'Whale Song', 'Whales', 'Whalé']);
  expect(await namesFor('猫の')).toEqual(['猫の家']);
});

test('when the query is in another script, then it is matched and ranked the same way', async () => {
  expect(await namesFor('коты')).toEqual(['Кибер Коты']);
  expect(await namesFor('КИБЕР')).toEqual(['Кибер Коты']);
  expect(await namesFor('猫の家')).toEqual(['猫の家']);
});

test('when the query holds LIKE wildcards, then they stand for themselves', async () => {
  expect(await namesFor('50%')).toEqual(['50% off']);
  // `_` is no wildcard: 500 is not "50" and one character (50% off is similar enough to come last).
  expect(await namesFor('50_')).not.toContain('500 club');
});

test('when a search is paged with its cursor, then every match comes once, in rank order', async () => {
  const seen: string[] = [];
  let page: string | null = null;
  do {
    const res: { body: { errors?: unknown[]; data?: any } } = await server.gql(SEARCH_ASSETS, { query: 'whale', collectionId: sea.id, limit: 2, page });
    expect(res.body.errors).toBeUndefined();
    seen.push(...res.body.data.searchAssets.result.map((a: { name: string }) => a.name));
    page = res.body.data.searchAssets.cursor;
  } while (page);
  expect(seen).toEqual(await namesFor('whale'));
});

test('when a search has the list filters, then they apply: status, and collections by owner', async () => {
  await saveListing(server, owner.key, ids['Killer whale']);
  expect(await namesFor('whale', { status: 'LISTED' })).toEqual(['Killer whale']);

  const other = await server.key();
  await saveCollection(server, other.key, { name: 'Whale Watchers' });
  await saveCollection(server, other.key, { name: 'Deep Whales' });
  const res = await server.gql(`{ searchCollections(query: "whale", ownerAddress: "${other.address}") { remaining result { name } } }`);
  expect(res.body.data.searchCollections).toEqual({ remaining: 0, result: [{ name: 'Whale Watchers' }, { name: 'Deep Whales' }] });
});

test('when the query is empty, blank or too long, then it is BAD_REQUEST naming it, on both doors (REST: 400)', async () => {
  for (const query of ['', '   ', 'x'.repeat(101)]) {
    const res = await server.gql(SEARCH_ASSETS, { query });
    // An execution error: 200 under application/json, as GraphQL over HTTP has it.
    expect(res.body.data).toBeNull();
    expect(res.body.errors![0].extensions.code).toBe('BAD_REQUEST');
    expect(res.body.errors![0].extensions.details).toEqual([expect.objectContaining({ field: 'query' })]);
  }
  const rest = await server.rest('GET', '/v1/search/assets?query=');
  expect(rest.status).toBe(400);
  expect(rest.body.error.code).toBeDefined();
  expect((await server.rest('GET', '/v1/search/assets')).status).toBe(400);
});

test('when a query matches more names than a search ranks, then it ranks the first 1,000 that start with it, the equal name first', async () => {
  const crowd = await saveCollection(server, owner.key, { name: 'Search Crowd' });
  // Written straight to the database: 1,200 assets through the API would take minutes.
  await server.ds.query(
    `INSERT INTO assets (collection_id, chain_id, token_address, token_id, name, description, image_url, metadata, owner)
     SELECT $1, c.chain_id, c.contract_address, 100 + i, 'Crowd ' || i, 'one of many', 'https://example.com/a.png', '{}'::jsonb, c.owner
     FROM collections c CROSS JOIN generate_series(1, 1200) i WHERE c.id = $1`,
    [crowd.id],
  );
  // The equal name, created last, still ranks first.
  await saveAsset(server, owner.key, crowd, owner.address, { name: 'Crowd' });
  const res = await server.gql(SEARCH_ASSETS, { query: 'crowd', collectionId: crowd.id, limit: 3 });
  expect(res.body.errors).toBeUndefined();
  const page = res.body.data.searchAssets;
  expect(page.result[0].name).toBe('Crowd');
  // Then the most similar (the shortest) among the candidates.
  expect(page.result.slice(1).map((a: { name: string }) => a.name)).toEqual([expect.stringMatching(/^Crowd \d$/), expect.stringMatching(/^Crowd \d$/)]);
  expect(page.remaining).toBe(SEARCH_CANDIDATES - 3);
});

test('when REST searches, then it answers the documented shapes, ranked, with q as a short name for query', async () => {
  const assets = await server.rest('GET', `/v1/search/assets?q=whale&collection_id=${sea.id}&limit=3`);
  expect(assets.status).toBe(200);
  expect(assets.body.result.map((a: { name: string }) => a.name)).toEqual(['Whales', 'Whale Song', 'Blue Whale']);
  expect(assets.body.remaining).toBe(3);
  expect(assets.body.result[0]).toMatchObject({ token_address: sea.contractAddress, traits: expect.any(Array) });

  const collections = await server.rest('GET', `/v1/search/collections?query=search%20sea&include_assets=true&assets_limit=2`);
  expect(collections.status).toBe(200);
  expect(collections.body.result[0]).toMatchObject({ name: 'Search Sea', contract_address: sea.contractAddress });
  expect(collections.body.result[0].assets.result).toHaveLength(2);
});

test('when a listed asset is renamed, then a search among listed assets finds it by its new name, in its currency, and no longer by the old one', async () => {
  const reef = await saveCollection(server, owner.key, { name: 'Search Reef' });
  const among = (query: string, filter: Record<string, unknown>) => namesFor(query, { collectionId: reef.id, ...filter });
  const narwhal = await saveAsset(server, owner.key, reef, owner.address, { name: 'Narwhal' });
  await saveListing(server, owner.key, narwhal.id, { currency: 'WETH' });
  // Renamed before it is listed: its listing takes the name it has then.
  const orca = await saveAsset(server, owner.key, reef, owner.address, { name: 'Orca' });
  await server.ds.query(`UPDATE assets SET name = 'Orca Whale' WHERE id = $1`, [orca.id]);
  await saveListing(server, owner.key, orca.id);
  expect(await among('narwhal', { status: 'LISTED' })).toEqual(['Narwhal']);

  // As a metadata fetch renames an asset: one UPDATE of assets (modules/metadata/metadata.queue.ts, applyDocuments).
  await server.ds.query(`UPDATE assets SET name = 'Unicorn Whale' WHERE id = $1`, [narwhal.id]);
  expect(await among('unicorn', { status: 'LISTED' })).toEqual(['Unicorn Whale']);
  expect(await among('unicorn', { currency: 'WETH' })).toEqual(['Unicorn Whale']);
  expect(await among('unicorn', { currency: 'ETH' })).toEqual([]);
  expect(await among('narwhal', { status: 'LISTED' })).toEqual([]);
  expect(await among('orca', { currency: 'ETH' })).toEqual(['Orca Whale']);
  // One and two characters read the names that start with them alone.
  expect((await among('un', { status: 'LISTED' })).concat(await among('or', { status: 'LISTED' }))).toEqual(['Unicorn Whale', 'Orca Whale']);
});
