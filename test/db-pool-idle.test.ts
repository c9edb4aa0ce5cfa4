import { Client } from 'pg';
import { startServer, TestServer } from './setup/server';

/**
 * How long the service keeps a pooled connection nobody uses (DB_POOL_IDLE_MS): long by default, so the first
 * requests after a quiet spell find their connections, with their prepared statements, still open. Seen as an
 * operator sees it, in pg_stat_activity by application_name: a real PostgreSQL server (PGlite is one session).
 */
const onPostgres = Boolean(process.env.DATABASE_URL);
if (!onPostgres) console.log("db-pool-idle.test.ts skipped: counting the pool's connections needs a real PostgreSQL server (set DATABASE_URL)");
const describePg = onPostgres ? describe : describe.skip;

function urlNamed(name: string): string {
  const url = new URL(process.env.TEST_DATABASE_URL!);
  url.searchParams.set('application_name', name);
  return url.toString();
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describePg('idle pooled connections', () => {
  let admin: Client;
  const servers: TestServer[] = [];
  beforeAll(async () => {
    admin = new Client({ connectionString: process.env.TEST_DATABASE_URL });
    await admin.connect();
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await admin.end();
  });

  const backends = async (name: string) =>
    (await admin.query<{ pid: number; backend_start: Date }>('SELECT pid, backend_start FROM pg_stat_activity WHERE application_name = $1', [name])).rows;

  /** Four connections in use at once (four statements that each take 300 ms), then none. */
  const useFour = (server: TestServer) => Promise.all([1, 2, 3, 4].map(() => server.ds.query('SELECT pg_sleep(0.3)')));

  test('when the service has been quiet for longer than node-postgres\'s own 10 s, then its connections are still open and the next request uses one of them; a short DB_POOL_IDLE_MS closes them', async () => {
    const kept = 'gw_pool_idle_default';
    const short = 'gw_pool_idle_short';
    const [byDefault, briefly] = await Promise.all([
      startServer({}, { url: urlNamed(kept), poolSize: 4 }),
      startServer({}, { url: urlNamed(short), poolSize: 4, poolIdleMs: 300 }),
    ]);
    servers.push(byDefault, briefly);
    await Promise.all([useFour(byDefault), useFour(briefly)]);
    expect((await backends(kept)).length).toBeGreaterThanOrEqual(4);
    expect((await backends(short)).length).toBeGreaterThanOrEqual(4);

    // A quiet spell, longer than node-postgres's own idle timeout (10 s); the default keeps them for 300 s.
    const quietFrom = new Date();
    await sleep(1500);
    // The short setting closed what nobody used (a background sweep may have opened one since).
    expect((await backends(short)).length).toBeLessThanOrEqual(1);
    await sleep(9500);
    const open = await backends(kept);
    expect(open.length).toBeGreaterThanOrEqual(4);

    // The first request after the spell: answered on a connection opened before it, no new one.
    const res = await byDefault.rest('GET', '/v1/collections?limit=2');
    expect(res.status).toBe(200);
    const after = await backends(kept);
    expect(after.filter((b) => b.backend_start >= quietFrom)).toEqual([]);
    expect(after.map((b) => b.pid).sort()).toEqual(open.map((b) => b.pid).sort());
  });
});
