import 'reflect-metadata';
import { loadConfig } from './src/config';
import { createDataSource } from './src/db/data-source';
import { currentOwner } from './src/db/embedded';

/**
 * The TypeORM data source for TypeORM's own CLI (e.g. `npm run migration:show`):
 * DATABASE_URL, or the embedded database of a running server (`npm start`). The service itself builds
 * its data source in src/db/database.ts, which also starts the embedded database when needed.
 */
const config = loadConfig();
const url = config.databaseUrl ?? currentOwner(config.dataDir)?.url;
if (!url) {
  throw new Error('ormconfig: set DATABASE_URL, or start the server (npm start) so that the embedded database can be reached');
}

export default createDataSource({ url, poolSize: 2, queryTimeoutMs: config.dbQueryTimeoutMs });
