import { ChildProcess, execFile, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';

/**
 * The CPU of tracing alone, per request, in a process of its own: the spans of a request made through
 * src/common/tracing.ts and exported over OTLP/HTTP (protobuf; `json`: OTLP's JSON) to a receiver in
 * another process, in a warmed loop. Two shapes of request: `plan` (W2 through a SQL plan: the request's
 * span, its operation's, one plan statement of 4 KB) and `resolvers` (W2's GraphQL (REST): the route's
 * document run by the resolvers, the request's span, its operation's and four statements, two of them
 * past the 1 KB a span keeps, their text built anew for each request as TypeORM's query builder does).
 * Unlike the servers' CPU per request, it is not moved by a loaded machine's slower requests (JIT, GC),
 * so it is the figure to set against a request's own CPU.
 * `node dist/bench/tracing-cost.js <off|on|json|sampled> [plan|resolvers] [blocks]`: with `blocks`, the
 * lowest of that many blocks of 3,000 requests (to compare builds on a loaded machine), else the mean of 60,000.
 */
const REQUESTS = 60_000;
const WARMUP = 20_000;

type Shape = 'plan' | 'resolvers';

/** The columns of an asset and of its collection, as the resolvers' statements select them. */
const ASSET_COLUMNS = ['id::text', 'collection_id::text', 'chain_id', 'token_address', 'token_id::text', 'name', 'description', 'image_url', 'animation_url', 'external_link', 'metadata', 'metadata_status', 'metadata_error', 'metadata_fetched_at', 'owner', 'status', 'royalty_fees', 'created_at', 'updated_at'];
const COLLECTION_COLUMNS = ['id::text', 'chain_id', 'contract_address', 'owner', 'total_supply', 'start_block', 'category_id', 'name', 'slug', 'description', 'image_url', 'discord_url', 'telegram_url', 'external_url', 'twitter_username', 'instagram_username', 'created_at', 'updated_at'];
const alias = (column: string) => column.replace(/::\w+$/, '').replace(/_(\w)/g, (_, c: string) => c.toUpperCase());
const ASSET = ASSET_COLUMNS.map((c) => `t.${c} AS "${alias(c)}"`);
const COLLECTION = COLLECTION_COLUMNS.map((c) => `c.${c} AS "c:${alias(c)}"`);
const LISTING = ASSET_COLUMNS.map((c) => `l.${c} AS "${alias(c)}"`);
// A listing's price of the moment, as the listings' statement computes it.
const PRICE = `(CASE l.order_type WHEN 'dutch_auction' THEN trunc(l.start_price - div((l.start_price - l.accept_price) * 1000000000000000000 * LEAST(round(EXTRACT(EPOCH FROM (l.closing_date - l.listing_time)) * 1000000), GREATEST(0, round(EXTRACT(EPOCH FROM ($1::timestamptz - l.listing_time)) * 1000000))), round(EXTRACT(EPOCH FROM (l.closing_date - l.listing_time)) * 1000000)) * 0.000000000000000001, l.currency_decimals) ELSE l.start_price END)::text AS "currentPrice"`;
const TRAIT = ['asset_id', 'collection_id', 'trait_type', 'value', 'asset_count'].map((c) => `ct.${c} AS "${alias(c)}"`);

/** The statements of one GraphQL (REST) request for an asset: the same text each time, built anew (joined) each time. */
function resolverStatements(): string[] {
  return [
    `SELECT ${ASSET.join(', ')}, ${COLLECTION.join(', ')} FROM assets t JOIN collections c ON c.id = t.collection_id WHERE t.token_address = $1 AND t.token_id = $2::numeric`,
    `SELECT ${LISTING.join(', ')}, ${PRICE}, (CASE WHEN l.status = 'active' AND l.closing_date <= $1::timestamptz THEN 'expired' ELSE l.status END) AS "status" FROM listings l WHERE l.asset_id = ANY($2::uuid[]) ORDER BY l.listing_time DESC`,
    ['SELECT "Chain"."id" AS "Chain_id", "Chain"."name" AS "Chain_name", "Chain"."symbol" AS "Chain_symbol"', 'FROM "chains" "Chain" WHERE (("Chain"."id" = ANY($1)))'].join(' '),
    `WITH parents AS (SELECT at.asset_id, ct.collection_id, ct.trait_type, ct.value, ct.asset_count FROM asset_traits at JOIN collection_traits ct USING (collection_id, trait_type, value) WHERE at.asset_id = ANY($1::uuid[])) SELECT ${TRAIT.join(', ')} FROM parents ct ORDER BY ct.trait_type, ct.value`,
  ];
}

async function measure(mode: string, shape: Shape, blocks = 0): Promise<number> {
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
    const row = async () => [{ data: 1 }];
    const one = async (i: number) => {
      const req = { url: shape === 'plan' ? '/v1/assets/0xabc/1' : '/graphql', method: shape === 'plan' ? 'GET' : 'POST', headers: { host: '127.0.0.1' } } as unknown as IncomingMessage;
      const res = Object.assign(new EventEmitter(), { statusCode: 200, writableFinished: true }) as unknown as ServerResponse;
      tracing.traceRequest(req, res);
      const span = tracing.requestSpanOf(req);
      if (shape === 'plan') {
        const scope = { requestId: `r${i}`, sqlStatements: 0, entry: 'lean' as const, executor: 'plan' as const, span };
        await tracing.traceOperation('query', undefined, scope, () => tracing.traceStatement(scope, sql, row));
        if (span) tracing.nameRequestSpan(span, 'GET', '/v1/assets/{token_address}/{token_id}', scope.requestId);
      } else {
        const scope = { requestId: `r${i}`, sqlStatements: 0, executor: 'compiled' as const, span };
        // The asset first, then what its fields need (listings, chain, traits) at once, as the loaders ask.
        await tracing.traceOperation('query', undefined, scope, async () => {
          const [asset, ...fields] = resolverStatements();
          // Each text is read whole once, as pg does when it sends it (a text joined of parts is made flat then).
          const sent = (text: string) => async () => [{ data: Buffer.byteLength(text) }];
          await tracing.traceStatement(scope, asset, sent(asset));
          return Promise.all(fields.map((text) => tracing.traceStatement(scope, text, sent(text))));
        });
        if (span) tracing.nameRequestSpan(span, 'POST', '/graphql', scope.requestId);
      }
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
    if (blocks > 0) {
      // The lowest of `blocks` blocks of 3,000 requests: what the code costs when the machine's other load leaves it alone.
      let lowest = Infinity;
      for (let b = 0; b < blocks; b += 1) {
        const before = process.cpuUsage();
        await run(3_000);
        const used = process.cpuUsage(before);
        lowest = Math.min(lowest, (used.user + used.system) / 3_000);
      }
      await tracing.stopTracing(60_000);
      return lowest;
    }
    const before = process.cpuUsage();
    await run(REQUESTS);
    await tracing.stopTracing(60_000);
    const used = process.cpuUsage(before);
    return (used.user + used.system) / REQUESTS;
  } finally {
    receiver.kill();
  }
}

/**
 * µs of CPU per request for each mode, each in a process of its own (`json`: on, exporting OTLP/HTTP JSON),
 * for the `plan` shape; `resolvers`: on, for the GraphQL (REST) shape.
 */
export async function tracingCost(): Promise<Record<'off' | 'on' | 'json' | 'sampled' | 'resolvers', number>> {
  const result = { off: 0, on: 0, json: 0, sampled: 0, resolvers: 0 };
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('OTEL_')));
  for (const [key, mode, shape] of [['off', 'off', 'plan'], ['on', 'on', 'plan'], ['json', 'json', 'plan'], ['sampled', 'sampled', 'plan'], ['resolvers', 'on', 'resolvers']] as const) {
    const { stdout } = await promisify(execFile)(process.execPath, [__filename, mode, shape], { env: clean });
    result[key] = Number(stdout.trim());
  }
  return result;
}

if (require.main === module) {
  measure(process.argv[2] ?? 'on', process.argv[3] === 'resolvers' ? 'resolvers' : 'plan', Number(process.argv[4] ?? 0)).then(
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

