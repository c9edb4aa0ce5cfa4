import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * One test file at a time among those that take the same lock, across jest's workers: files whose
 * processes run webhook delivery workers on the shared database (each worker delivers every due endpoint,
 * so two such files at once deliver each other's webhooks with the wrong settings). A directory is made
 * atomically; a lock older than 10 minutes is taken as left by a killed run. Answers its release.
 */
export async function exclusive(name: string, waitMs = 600_000): Promise<() => void> {
  const run = createHash('sha256').update(process.env.TEST_DATABASE_URL ?? '').digest('hex').slice(0, 12);
  const dir = path.join(os.tmpdir(), `nftgw-test-lock-${name}-${run}`);
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      fs.mkdirSync(dir);
      return () => fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      const age = Date.now() - (fs.statSync(dir, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > 600_000) fs.rmSync(dir, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`test lock ${name} still held after ${waitMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}
