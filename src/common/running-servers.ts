import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * The gateway servers running on this machine, each with the database it serves: a file per server
 * under the temporary directory, so that a command (npm run apikey) can tell when it is about to write
 * to a database that no running server reads.
 */
export interface RunningServer {
  pid: number;
  port: number;
  /** `embedded PostgreSQL in <dir>` or the database URL without its password. */
  database: string;
  /** What a command sets to reach the same database: DATA_DIR=... or DATABASE_URL=... */
  reach: string;
  startedAt: string;
}

/** Under TMPDIR (read here, as os.tmpdir() does, so that a process's own setting of it counts). */
function registryDir(): string {
  return path.join(process.env.TMPDIR || os.tmpdir(), 'nft-marketplace-gateway', 'servers');
}

/** Whether a process of this machine still runs (EPERM: it does, as another user's). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A database URL fit to print: its password replaced. */
export function maskedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'a database URL that cannot be parsed';
  }
}

/** The database of a process's settings, as people and the registry name it. */
export function databaseOf(settings: { databaseUrl: string | undefined; dataDir: string }): { database: string; reach: string } {
  return settings.databaseUrl
    ? { database: maskedUrl(settings.databaseUrl), reach: `DATABASE_URL=${maskedUrl(settings.databaseUrl)}` }
    : { database: `embedded PostgreSQL in ${settings.dataDir}`, reach: `DATA_DIR=${settings.dataDir}` };
}

/** Records this process as a running server; the returned function removes the record. */
export function registerServer(server: Omit<RunningServer, 'pid' | 'startedAt'>): () => void {
  const dir = registryDir();
  const file = path.join(dir, `${process.pid}.json`);
  try {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(file, JSON.stringify({ ...server, pid: process.pid, startedAt: new Date().toISOString() }));
  } catch {
    // A read-only temporary directory costs only the command's warning, never the server.
    return () => undefined;
  }
  return () => fs.rmSync(file, { force: true });
}

/** The servers running now (records of processes that died are skipped and removed). */
export function runningServers(): RunningServer[] {
  const dir = registryDir();
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  const servers: RunningServer[] = [];
  for (const name of names) {
    const file = path.join(dir, name);
    try {
      const server = JSON.parse(fs.readFileSync(file, 'utf8')) as RunningServer;
      if (isAlive(server.pid)) servers.push(server);
      else fs.rmSync(file, { force: true });
    } catch {
      // a record being written or removed right now
    }
  }
  return servers;
}
