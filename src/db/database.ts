import { DataSource } from 'typeorm';
import { Config } from '../config';
import { logger } from '../common/logger';
import { createDataSource } from './data-source';
import { currentOwner, EmbeddedDatabase, startEmbedded } from './embedded';

export interface OpenDatabase {
  ds: DataSource;
  embedded: boolean;
  close(): Promise<void>;
}

/**
 * The database a process works on: `DATABASE_URL` when set; else the embedded one under DATA_DIR, which
 * this process opens itself (`reuseRunningServer: false`, the server) or, for commands, reaches through
 * the server that already has it open. Migrations run before it is handed out.
 */
export async function openDatabase(
  config: Config,
  purpose: string,
  options: { reuseRunningServer: boolean } = { reuseRunningServer: false },
): Promise<OpenDatabase> {
  let embedded: EmbeddedDatabase | undefined;
  let url = config.databaseUrl;
  if (!url) {
    const owner = options.reuseRunningServer ? currentOwner(config.dataDir) : undefined;
    if (owner?.purpose === 'server') {
      url = owner.url;
      logger.info('using the embedded database of the running server', { pid: owner.pid });
    } else {
      embedded = await startEmbedded(config.dataDir, { purpose, maxConnections: config.dbPoolSize + 2 });
      url = embedded.url;
    }
  }
  const ds = createDataSource({ url, poolSize: config.dbPoolSize, queryTimeoutMs: config.dbQueryTimeoutMs, slowStatementMs: config.slowStatementMs });
  try {
    await ds.initialize();
    const applied = await ds.runMigrations({ transaction: 'each' });
    for (const m of applied) logger.info('migration applied', { name: m.name });
  } catch (err) {
    if (ds.isInitialized) await ds.destroy();
    await embedded?.stop();
    throw err;
  }
  return {
    ds,
    embedded: Boolean(embedded),
    async close() {
      if (ds.isInitialized) await ds.destroy();
      await embedded?.stop();
    },
  };
}
