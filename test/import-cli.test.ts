import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CommandIo, runImportCommand } from '../src/tools/import';
import { randomAddress, startServer, TestServer } from './setup/server';
import { saveCollection } from './factories/marketplace';
import { buildCsv, csvRecords, tokenIdsOf } from './factories/csv';

let server: TestServer;
let dir: string;
let savedDatabaseUrl: string | undefined;

beforeAll(async () => {
  server = await startServer();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'import-cli-'));
});
afterAll(async () => {
  fs.rmSync(dir, { recursive: true, force: true });
  await server.close();
});
// The command opens the database of DATABASE_URL: point it at the run's database, and put it back after.
beforeEach(() => {
  savedDatabaseUrl = process.env.DATABASE_URL;
  process.env.DATABASE_URL = process.env.TEST_DATABASE_URL;
});
afterEach(() => {
  if (savedDatabaseUrl === undefined) delete process.env.DATABASE_URL;
  else process.env.DATABASE_URL = savedDatabaseUrl;
});

function captureIo(isTty = false): CommandIo & { stdout: () => string; stderr: () => string } {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out: (text) => out.push(text),
    err: (text) => err.push(text),
    isTty,
    stdout: () => out.join(''),
    stderr: () => err.join(''),
  };
}

function writeCsv(name: string, content: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, content);
  return file;
}

describe('npm run import (runImportCommand)', () => {
  test('when a valid CSV is imported, then it exits 0 with the summary on out and progress lines on err', async () => {
    const owner = await server.key();
    const collection = await saveCollection(server, owner.key, { name: 'Cli Owls' });
    const holder = randomAddress();
    const file = writeCsv('valid.csv', buildCsv(csvRecords(holder, 5)));
    const io = captureIo(false);

    const code = await runImportCommand([file, '--collection', collection.contractAddress], io);

    expect(code).toBe(0);
    expect(io.stdout()).toBe('Imported 5 assets into Cli Owls (token ids 1 to 5).\n');
    const progress = io.stderr().split('\n').filter(Boolean);
    expect(progress.length).toBeGreaterThan(0);
    for (const line of progress) expect(line).toMatch(/^progress: validated [\d,]+ rows, written [\d,]+, [\d,]+ rows\/s$/);
    expect(progress[progress.length - 1]).toMatch(/^progress: validated 5 rows, written 5,/);
    expect(io.stderr()).not.toContain('\r');
    expect(await tokenIdsOf(server, collection.id)).toEqual(['1', '2', '3', '4', '5']);
    const owners = await server.ds.query('SELECT DISTINCT owner FROM assets WHERE collection_id = $1', [collection.id]);
    expect(owners).toEqual([{ owner: holder }]);
  });

  test('when rows are bad, then it exits 1, prints every problem with its line and writes nothing', async () => {
    const owner = await server.key();
    const collection = await saveCollection(server, owner.key);
    const records = csvRecords(owner.address, 4);
    records[0].image_url = 'not a url';
    records[2].metadata = '42';
    records[3].owner = 'someone';
    const file = writeCsv('bad.csv', buildCsv(records));
    const io = captureIo(false);

    const code = await runImportCommand([file, '--collection', collection.id], io);

    expect(code).toBe(1);
    expect(io.stdout()).toBe('');
    const err = io.stderr();
    expect(err).toContain('VALIDATION_FAILED: 3 problems in the file; nothing was imported');
    expect(err).toMatch(/^ {2}line 2, image_url: .+$/m);
    expect(err).toMatch(/^ {2}line 4, metadata: .+$/m);
    expect(err).toMatch(/^ {2}line 5, owner: .+$/m);
    expect(await tokenIdsOf(server, collection.id)).toEqual([]);
  });

  test('when the file or the collection is not given, then it exits 2 with the usage', async () => {
    const noCollection = captureIo();
    expect(await runImportCommand([writeCsv('x.csv', 'name\n')], noCollection)).toBe(2);
    expect(noCollection.stderr()).toContain('usage: npm run import');

    const noFile = captureIo();
    expect(await runImportCommand(['--collection', randomAddress()], noFile)).toBe(2);
    expect(noFile.stderr()).toContain('usage: npm run import');

    const missingFile = captureIo();
    expect(await runImportCommand([path.join(dir, 'absent.csv'), '--collection', randomAddress()], missingFile)).toBe(2);
    expect(missingFile.stderr()).toContain('cannot read');
  });
});
