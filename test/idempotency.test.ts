import { randomUUID } from 'node:crypto';
import { clock } from '../src/common/clock';
import { randomAddress, startServer, TestServer, toResult, HttpResult } from './setup/server';
import { saveOffer, saveOwnedAsset } from './factories/market';
import { CREATE_COLLECTION } from './factories/marketplace';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());
afterEach(() => clock.reset());

const HOUR = 3600 * 1000;

async function gqlWithKey(query: string, variables: Record<string, unknown>, apiKey: string, idempotencyKey: string): Promise<HttpResult> {
  const res = await fetch(`${server.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'access-token': apiKey, 'idempotency-key': idempotencyKey },
    body: JSON.stringify({ query, variables }),
  });
  return toResult(res);
}

/** Headers that are each answer's own: its moment, its request id, its statement count, its rate limit. */
const PER_REQUEST = ['date', 'x-request-id', 'x-sql-statements', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'];

/** An answer's headers but those of its request and the replay's mark, as name -> value. */
function answerHeaders(res: HttpResult): Record<string, string> {
  return Object.fromEntries([...res.headers.entries()].filter(([name]) => !PER_REQUEST.includes(name) && name !== 'idempotent-replayed'));
}

/** A replay has every header the first answer has (the request's own with its own values) and its mark besides. */
function expectSameHeaders(first: HttpResult, replay: HttpResult): void {
  expect(replay.headers.get('idempotent-replayed')).toBe('true');
  expect(answerHeaders(replay)).toEqual(answerHeaders(first));
  expect([...replay.headers.keys()].filter((name) => name !== 'idempotent-replayed').sort()).toEqual([...first.headers.keys()].sort());
  expect(replay.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'));
}

/** POST /v1/collections sent twice with one Idempotency-Key: the body, the first answer and the retry's. */
async function createCollectionTwice(chainId: string): Promise<{ body: Record<string, string>; first: HttpResult; retry: HttpResult }> {
  const owner = await server.key();
  const headers = { 'idempotency-key': randomUUID() };
  const body = { contract_address: randomAddress(), chain_id: chainId };
  const first = await server.rest('POST', '/v1/collections', body, owner.key, headers);
  const retry = await server.rest('POST', '/v1/collections', body, owner.key, headers);
  return { body, first, retry };
}

async function ordersOfOffer(offerId: string): Promise<number> {
  const [row] = await server.ds.query('SELECT count(*)::int AS n FROM orders WHERE offer_id = $1', [offerId]);
  return row.n;
}

describe('Idempotency-Key on REST writes', () => {
  test('when 20 identical accepts with one key arrive at once, then one order is written and every response is the replay or a 409', async () => {
    const owned = await saveOwnedAsset(server);
    const taker = await server.key();
    const offer = await saveOffer(server, taker.key, owned.asset.id);
    const key = randomUUID();

    const responses = await Promise.all(
      Array.from({ length: 20 }, () => server.rest('POST', '/v1/offers/accept', { offer_id: offer.id }, owned.owner.key, { 'idempotency-key': key })),
    );

    expect(await ordersOfOffer(offer.id)).toBe(1);
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s !== 200 && s !== 409)).toEqual([]);
    const ok = responses.filter((r) => r.status === 200);
    expect(ok.filter((r) => r.headers.get('idempotent-replayed') !== 'true')).toHaveLength(1);
    expect(new Set(ok.map((r) => r.body.id)).size).toBe(1);
    // Each 409 is the key's "still running", not the service's lost race: the work ran once.
    for (const conflict of responses.filter((r) => r.status === 409)) {
      expect(conflict.body.error).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('still running') });
    }
  });

  test('when an accept is retried with its key after it finished, then the first response is replayed and no second order is written', async () => {
    const owned = await saveOwnedAsset(server);
    const taker = await server.key();
    const offer = await saveOffer(server, taker.key, owned.asset.id);
    const headers = { 'idempotency-key': randomUUID() };

    const first = await server.rest('POST', '/v1/offers/accept', { offer_id: offer.id }, owned.owner.key, headers);
    const retry = await server.rest('POST', '/v1/offers/accept', { offer_id: offer.id }, owned.owner.key, headers);

    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(retry.body).toEqual(first.body);
    expect(await ordersOfOffer(offer.id)).toBe(1);
  });

  test('when a create is retried with its key, then the replay has the first answer\'s headers: type, Location, ETag, length, a request id and statement count', async () => {
    const { body, first, retry } = await createCollectionTwice('1');

    expect(first.status).toBe(200);
    expect(first.headers.get('location')).toContain(body.contract_address);
    expect(first.headers.get('etag')).not.toBeNull();
    expect(retry.status).toBe(200);
    expectSameHeaders(first, retry);
    expect(retry.body).toEqual(first.body);
  });

  test('when a key is reused with another body, then it is a 422 naming the Idempotency-Key header', async () => {
    const owner = await server.key();
    const key = randomUUID();
    const body = { contract_address: randomAddress(), chain_id: '1' };
    const first = await server.rest('POST', '/v1/collections', body, owner.key, { 'idempotency-key': key });

    const other = await server.rest('POST', '/v1/collections', { ...body, contract_address: randomAddress() }, owner.key, { 'idempotency-key': key });

    expect(first.status).toBe(200);
    expect(other.status).toBe(422);
    expect(other.body.error).toMatchObject({ code: 'VALIDATION_FAILED', message: expect.stringContaining('Idempotency-Key') });
    expect(other.body.error.details).toEqual([expect.objectContaining({ field: 'Idempotency-Key' })]);
  });

  test('when another API key uses the same Idempotency-Key, then its request runs on its own', async () => {
    const [alice, bob] = [await server.key(), await server.key()];
    const key = randomUUID();

    const a = await server.rest('POST', '/v1/collections', { contract_address: randomAddress(), chain_id: '1' }, alice.key, { 'idempotency-key': key });
    const b = await server.rest('POST', '/v1/collections', { contract_address: randomAddress(), chain_id: '1' }, bob.key, { 'idempotency-key': key });

    expect([a.status, b.status]).toEqual([200, 200]);
    expect(b.headers.get('idempotent-replayed')).toBeNull();
    expect(b.body.owner).toBe(bob.address);
  });

  test('when a first attempt was refused with a 4xx, then the retry replays the refusal, with its headers', async () => {
    const { first, retry } = await createCollectionTwice('999999');

    expect(first.status).toBe(422);
    expect(retry.status).toBe(422);
    expectSameHeaders(first, retry);
    expect(retry.body).toEqual(first.body);
  });

  test('when a first attempt lost to a conflict (409), then the retry runs again instead of replaying', async () => {
    const owner = await server.key();
    const body = { contract_address: randomAddress(), chain_id: '1' };
    await server.rest('POST', '/v1/collections', body, owner.key);
    const headers = { 'idempotency-key': randomUUID() };

    const first = await server.rest('POST', '/v1/collections', body, owner.key, headers);
    const retry = await server.rest('POST', '/v1/collections', body, owner.key, headers);

    expect([first.status, retry.status]).toEqual([409, 409]);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
  });

  test('when the record is older than 24 h, then the key is free for a new request', async () => {
    const owner = await server.key();
    const key = randomUUID();
    const first = await server.rest('POST', '/v1/collections', { contract_address: randomAddress(), chain_id: '1' }, owner.key, { 'idempotency-key': key });
    clock.set(new Date(Date.now() + 24 * HOUR + 60 * 1000));

    const later = await server.rest('POST', '/v1/collections', { contract_address: randomAddress(), chain_id: '1' }, owner.key, { 'idempotency-key': key });

    expect(first.status).toBe(200);
    expect(later.status).toBe(200);
    expect(later.headers.get('idempotent-replayed')).toBeNull();
    expect(later.body.id).not.toBe(first.body.id);
  });

  test('when a write has no Idempotency-Key, then no idempotency record is kept', async () => {
    const owner = await server.key();
    const body = { contract_address: randomAddress(), chain_id: '1' };
    const plain = await server.rest('POST', '/v1/collections', body, owner.key);

    expect(plain.status).toBe(200);
    // A kept record holds the response, which names the collection; other test files keep records of their own meanwhile.
    const kept = await server.ds.query('SELECT count(*)::int AS n FROM idempotency_keys WHERE body LIKE $1', [`%${body.contract_address}%`]);
    expect(kept).toEqual([{ n: 0 }]);
  });
});

describe('Idempotency-Key on GraphQL mutations', () => {
  test('when a mutation is retried with its key, then the first result is replayed and one collection exists', async () => {
    const owner = await server.key();
    const key = randomUUID();
    const input = { contractAddress: randomAddress(), chainId: '1', name: 'Replayed' };

    const first = await gqlWithKey(CREATE_COLLECTION, { input }, owner.key, key);
    const retry = await gqlWithKey(CREATE_COLLECTION, { input }, owner.key, key);

    expect(first.body.data.createCollection.id).toBeDefined();
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toEqual(first.body);
    const rows = await server.ds.query('SELECT id FROM collections WHERE contract_address = $1', [input.contractAddress]);
    expect(rows).toHaveLength(1);
  });

  test('when a mutation is retried with its key, then the replay has the first answer\'s headers', async () => {
    const owner = await server.key();
    const key = randomUUID();
    const input = { contractAddress: randomAddress(), chainId: '1' };

    const first = await gqlWithKey(CREATE_COLLECTION, { input }, owner.key, key);
    const retry = await gqlWithKey(CREATE_COLLECTION, { input }, owner.key, key);

    expect(first.body.data.createCollection.id).toBeDefined();
    expectSameHeaders(first, retry);
    expect(retry.body).toEqual(first.body);
  });

  test('when a mutation failed with CONFLICT inside a 200, then the retry runs again instead of replaying', async () => {
    const owner = await server.key();
    const input = { contractAddress: randomAddress(), chainId: '1' };
    await server.gql(CREATE_COLLECTION, { input }, owner.key);
    const key = randomUUID();

    const first = await gqlWithKey(CREATE_COLLECTION, { input }, owner.key, key);
    const retry = await gqlWithKey(CREATE_COLLECTION, { input }, owner.key, key);

    expect(first.body.errors[0].extensions.code).toBe('CONFLICT');
    expect(retry.body.errors[0].extensions.code).toBe('CONFLICT');
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
  });

  test('when a mutation key is reused with other variables, then it is a 422 with the code in extensions', async () => {
    const owner = await server.key();
    const key = randomUUID();
    await gqlWithKey(CREATE_COLLECTION, { input: { contractAddress: randomAddress(), chainId: '1' } }, owner.key, key);

    const other = await gqlWithKey(CREATE_COLLECTION, { input: { contractAddress: randomAddress(), chainId: '1' } }, owner.key, key);

    expect(other.status).toBe(422);
    expect(other.body.errors[0].extensions.code).toBe('VALIDATION_FAILED');
    expect(other.body.errors[0].message).toContain('Idempotency-Key');
  });
});
