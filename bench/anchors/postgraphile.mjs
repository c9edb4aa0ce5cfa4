// PostGraphile 5 for `npm run bench -- --anchors`: the Amber preset, production mode (NODE_ENV=production,
// no GraphiQL, no watch), a pool of 5 (POOL), the public schema of the bench's database.
// Usage: DATABASE_URL=... PORT=... node postgraphile.mjs
if (typeof Promise.withResolvers !== 'function') {
  // PostGraphile 5 wants Node >= 22; this is all it misses on Node 20. Set before it is imported.
  Promise.withResolvers = function withResolvers() {
    let resolve;
    let reject;
    const promise = new this((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  };
}

const { createServer } = await import('node:http');
const pg = (await import('pg')).default;
const { postgraphile } = await import('postgraphile');
const { grafserv } = await import('postgraphile/grafserv/node');
const { PostGraphileAmberPreset } = await import('postgraphile/presets/amber');
const { makePgService } = await import('postgraphile/adaptors/pg');
const { jsonPgSmartTags } = await import('postgraphile/utils');

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.POOL ?? 5) });
// The frontend workloads read an asset's active listing. Amber exposes a relation or a filter only over a
// full index, and listings has partial ones (ux_listings_one_active_per_asset: asset_id WHERE status =
// 'active'), which a query for the active listing uses: these tags say so, as a PostGraphile user would.
const partialIndexes = jsonPgSmartTags({
  version: 1,
  config: {
    class: {
      listings: {
        attribute: { status: { tags: { isIndexed: true } } },
        constraint: { listings_asset_id_fkey: { tags: { isIndexed: true } } },
      },
    },
  },
});
const preset = {
  extends: [PostGraphileAmberPreset],
  plugins: [partialIndexes],
  pgServices: [makePgService({ pool, schemas: ['public'] })],
  grafserv: { graphiql: false, watch: false },
  grafast: { explain: false },
};
const pgl = postgraphile(preset);
const serv = pgl.createServ(grafserv);
const server = createServer();
server.on('error', (err) => {
  process.stderr.write(`postgraphile: ${err}\n`);
  process.exit(1);
});
await serv.addTo(server);
server.listen(Number(process.env.PORT), process.env.HOST ?? '127.0.0.1', () => process.stderr.write(`postgraphile listening on ${process.env.PORT}\n`));
process.on('SIGTERM', () => {
  server.close();
  pgl.release().finally(() => process.exit(0));
});
