import { startServer, TestServer } from './setup/server';
import { buildAppSchema } from '../src/app/graphql/schema';
import { fuzz } from '../bench/fuzz/runner';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

test('when every /v1 route and GraphQL mutation gets hostile input (fixed seed), then no 5xx, every error is coded, nothing leaks, the server stays healthy', async () => {
  const keys = [(await server.key()).key, (await server.key({ admin: true })).key];
  const report = await fuzz(await buildAppSchema(), { url: server.url, keys }, { runs: 8, seed: 20261123, shrink: false });
  expect(report.failures).toEqual([]);
  expect(report.healthy).toBe(true);
  expect(report.passed).toBeGreaterThan(100);
}, 60_000);
