import { HttpResult, randomAddress, startServer, TestServer } from '../setup/server';
import { openWindow, saveOwnedAsset } from '../factories/market';
import { saveAsset, saveCollection } from '../factories/marketplace';
import { buildCsv, csvRecords, importMultipart } from '../factories/csv';

/**
 * Issue #28, "REST in REST's words" and "Smaller": /v1 speaks of its documented snake_case fields and
 * JSON's types, one kind of mistake has one code, and the small things a newcomer meets first.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

/** GraphQL's vocabulary: its coercion phrases, its type names, and camelCase field names. */
const GRAPHQL_WORDS = /Expected type|cannot represent|Variable "\$|is not defined by type|Input\b|\b[a-z]+[A-Z][A-Za-z]*\b/;

function expectRestWords(res: HttpResult): void {
  const { message, details } = res.body.error;
  expect(message).not.toMatch(GRAPHQL_WORDS);
  for (const detail of details) {
    expect(detail.field ?? '').not.toMatch(GRAPHQL_WORDS);
    expect(detail.message).not.toMatch(GRAPHQL_WORDS);
  }
}

function expectError(res: HttpResult, status: number, code: string, field: string, message: string | RegExp): void {
  expect(res.status).toBe(status);
  expect(res.body.error.code).toBe(code);
  expect(res.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
  expect(res.body.error.message).toMatch(typeof message === 'string' ? new RegExp(escape(message)) : message);
  expectRestWords(res);
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const collectionBody = (overrides: Record<string, unknown> = {}) => ({ contract_address: randomAddress(), chain_id: '1', ...overrides });

async function collectionRows(address: string): Promise<number> {
  const [{ n }] = await server.ds.query('SELECT count(*)::int AS n FROM collections WHERE contract_address = $1', [address]);
  return n;
}

describe('a body or parameter of the wrong JSON type is named in snake_case, with the type it must have', () => {
  test('when start_price is true, then 400 "start_price: must be a decimal string or number, got boolean"', async () => {
    const owned = await saveOwnedAsset(server);
    const res = await server.rest('POST', '/v1/assets/listing', { asset_id: owned.asset.id, start_price: true }, owned.owner.key);
    expectError(res, 400, 'BAD_REQUEST', 'start_price', /^start_price: must be a decimal string or number.*, got boolean$/);
  });

  test('when name is a number, then 400 "name: must be a string, got number 5", and nothing is written', async () => {
    const { key } = await server.key();
    const body = collectionBody({ name: 5 });
    const res = await server.rest('POST', '/v1/collections', body, key);
    expectError(res, 400, 'BAD_REQUEST', 'name', 'name: must be a string, got number 5');
    expect(await collectionRows(body.contract_address)).toBe(0);
  });

  test('when an address is malformed, then the message says what an address is, without the GraphQL type', async () => {
    const { key } = await server.key();
    const res = await server.rest('POST', '/v1/collections', collectionBody({ contract_address: 'nope' }), key);
    expectError(res, 400, 'BAD_REQUEST', 'contract_address', 'contract_address: must be an address ("0x" followed by 40 hexadecimal digits), got string "nope"');
  });

  test('when a body field is unknown, then 400 "colour: unknown field" with details.field colour, and nothing is written', async () => {
    const { key } = await server.key();
    const body = collectionBody({ colour: 'red' });
    const res = await server.rest('POST', '/v1/collections', body, key);
    expectError(res, 400, 'BAD_REQUEST', 'colour', /^colour: unknown field; the fields are .*\bcontract_address\b/);
    expect(res.body.error.details).toEqual([{ field: 'colour', message: expect.stringContaining('total_supply') }]);
    expect(await collectionRows(body.contract_address)).toBe(0);
  });

  test('when a nested field has the wrong type, then it is named by its path: fees[0].basis_points', async () => {
    const { key } = await server.key();
    const res = await server.rest('POST', '/v1/collections', collectionBody({ fees: [{ address: randomAddress(), basis_points: 'x' }] }), key);
    expectError(res, 400, 'BAD_REQUEST', 'fees[0].basis_points', 'fees[0].basis_points: must be an integer, got string "x"');
  });

  test('when a nested field is unknown, then it is named by its path, as the client wrote it', async () => {
    const owned = await saveOwnedAsset(server);
    const res = await server.rest('POST', '/v1/assets/listing', { asset_id: owned.asset.id, start_price: 1, expiration_time: { Hours: 2 } }, owned.owner.key);
    expectError(res, 400, 'BAD_REQUEST', 'expiration_time.Hours', 'expiration_time.Hours: unknown field; the fields are at, duration_seconds');
  });

  test('when a date is not ISO-8601, then expiration_time.at says so', async () => {
    const owned = await saveOwnedAsset(server);
    const res = await server.rest('POST', '/v1/assets/listing', { asset_id: owned.asset.id, start_price: 1, expiration_time: { at: 'soon' } }, owned.owner.key);
    expectError(res, 400, 'BAD_REQUEST', 'expiration_time.at', /^expiration_time\.at: must be an ISO-8601 date-time string.*, got string "soon"$/);
  });

  test('when a query parameter is not an integer, then "limit: must be an integer"', async () => {
    const res = await server.rest('GET', '/v1/assets?limit=abc');
    expectError(res, 400, 'BAD_REQUEST', 'limit', 'limit: must be an integer, got string "abc"');
  });

  test('when several fields are wrong, then one 400 names each', async () => {
    const { key } = await server.key();
    const res = await server.rest('POST', '/v1/collections', collectionBody({ name: false, total_supply: 'many' }), key);
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['name', 'total_supply']);
    expectRestWords(res);
  });
});

describe('a rule that names other fields names them as each door spells them', () => {
  test('when end_time is before start_time, then REST says "end_time: must be after start_time", GraphQL "must be after startTime"', async () => {
    const owned = await saveOwnedAsset(server);
    const taker = await server.key();
    const { startTime, endTime } = openWindow();
    const rest = await server.rest('POST', '/v1/offers', { asset_id: owned.asset.id, price: 1, start_time: endTime, end_time: startTime }, taker.key);
    expectError(rest, 422, 'VALIDATION_FAILED', 'end_time', 'end_time: must be after start_time');

    const gql = await server.gql(
      `mutation ($input: CreateOfferInput!) { createOffer(input: $input) { id } }`,
      { input: { assetId: owned.asset.id, price: 1, startTime: endTime, endTime: startTime } },
      taker.key,
    );
    expect(gql.body.errors![0]).toMatchObject({ message: 'endTime: must be after startTime', extensions: { code: 'VALIDATION_FAILED' } });
  });

  test('when a fixed-price listing has two different prices, then REST says "give start_price alone, or accept_price"', async () => {
    const owned = await saveOwnedAsset(server);
    const rest = await server.rest('POST', '/v1/assets/listing', { asset_id: owned.asset.id, start_price: 2, accept_price: 3 }, owned.owner.key);
    expectError(rest, 422, 'VALIDATION_FAILED', 'accept_price', 'give start_price alone, or accept_price equal to it');

    const gql = await server.gql(
      `mutation ($input: CreateListingInput!) { createListing(input: $input) { id } }`,
      { input: { assetId: owned.asset.id, startPrice: 2, acceptPrice: 3 } },
      owned.owner.key,
    );
    expect(gql.body.errors![0].message).toContain('give startPrice alone, or acceptPrice equal to it');
  });

  test('when a dutch auction lacks its accept price and expiration, then both are named in snake_case', async () => {
    const owned = await saveOwnedAsset(server);
    const res = await server.rest('POST', '/v1/assets/listing', { asset_id: owned.asset.id, start_price: 2, order_type: 'dutch_auction' }, owned.owner.key);
    expectError(res, 422, 'VALIDATION_FAILED', 'expiration_time', 'accept_price: a dutch auction needs an accept_price below its start_price');
  });

  test('when expiration_time gives both at and duration_seconds, then it says duration_seconds', async () => {
    const owned = await saveOwnedAsset(server);
    const expiration_time = { at: new Date(Date.now() + 3600_000).toISOString(), duration_seconds: 60 };
    const res = await server.rest('POST', '/v1/assets/listing', { asset_id: owned.asset.id, start_price: 2, expiration_time }, owned.owner.key);
    expectError(res, 422, 'VALIDATION_FAILED', 'expiration_time', 'give exactly one of at (ISO-8601) or duration_seconds');
  });

  test('when an offer names neither asset nor collection, then REST names asset_id and collection_id', async () => {
    const taker = await server.key();
    const res = await server.rest('POST', '/v1/offers', { price: 1, start_time: openWindow().startTime, end_time: openWindow().endTime }, taker.key);
    expectError(res, 422, 'VALIDATION_FAILED', 'asset_id', 'asset_id: required: asset_id for an item offer, or collection_id for a collection or trait offer');
  });
});

describe('one kind of mistake, one code', () => {
  test('when a listing price is 0, -1, "-1" or "-0.5", then each is a 422 naming start_price, on both doors, and nothing is listed', async () => {
    const owned = await saveOwnedAsset(server);
    for (const price of [0, -1, '-1', '-0.5']) {
      const rest = await server.rest('POST', '/v1/assets/listing', { asset_id: owned.asset.id, start_price: price }, owned.owner.key);
      expectError(rest, 422, 'VALIDATION_FAILED', 'start_price', `start_price: must be greater than 0, got ${price}`);
      const gql = await server.gql(
        `mutation ($input: CreateListingInput!) { createListing(input: $input) { id } }`,
        { input: { assetId: owned.asset.id, startPrice: price } },
        owned.owner.key,
      );
      expect(gql.body.errors![0]).toMatchObject({ message: `startPrice: must be greater than 0, got ${price}`, extensions: { code: 'VALIDATION_FAILED' } });
    }
    const [{ n }] = await server.ds.query('SELECT count(*)::int AS n FROM listings WHERE asset_id = $1', [owned.asset.id]);
    expect(n).toBe(0);
  });

  test('when an event type is unknown, then it is a 400 on GET /v1/events, on POST /v1/webhooks and in GraphQL, and no webhook is written', async () => {
    const { key } = await server.key();
    const url = `https://hooks.example.com/${Math.random().toString(36).slice(2)}`;

    const feed = await server.rest('GET', '/v1/events?types=listing.moved');
    expectError(feed, 400, 'BAD_REQUEST', 'types', 'types: unknown listing.moved');
    const hook = await server.rest('POST', '/v1/webhooks', { url, event_types: ['listing.moved'] }, key);
    expectError(hook, 400, 'BAD_REQUEST', 'event_types', 'event_types: unknown listing.moved');
    const gql = await server.gql(
      `mutation ($input: CreateWebhookInput!) { createWebhook(input: $input) { id } }`,
      { input: { url, eventTypes: ['listing.moved'] } },
      key,
    );
    expect(gql.body.errors![0]).toMatchObject({ message: expect.stringContaining('eventTypes: unknown listing.moved'), extensions: { code: 'BAD_REQUEST' } });

    const [{ n }] = await server.ds.query('SELECT count(*)::int AS n FROM webhooks WHERE url = $1', [url]);
    expect(n).toBe(0);
  });
});

describe('the OpenAPI description speaks REST', () => {
  let doc: { paths: Record<string, Record<string, { summary: string; description: string }>> };
  beforeAll(async () => {
    doc = (await server.rest('GET', '/v1/openapi.json')).body;
  });

  test('when a route is described, then its summary says what it does in snake_case words, not in GraphQL\'s', () => {
    const summaries = Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ route: `${method} ${path}`, summary: op.summary })));
    expect(summaries.length).toBeGreaterThan(25);
    for (const { route, summary } of summaries) {
      expect({ route, summary }).toEqual({ route, summary: expect.not.stringMatching(GRAPHQL_WORDS) });
      expect({ route, summary }).toEqual({ route, summary: expect.not.stringMatching(/like GET|GET \/v1/) });
    }
    expect(new Set(summaries.map((s) => s.summary)).size).toBe(summaries.length);
    expect(doc.paths['/v1/collections'].get.summary).toMatch(/^List collections/);
  });

  test('when anything in it is read, then no REST client is asked for apollo-require-preflight', async () => {
    const text = JSON.stringify(doc);
    expect(text).not.toContain('preflight');
    expect(doc.paths['/v1/assets/import'].post.summary).toContain('multipart');
  });

  test('when a CSV is uploaded as multipart without apollo-require-preflight, then it is imported with a key, and refused without one', async () => {
    const owner = await server.key();
    const collection = await saveCollection(server, owner.key);
    const csv = buildCsv(csvRecords(owner.address, 2));

    const anonymous = await importMultipart(server, collection.id, csv);
    expect(anonymous.status).toBe(401);
    const imported = await importMultipart(server, collection.id, csv, owner.key);
    expect(imported.status).toBe(200);
    expect(imported.body.data.count).toBe(2);
    const [{ n }] = await server.ds.query('SELECT count(*)::int AS n FROM assets WHERE collection_id = $1', [collection.id]);
    expect(n).toBe(2);
  });
});

