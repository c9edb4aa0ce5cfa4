import 'reflect-metadata';
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config';
import { AppError } from '../common/errors';
import { setLogLevel } from '../common/logger';
import { createContext } from '../app/context';
import { openDatabase } from '../db/database';
import { DataDirInUseError } from '../db/embedded';
import { ApiKeyRole } from '../modules/apikey/api-key.entity';
import { DEFAULT_POLICY } from '../common/request/context';
import { ImportProgress, importAssets } from '../modules/import/import.service';

const USAGE = `usage: npm run import -- <file.csv> --collection <collection id or contract address>

Imports the CSV's assets into the collection, all or nothing, as an operator (admin rights).
Columns: name, description, image_url, animation_url, external_link, metadata, owner, token_id, token_uri (with it only owner is required).`;

const OPERATOR = '0x0000000000000000000000000000000000000000';

export interface CommandIo {
  out: (text: string) => void;
  err: (text: string) => void;
  isTty: boolean;
}

/** Progress: a bar redrawn in place on a terminal, a plain line at most once a second otherwise. */
export function progressReporter(io: CommandIo, totalBytes: number, bytesRead: () => number) {
  let lastPlain = 0;
  return (p: ImportProgress, done = false) => {
    const seconds = Math.max(p.elapsedMs / 1000, 0.001);
    const rate = Math.round(p.validated / seconds);
    const fraction = totalBytes ? Math.min(1, bytesRead() / totalBytes) : 0;
    const text = `validated ${p.validated.toLocaleString('en')} rows, written ${p.written.toLocaleString('en')}, ${rate.toLocaleString('en')} rows/s`;
    if (io.isTty) {
      const width = 30;
      const filled = Math.round(fraction * width);
      io.err(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${Math.round(fraction * 100)}% ${text}${done ? '\n' : ''}`);
    } else if (done || Date.now() - lastPlain >= 1000) {
      lastPlain = Date.now();
      io.err(`progress: ${text}\n`);
    }
  };
}

export async function runImportCommand(argv: string[], io: CommandIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: { collection: { type: 'string' } } });
  } catch (err) {
    io.err(`${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const [file] = parsed.positionals;
  const collection = parsed.values.collection;
  if (!file || !collection) {
    io.err(`${USAGE}\n`);
    return 2;
  }
  let size: number;
  try {
    size = fs.statSync(file).size;
  } catch {
    io.err(`cannot read ${file}\n`);
    return 2;
  }
  let config;
  let db;
  try {
    config = loadConfig();
    db = await openDatabase(config, 'npm run import', { reuseRunningServer: true });
  } catch (err) {
    io.err(`${err instanceof DataDirInUseError ? err.message : `cannot open the database: ${(err as Error).message}`}\n`);
    return 1;
  }
  const stream = fs.createReadStream(file);
  const report = progressReporter(io, size, () => stream.bytesRead);
  let last: ImportProgress = { validated: 0, written: 0, elapsedMs: 0 };
  try {
    const ctx = createContext(db.ds, { requestId: 'cli-import', sqlStatements: 0 }, undefined, {
      actingAs: { address: OPERATOR, role: ApiKeyRole.ADMIN, keyId: 'operator' },
      policy: { ...DEFAULT_POLICY, importStatementTimeoutMs: config.dbImportStatementTimeoutMs },
    });
    const summary = await importAssets(ctx, collection, stream, (p) => {
      last = p;
      report(p);
    });
    report({ ...last, validated: summary.count, written: summary.count }, true);
    const range = summary.count ? ` (token ids ${summary.firstTokenId} to ${summary.lastTokenId})` : '';
    io.out(`Imported ${summary.count} assets into ${summary.collection.name}${range}.\n`);
    return 0;
  } catch (err) {
    if (io.isTty) io.err('\n');
    if (err instanceof AppError) {
      io.err(`${err.extensions.code}: ${err.message}\n`);
      for (const d of (err.extensions.details as { line?: number; field: string; message: string }[]) ?? []) {
        io.err(`  ${d.line !== undefined ? `line ${d.line}, ` : ''}${d.field}: ${d.message}\n`);
      }
    } else {
      io.err(`import failed: ${(err as Error).message}\n`);
    }
    return 1;
  } finally {
    await db.close();
  }
}

if (require.main === module) {
  setLogLevel('warn');
  void runImportCommand(process.argv.slice(2), {
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
    isTty: Boolean(process.stderr.isTTY),
  }).then((code) => process.exit(code));
}
