// The floor of `npm run bench -- --anchors`: node:http + pg, one prepared statement per request whose
// JSON PostgreSQL builds (the response is that one text value). No GraphQL, no validation, no limits:
// what serving these fields costs when nothing but the database and the socket is left.
// Usage: DATABASE_URL=... PORT=... POOL=8 node floor.mjs
import { createServer } from 'node:http';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.POOL ?? 8) });

const asset = `json_build_object('tokenId', a.token_id::text, 'name', a.name, 'owner', a.owner)`;
const statements = {
  // W1: 20 collections (newest first) with their first 20 assets (newest first).
  w1: `SELECT json_build_object('data', json_build_object('collections', json_build_object('result',
         coalesce(json_agg(json_build_object('name', c.name, 'assets', json_build_object('result', x.items)) ORDER BY c.created_at DESC, c.id DESC), '[]'))))::text AS body
       FROM (SELECT id, name, created_at FROM collections ORDER BY created_at DESC, id DESC LIMIT 20) c
       CROSS JOIN LATERAL (
         SELECT coalesce(json_agg(${asset} ORDER BY a.created_at DESC, a.id DESC), '[]') AS items
         FROM (SELECT token_id, name, owner, created_at, id FROM assets WHERE collection_id = c.id ORDER BY created_at DESC, id DESC LIMIT 20) a
       ) x`,
  // W2: one asset by contract and token id, with its collection.
  w2: `SELECT json_build_object('data', json_build_object('asset', json_build_object('id', a.id, 'name', a.name, 'tokenId', a.token_id::text,
         'owner', a.owner, 'collection', json_build_object('name', c.name, 'contractAddress', c.contract_address))))::text AS body
       FROM assets a JOIN collections c ON c.id = a.collection_id
       WHERE a.token_address = $1 AND a.token_id = $2::numeric`,
  // W3: 50 assets of a collection by token id.
  w3: `SELECT json_build_object('data', json_build_object('assets', json_build_object('result',
         coalesce(json_agg(${asset} ORDER BY a.token_id), '[]'))))::text AS body
       FROM (SELECT token_id, name, owner FROM assets WHERE collection_id = $1 ORDER BY token_id LIMIT 50) a`,
};
const parameters = { w1: [], w2: ['a', 't'], w3: ['c'] };

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://floor');
  const name = url.pathname.slice(1);
  const text = statements[name];
  if (!text) {
    res.writeHead(404).end();
    return;
  }
  req.resume();
  pool.query({ name, text, values: parameters[name].map((p) => url.searchParams.get(p)) }).then(
    (result) => {
      const body = result.rows[0]?.body ?? '{"data":null}';
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    },
    (err) => {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(String(err));
    },
  );
});
server.listen(Number(process.env.PORT), process.env.HOST ?? '127.0.0.1', () => process.stderr.write(`floor listening on ${process.env.PORT}\n`));
process.on('SIGTERM', () => {
  server.close();
  pool.end().finally(() => process.exit(0));
});
