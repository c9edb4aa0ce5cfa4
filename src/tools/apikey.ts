import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { setLogLevel } from '../common/logger';
import { parseAddress } from '../common/scalars';
import { CommandIo, withDatabase } from './database';
import { ApiKeyRole } from '../modules/apikey/api-key.entity';
import { createApiKey, revokeApiKey } from '../modules/apikey/api-key.service';

const USAGE = `usage:
  npm run apikey -- create --address 0x<40 hex> [--admin] [--label text]
  npm run apikey -- revoke <key id or the key itself>
  npm run apikey -- --help

Works with DATABASE_URL, or on the embedded database: directly when no server runs, through the
running server's database connection when one does.`;

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
    return withDatabase(io, { command: 'apikey', argv, writes: 'the key' }, async (db) => {
      const role = parsed.values.admin ? ApiKeyRole.ADMIN : ApiKeyRole.USER;
      const { key, apiKey } = await createApiKey(db.ds.manager, { address, role, label: parsed.values.label });
      io.out(`Created ${role} key ${apiKey.id} for ${address}. The key, shown only this once:`);
      io.out(key);
      return 0;
    });
  }
  if (command === 'revoke' && target) {
    return withDatabase(io, { command: 'apikey', argv, writes: 'the key' }, async (db) => {
      const revoked = await revokeApiKey(db.ds, target);
      io.out(`Revoked key ${revoked.id} of ${revoked.address}.`);
      return 0;
    });
  }
  io.err(USAGE);
  return 2;
}

if (require.main === module) {
  setLogLevel('warn');
  void runApiKeyCommand(process.argv.slice(2), {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
  }).then((code) => process.exit(code));
}
