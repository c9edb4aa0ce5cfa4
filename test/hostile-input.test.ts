import { HttpResult, randomAddress, startServer, TestServer } from './setup/server';
import { CollectionRow, saveAsset, saveCollection } from './factories/marketplace';
import { saveOwnedAsset } from './factories/market';
import { buildCsv, CSV_COLUMNS, csvRecord, csvRecords, importFormUrlencoded, importGraphql, importMultipart } from './factories/csv';

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

type Importer = (s: TestServer, collectionId: string, csv: string, key?: string) => Promise<HttpResult>;
const IMPORT_DOORS: [string, Importer][] = [
  ['form-urlencoded', importFormUrlencoded],
  ['multipart', importMultipart],
  ['a GraphQL upload', importGraphql],
];

/** The answer of either door as one shape: HTTP status (GraphQL by its code), code and details. */
function importAnswer(res: HttpResult): { status: number; code: string; details: { field: string; line?: number }[] } {
  if (res.body.errors) {
    const { code, details } = res.body.errors[0].extensions;
    return { status: code === 'BAD_REQUEST' ? 400 : res.status, code, details };
  }
  if (res.body.error) return { status: res.status, code: res.body.error.code, details: res.body.error.details };
  return { status: res.status, code: 'none', details: [] };
}

describe('when a CSV file breaks the quoting rules', () => {
  const header = CSV_COLUMNS.join(',');
  const row = (owner: string, name: string) => buildCsv([csvRecord(owner, { name: 'placeholder' })], { columns: CSV_COLUMNS }).split('\n')[1].replace('placeholder', name);
  // [what, the file for an owner, the line the answer names (undefined: any line)]
  const FILES: [string, (owner: string) => string, number | undefined][] = [
    ['a quote inside the only, unquoted field', () => 'a"b', 1],
    ['a quote inside an unquoted field of line 3', (o) => `${header}\n${row(o, 'fine')}\n${row(o, 'na"me')}\n`, 3],
    ['text after a closing quote on line 2', (o) => `${header}\n${row(o, '"na"me')}\n`, 2],
    ['a quote that is never closed', (o) => `${header}\n${row(o, '"open')}\n${row(o, 'next')}\n`, undefined],
  ];

  describe.each(IMPORT_DOORS)('sent as %s', (_door, send) => {
    test.each(FILES)('with %s, then it is a 400 naming the line and nothing is imported', async (_what, file, line) => {
      const owner = await server.key();
      const collection = await saveCollection(server, owner.key);
      const answer = importAnswer(await send(server, collection.id, file(owner.address), owner.key));
      expect(answer).toEqual({ status: 400, code: 'BAD_REQUEST', details: [expect.objectContaining({ field: 'file', line: line ?? expect.any(Number) })] });
      const [{ count }] = await server.ds.query('SELECT count(*)::int AS count FROM assets WHERE collection_id = $1', [collection.id]);
      expect(count).toBe(0);
    });
  });
});

