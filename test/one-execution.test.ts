import { startServer, TestServer } from './setup/server';
import { saveAsset, saveCollection } from './factories/marketplace';

/**
 * Every request runs its operation once, whatever its outcome: an error is answered by the road that
 * found it (the lean door, the compiled path in express, Apollo, the REST router), never by running the
 * operation again elsewhere. Counted on /metrics: gateway_operations_run_total is incremented by the
 * executor each time it runs an operation, on every road.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

/** Operations the executor has run in this process so far, whatever answered them. */
async function operationsRun(): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  return [...text.matchAll(/^gateway_operations_run_total\{executor="[\w-]+"\} (\d+)/gm)].reduce((sum, [, value]) => sum + Number(value), 0);
}

/** The requests of the GraphQL door on each road, by `entry/executor`. */
async function roads(door: 'graphql' | 'rest'): Promise<Record<string, number>> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const [, entry, executor, value] of text.matchAll(new RegExp(`^gateway_request_roads_total\\{door="${door}",entry="(\\w+)",executor="([\\w-]+)"\\} (\\d+)`, 'gm'))) {
    out[`${entry}/${executor}`] = Number(value);
  }
  return out;
}

const delta = (after: Record<string, number>, before: Record<string, number>) =>
  Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - (before[k] ?? 0)]).filter(([, v]) => v !== 0));

/** Sends `send` once and returns its answer and how many operations ran meanwhile (the test sends nothing else). */
async function counted<T>(send: () => Promise<T>): Promise<{ answer: T; runs: number }> {
  const before = await operationsRun();
  const answer = await send();
  return { answer, runs: (await operationsRun()) - before };
}

async function post(body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as { data?: { asset: unknown }; errors?: { extensions: { code: string; requestId: string } }[] } };
}

describe('one execution per request', () => {
  let tokenAddress: string;
  let tokenId: string;
  beforeAll(async () => {
    const { key, address } = await server.key();
    const collection = await saveCollection(server, key);
    const asset = await saveAsset(server, key, collection, address);
    tokenAddress = asset.tokenAddress;
    tokenId = asset.tokenId;
  });

  test('when a known query answers an error, then it ran once per request, on each road that takes it, and the error is the one Apollo gave', async () => {
    const body = (t: string) => ({ query: ASSET_BY_TOKEN, variables: { a: tokenAddress, t }, operationName: 'AssetByToken' });
    // Its first uses: Apollo validates it, graphql-jit compiles it, and from then on it is known.
    for (let i = 0; i < 3; i += 1) {
      const { answer, runs } = await counted(() => post(body(tokenId)));
      expect(answer.status).toBe(200);
      expect(runs).toBe(1);
    }
    const apollo = await post({ ...body('999999999'), operationName: undefined, query: `${ASSET_BY_TOKEN} ` });
    expect(apollo.body.errors![0].extensions.code).toBe('NOT_FOUND');

    const before = await roads('graphql');
    // The lean door, and the compiled path inside express (an Idempotency-Key leaves the door).
    for (const leaveDoor of [false, true]) {
      for (let i = 0; i < 3; i += 1) {
        const headers: Record<string, string> = { 'x-request-id': `one-execution-${leaveDoor}-${i}` };
        if (leaveDoor) headers['idempotency-key'] = `one-execution-${i}`;
        const { answer, runs } = await counted(() => post(body('999999999'), headers));
        expect(runs).toBe(1);
        expect(answer.status).toBe(apollo.status);
        expect(answer.body.data).toEqual(apollo.body.data);
        expect(answer.body.errors).toHaveLength(1);
        expect(answer.body.errors![0]).toEqual({ ...apollo.body.errors![0], extensions: { ...apollo.body.errors![0].extensions, requestId: headers['x-request-id'] } });
      }
    }
    // Answered where it ran, never by Apollo.
    expect(delta(await roads('graphql'), before)).toEqual({ 'lean/compiled': 3, 'express/compiled': 3 });
  });

  test('when a REST GET meets an error, or its route has no SQL plan, then its operation ran once', async () => {
    const before = await roads('rest');
    const missing = await counted(() => fetch(`${server.url}/v1/assets/${tokenAddress}/999999999`));
    expect(missing.answer.status).toBe(404);
    expect(((await missing.answer.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
    expect(missing.runs).toBe(1);

    const refused = await counted(() => fetch(`${server.url}/v1/assets?limit=0`));
    expect(refused.answer.status).toBe(400);
    expect(refused.runs).toBe(1);

    const unplanned = await counted(() => fetch(`${server.url}/v1/assets/${tokenAddress}/${tokenId}/history`));
    expect(unplanned.answer.status).toBe(200);
    expect(unplanned.runs).toBe(1);
    // Each answered by the door, where it ran.
    const taken = delta(await roads('rest'), before);
    expect(Object.keys(taken).every((road) => road.startsWith('lean/'))).toBe(true);
  });
});

const ASSET_BY_TOKEN = `query AssetByToken($a: Address!, $t: TokenId!) { asset(tokenAddress: $a, tokenId: $t) { name owner } }`;
