import http from 'node:http';
import { AddressInfo } from 'node:net';
import { DataSource, QueryRunner } from 'typeorm';
import { App, createApp } from '../src/app';
import { setLogLevel } from '../src/common/logger';
import { createDataSource } from '../src/db/data-source';

/**
 * Stopping the app (main.ts does it on SIGTERM/SIGINT, after the HTTP server has closed) waits for the
 * requests still being worked on, also those whose client has hung up, before the database may close.
 */
let ds: DataSource;
let app: App;
let server: http.Server;
let url: string;
let holder: QueryRunner;

beforeEach(async () => {
  setLogLevel('silent');
  // One connection, held by the test: the request's first statement waits until the test lets go.
  ds = createDataSource({ url: process.env.TEST_DATABASE_URL!, poolSize: 1, queryTimeoutMs: 30000 });
  await ds.initialize();
  app = await createApp(ds);
  server = http.createServer(app.listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  holder = ds.createQueryRunner();
  await holder.connect();
});

afterEach(async () => {
  if (!holder.isReleased) await holder.release();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await ds.destroy();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i += 1) await sleep(10);
  expect(condition()).toBe(true);
}

/** A request whose client hangs up while the server still waits for the database. */
async function abandonedRequest(path: string, init: RequestInit = {}): Promise<void> {
  const client = new AbortController();
  const request = fetch(`${url}${path}`, { ...init, signal: client.signal }).catch(() => undefined);
  await until(() => app.inFlight.size === 1);
  client.abort();
  await request;
}

test('when a client hangs up mid-request and the app stops, then stopping waits for that work to end', async () => {
  await abandonedRequest('/v1/categories?limit=5');
  let stopped = false;
  const stopping = app.stop(10_000).then(() => {
    stopped = true;
  });
  await sleep(300);
  expect({ stopped, inFlight: app.inFlight.size }).toEqual({ stopped: false, inFlight: 1 });

  await holder.release();
  await stopping;
  expect(app.inFlight.size).toBe(0);
});

test('when in-flight work outlasts the drain time, then stopping goes on after it', async () => {
  await abandonedRequest('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ categories(limit: 5) { result { name } } }' }),
  });
  const started = Date.now();
  await app.stop(300);
  expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  expect(app.inFlight.size).toBe(1);
  await holder.release();
  await until(() => app.inFlight.size === 0);
});
