import 'reflect-metadata';
import { Client } from 'pg';
import { createDataSource } from '../../src/db/data-source';
import { startEmbedded } from '../../src/db/embedded';

/**
 * One database for the whole run: a fresh database on the server of DATABASE_URL (dropped at the end),
 * or one in-memory PGlite served on a loopback port. Migrations run once here; test files share the
 * database and keep to rows they create themselves.
 */
export default async function globalSetup(): Promise<void> {
  const g = globalThis as Record<string, unknown>;
  let url: string;
  const serverUrl = process.env.DATABASE_URL;
  if (serverUrl) {
    const name = `gw_test_${process.pid}_${Date.now().toString(36)}`;
    const admin = new Client({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}"`);
    await admin.end();
    const parsed = new URL(serverUrl);
    parsed.pathname = `/${name}`;
    url = parsed.toString();
    g.__dropTestDatabase = async () => {
      const c = new Client({ connectionString: serverUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.end();
    };
  } else {
    const embedded = await startEmbedded('', { purpose: 'test', maxConnections: 64, memory: true });
    url = embedded.url;
    g.__stopEmbedded = embedded.stop;
  }
  const ds = createDataSource({ url, poolSize: 2, queryTimeoutMs: 30000 });
  await ds.initialize();
  await ds.runMigrations({ transaction: 'each' });
  await ds.destroy();
  process.env.TEST_DATABASE_URL = url;
}
