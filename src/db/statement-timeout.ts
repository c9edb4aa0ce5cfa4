import { EntityManager } from 'typeorm';

/** How much longer than the server the client waits for a statement, so that the server's cancel comes first. */
const CLIENT_MARGIN_MS = 5000;

type PgClient = { connectionParameters?: { query_timeout?: number | false } };

/**
 * Lets the statements of `m`'s transaction run up to `ms` (SET LOCAL statement_timeout, which ends with the
 * transaction), and makes the client wait as long for them: the pool's own client bound (DB_QUERY_TIMEOUT_MS)
 * would give up first and leave the statement running on the server. Runs `work`, then gives the connection
 * its usual client bound back before the transaction ends.
 */
export async function withLongStatements<T>(m: EntityManager, ms: number, work: () => Promise<T>): Promise<T> {
  await m.query(`SET LOCAL statement_timeout = ${Math.floor(ms)}`);
  // The runner's connection (pg's Client), taken by the statement above.
  const params = (m.queryRunner as unknown as { databaseConnection?: PgClient } | undefined)?.databaseConnection?.connectionParameters;
  const usual = params?.query_timeout;
  if (params && usual) params.query_timeout = Math.max(usual, ms + CLIENT_MARGIN_MS);
  try {
    return await work();
  } finally {
    if (params && usual) params.query_timeout = usual;
  }
}
