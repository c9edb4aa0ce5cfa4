import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import path from 'node:path';
import autocannon from 'autocannon';
import { Client } from 'pg';
import { exitAfterMs, OWN_WORK_ONLY } from './setup/gateway-process';

/**
 * SIGTERM to the real process (src/main.ts, run without a build) under keep-alive load: it stops within
 * the grace time, and the requests it had accepted before the signal are answered.
 */
let child: ChildProcess;
let base: string;
let output = '';

async function startMain(graceMs: number, logLevel = 'warn'): Promise<void> {
  output = '';
  child = spawn(process.execPath, ['-r', path.resolve(__dirname, 'setup/ts-register.js'), path.resolve(__dirname, '../src/main.ts')], {
    env: { ...process.env, DATABASE_URL: process.env.TEST_DATABASE_URL, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: logLevel, SHUTDOWN_GRACE_MS: String(graceMs), RATE_LIMIT: 'off', DB_POOL_WAIT_MS: '30000', ...OWN_WORK_ONLY },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const ready = new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const port = /localhost:(\d+)\/graphql/.exec(output)?.[1];
      if (port) resolve(`http://127.0.0.1:${port}`);
    });
    child.once('exit', (code) => reject(new Error(`the server exited with ${code} before it was ready: ${output}`)));
  });
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  base = await ready;
}

/** A client holding an exclusive lock on collections: reads of it wait until `release()`. */
async function lockCollections(): Promise<{ release(): Promise<void> }> {
  const locker = new Client({ connectionString: process.env.TEST_DATABASE_URL });
  await locker.connect();
  await locker.query('BEGIN');
  await locker.query('LOCK TABLE collections IN ACCESS EXCLUSIVE MODE');
  return {
    async release() {
      await locker.query('COMMIT');
      await locker.end();
    },
  };
}

afterEach(() => {
  if (child.exitCode === null) child.kill('SIGKILL');
});

test('when SIGTERM comes under keep-alive load with a request waiting on the database and an idle socket open, then the process exits 0 within 10 s and the waiting requests are answered 200', async () => {
  await startMain(8000);
  const statuses = new Map<number, number>();
  const load = autocannon({ url: `${base}/v1/categories?limit=5`, connections: 8, duration: 30 }, () => undefined);
  load.on('response', (_client, status) => statuses.set(status, (statuses.get(status) ?? 0) + 1));
  const idle = net.connect(Number(new URL(base).port), '127.0.0.1');
  idle.on('error', () => undefined);

  // Requests the server has accepted and that wait on a row lock when the signal comes.
  const lock = await lockCollections();
  const waiting = Array.from({ length: 8 }, () => fetch(`${base}/v1/collections?limit=2`).then((r) => r.status, (e: Error) => e.message));
  await new Promise((resolve) => setTimeout(resolve, 1000));

  const signalled = Date.now();
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await new Promise((resolve) => setTimeout(resolve, 1500));
  await lock.release();

  const [code] = await exited;
  const tookMs = Date.now() - signalled;
  load.stop();
  idle.destroy();
  expect({ code, withinTenSeconds: tookMs <= 10_000 }).toEqual({ code: 0, withinTenSeconds: true });
  expect(await Promise.all(waiting)).toEqual(Array(8).fill(200));
  expect([...statuses.keys()].filter((s) => s >= 500)).toEqual([]);
  expect(statuses.get(200)).toBeGreaterThan(0);
}, 90_000); // starting src/main.ts from source takes most of it on a loaded machine

test('when a statement still hangs at the end of the grace time, then it is cancelled and the process exits 0 within the grace time', async () => {
  await startMain(3000, 'info');
  const lock = await lockCollections();
  try {
    const waiting = fetch(`${base}/v1/collections?limit=2`).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const signalled = Date.now();
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const [code] = await exited;
    const tookMs = Date.now() - signalled;
    // On the process's own clock it is gone within the grace; seen from here, a loaded machine (a CI run of
    // the suite) adds the scheduling of two processes, so that figure only has to show it did not wait for
    // the statement, which holds until the lock is released below.
    expect({ code, withinGrace: exitAfterMs(output)! <= 3000, seenWithinFiveSeconds: tookMs <= 5000 }).toEqual({ code: 0, withinGrace: true, seenWithinFiveSeconds: true });
    expect(output).toContain('requests still running at shutdown');
    await waiting;
  } finally {
    await lock.release();
  }
}, 90_000); // starting src/main.ts from source takes most of it on a loaded machine
