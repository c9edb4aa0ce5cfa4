import { OwnedAsset, saveOwnedAsset, saveSiblingAsset } from './factories/market';
import { startServer, TestServer } from './setup/server';

/**
 * A name sort defaults to A to Z (issue #40, docs/api.md "Lists"): a list of assets ordered by name
 * without a direction reads ascending, on both doors, root and nested, planned or not; every other order
 * keeps descending, and a direction given is kept.
 */
let server: TestServer;
let owned: OwnedAsset;
const NAMES = ['Beta', 'alpha', 'Delta', 'Gamma'];

beforeAll(async () => {
  server = await startServer();
  owned = await saveOwnedAsset(server);
  // One after the other: by created_at they come in NAMES' order.
  const assets = [owned];
  for (let i = 1; i < NAMES.length; i += 1) assets.push(await saveSiblingAsset(server, owned));
  await server.ds.query('UPDATE assets SET name = t.name FROM unnest($1::uuid[], $2::text[]) t(id, name) WHERE assets.id = t.id', [
    assets.map((a) => a.asset.id),
    NAMES,
  ]);
}, 120_000);
afterAll(() => server.close());

/** The same document three times: the first answer is the resolvers', the third the plan's when there is one. */
async function thrice(query: string, variables: Record<string, unknown>) {
  const answers = [];
  for (let i = 0; i < 3; i += 1) {
    const res = await fetch(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
    answers.push({ text: await res.text(), sql: Number(res.headers.get('x-sql-statements')) });
  }
  return { first: answers[0], third: answers[2] };
}

const names = (page: { result: { name: string }[] }) => page.result.map((a) => a.name);
/** The names in PostgreSQL's text order (the database's collation), ascending. */
const ascending = async () => (await server.ds.query('SELECT name FROM assets WHERE collection_id = $1 ORDER BY name, id', [owned.collection.id])).map((r: { name: string }) => r.name);

describe('assets sorted by name', () => {
  test('when assets are asked by name without a direction, then they come A to Z, the plan answering as the resolvers in one statement', async () => {
    const { first, third } = await thrice(ASSETS, { c: owned.collection.id, orderBy: 'NAME' });
    const page = JSON.parse(first.text).data.assets;

    expect(names(page)).toEqual((await ascending()).slice(0, 3));
    expect(JSON.parse(Buffer.from(page.cursor, 'base64url').toString()).slice(0, 2)).toEqual(['name', 'asc']);
    expect(third.text).toBe(first.text);
    expect(third.sql).toBe(1);
  });

  test('when the next page is asked with the cursor and still no direction, then it goes on A to Z', async () => {
    const first = await server.gql(ASSETS, { c: owned.collection.id, orderBy: 'NAME' });
    const next = await server.gql(ASSETS, { c: owned.collection.id, orderBy: 'NAME', page: first.body.data.assets.cursor });

    expect(next.body.errors).toBeUndefined();
    expect(names(next.body.data.assets)).toEqual((await ascending()).slice(3));
  });

  test("when a collection's assets are asked by name, then A to Z; DESC given, Z to A", async () => {
    const query = `query ($c: String!, $d: SortDirection) { collection(id: $c) { assets(orderBy: NAME, direction: $d) { result { name } } } }`;
    const { first, third } = await thrice(query, { c: owned.collection.id });
    const desc = await server.gql(query, { c: owned.collection.id, d: 'DESC' });

    expect(names(JSON.parse(first.text).data.collection.assets)).toEqual(await ascending());
    expect(third.text).toBe(first.text);
    expect(names(desc.body.data.collection.assets)).toEqual((await ascending()).reverse());
  });

  test("when an account's assets are asked by name, then A to Z", async () => {
    const res = await server.gql(`query ($a: Address!) { account(address: $a) { assets(orderBy: NAME) { result { name } } } }`, { a: owned.owner.address });

    expect(names(res.body.data.account.assets)).toEqual(await ascending());
  });

  test('when GET /v1/assets is asked with order_by=name alone, then A to Z; with direction=desc, Z to A; by another order, newest first', async () => {
    const byName = await server.rest('GET', `/v1/assets?collection_id=${owned.collection.id}&order_by=name`);
    const desc = await server.rest('GET', `/v1/assets?collection_id=${owned.collection.id}&order_by=name&direction=desc`);
    const byDate = await server.rest('GET', `/v1/assets?collection_id=${owned.collection.id}`);

    expect(names(byName.body)).toEqual(await ascending());
    expect(names(desc.body)).toEqual((await ascending()).reverse());
    expect(names(byDate.body)).toEqual([...NAMES].reverse());
  });

  test('when the OpenAPI description is read, then /v1/assets says direction has no fixed default and what absent means', async () => {
    const res = await server.rest('GET', '/v1/openapi.json');
    const direction = res.body.paths['/v1/assets'].get.parameters.find((p: { name: string }) => p.name === 'direction');

    expect(direction.schema.default).toBeUndefined();
    expect(direction.description).toMatch(/when absent, ASC \(A to Z\) for a sort by name, DESC for every other sort/);
  });
});

const ASSETS = /* GraphQL */ `
  query ($c: String, $orderBy: AssetOrderBy, $page: String) {
    assets(collectionId: $c, orderBy: $orderBy, page: $page, limit: 3) { cursor remaining result { name } }
  }`;
