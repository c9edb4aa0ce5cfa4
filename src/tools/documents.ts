import 'reflect-metadata';
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config';
import { setLogLevel } from '../common/logger';
import { buildAppSchema } from '../app/graphql/schema';
import { describeProblem, DOCUMENT_ID, readManifest } from '../app/graphql/trusted/manifest';
import { listDocuments, registerDocuments, removeDocument } from '../modules/trusted-document/trusted-document.service';
import { CommandIo, withDatabase } from './database';

const USAGE = `usage:
  npm run documents -- register <manifest.json>
  npm run documents -- list
  npm run documents -- remove <id>
  npm run documents -- --help

Trusted documents (docs/trusted-documents.md): the operations of a persisted-query manifest, as
@apollo/generate-persisted-query-manifest writes it. register checks every operation (its id is the
SHA-256 of its body; it validates against the schema and the limits of /graphql) and stores all of
them or, when one is wrong, none; registering the same manifest again changes nothing. Every gateway
process on the database serves them (TRUSTED_DOCUMENTS=allow or require).

Works with DATABASE_URL, or on the embedded database: directly when no server runs, through the
running server's database connection when one does.`;

const DATABASE_USE = (argv: string[]) => ({ command: 'documents', argv, writes: 'the documents' });

/** register: reads and checks the manifest before the database is opened; nothing is written unless every operation is right. */
async function register(file: string, argv: string[], io: CommandIo): Promise<number> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    io.err(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    return 2;
  }
  const config = loadConfig();
  const reading = readManifest(text, await buildAppSchema(), config.maxAliases);
  if ('error' in reading) {
    io.err(`${file}: ${reading.error}`);
    return 1;
  }
  if (reading.problems.length) {
    for (const problem of reading.problems) io.err(describeProblem(problem));
    const operations = new Set(reading.problems.map((p) => p.index)).size;
    io.err(`${file}: ${operations} of its operations cannot be registered; nothing was registered.`);
    return 1;
  }
  io.err(`checked ${reading.documents.length} operations of ${file} against the schema`);
  return withDatabase(io, DATABASE_USE(argv), async (db) => {
    const added = await registerDocuments(db.ds, reading.documents);
    const already = reading.documents.length - added.length;
    io.out(`Registered ${added.length} new operations${already ? `; ${already} were registered already` : ''}.`);
    return 0;
  });
}

/** The documents command; returns the exit code (0 done, 1 refused or failed, 2 wrong usage). */
export async function runDocumentsCommand(argv: string[], io: CommandIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: { help: { type: 'boolean', short: 'h', default: false } } });
  } catch (err) {
    io.err(`${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  const [command, target, ...extra] = parsed.positionals;
  if (parsed.values.help || command === 'help') {
    io.out(USAGE);
    return 0;
  }
  if (extra.length) {
    io.err(USAGE);
    return 2;
  }
  if (command === 'register' && target) return register(target, argv, io);
  if (command === 'list' && !target) {
    return withDatabase(io, DATABASE_USE(argv), async (db) => {
      const documents = await listDocuments(db.ds);
      for (const d of documents) io.out(`${d.id}  ${d.type.padEnd(12)}  ${d.name}  ${d.registeredAt.toISOString()}`);
      io.err(`${documents.length} registered operations`);
      return 0;
    });
  }
  if (command === 'remove' && target) {
    if (!DOCUMENT_ID.test(target)) {
      io.err(`remove takes an operation's id, 64 lowercase hex digits (npm run documents -- list shows them), got "${target.slice(0, 80)}"`);
      return 2;
    }
    return withDatabase(io, DATABASE_USE(argv), async (db) => {
      const removed = await removeDocument(db.ds, target);
      if (!removed) {
        io.err(`no registered operation has the id ${target}`);
        return 1;
      }
      io.out(`Removed ${removed.type} ${removed.name} (${removed.id}). Running servers stop serving it within a minute.`);
      return 0;
    });
  }
  io.err(USAGE);
  return 2;
}

if (require.main === module) {
  setLogLevel('warn');
  void runDocumentsCommand(process.argv.slice(2), {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
  }).then((code) => process.exit(code));
}