describe('slugs keep the letters of every script', () => {
  const suffix = () => String(Math.floor(Math.random() * 1e9));

  test('when a name has accented Latin letters, then they lose only their accents: "Café Crème" is cafe-creme', async () => {
    const { key } = await server.key();
    const tail = suffix();
    const res = await server.rest('POST', '/v1/collections', collectionBody({ name: `Café Crème ${tail}` }), key);
    expect(res.status).toBe(200);
    expect(res.body.slug).toBe(`cafe-creme-${tail}`);
  });

  test('when a name is Japanese, then its slug keeps its letters, and collection_id takes that slug', async () => {
    const owner = await server.key();
    const tail = suffix();
    const made = await server.rest('POST', '/v1/collections', collectionBody({ name: `日本語 コレクション ${tail}` }), owner.key);
    const other = await server.rest('POST', '/v1/collections', collectionBody({ name: `ガンダム ${tail}` }), owner.key);
    expect(made.body.slug).toBe(`日本語-コレクション-${tail}`);
    expect(other.body.slug).toBe(`ガンダム-${tail}`);
    const [row] = await server.ds.query('SELECT slug FROM collections WHERE id = $1', [made.body.id]);
    expect(row.slug).toBe(`日本語-コレクション-${tail}`);

    const collection = { id: made.body.id, contractAddress: made.body.contract_address, chainId: '1', owner: owner.address, name: made.body.name, slug: made.body.slug, totalSupply: null };
    const asset = await saveAsset(server, owner.key, collection, owner.address);
    const bySlug = await server.rest('GET', `/v1/assets?collection_id=${encodeURIComponent(made.body.slug)}`);
    expect(bySlug.status).toBe(200);
    expect(bySlug.body.result.map((a: { id: string }) => a.id)).toEqual([asset.id]);
    const none = await server.rest('GET', `/v1/assets?collection_id=${encodeURIComponent(`日本語-${tail}`)}`);
    expect(none.status).toBe(404);
  });
});

