import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startGatewayProcess } from './setup/gateway-process';

/** Issue #15: WORKERS=N runs N server processes on one port (Node's cluster module); the embedded database refuses. */
const run = promisify(execFile);
const onPostgres = Boolean(process.env.DATABASE_URL);

test('when WORKERS=2 is asked of the embedded database, then the service refuses to start and says why', async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gw-workers-'));
  try {
    const failed = startGatewayProcess({ DATABASE_URL: '', DATA_DIR: dataDir, WORKERS: '2', SEED_DEMO: 'false' });
    await expect(failed).rejects.toThrow(/exited with 1 before it was ready: [\s\S]*WORKERS=2 needs DATABASE_URL/);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}, 60_000);

(onPostgres ? test : test.skip)('when WORKERS=2 on PostgreSQL, then two server processes answer on one port, and SIGTERM stops them all with exit 0', async () => {
  const gateway = await startGatewayProcess({ WORKERS: '2' });
  try {
    // The banner is printed once, by the first worker, and says how many there are.
    expect(gateway.output()).toContain('workers:  2 processes');
    const { stdout } = await run('pgrep', ['-P', String(gateway.child.pid)]);
    const workers = stdout.trim().split('\n').map(Number);
    expect(workers).toHaveLength(2);
    // Both workers listen: requests answered while each is up (the kernel spreads connections between them).
    const statuses = await Promise.all(
      Array.from({ length: 20 }, () => fetch(`${gateway.url}/v1/categories?limit=2`, { headers: { connection: 'close' } }).then((r) => r.status)),
    );
    expect(statuses).toEqual(Array(20).fill(200));

    // A worker that dies is replaced.
    process.kill(workers[0], 'SIGKILL');
    let replaced: number[] = [];
    for (let i = 0; i < 100 && !(replaced.length === 2 && !replaced.includes(workers[0])); i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      replaced = (await run('pgrep', ['-P', String(gateway.child.pid)]).catch(() => ({ stdout: '' }))).stdout.trim().split('\n').filter(Boolean).map(Number);
    }
    expect(replaced).toHaveLength(2);
    expect(replaced).not.toContain(workers[0]);
  } finally {
    expect(await gateway.stop()).toBe(0);
  }
  expect(await run('pgrep', ['-P', String(gateway.child.pid)]).catch(() => 'none')).toBe('none');
}, 90_000);
