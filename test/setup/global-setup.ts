import 'reflect-metadata';
import { Client } from 'pg';
import { createDataSource } from '../../src/db/data-source';
import { startEmbedded } from '../../src/db/embedded';

/** EIP-155 ids of the test chains: chain-follow, chain-lock, chain-reorg, chain-settlement, chain-range, collection-figures; chain-metadata (31345). */
export const TEST_CHAIN_IDS = ['31337', '31338', '31339', '31340', '31341', '31342', '31343', '31345', '31346', '31347', '31348', '31349', '31350', '31351', '31352', '31353', '31354', '31355'];

/**
 * A fresh database with the migrations run: on the server of DATABASE_URL (named after `prefix`), or one
 * in-memory PGlite served on a loopback port. `drop` drops (or stops) it.
 */
export async function freshDatabase(prefix = 'gw_test'): Promise<{ url: string; drop: () => Promise<void> }> {
  let url: string;
  let drop: () => Promise<void>;
  const serverUrl = process.env.DATABASE_URL;
  if (serverUrl) {
    const name = `${prefix}_${process.pid}_${Date.now().toString(36)}`;
    const admin = new Client({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}"`);
    await admin.end();
    const parsed = new URL(serverUrl);
    parsed.pathname = `/${name}`;
    url = parsed.toString();
    drop = async () => {
      const c = new Client({ connectionString: serverUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.end();
    };
  } else {
    const embedded = await startEmbedded('', { purpose: 'test', maxConnections: 64, memory: true });
    url = embedded.url;
    drop = embedded.stop;
  }
  await migrateFresh(url);
  return { url, drop };
}

/** Runs the migrations on the empty database at `url` and adds the test chains (see freshDatabase). */
export async function migrateFresh(url: string): Promise<void> {
  const ds = createDataSource({ url, poolSize: 2, queryTimeoutMs: 30000, logMigrations: false });
  await ds.initialize();
  await ds.runMigrations({ transaction: 'each' });
  // The local chains of the chain tests (test/chain-*.test.ts, a node each), there from the start: the
  // `chains` list does not change while other tests read it.
  await ds.query(`INSERT INTO chains (id, name, symbol) SELECT id, 'Local test chain ' || id, 'ETH' FROM unnest($1::text[]) AS id`, [TEST_CHAIN_IDS]);
  // Every chain has its native currency (docs/market.md "Currencies"), as the migrations give the seeded ones.
  await ds.query(`INSERT INTO currencies (chain_id, address, symbol, decimals) SELECT id, '0x${'0'.repeat(40)}', 'ETH', 18 FROM unnest($1::text[]) AS id`, [TEST_CHAIN_IDS]);
  await ds.destroy();
}

/**
 * One database for the whole run (see freshDatabase). Migrations run once here; test files share the
 * database and keep to rows they create themselves.
 */
export default async function globalSetup(): Promise<void> {
  const { url, drop } = await freshDatabase();
  (globalThis as Record<string, unknown>).__dropTestDatabase = drop;
  process.env.TEST_DATABASE_URL = url;
}
