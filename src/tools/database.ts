import { loadConfig } from '../config';
import { databaseOf, runningServers } from '../common/running-servers';
import { openDatabase, OpenDatabase } from '../db/database';
import { DataDirInUseError } from '../db/embedded';

/** Where a command writes its lines: `out` for its answer, `err` for problems (each a line, without its newline). */
export interface CommandIo {
  out: (line: string) => void;
  err: (line: string) => void;
}

/** A command that writes to the database: its name (npm run <name>), its arguments, and what no server would see if it wrote elsewhere. */
export interface CommandDatabaseUse {
  command: string;
  argv: string[];
  /** "the key", "the documents". */
  writes: string;
}

/**
 * With neither DATA_DIR nor DATABASE_URL set, what a command writes to ./data is lost on a server that
 * runs on another database: refuse, naming the server and the setting that reaches its database.
 */
function wrongDatabase(target: { database: string }, use: CommandDatabaseUse): string | undefined {
  if (process.env.DATA_DIR || process.env.DATABASE_URL) return undefined;
  const servers = runningServers();
  if (!servers.length || servers.some((s) => s.database === target.database)) return undefined;
  const [first] = servers;
  return [
    `No server runs on ${target.database}, where this command would write, so no server would know ${use.writes}.`,
    ...servers.map((s) => `A server (pid ${s.pid}, port ${s.port}) runs on ${s.database}.`),
    `To write where it reads: ${first.reach} npm run ${use.command} -- ${use.argv.join(' ')}`,
  ].join('\n');
}

/**
 * Runs a command's work on the database of DATABASE_URL, or on the embedded one (directly when no server
 * runs, through the running server's connection when one does), after saying which on `out`; returns the
 * work's exit code, 1 when the database cannot be opened or the work fails (its message on `err`).
 */
export async function withDatabase(io: CommandIo, use: CommandDatabaseUse, work: (db: OpenDatabase) => Promise<number>): Promise<number> {
  const config = loadConfig();
  const target = databaseOf(config);
  const refusal = wrongDatabase(target, use);
  if (refusal) {
    io.err(refusal);
    return 1;
  }
  io.out(`Database: ${target.database}`);
  let db;
  try {
    db = await openDatabase(config, `npm run ${use.command}`, { reuseRunningServer: true });
  } catch (err) {
    io.err(err instanceof DataDirInUseError ? err.message : `cannot open the database: ${(err as Error).message}`);
    return 1;
  }
  try {
    return await work(db);
  } catch (err) {
    io.err((err as Error).message);
    return 1;
  } finally {
    await db.close();
  }
}
