import { spawn } from 'node:child_process';
import path from 'node:path';
import { freshDatabase, migrateFresh } from './global-setup';

/**
 * A fresh database of its own: on the DATABASE_URL server, or an in-memory embedded one in a child process
 * (the run's embedded database is shared by every file, and a second one cannot start inside a test file).
 */
export async function ownDatabase(prefix: string): Promise<{ url: string; drop: () => Promise<void> }> {
  if (process.env.DATABASE_URL) return freshDatabase(prefix);
  const embedded = path.resolve(__dirname, '../../src/db/embedded.ts');
  const child = spawn(
    process.execPath,
    ['-r', path.resolve(__dirname, 'ts-register.js'), '-e', `require(${JSON.stringify(embedded)}).startEmbedded('', { purpose: 'test', maxConnections: 8, memory: true }).then((e) => console.log(e.url))`],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = /^(postgres\S*)\n/m.exec(out);
      if (line) resolve(line[1]);
    });
    child.once('exit', (code) => reject(new Error(`the embedded database's process ended (${code}) before it answered`)));
  });
  await migrateFresh(url);
  return {
    url,
    drop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
