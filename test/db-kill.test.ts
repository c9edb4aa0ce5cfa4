import { Client } from 'pg';
import { randomAddress, startServer, TestServer } from './setup/server';

/**
 * Connection kills on a real PostgreSQL server (PGlite has no pg_terminate_backend to speak of, and
 * pg_sleep there stops the whole database). The service's connections carry an application_name, so
 * only they are killed, not those of the other test files.
 */
const onPostgres = Boolean(process.env.DATABASE_URL);
if (!onPostgres) console.log('db-kill.test.ts skipped: connection kills need a real PostgreSQL server (set DATABASE_URL)');
const describePg = onPostgres ? describe : describe.skip;
const FAULT_SECONDS = Number(process.env.FAULT_TEST_SECONDS ?? 20);
const APP_NAME = 'gw_fault_test';

let server: TestServer;
let admin: Client;

function urlWithName(): string {
  const url = new URL(process.env.TEST_DATABASE_URL!);
  url.searchParams.set('application_name', APP_NAME);
  return url.toString();
}

const killAll = () =>
  admin.query('SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()', [APP_NAME]);

describePg('connection kills', () => {
  beforeAll(async () => {
    admin = new Client({ connectionString: process.env.TEST_DATABASE_URL });
    await admin.connect();
  });
  afterAll(() => admin.end());
  afterEach(() => server.close());

  test('when every pooled connection was killed while idle, then the next read still answers 200', async () => {
    server = await startServer({}, { url: urlWithName(), poolSize: 4 });
    await Promise.all([1, 2, 3, 4].map(() => server.rest('GET', '/v1/categories?limit=1')));
    await killAll();
    const res = await server.rest('GET', '/v1/collections?limit=2');
    expect(res.status).toBe(200);
  });

  test('when the only connection is held by pg_sleep, then 20 parallel requests are answered 503 within the pool wait', async () => {
    server = await startServer({}, { url: urlWithName(), poolSize: 1, poolWaitMs: 1000 });
    const holding = server.ds.query('SELECT pg_sleep(4)');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = Date.now();
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        i % 2 ? server.rest('GET', '/v1/collections?limit=2') : server.gql('{ categories(limit: 2) { result { name } } }'),
      ),
    );
    const elapsed = Date.now() - started;
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(503));
    expect(answers.every((a) => a.headers.get('retry-after') === '1')).toBe(true);
    expect(elapsed).toBeLessThan(3000);
    await holding;
  });

  test(`when all its connections are killed every 2 s during ${FAULT_SECONDS} s of mixed load at 32 connections, then no 500 and no acknowledged write is lost`, async () => {
    server = await startServer({}, { url: urlWithName(), poolSize: 10 });
    const { key } = await server.key();
    const statuses = new Map<number, number>();
    const acknowledged: string[] = [];
    const until = Date.now() + FAULT_SECONDS * 1000;
    const killer = setInterval(() => void killAll(), 2000);
    const worker = async (n: number) => {
      for (let i = 0; Date.now() < until; i += 1) {
        let status: number;
        if (i % 4 === 3) {
          const address = randomAddress();
          const res =
            n % 2
              ? await server.rest('POST', '/v1/collections', { contract_address: address, chain_id: '1' }, key)
              : await server.gql(CREATE, { input: { contractAddress: address, chainId: '1' } }, key);
          status = res.status;
          if (status === 200 && (res.body.id || res.body.data?.createCollection)) acknowledged.push(address);
        } else {
          status = (n % 2 ? await server.rest('GET', '/v1/collections?limit=5') : await server.gql(READ)).status;
        }
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
    };
    try {
      await Promise.all(Array.from({ length: 32 }, (_, n) => worker(n)));
    } finally {
      clearInterval(killer);
    }
    const rows: { address: string }[] = await server.ds.query(
      'SELECT contract_address AS address FROM collections WHERE contract_address = ANY($1)',
      [acknowledged],
    );
    const counts = Object.fromEntries(statuses);
    expect(Object.keys(counts).filter((s) => s !== '200' && s !== '503')).toEqual([]);
    expect(counts[200]).toBeGreaterThan(100);
    expect(acknowledged.length).toBeGreaterThan(10);
    expect(rows.length).toBe(acknowledged.length);
  }, (FAULT_SECONDS + 20) * 1000);
});

const READ = /* GraphQL */ `{ collections(limit: 5) { result { name owner } } }`;
const CREATE = /* GraphQL */ `
  mutation ($input: CreateCollectionInput!) { createCollection(input: $input) { id } }
`;