describe('POST and PUT /v1/collections answer as GET does', () => {
  test('when a collection is created or updated, then the answer is what GET /v1/collections/{address} shows: assets null unless include_assets', async () => {
    const { key } = await server.key();
    const created = await server.rest('POST', '/v1/collections', collectionBody({ name: 'Same Shape' }), key);
    expect(created.status).toBe(200);
    expect(created.body.assets).toBeNull();
    const path = `/v1/collections/${created.body.contract_address}?chain_id=1`;
    expect(created.body).toEqual((await server.rest('GET', path)).body);

    const updated = await server.rest('PUT', path, { name: 'Same Shape, renamed' }, key);
    expect(updated.status).toBe(200);
    expect(updated.body.assets).toBeNull();
    expect(updated.body).toEqual((await server.rest('GET', path)).body);
  });

  test('when include_assets=true is asked, then the answer holds the assets page, as GET with include_assets=true', async () => {
    const { key } = await server.key();
    const created = await server.rest('POST', '/v1/collections?include_assets=true', collectionBody(), key);
    expect(created.body.assets).toEqual({ cursor: null, remaining: 0, result: [] });
    const path = `/v1/collections/${created.body.contract_address}?chain_id=1&include_assets=true`;
    const updated = await server.rest('PUT', path, { name: 'With assets' }, key);
    expect(updated.body).toEqual((await server.rest('GET', path)).body);
  });

  test('when GraphQL creates a collection, then its assets are there by default, as the collection query shows them', async () => {
    const { key } = await server.key();
    const res = await server.gql(
      `mutation ($input: CreateCollectionInput!) { createCollection(input: $input) { assets { remaining } } }`,
      { input: { contractAddress: randomAddress(), chainId: '1' } },
      key,
    );
    expect(res.body.data.createCollection.assets).toEqual({ remaining: 0 });
  });
});