describe('when a page cursor is forged', () => {
  const NO_ID = '00000000-0000-4000-8000-000000000000';
  const cursor = (parts: unknown[]) => Buffer.from(JSON.stringify(parts)).toString('base64url');
  let owner: { key: string; address: string };
  let collection: CollectionRow;
  let asset: { id: string; tokenId: string; tokenAddress: string };
  let webhookId: string;
  beforeAll(async () => {
    owner = await server.key();
    collection = await saveCollection(server, owner.key);
    asset = await saveAsset(server, owner.key, collection, owner.address);
    // Filtered to a collection with no events after it: no worker of another file has anything to post.
    const quiet = await saveCollection(server, owner.key);
    const webhook = await server.rest('POST', '/v1/webhooks', { url: 'http://[2606:4700::1111]/hook', collection_id: quiet.id }, owner.key);
    webhookId = webhook.body.id;
  });
  afterAll(() => server.rest('DELETE', `/v1/webhooks/${webhookId}`, undefined, owner.key));

  const fill = (text: string) =>
    text
      .replace('{collection}', collection.contractAddress)
      .replace('{token_address}', asset.tokenAddress)
      .replace('{token_id}', asset.tokenId)
      .replace('{asset}', asset.id)
      .replace('{webhook}', webhookId);

  /**
   * [what, REST path (null: GraphQL only), GraphQL selection that pages with $page, the cursor's order_by, the forged
   * value and id, a valid value and id for the same ordering]. The valid cursor is answered 200: the forged
   * one differs only where it is forged.
   */
  const CASES: [string, string | null, string, string, [unknown, unknown], [unknown, unknown]][] = [
    ['a NUL in a collection name', '/v1/collections?order_by=name', 'collections(orderBy: NAME, direction: DESC, page: $page) { cursor }', 'name', ['a\u0000b', NO_ID], ['zzz', NO_ID]],
    ['9999999999 for total_supply', '/v1/collections?order_by=total_supply', 'collections(orderBy: TOTAL_SUPPLY, page: $page) { cursor }', 'total_supply', [9999999999, NO_ID], [5, NO_ID]],
    ['"9999999999" for total_supply', '/v1/collections?order_by=total_supply', 'collections(orderBy: TOTAL_SUPPLY, page: $page) { cursor }', 'total_supply', ['9999999999', NO_ID], ['5', NO_ID]],
    ['year 0000 for created_at', '/v1/collections?order_by=created_at', 'collections(orderBy: CREATED_AT, page: $page) { cursor }', 'created_at', ['0000-01-01T00:00:00.000Z', NO_ID], ['2020-01-01T00:00:00.000Z', NO_ID]],
    ['month 00 for created_at', '/v1/collections?order_by=created_at', 'collections(orderBy: CREATED_AT, page: $page) { cursor }', 'created_at', ['0001-00-00T00:00:00.000Z', NO_ID], ['0001-01-01T00:00:00.000Z', NO_ID]],
    ['30 February for created_at', '/v1/collections', 'collections(page: $page) { cursor }', 'created_at', ['2024-02-30T00:00:00.000Z', NO_ID], ['2024-02-29T00:00:00.000Z', NO_ID]],
    ['a number for a collection name', '/v1/collections?order_by=name', 'collections(orderBy: NAME, direction: DESC, page: $page) { cursor }', 'name', [12, NO_ID], ['12', NO_ID]],
    ['an id that is no UUID', '/v1/collections?order_by=name', 'collections(orderBy: NAME, direction: DESC, page: $page) { cursor }', 'name', ['a', 'a\u0000'], ['a', NO_ID]],
    ['a NUL in an asset name', '/v1/assets?order_by=name', 'assets(orderBy: NAME, direction: DESC, page: $page) { cursor }', 'name', ['\u0000', NO_ID], ['a', NO_ID]],
    ['30 February for updated_at', '/v1/assets?order_by=updated_at', 'assets(orderBy: UPDATED_AT, page: $page) { cursor }', 'updated_at', ['2023-02-30T10:00:00.000Z', NO_ID], ['2023-02-28T10:00:00.000Z', NO_ID]],
    ['a lone surrogate in an asset name', '/v1/assets?order_by=name', 'assets(orderBy: NAME, direction: DESC, page: $page) { cursor }', 'name', ['a\ud800', NO_ID], ['a', NO_ID]],
    ['a NUL in a collection\'s asset name', null, 'collection(address: "{collection}") { assets(orderBy: NAME, direction: DESC, page: $page) { cursor } }', 'name', ['\u0000', NO_ID], ['a', NO_ID]],
    ['a NUL in a category cursor', '/v1/categories', 'categories(page: $page, direction: DESC) { cursor }', 'name', ['a', 'a\u0000b'], ['a', 'a']],
    ['a NUL in a category name', '/v1/categories', 'categories(page: $page, direction: DESC) { cursor }', 'name', ['a\u0000b', 'a'], ['a', 'a']],
    ['a NUL in a tag cursor', '/v1/tags', 'tags(page: $page, direction: DESC) { cursor }', 'name', ['a', '\u0000'], ['a', 'a']],
    ['year 0000 for an offer end_time', '/v1/offers?order_by=end_time', 'offers(orderBy: END_TIME, page: $page) { cursor }', 'end_time', ['0000-12-31T00:00:00.000Z', NO_ID], ['2020-12-31T00:00:00.000Z', NO_ID]],
    ['31 April for an offer created_at', '/v1/offers', 'offers(page: $page) { cursor }', 'created_at', ['2025-04-31T00:00:00.000Z', NO_ID], ['2025-04-30T00:00:00.000Z', NO_ID]],
    ['text for an offer price', '/v1/offers?order_by=price', 'offers(orderBy: PRICE, page: $page) { cursor }', 'price', ['a\u0000', NO_ID], ['1.5', NO_ID]],
    ['year 0000 for an order created_at', '/v1/orders', 'orders(page: $page) { cursor }', 'created_at', ['0000-01-01T00:00:00.000Z', NO_ID], ['2020-01-01T00:00:00.000Z', NO_ID]],
    ['9999999999 for total_holders', '/v1/statistics?order_by=total_holders', 'statistics(orderBy: TOTAL_HOLDERS, page: $page) { cursor }', 'total_holders', [9999999999, NO_ID], [3, NO_ID]],
    ['-9999999999 for total_transactions', '/v1/statistics?order_by=total_transactions', 'statistics(orderBy: TOTAL_TRANSACTIONS, page: $page) { cursor }', 'total_transactions', ['-9999999999', NO_ID], ['3', NO_ID]],
    ['30 February for a webhook', '/v1/webhooks', 'webhooks(page: $page) { cursor }', 'created_at', ['2024-02-30T00:00:00.000Z', NO_ID], ['2024-02-29T00:00:00.000Z', NO_ID]],
    ['year 0000 for a webhook delivery', '/v1/webhooks/{webhook}/deliveries', 'webhookDeliveries(webhookId: "{webhook}", page: $page) { cursor }', 'created_at', ['0000-01-01T00:00:00.000Z', NO_ID], ['2020-01-01T00:00:00.000Z', NO_ID]],
    ['a NUL in an asset history position', '/v1/assets/{token_address}/{token_id}/history', 'assetHistory(tokenAddress: "{token_address}", tokenId: "{token_id}", page: $page) { cursor }', 'position', ['1', '1\u0000'], ['1', '1']],
    ['a NUL in an asset\'s history', null, 'assetById(id: "{asset}") { history(page: $page) { cursor } }', 'position', ['1', '\u0000'], ['1', '1']],
  ];

  /** The REST answer and the GraphQL answer to one cursor. */
  async function ask(path: string | null, selection: string, page: string) {
    const gql = await server.gql(`query ($page: String) { ${fill(selection)} }`, { page }, owner.key);
    const rest = path === null ? null : await server.rest('GET', `${fill(path)}${path.includes('?') ? '&' : '?'}direction=desc&page=${page}`, undefined, owner.key);
    return { gql, rest };
  }

  test.each(CASES)('with %s, then both doors answer 400 on page, and the valid twin 200', async (_what, path, selection, orderBy, forged, valid) => {
    const bad = await ask(path, selection, cursor([orderBy, 'desc', ...forged]));
    expect(bad.gql.body.errors?.[0]?.extensions).toEqual(expect.objectContaining({ code: 'BAD_REQUEST', details: [expect.objectContaining({ field: 'page' })] }));
    if (bad.rest) {
      expect(bad.rest.status).toBe(400);
      expect(bad.rest.body.error).toEqual(expect.objectContaining({ code: 'BAD_REQUEST', details: [expect.objectContaining({ field: 'page', message: 'unknown cursor' })] }));
    }
    const good = await ask(path, selection, cursor([orderBy, 'desc', ...valid]));
    expect(good.gql.body.errors).toBeUndefined();
    if (good.rest) expect(good.rest.status).toBe(200);
  });
});

