import 'reflect-metadata';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import { DataSource } from 'typeorm';
import { App, AppOptions, createApp } from '../../src/app';
import { setLogLevel } from '../../src/common/logger';
import { createDataSource } from '../../src/db/data-source';
import { ApiKeyRole } from '../../src/modules/apikey/api-key.entity';
import { createApiKey } from '../../src/modules/apikey/api-key.service';
import { ResponseChecker } from './openapi-check';

export interface HttpResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
  /** SQL statements the server issued for this request (its x-sql-statements header). */
  sql: number;
}

export interface TestServer {
  url: string;
  ds: DataSource;
  app: App;
  /** POST /graphql with a JSON body. */
  gql<T = any>(query: string, variables?: Record<string, unknown>, key?: string): Promise<HttpResult<{ data?: T; errors?: any[] }>>;
  /** A REST call; `body` is sent as JSON unless it is a string (sent as given, with content-type json). */
  rest<T = any>(method: string, path: string, body?: unknown, key?: string, headers?: Record<string, string>): Promise<HttpResult<T>>;
  /** A fresh API key for an account; a random account when none is given. */
  key(options?: { address?: string; admin?: boolean }): Promise<{ key: string; address: string }>;
  close(): Promise<void>;
}

/** An HTTP response as tests read it: status, headers, JSON body (or text), and the server's statement count. */
export async function toResult(res: Response): Promise<HttpResult> {
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text (e.g. the Sandbox landing page)
  }
  return { status: res.status, headers: res.headers, body, sql: Number(res.headers.get('x-sql-statements') ?? NaN) };
}

/** How the test server reaches its database; by default the run's database with a pool of 10. */
export interface TestDatabaseOptions {
  url?: string;
  poolSize?: number;
  /** The client's bound on a statement (DB_QUERY_TIMEOUT_MS); 30 s by default. */
  queryTimeoutMs?: number;
  poolWaitMs?: number;
  slowStatementMs?: number;
  /** PostgreSQL's statement_timeout of the server's connections (DB_STATEMENT_TIMEOUT_MS); none by default. */
  statementTimeoutMs?: number;
  /** How long an unused pooled connection stays open (DB_POOL_IDLE_MS); the service's default when absent. */
  poolIdleMs?: number;
}

/** The real app on a random loopback port, over the run's database. */
export async function startServer(options: AppOptions = {}, db: TestDatabaseOptions = {}): Promise<TestServer> {
  setLogLevel((process.env.TEST_LOG_LEVEL as 'error') ?? 'silent');
  const ds = createDataSource({
    url: db.url ?? process.env.TEST_DATABASE_URL!,
    poolSize: db.poolSize ?? 10,
    queryTimeoutMs: db.queryTimeoutMs ?? 30000,
    poolWaitMs: db.poolWaitMs,
    slowStatementMs: db.slowStatementMs,
    statementTimeoutMs: db.statementTimeoutMs,
    poolIdleMs: db.poolIdleMs,
  });
  await ds.initialize();
  const created = await createApp(ds, options);
  const { stop } = created;
  const server = http.createServer(created.listener);
  created.attachSubscriptions(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const authHeaders = (key?: string): Record<string, string> => (key ? { 'access-token': key } : {});
  let checker: Promise<ResponseChecker> | undefined;
  const documented = () => (checker ??= fetch(`${url}/v1/openapi.json`).then(async (res) => new ResponseChecker((await res.json()) as ConstructorParameters<typeof ResponseChecker>[0])));
  return {
    url,
    ds,
    app: created,
    async gql(query, variables, key) {
      const res = await fetch(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...authHeaders(key) },
        body: JSON.stringify({ query, variables }),
      });
      return toResult(res);
    },
    async rest(method, path, body, key, headers = {}) {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: {
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...authHeaders(key),
          ...headers,
        },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      const result = await toResult(res);
      // Every REST answer the suite receives must be one its route documents (GET /v1/openapi.json).
      (await documented()).check(method, path, result.status, result.body, res.headers.get('content-type'));
      return result;
    },
    async key(options = {}) {
      const address = options.address ?? randomAddress();
      const { key } = await createApiKey(ds.manager, { address, role: options.admin ? ApiKeyRole.ADMIN : ApiKeyRole.USER });
      return { key, address };
    },
    async close() {
      await created.closeSubscriptions();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await stop();
      await ds.destroy();
    },
  };
}

export function randomAddress(): string {
  let hex = '';
  for (let i = 0; i < 40; i += 1) hex += Math.floor(Math.random() * 16).toString(16);
  return `0x${hex}`;
}
