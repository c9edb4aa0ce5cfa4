import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import path from 'node:path';

/** The real service (src/main.ts, run without a build) as a child process, on the run's database unless told otherwise. */
export interface GatewayProcess {
  url: string;
  child: ChildProcess;
  output(): string;
  /** SIGTERM, and the exit code once it has exited. */
  stop(): Promise<number | null>;
}

/**
 * The settings of a real service started on the run's database by a test. Test files share one database: a
 * process of one file must not fetch the tokenURI documents another file queued (with its own targets and
 * settings: metadata.test's local host, refused as a loopback address by a default worker); a test that wants
 * the worker says so. Nor deliver another file's webhooks with its own settings (tracing.test.ts turns delivery on).
 */
export const OWN_WORK_ONLY = { METADATA_FETCH: 'off', WEBHOOK_DELIVERY: 'off' } as const;

export async function startGatewayProcess(env: Record<string, string | undefined> = {}): Promise<GatewayProcess> {
  let output = '';
  const child = spawn(process.execPath, ['-r', path.resolve(__dirname, 'ts-register.js'), path.resolve(__dirname, '../../src/main.ts')], {
    env: {
      ...process.env,
      DATABASE_URL: process.env.TEST_DATABASE_URL,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      RATE_LIMIT: 'off',
      DB_POOL_WAIT_MS: '30000',
      ...OWN_WORK_ONLY,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const port = /localhost:(\d+)\/graphql/.exec(output)?.[1];
      if (port) resolve(`http://127.0.0.1:${port}`);
    });
    child.once('exit', (code) => reject(new Error(`the server exited with ${code} before it was ready: ${output}`)));
  });
  return {
    url,
    child,
    output: () => output,
    async stop() {
      if (child.exitCode !== null) return child.exitCode;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const [code] = await exited;
      return code as number | null;
    },
  };
}

/** A round-robin HTTP balancer in front of `backends`: each request goes to the next one, as any HTTP balancer would. */
export async function startBalancer(backends: string[]): Promise<{ url: string; close(): Promise<void> }> {
  let next = 0;
  const server = http.createServer((req, res) => {
    const target = new URL(backends[next++ % backends.length]);
    const upstream = http.request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A TCP port nobody listens on now. */
export async function freePort(): Promise<number> {
  const server = http.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * The time from the signal to the exit on the process's own clock, from its last log line (`stopped`, or
 * `shutdown grace exceeded; exiting`; LOG_LEVEL info shows the first). What a parent process sees adds the
 * scheduling of both processes, seconds on a loaded CI machine.
 */
export function exitAfterMs(output: string): number | undefined {
  const line = output.split('\n').find((l) => /"message":"(stopped|shutdown grace exceeded; exiting)"/.test(l));
  return line ? (JSON.parse(line).afterMs as number) : undefined;
}