describe('when a collection update sends "status": null', () => {
  const UPDATE = `mutation ($address: Address!, $input: UpdateCollectionInput!) { updateCollection(address: $address, input: $input) { status } }`;

  test.each([
    ['its owner', false],
    ['an admin', true],
  ])('from %s, then both doors answer 422 on status and the status stays', async (_who, admin) => {
    const owner = await server.key();
    const collection = await saveCollection(server, owner.key);
    const caller = admin ? (await server.key({ admin: true })).key : owner.key;
    const rest = await server.rest('PUT', `/v1/collections/${collection.contractAddress}`, { status: null, description: 'x' }, caller);
    expect(rest.status).toBe(422);
    expect(rest.body.error.details).toEqual([expect.objectContaining({ field: 'status' })]);
    const gql = await server.gql(UPDATE, { address: collection.contractAddress, input: { status: null } }, caller);
    expect(gql.body.errors![0].extensions).toEqual(expect.objectContaining({ code: 'VALIDATION_FAILED', details: [expect.objectContaining({ field: 'status' })] }));
    const [row] = await server.ds.query('SELECT status, description FROM collections WHERE id = $1', [collection.id]);
    expect(row).toEqual({ status: 'unverified', description: null });
  });

  test('when its owner sends a status, then it is still a 403', async () => {
    const owner = await server.key();
    const collection = await saveCollection(server, owner.key);
    const res = await server.rest('PUT', `/v1/collections/${collection.contractAddress}`, { status: 'verified' }, owner.key);
    expect(res.status).toBe(403);
  });
});

describe('when a body holds a "__proto__" key', () => {
  const bodyWith = (proto: string) => `{"contract_address":"${randomAddress()}","chain_id":"1","__proto__":${proto}}`;

  test.each([
    ['a NUL in a name under it', '{"name":"a\\u0000b"}'],
    ['a plain name under it', '{"name":"From the prototype"}'],
    ['a total_supply beyond a 32-bit integer under it', '{"total_supply":9999999999}'],
  ])('with %s, then REST answers a coded 4xx and creates nothing', async (_what, proto) => {
    const owner = await server.key();
    const res = await server.rest('POST', '/v1/collections', bodyWith(proto), owner.key);
    expect([400, 422]).toContain(res.status);
    expect(['BAD_REQUEST', 'VALIDATION_FAILED']).toContain(res.body.error.code);
    expect(await server.ds.query('SELECT id FROM collections WHERE owner = $1', [owner.address])).toEqual([]);
  });

  test('with a NUL in a name under it, then GraphQL answers a coded error and creates nothing', async () => {
    const owner = await server.key();
    const res = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'access-token': owner.key },
      body: `{"query":${JSON.stringify(CREATE_COLLECTION)},"variables":{"input":${bodyWith('{"name":"a\\u0000b"}').replace('contract_address', 'contractAddress').replace('chain_id', 'chainId')}}}`,
    });
    const body = (await res.json()) as { errors: { extensions: { code: string } }[] };
    expect(['BAD_REQUEST', 'VALIDATION_FAILED']).toContain(body.errors[0].extensions.code);
    expect(await server.ds.query('SELECT id FROM collections WHERE owner = $1', [owner.address])).toEqual([]);
  });
});
