import { ChildProcess, execFile, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';

/**
 * The CPU of tracing alone, per request, in a process of its own: the spans of a W2-shaped request (the
 * request's, its operation's, one SQL plan statement of 4 KB) made through src/common/tracing.ts and
 * exported over OTLP/HTTP (protobuf; `json`: OTLP's JSON) to a receiver in another process, in a warmed loop. Unlike the
 * servers' CPU per request, it is not moved by a loaded machine's slower requests (JIT, GC), so it is the
 * figure to set against a request's own CPU. `node dist/bench/tracing-cost.js <off|on|json|sampled>`.
 */
const REQUESTS = 60_000;
const WARMUP = 20_000;

async function measure(mode: string): Promise<number> {
  const receiver: ChildProcess = spawn(
    process.execPath,
    ['-e', `const s = require('node:http').createServer((q, r) => { q.resume(); q.on('end', () => r.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()); }); s.listen(0, '127.0.0.1', () => console.log(s.address().port));`],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  try {
    const port = await new Promise<string>((resolve) => receiver.stdout!.once('data', (d: Buffer) => resolve(String(d).trim())));
    if (mode !== 'off') {
      // A queue that never drops: every span is exported, and its export counted.
      Object.assign(process.env, { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_SERVICE_NAME: 'tracing-cost', OTEL_BSP_MAX_QUEUE_SIZE: '200000' });
    }
    if (mode === 'json') process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/json';
    if (mode === 'sampled') Object.assign(process.env, { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' });
    /* eslint-disable @typescript-eslint/no-require-imports -- loaded after the environment is set, as main.ts loads it first */
    require('../src/tracing');
    const tracing = require('../src/common/tracing') as typeof import('../src/common/tracing');
    /* eslint-enable @typescript-eslint/no-require-imports */
    const sql = `SELECT ${'j1."name" AS "name", '.repeat(200)}1 FROM assets j1 WHERE j1.token_address = $1 AND j1.token_id = $2::numeric`;
    const one = async (i: number) => {
      const req = { url: '/v1/assets/0xabc/1', method: 'GET', headers: { host: '127.0.0.1' } } as unknown as IncomingMessage;
      const res = Object.assign(new EventEmitter(), { statusCode: 200, writableFinished: true }) as unknown as ServerResponse;
      tracing.traceRequest(req, res);
      const span = tracing.requestSpanOf(req);
      const scope = { requestId: `r${i}`, sqlStatements: 0, entry: 'lean' as const, executor: 'plan' as const, span };
      await tracing.traceOperation('query', undefined, scope, () => tracing.traceStatement(scope, sql, async () => [{ data: i }]));
      if (span) tracing.nameRequestSpan(span, 'GET', '/v1/assets/{token_address}/{token_id}', scope.requestId);
      res.emit('close');
    };
    // 50 at a time, as concurrent requests are, with a turn of the event loop between (the exporter's sends).
    const run = async (n: number) => {
      for (let i = 0; i < n; i += 50) {
        await Promise.all(Array.from({ length: 50 }, (_, k) => one(i + k)));
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    await run(WARMUP);
    const before = process.cpuUsage();
    await run(REQUESTS);
    await tracing.stopTracing(60_000);
    const used = process.cpuUsage(before);
    return (used.user + used.system) / REQUESTS;
  } finally {
    receiver.kill();
  }
}

/** µs of CPU per request for each mode, each in a process of its own (`json`: on, exporting OTLP/HTTP JSON). */
export async function tracingCost(): Promise<Record<'off' | 'on' | 'json' | 'sampled', number>> {
  const result = { off: 0, on: 0, json: 0, sampled: 0 };
  for (const mode of ['off', 'on', 'json', 'sampled'] as const) {
    const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('OTEL_')));
    const { stdout } = await promisify(execFile)(process.execPath, [__filename, mode], { env: clean });
    result[mode] = Number(stdout.trim());
  }
  return result;
}

if (require.main === module) {
  measure(process.argv[2] ?? 'on').then(
    (us) => {
      process.stdout.write(`${us.toFixed(1)}\n`);
      process.exit(0);
    },
    (err) => {
      process.stderr.write(`${(err as Error).stack}\n`);
      process.exit(1);
    },
  );
}

