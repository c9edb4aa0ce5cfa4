import { createHash, randomUUID } from 'node:crypto';
import { WebhookSettings } from '../src/config';
import { digestOf, revokeApiKey } from '../src/modules/apikey/api-key.service';
import { randomAddress, startServer, TestServer, toResult } from './setup/server';
import { CREATE_COLLECTION } from './factories/marketplace';

/**
 * Issue #27, "Cost, limits and keys": what an attacker got past the cost limit, the rate limit, the token
 * limit and the idempotency records, and what production told them of the schema. Each through HTTP.
 */

let server: TestServer;
let production: TestServer;
/** Takes webhooks to loopback targets (nothing is delivered: no worker runs). */
let hooks: TestServer;
beforeAll(async () => {
  [server, production, hooks] = await Promise.all([startServer(), startServer({ production: true }), startServer({ webhooks: WEBHOOKS })]);
});
afterAll(async () => {
  // Other files' delivery workers share the database: this file's webhooks go with it.
  await hooks.ds.query(`DELETE FROM webhooks WHERE url LIKE 'http://127.0.0.1:9/abuse-limits/%'`);
  await Promise.all([server.close(), production.close(), hooks.close()]);
});

/** POST /graphql with any body (a persisted query's hash, say), an API key and, when given, an Idempotency-Key. */
async function postGraphql(target: TestServer, body: Record<string, unknown>, apiKey: string, idempotencyKey?: string) {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'access-token': apiKey };
  if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
  return toResult(await fetch(`${target.url}/graphql`, { method: 'POST', headers, body: JSON.stringify(body) }));
}

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

  test('when a variable gives a limit over the maximum, or null for a list that needs one, then it is a 400 naming the variable and its range, or the argument that must not be null', async () => {
    const over = await server.gql(`query ($n: Int!) { chains { id } assets(limit: $n) { result { id } } }`, { n: 101 });
    const nothing = await server.gql(`query ($n: Int) { chains { id } assets(limit: $n) { result { id } } }`, { n: null });

    expect([over.status, nothing.status]).toEqual([400, 400]);
    expect(over.body.errors?.[0].message).toBe('n must be an integer from 1 to 100, got 101');
    expect(nothing.body.errors?.[0].message).toBe('limit: must not be null (variable $n is null); leave the variable out for the default, or give a value');
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

describe('the same operation with other limits', () => {
  // An operation's estimate is kept per values of the variables that give it (graphql/limits.ts): a value
  // seen before must not answer for another one, through a fragment, a nested list or a REST route.
  test('when one document is sent again and again with limits in and out of range, then each request is judged by its own values', async () => {
    const query = `query ($n: Int!, $m: Int) { collections(limit: $n) { result { ...Assets } } } fragment Assets on Collection { assets(limit: $m) { result { id } } }`;
    const verdicts: [number, string | undefined][] = [];
    for (const [n, m] of [[2, 3], [2, 101], [2, 3], [0, 3], [2, undefined], [2, null], [2, 101]] as const) {
      const res = await server.gql(query, m === undefined ? { n } : { n, m });
      verdicts.push([res.status, res.body.errors?.[0].message]);
    }
    expect(verdicts).toEqual([
      [200, undefined],
      [400, 'm must be an integer from 1 to 100, got 101'],
      [200, undefined],
      [400, 'n must be an integer from 1 to 100, got 0'],
      [200, undefined],
      [400, 'limit: must not be null (variable $m is null); leave the variable out for the default, or give a value'],
      [400, 'm must be an integer from 1 to 100, got 101'],
    ]);
  });

  test('when a REST list is read with a nested limit in range, out of range, then in range again, then only the one out of range is refused', async () => {
    const statuses = [];
    for (const limit of [5, 500, 5, 500]) statuses.push((await server.rest('GET', `/v1/collections?limit=2&include_assets=true&assets_limit=${limit}`)).status);
    expect(statuses).toEqual([200, 400, 200, 400]);
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

  // REST words an unknown body field itself (the documented fields, public in the interface): graphql-js's
  // suggestion never reaches it; should a coercion error reach sendRestError, production cuts it there.
  test('when a REST body has an unknown field in production, then the 400 names it and suggests nothing, in message and details', async () => {
    const { key } = await production.key();
    const body = { contract_address: randomAddress(), chain_id: '1', nam: 'x' };
    const prod = await production.rest('POST', '/v1/collections', body, key);

    expect(prod.status).toBe(400);
    expect(prod.body.error.code).toBe('BAD_REQUEST');
    expect(prod.body.error.details).toEqual([expect.objectContaining({ field: 'nam' })]);
    expect(suggestions(prod.body)).toEqual([]);
  });
});

describe('Idempotency-Key and the limits before it', () => {
  /** A mutation of about 95,000 tokens (285 KB): far over the token limit, well under the body limit. */
  const HUGE_MUTATION = `mutation { createCollection(input: { chainId: "1" }) { id ${'id '.repeat(95_000)} } }`;

  async function timedPost(headers: Record<string, string>) {
    const started = performance.now();
    const res = await toResult(
      await fetch(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ query: HUGE_MUTATION }) }),
    );
    return { ...res, ms: performance.now() - started };
  }

  test('when a huge mutation comes with an Idempotency-Key, then the token limit refuses it as it does without the header, and as quickly', async () => {
    const { key } = await server.key();
    // Each answer's best of three: the machine's noise is not the server's work.
    const best = async (headers: () => Record<string, string>) => {
      const tries = [];
      for (let i = 0; i < 3; i += 1) tries.push(await timedPost(headers()));
      return tries.sort((x, y) => x.ms - y.ms)[0];
    };
    const without = await best(() => ({ 'access-token': key }));
    const withKey = await best(() => ({ 'access-token': key, 'idempotency-key': randomUUID() }));

    expect(withKey.status).toBe(400);
    expect([withKey.status, withKey.body.errors?.[0].extensions.code, withKey.body.errors?.[0].message]).toEqual([
      without.status,
      without.body.errors?.[0].extensions.code,
      without.body.errors?.[0].message,
    ]);
    expect(withKey.body.errors?.[0].message).toContain('2000 tokens');
    expect(withKey.ms).toBeLessThan(without.ms * 3 + 50);
    const [kept] = await server.ds.query('SELECT count(*)::int AS n FROM idempotency_keys WHERE scope = $1', [digestOf(key)]);
    expect(kept.n).toBe(0);
  });

  test('when a key is revoked after an idempotent webhook creation, then the replay is a 401 and shows no secret, on both doors', async () => {
    const owner = await hooks.key();
    const restHeaders = { 'idempotency-key': randomUUID() };
    const restBody = { url: 'http://127.0.0.1:9/abuse-limits/revoked-rest', event_types: ['order.completed'] };
    const graphqlKey = randomUUID();
    const variables = { input: { url: 'http://127.0.0.1:9/abuse-limits/revoked-graphql', eventTypes: ['order.completed'] } };
    const rest = await hooks.rest('POST', '/v1/webhooks', restBody, owner.key, restHeaders);
    const graphql = await postGraphql(hooks, { query: CREATE_WEBHOOK, variables }, owner.key, graphqlKey);
    expect(rest.status).toBe(200);
    expect(rest.body.secret).toMatch(/^whsec_/);
    expect(graphql.body.data.createWebhook.secret).toMatch(/^whsec_/);

    await revokeApiKey(hooks.ds, owner.key);
    const restReplay = await hooks.rest('POST', '/v1/webhooks', restBody, owner.key, restHeaders);
    const graphqlReplay = await postGraphql(hooks, { query: CREATE_WEBHOOK, variables }, owner.key, graphqlKey);

    expect(restReplay.status).toBe(401);
    expect(restReplay.body.error.code).toBe('UNAUTHENTICATED');
    expect(restReplay.headers.get('idempotent-replayed')).toBeNull();
    expect(graphqlReplay.status).toBe(401);
    expect(graphqlReplay.body.errors?.[0].extensions.code).toBe('UNAUTHENTICATED');
    expect(JSON.stringify([restReplay.body, graphqlReplay.body])).not.toContain('whsec_');
  });

  test('when a persisted mutation is sent twice by its hash alone with one Idempotency-Key, then one webhook is created and the second answer is the replay', async () => {
    const owner = await hooks.key();
    const hash = createHash('sha256').update(CREATE_WEBHOOK).digest('hex');
    const persisted = { persistedQuery: { version: 1, sha256Hash: hash } };
    const url = `http://127.0.0.1:9/abuse-limits/persisted-${randomUUID()}`;
    // Registers the text under its hash (a webhook of its own, at another URL).
    const registered = await postGraphql(hooks, { query: CREATE_WEBHOOK, variables: { input: { url: `${url}-registration`, eventTypes: ['order.completed'] } }, extensions: persisted }, owner.key);
    expect(registered.body.data.createWebhook.id).toEqual(expect.any(String));
    const byHash = { variables: { input: { url, eventTypes: ['order.completed'] } }, extensions: persisted };
    const idempotencyKey = randomUUID();

    const first = await postGraphql(hooks, byHash, owner.key, idempotencyKey);
    const second = await postGraphql(hooks, byHash, owner.key, idempotencyKey);

    expect(first.status).toBe(200);
    expect(first.body.data.createWebhook.id).toEqual(expect.any(String));
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body).toEqual(first.body);
    const [made] = await hooks.ds.query('SELECT count(*)::int AS n FROM webhooks WHERE url = $1', [url]);
    expect(made.n).toBe(1);
  });
});

const HUGE_SELECTION = `collections(limit: 100) { result { assets(limit: 100) { result { history(limit: 100) { result { type } } } } } }`;
const HUGE = `{ ${HUGE_SELECTION} }`;
const NEGATIVE_BESIDE_HUGE = `{ a: assets(limit: -10000) { result { id } } ${HUGE_SELECTION} }`;
const NEGATIVE_VARIABLE_BESIDE_LIST = `query ($n: Int!) { a: assets(limit: $n) { result { id } } collections(limit: 100) { result { id } } }`;
const CREATE_WEBHOOK = `mutation ($input: CreateWebhookInput!) { createWebhook(input: $input) { id url secret } }`;
const WEBHOOKS: WebhookSettings = { deliver: false, allowPrivate: true, timeoutMs: 1000, backoffBaseMs: 100, backoffMaxMs: 1000, retryWindowMs: 60_000, pollMs: 1000 };
