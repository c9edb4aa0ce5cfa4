import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config';
import { setLogLevel } from '../common/logger';
import { parseAddress } from '../common/scalars';
import { databaseOf, runningServers } from '../common/running-servers';
import { openDatabase } from '../db/database';
import { DataDirInUseError } from '../db/embedded';
import { ApiKeyRole } from '../modules/apikey/api-key.entity';
import { createApiKey, revokeApiKey } from '../modules/apikey/api-key.service';

const USAGE = `usage:
  npm run apikey -- create --address 0x<40 hex> [--admin] [--label text]
  npm run apikey -- revoke <key id or the key itself>
  npm run apikey -- --help

Works with DATABASE_URL, or on the embedded database: directly when no server runs, through the
running server's database connection when one does.`;

export interface CommandIo {
  out: (line: string) => void;
  err: (line: string) => void;
}

/** The apikey command; returns the exit code. */
export async function runApiKeyCommand(argv: string[], io: CommandIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        address: { type: 'string' },
        admin: { type: 'boolean', default: false },
        label: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (err) {
    io.err(`${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  const [command, target] = parsed.positionals;
  // Asked for, the usage is an answer (stdout, exit 0), not a complaint.
  if (parsed.values.help || command === 'help') {
    io.out(USAGE);
    return 0;
  }
  if (command === 'create') {
    let address: string;
    try {
      address = parseAddress(parsed.values.address);
    } catch (err) {
      io.err(`--address: ${(err as Error).message}\n${USAGE}`);
      return 2;
    }
    return withDatabase(io, argv, async (db) => {
      const role = parsed.values.admin ? ApiKeyRole.ADMIN : ApiKeyRole.USER;
      const { key, apiKey } = await createApiKey(db.ds.manager, { address, role, label: parsed.values.label });
      io.out(`Created ${role} key ${apiKey.id} for ${address}. The key, shown only this once:`);
      io.out(key);
      return 0;
    });
  }
  if (command === 'revoke' && target) {
    return withDatabase(io, argv, async (db) => {
      const revoked = await revokeApiKey(db.ds, target);
      io.out(`Revoked key ${revoked.id} of ${revoked.address}.`);
      return 0;
    });
  }
  io.err(USAGE);
  return 2;
}

/**
 * With neither DATA_DIR nor DATABASE_URL set, a key written to ./data is lost on a server that runs on
 * another database: refuse, naming the server and the setting that reaches its database.
 */
function wrongDatabase(target: { database: string }, argv: string[]): string | undefined {
  if (process.env.DATA_DIR || process.env.DATABASE_URL) return undefined;
  const servers = runningServers();
  if (!servers.length || servers.some((s) => s.database === target.database)) return undefined;
  const [first] = servers;
  return [
    `No server runs on ${target.database}, where this command would write, so no server would know the key.`,
    ...servers.map((s) => `A server (pid ${s.pid}, port ${s.port}) runs on ${s.database}.`),
    `To write where it reads: ${first.reach} npm run apikey -- ${argv.join(' ')}`,
  ].join('\n');
}

async function withDatabase(io: CommandIo, argv: string[], work: (db: Awaited<ReturnType<typeof openDatabase>>) => Promise<number>) {
  const config = loadConfig();
  const target = databaseOf(config);
  const refusal = wrongDatabase(target, argv);
  if (refusal) {
    io.err(refusal);
    return 1;
  }
  io.out(`Database: ${target.database}`);
  let db;
  try {
    db = await openDatabase(config, 'npm run apikey', { reuseRunningServer: true });
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

if (require.main === module) {
  setLogLevel('warn');
  void runApiKeyCommand(process.argv.slice(2), {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
  }).then((code) => process.exit(code));
}