describe('GET /', () => {
  const LINKS = ['/graphql', '/graphql/explorer', '/v1/docs', '/v1/openapi.json', '/healthz', '/readyz', '/metrics'];

  test('when a browser asks, then it gets a small HTML page linking to every endpoint: GraphQL, its local explorer, the REST docs, the OpenAPI description, health, readiness and metrics', async () => {
    const res = await fetch(`${server.url}/`, { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('vary')).toMatch(/accept/i);
    const html = await res.text();
    expect([...html.matchAll(/href="([^"]+)"/g)].map((m) => m[1])).toEqual(LINKS);
  });

  test('when any other client asks, then it gets the same links as JSON, and each of them answers', async () => {
    const res = await fetch(`${server.url}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await res.json()) as { links: Record<string, { href: string; about: string }> };
    expect(Object.keys(body.links)).toEqual(['graphql', 'explorer', 'docs', 'openapi', 'health', 'ready', 'metrics']);
    expect(Object.values(body.links).map((l) => l.href)).toEqual(LINKS);
    for (const link of Object.values(body.links)) expect(link.about).not.toBe('');
    for (const href of LINKS) {
      const page = await fetch(`${server.url}${href}`, { headers: { accept: 'text/html' } });
      expect({ href, status: page.status }).toEqual({ href, status: 200 });
      await page.arrayBuffer();
    }
  });

  test('when metrics are off, then the page does not offer /metrics: the list is what the server serves', async () => {
    const quiet = await startServer({ metrics: false });
    try {
      const body = (await (await fetch(`${quiet.url}/`)).json()) as { links: Record<string, { href: string }> };
      expect(Object.values(body.links).map((l) => l.href)).toEqual(LINKS.filter((href) => href !== '/metrics'));
      expect((await fetch(`${quiet.url}/metrics`)).status).toBe(404);
    } finally {
      await quiet.close();
    }
  });
});

