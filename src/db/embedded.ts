import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { isAlive } from '../common/running-servers';
import { PGliteServer } from './pglite-server';

/**
 * The embedded PostgreSQL: PGlite keeps its files under `<dataDir>/pgdata` and is served on a loopback
 * port (PGliteServer), so the ordinary `pg` driver (and TypeORM) talk to it exactly as to a real
 * server. Only one process may open a data directory; `<dataDir>/owner.json` says which one has it and
 * on which URL, so commands such as `npm run apikey` can go through a running server instead.
 */
export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

export interface DataDirOwner {
  pid: number;
  url: string;
  purpose: string;
  startedAt: string;
}

export class DataDirInUseError extends Error {
  constructor(readonly owner: DataDirOwner, dataDir: string) {
    super(
      `The embedded database in ${dataDir} is in use by process ${owner.pid} (${owner.purpose}, since ${owner.startedAt}). ` +
        (owner.purpose === 'server'
          ? 'Stop that server first, or run this command again: commands reach a running server by itself.'
          : 'Wait for that command to finish, then try again.'),
    );
  }
}

function ownerFile(dataDir: string): string {
  return path.join(dataDir, 'owner.json');
}

/** The live process that has this data directory open, if any (a stale owner file is ignored). */
export function currentOwner(dataDir: string): DataDirOwner | undefined {
  try {
    const owner = JSON.parse(fs.readFileSync(ownerFile(dataDir), 'utf8')) as DataDirOwner;
    if (owner.pid !== process.pid && isAlive(owner.pid)) return owner;
  } catch {
    // no owner file, or an unreadable one: nobody holds the directory
  }
  return undefined;
}

/** Opens the data directory (creating it when new) and serves it on a free loopback port. */
export async function startEmbedded(
  dataDir: string,
  options: { purpose: string; maxConnections: number; memory?: boolean },
): Promise<EmbeddedDatabase> {
  let owner: DataDirOwner | undefined;
  if (!options.memory) {
    fs.mkdirSync(dataDir, { recursive: true });
    const existing = currentOwner(dataDir);
    if (existing) throw new DataDirInUseError(existing, dataDir);
  }
  // pg_trgm for search by name (migration 1765405000000): PGlite's extensions are loaded by the process.
  const db = await PGlite.create({ ...(options.memory ? {} : { dataDir: path.join(dataDir, 'pgdata') }), extensions: { pg_trgm } });
  const server = new PGliteServer(db, options.maxConnections);
  const url = `postgres://postgres@${await server.listen('127.0.0.1', 0)}/postgres`;
  if (!options.memory) {
    owner = { pid: process.pid, url, purpose: options.purpose, startedAt: new Date().toISOString() };
    fs.writeFileSync(ownerFile(dataDir), JSON.stringify(owner, null, 2));
  }
  let stopped = false;
  return {
    url,
    async stop() {
      if (stopped) return;
      stopped = true;
      await server.close();
      await db.close();
      if (owner) fs.rmSync(ownerFile(dataDir), { force: true });
    },
  };
}
