import { createHash } from 'node:crypto';
import { startServer, TestServer } from './setup/server';
import { clock } from '../src/common/clock';
import { saveAsset, saveCollection } from './factories/marketplace';
import { saveListing, saveOwnedAsset, saveSiblingAsset } from './factories/market';

/**
 * One path for every standard request (issue #26): whatever the client's spelling (Accept, extensions,
 * fragments, __typename, defaults, GET, Origin, an API key), a known query is answered the same way, with
 * the same body, and after its first uses on the fast road.
 */
let server: TestServer;
/** The same app without SQL plans: the resolvers' answer to every question. */
let resolvers: TestServer;
beforeAll(async () => {
  server = await startServer();
  resolvers = await startServer({ sqlPlans: false });
});
afterAll(() => Promise.all([server.close(), resolvers.close()]));

async function post(body: unknown, headers: Record<string, string> = {}, to: TestServer = server) {
  const res = await fetch(`${to.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, headers: res.headers, text: withoutRequestIds(await res.text()) };
}

/** A body without its errors' request ids (new per request). */
const withoutRequestIds = (text: string) => text.replace(/"requestId":"[^"]*"/g, '"requestId":"-"');

/**
 * Sends `body` five times to the server, and once to the resolvers' server: every answer must be the
 * resolvers' own, byte for byte. Returns the last answer (by then on the fast road).
 */
async function sameAsResolvers(body: unknown, headers: Record<string, string> = {}) {
  // A Dutch auction's price moves with time: both answers at one moment.
  clock.set(new Date());
  try {
    const expected = await post(body, headers, resolvers);
    let last = expected;
    for (let i = 0; i < 5; i += 1) {
      last = await post(body, headers);
      expect({ status: last.status, text: last.text }).toEqual({ status: expected.status, text: expected.text });
    }
    return last;
  } finally {
    clock.reset();
  }
}

/** A collection of three assets, two of them listed (one a Dutch auction), as a frontend's page shows it. */
async function listedCollection() {
  const owned = await saveOwnedAsset(server, [{ address: '0x' + '1'.repeat(40), basisPoints: 250 }]);
  const second = await saveSiblingAsset(server, owned);
  await saveSiblingAsset(server, owned);
  await saveListing(server, owned.owner.key, owned.asset.id, { startPrice: '1.5' });
  await saveListing(server, owned.owner.key, second.asset.id, {
    orderType: 'DUTCH_AUCTION',
    startPrice: 3,
    acceptPrice: 1,
    expirationTime: { durationSeconds: 3600 },
  });
  return owned;
}

/** The collection page of an Apollo Client app: named fragments, `__typename` in every selection, ids. */
const COLLECTION_PAGE = `query CollectionPage($owner: Address!, $limit: Int = 24) {
  collections(ownerAddress: $owner) {
    __typename
    result { __typename ...CollectionHeader assets(limit: $limit, orderBy: TOKEN_ID, direction: ASC) { __typename result { __typename ...AssetCard } remaining } }
  }
}
fragment CollectionHeader on Collection { __typename id name slug chain { __typename id name } fees { __typename address basisPoints } }
fragment AssetCard on Asset { __typename id tokenId name imageUrl ... on Asset { listing { __typename ...ListingPrice } } status }
fragment ListingPrice on Listing { __typename id orderType currentPrice currentPriceDecimal closingDate }`;

describe('variables with defaults', () => {
  test('when a query with a defaulted variable is sent without it again and again, then every answer is the first one', async () => {
    const { key, address } = await server.key();
    const collection = await saveCollection(server, key);
    await saveAsset(server, key, collection, address);
    await saveAsset(server, key, collection, address);
    const query = `query ($c: String, $l: Int! = 1) { assets(collectionId: $c, limit: $l) { remaining result { __typename } } }`;
    const answers = [];
    for (let i = 0; i < 5; i += 1) answers.push(await post({ query, variables: { c: collection.id } }));
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.text).errors).toBeUndefined();
      expect(answer.text).toBe(answers[0].text);
    }
    expect(JSON.parse(answers[0].text).data.assets.remaining).toBe(1);
  });
});

describe('fragments and __typename', () => {
  test('when an Apollo Client page with named and inline fragments is sent again and again, then it is the resolvers\' answer and runs as one statement', async () => {
    const owned = await listedCollection();
    const body = { operationName: 'CollectionPage', query: COLLECTION_PAGE, variables: { owner: owned.owner.address } };
    const last = await sameAsResolvers(body);
    expect(last.headers.get('x-sql-statements')).toBe('1');
    const page = JSON.parse(last.text).data.collections.result[0];
    expect(page.assets.result).toHaveLength(3);
    expect(page.assets.result.filter((a: { listing: unknown }) => a.listing).length).toBe(2);
  });

  test('when one field is selected under two aliases with different selections, then each alias answers its own selection', async () => {
    const owned = await listedCollection();
    const query = `query ($a: Address!, $t: TokenId!) { asset(tokenAddress: $a, tokenId: $t) { status a: listing { id } b: listing { seller startPriceDecimal } } }`;
    const last = await sameAsResolvers({ query, variables: { a: owned.collection.contractAddress, t: owned.asset.tokenId } });
    const asset = JSON.parse(last.text).data.asset;
    expect(Object.keys(asset.a)).toEqual(['id']);
    expect(asset.b).toEqual({ seller: owned.owner.address, startPriceDecimal: '1.5' });
  });

  test('when a field is selected twice, once in a fragment with more sub-fields, then the selections are merged in the first one\'s order', async () => {
    const owned = await listedCollection();
    const query = `query ($a: Address!, $t: TokenId!) { asset(tokenAddress: $a, tokenId: $t) { listing { id } ...More collection { name } } }
      fragment More on Asset { name listing { seller id } collection { id } }`;
    const last = await sameAsResolvers({ query, variables: { a: owned.collection.contractAddress, t: owned.asset.tokenId } });
    expect(last.headers.get('x-sql-statements')).toBe('1');
    const asset = JSON.parse(last.text).data.asset;
    expect(Object.keys(asset)).toEqual(['listing', 'name', 'collection']);
    expect(Object.keys(asset.listing)).toEqual(['id', 'seller']);
    expect(Object.keys(asset.collection)).toEqual(['id', 'name']);
  });

  test('when a page asks for one collection by its address, with or without its assets, then it is the resolvers\' answer in one statement; an unknown address is their error', async () => {
    const owned = await listedCollection();
    const query = `query ($address: Address!, $with: Boolean!) { collection(address: $address, includeAssets: $with) { ...CollectionHeader assets(limit: 2, orderBy: TOKEN_ID, direction: ASC) { result { ...AssetCard } remaining } } }
      fragment CollectionHeader on Collection { __typename id name slug chain { __typename id name } fees { __typename address basisPoints } }
      fragment AssetCard on Asset { __typename id tokenId name listing { __typename id currentPriceDecimal } status }`;
    for (const address of [owned.collection.contractAddress, owned.collection.contractAddress.toUpperCase().replace('0X', '0x')]) {
      const last = await sameAsResolvers({ query, variables: { address, with: true } });
      expect(last.headers.get('x-sql-statements')).toBe('1');
      expect(JSON.parse(last.text).data.collection.assets.remaining).toBe(1);
    }
    const without = await sameAsResolvers({ query, variables: { address: owned.collection.contractAddress, with: false } });
    expect(JSON.parse(without.text).data.collection.assets).toBeNull();
    const missing = await sameAsResolvers({ query, variables: { address: '0x' + '9'.repeat(40), with: true } });
    expect(JSON.parse(missing.text).errors[0].extensions.code).toBe('NOT_FOUND');
  });

  test('when a legacy client reads one collection on /v1, then the answer is the resolvers\' (the route selects the collection\'s traits, which no plan covers yet)', async () => {
    const owned = await listedCollection();
    clock.set(new Date());
    try {
      for (const query of ['', '?include_assets=true', '?include_assets=false']) {
        const path = `/v1/collections/${owned.collection.contractAddress}${query}`;
        const expected = await resolvers.rest('GET', path);
        for (let i = 0; i < 3; i += 1) {
          const got = await server.rest('GET', path);
          expect({ status: got.status, body: got.body }).toEqual({ status: 200, body: expected.body });
        }
      }
      const missing = await server.rest('GET', `/v1/collections/0x${'8'.repeat(40)}`);
      expect(missing.status).toBe(404);
    } finally {
      clock.reset();
    }
  });

  test('when a selection carries @include or @skip, then the resolvers answer it, as they would', async () => {
    const owned = await listedCollection();
    const query = `query ($a: Address!, $t: TokenId!, $more: Boolean!) { asset(tokenAddress: $a, tokenId: $t) { name listing @include(if: $more) { id } } }`;
    for (const more of [true, false]) await sameAsResolvers({ query, variables: { a: owned.collection.contractAddress, t: owned.asset.tokenId, more } });
  });
});

/** gateway_request_roads_total as /metrics shows it, by `entry/executor`, for the GraphQL door. */
async function roads(): Promise<Record<string, number>> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const [, entry, executor, value] of text.matchAll(/^gateway_request_roads_total\{door="graphql",entry="(\w+)",executor="([\w-]+)"\} (\d+)/gm)) {
    out[`${entry}/${executor}`] = Number(value);
  }
  return out;
}

const delta = (after: Record<string, number>, before: Record<string, number>) =>
  Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - (before[k] ?? 0)]).filter(([, v]) => v !== 0));

/** How real clients send one query (issue #26): each must take the same road and get the same body. */
const APOLLO_ACCEPT = 'application/graphql-response+json,application/json;q=0.9';
const URQL_ACCEPT = 'application/graphql-response+json, application/graphql+json, application/json, text/event-stream, multipart/mixed';

describe('one road for every spelling of a request', () => {
  let owned: Awaited<ReturnType<typeof listedCollection>>;
  let variables: Record<string, unknown>;
  let expected: string;
  /** One moment for every answer: the page's Dutch auction moves its price with time. */
  const frozen = new Date();
  beforeAll(async () => {
    owned = await listedCollection();
    variables = { owner: owned.owner.address };
    clock.set(frozen);
    // The resolvers' answer, as a bare fetch gets it.
    expected = (await post({ query: COLLECTION_PAGE, variables }, {}, resolvers)).text;
    clock.reset();
  });
  beforeEach(() => clock.set(frozen));
  afterEach(() => clock.reset());

  /** Sends one request six times; returns the answers and the roads the last four took. */
  async function sendSix(send: () => Promise<{ status: number; headers: Headers; text: string }>) {
    const answers = [await send(), await send()];
    const before = await roads();
    for (let i = 0; i < 4; i += 1) answers.push(await send());
    return { answers, roads: delta(await roads(), before) };
  }

  const shapes: [string, () => { url?: string; init: RequestInit }][] = [
    ['a bare fetch', () => ({ init: { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: COLLECTION_PAGE, variables }) } })],
    [
      'Apollo Client 4',
      () => ({
        init: {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: APOLLO_ACCEPT },
          body: JSON.stringify({ operationName: 'CollectionPage', variables, extensions: { clientLibrary: { name: '@apollo/client', version: '4.0.7' } }, query: COLLECTION_PAGE }),
        },
      }),
    ],
    ['urql', () => ({ init: { method: 'POST', headers: { 'content-type': 'application/json', accept: URQL_ACCEPT }, body: JSON.stringify({ operationName: 'CollectionPage', query: COLLECTION_PAGE, variables }) } })],
    [
      'a browser page on another origin',
      () => ({ init: { method: 'POST', headers: { 'content-type': 'application/json', accept: APOLLO_ACCEPT, origin: 'https://shop.example' }, body: JSON.stringify({ query: COLLECTION_PAGE, variables }) } }),
    ],
    [
      'a GET (useGETForQueries)',
      () => ({
        url: `/graphql?${new URLSearchParams({ operationName: 'CollectionPage', query: COLLECTION_PAGE, variables: JSON.stringify(variables) })}`,
        init: { method: 'GET', headers: { accept: APOLLO_ACCEPT, 'apollo-require-preflight': 'true' } },
      }),
    ],
  ];

  test.each(shapes)('when %s sends the collection page, then from its third use it is answered by the lean door with one SQL plan, and the body is the resolvers\'', async (_name, shape) => {
    const { answers, roads: taken } = await sendSix(async () => {
      const { url, init } = shape();
      const res = await fetch(`${server.url}${url ?? '/graphql'}`, init);
      return { status: res.status, headers: res.headers, text: withoutRequestIds(await res.text()) };
    });
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.text).toBe(expected);
    }
    expect(taken).toEqual({ 'lean/plan': 4 });
    const prefersGraphqlResponse = shape().init.headers && (shape().init.headers as Record<string, string>).accept !== undefined;
    for (const answer of answers) {
      expect(answer.headers.get('content-type')).toBe(prefersGraphqlResponse ? 'application/graphql-response+json; charset=utf-8' : 'application/json; charset=utf-8');
      expect(answer.headers.get('access-control-allow-origin')).toBe('*');
    }
  });

  test('when a client sends only a persisted query\'s hash, after registering it, then it takes the same road', async () => {
    const hash = createHash('sha256').update(COLLECTION_PAGE).digest('hex');
    const persisted = { extensions: { persistedQuery: { version: 1, sha256Hash: hash } } };
    const headers = { 'content-type': 'application/json', accept: APOLLO_ACCEPT };
    await fetch(`${server.url}/graphql`, { method: 'POST', headers, body: JSON.stringify({ operationName: 'CollectionPage', variables, query: COLLECTION_PAGE, ...persisted }) });
    const { answers, roads: taken } = await sendSix(async () => {
      const res = await fetch(`${server.url}/graphql`, { method: 'POST', headers, body: JSON.stringify({ operationName: 'CollectionPage', variables, ...persisted }) });
      return { status: res.status, headers: res.headers, text: withoutRequestIds(await res.text()) };
    });
    for (const answer of answers) expect({ status: answer.status, text: answer.text }).toEqual({ status: 200, text: expected });
    expect(taken).toEqual({ 'lean/plan': 4 });
    // A hash that is not the text's is Apollo's to refuse, on every use.
    const wrong = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ query: COLLECTION_PAGE, variables, extensions: { persistedQuery: { version: 1, sha256Hash: 'f'.repeat(64) } } }),
    });
    expect(wrong.status).toBe(400);
  });

  test('when a client sends the page with its API key, then it is a read like any other; an unknown key is refused every time', async () => {
    const { key } = await server.key();
    const headers = { 'content-type': 'application/json', accept: APOLLO_ACCEPT, 'access-token': key };
    const { answers, roads: taken } = await sendSix(async () => {
      const res = await fetch(`${server.url}/graphql`, { method: 'POST', headers, body: JSON.stringify({ query: COLLECTION_PAGE, variables }) });
      return { status: res.status, headers: res.headers, text: withoutRequestIds(await res.text()) };
    });
    for (const answer of answers) {
      expect({ status: answer.status, text: answer.text }).toEqual({ status: 200, text: expected });
      expect(answer.headers.get('cache-control')).toBe('no-store');
    }
    // The key's lookup is the request's second statement.
    expect(answers[5].headers.get('x-sql-statements')).toBe('2');
    expect(taken).toEqual({ 'lean/plan': 4 });
    for (let i = 0; i < 3; i += 1) {
      const res = await fetch(`${server.url}/graphql`, { method: 'POST', headers: { ...headers, 'access-token': 'nftgw_not-a-key' }, body: JSON.stringify({ query: COLLECTION_PAGE, variables }) });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { errors: { extensions: { code: string } }[] }).errors[0].extensions.code).toBe('UNAUTHENTICATED');
    }
  });
});
