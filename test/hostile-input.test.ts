import { HttpResult, randomAddress, startServer, TestServer } from './setup/server';
import { saveCollection } from './factories/marketplace';
import { saveOwnedAsset } from './factories/market';
import { buildCsv, csvRecords, importFormUrlencoded, importMultipart } from './factories/csv';

let server: TestServer;
let key: string;
beforeAll(async () => {
  server = await startServer();
  ({ key } = await server.key());
});
afterAll(() => server.close());

const CREATE_COLLECTION = `mutation ($input: CreateCollectionInput!) { createCollection(input: $input) { id name } }`;

function nested(levels: number): unknown {
  let value: unknown = 'bottom';
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

async function viaRest(overrides: Record<string, unknown>) {
  return server.rest('POST', '/v1/collections', { contract_address: randomAddress(), chain_id: '1', ...overrides }, key);
}

async function viaGraphql(overrides: Record<string, unknown>) {
  return server.gql(CREATE_COLLECTION, { input: { contractAddress: randomAddress(), chainId: '1', ...overrides } }, key);
}

/** What is sent through REST (snake_case), through GraphQL, and the field the error names (REST spells it in snake_case). */
const HOSTILE: [string, Record<string, unknown>, Record<string, unknown>, string, string][] = [
  ['a NUL character in the name', { name: 'bad\u0000name' }, { name: 'bad\u0000name' }, 'name', 'name'],
  ['a lone high surrogate in the name', { name: 'x\ud800' }, { name: 'x\ud800' }, 'name', 'name'],
  ['a lone low surrogate in a URL', { image_url: 'https://a.example/\udc00' }, { imageUrl: 'https://a.example/\udc00' }, 'image_url', 'imageUrl'],
  ['a NUL character deep in the description JSON', { description: { en: { text: '\u0000' } } }, { description: { en: { text: '\u0000' } } }, 'description.en.text', 'description.en.text'],
  ['a description nested 40 levels deep', { description: nested(40) }, { description: nested(40) }, 'description', 'description'],
  ['10,000 fees', { fees: Array.from({ length: 10_000 }, () => ({ address: randomAddress(), basis_points: 1 })) }, { fees: Array.from({ length: 10_000 }, () => ({ address: randomAddress(), basisPoints: 1 })) }, 'fees', 'fees'],
  ['a name over 200 characters', { name: 'n'.repeat(201) }, { name: 'n'.repeat(201) }, 'name', 'name'],
];

function fieldsOf(details: { field: string }[]): string[] {
  return details.map((d) => d.field);
}

describe.each(HOSTILE)('when a collection is created with %s', (_what, restBody, gqlInput, restField, gqlField) => {
  test('through REST, then it is a 422 naming the field', async () => {
    const res = await viaRest(restBody);
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('VALIDATION_FAILED');
    expect(fieldsOf(res.body.error.details).some((f) => f.startsWith(restField))).toBe(true);
  });

  test('through GraphQL, then it is VALIDATION_FAILED naming the field', async () => {
    const res = await viaGraphql(gqlInput);
    expect(res.body.data?.createCollection ?? null).toBeNull();
    expect(res.body.errors![0].extensions.code).toBe('VALIDATION_FAILED');
    expect(fieldsOf(res.body.errors![0].extensions.details).some((f) => f.startsWith(gqlField))).toBe(true);
  });
});

test('when the JSON body holds 1e309 where an integer is meant, then it is a 4xx with a code', async () => {
  const body = `{"contract_address":"${randomAddress()}","chain_id":"1","total_supply":1e309}`;
  const res = await server.rest('POST', '/v1/collections', body, key);
  expect(res.status).toBe(422);
  expect(res.body.error.details[0].field).toBe('total_supply');
});

test('when total_supply is above 2^53, then it is a 4xx naming the field', async () => {
  const res = await viaRest({ total_supply: 2 ** 53 + 2 });
  expect([400, 422]).toContain(res.status);
  expect(JSON.stringify(res.body.error)).toContain('total');
});

test('when a listing price is negative or "NaN", then it is a 4xx naming the price', async () => {
  const owned = await saveOwnedAsset(server);
  for (const price of ['-1', 'NaN']) {
    const res = await server.gql(`mutation ($p: Price) { createListing(input: { assetId: "${owned.asset.id}", startPrice: $p }) { id } }`, { p: price }, owned.owner.key);
    expect(res.body.errors![0].extensions.code).toMatch(/BAD_REQUEST|VALIDATION_FAILED/);
    expect(res.body.errors![0].message).toMatch(/price/i);
  }
});

test('when a NUL character is written inline in a GraphQL document, then it is refused before any SQL', async () => {
  const res = await server.gql(`mutation { createCollection(input: { contractAddress: "${randomAddress()}", chainId: "1", name: "a\\u0000b" }) { id } }`, undefined, key);
  expect(res.body.errors![0].extensions.code).toBe('VALIDATION_FAILED');
  expect(res.body.errors![0].message).toContain('NUL');
  expect(res.sql).toBe(0);
});

test('when a NUL character is in a query parameter, then it is a 422, not a 500', async () => {
  const res = await server.rest('GET', `/v1/collections?chain_id=${encodeURIComponent('1\u0000')}`);
  expect(res.status).toBe(422);
});

test('when a hostile request was refused, then a plain collection is still created', async () => {
  await viaRest({ name: '\u0000' });
  const res = await viaRest({ name: 'Fine' });
  expect(res.status).toBe(200);
  expect(res.body.name).toBe('Fine');
});

describe('when a CSV import holds text PostgreSQL cannot store', () => {
  async function importWith(send: (s: TestServer, collectionId: string, csv: string, key?: string) => Promise<HttpResult>) {
    const owner = await server.key();
    const collection = await saveCollection(server, owner.key);
    // (A lone surrogate cannot reach us in a file: UTF-8 cannot encode one, and the decoder refuses CESU-8.)
    const records = csvRecords(owner.address, 3);
    records[1].name = 'nul\u0000name';
    records[2].metadata = JSON.stringify({ deep: { text: 'a\u0000b' } });
    const res = await send(server, collection.id, buildCsv(records), owner.key);
    const [{ count }] = await server.ds.query('SELECT count(*)::int AS count FROM assets WHERE collection_id = $1', [collection.id]);
    return { res, count };
  }

  test.each([
    ['as a multipart file', importMultipart],
    ['as form-urlencoded text', importFormUrlencoded],
  ])('%s, then it is a 422 listing each row by line and nothing is imported', async (_how, send) => {
    const { res, count } = await importWith(send);
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([
      expect.objectContaining({ line: 3, field: 'name' }),
      expect.objectContaining({ line: 4, field: 'metadata.deep.text' }),
    ]);
    expect(count).toBe(0);
  });
});
