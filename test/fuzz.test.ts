import { startServer, TestServer } from './setup/server';
import { buildAppSchema } from '../src/app/graphql/schema';
import { fuzzedLabels } from '../bench/fuzz/properties';
import { fuzz } from '../bench/fuzz/runner';

/** The short deterministic version of `npm run fuzz`: the same cases, fewer per route, one fixed seed. */
const RUNS = 25;
const SEED = 20261123;

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

test(`when every /v1 route, every GraphQL mutation and both upload doors get ${RUNS} hostile cases (fixed seed), then no 5xx, every error is coded, nothing leaks, the server stays healthy`, async () => {
  const schema = await buildAppSchema();
  const keys = [(await server.key()).key, (await server.key({ admin: true })).key];

  const report = await fuzz(schema, { url: server.url, keys }, { runs: RUNS, seed: SEED, shrink: false });

  console.log(`fuzz (seed ${SEED}): ${report.passed} passed, ${report.failed} failed\n${report.routes.map((r) => `  ${String(r.cases).padStart(4)}  ${r.label}`).join('\n')}`);
  expect(report.failures).toEqual([]);
  expect(report.healthy).toBe(true);
  // Every operation of the OpenAPI document and every mutation got its cases: a route that silently got none fails here.
  const counts = Object.fromEntries(report.routes.map((r) => [r.label, r.cases]));
  const expected = fuzzedLabels(schema);
  expect(Object.fromEntries(expected.map((label) => [label, counts[label] ?? 0]))).toEqual(Object.fromEntries(expected.map((label) => [label, RUNS])));
  expect(expected).toEqual(expect.arrayContaining(['POST /v1/assets/import', 'mutation importAssets (multipart)', 'GET /v1/collections', 'mutation createCollection']));
}, 120_000);
