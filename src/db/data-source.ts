import 'reflect-metadata';
import { AbstractLogger, DataSource, LogLevel, LogMessage, QueryRunner } from 'typeorm';
import { countSqlStatement } from '../common/request/scope';
import { DEFAULT_POOL_IDLE_MS } from '../config';
import { logger } from '../common/logger';
import { entities } from './entities';
import { withConnectionFaultHandling } from './faults';
import { migrations } from './migrations';
import { pgWithNamedStatements } from './named-statements';

/** Counts every statement (for the per-request figure) and sends TypeORM's own warnings to our log. */
class CountingLogger extends AbstractLogger {
  logQuery(_query: string, _parameters?: unknown[], queryRunner?: QueryRunner): void {
    countSqlStatement(queryRunner);
  }
  /** A statement over SLOW_STATEMENT_MS: its time and text (never its parameters, which may hold values of callers). */
  logQuerySlow(time: number, query: string, _parameters?: unknown[], queryRunner?: QueryRunner): void {
    const scope = (queryRunner?.data as { scope?: { requestId: string } } | undefined)?.scope;
    logger.warn('slow statement', { requestId: scope?.requestId, ms: time, statement: query.replace(/\s+/g, ' ').slice(0, 1000) });
  }
  /**
   * A statement that failed. A constraint violation (SQLSTATE class 23: a duplicate, a missing reference)
   * is the client's doing, answered 409 or 422, and the request's own line records it: nothing here.
   * Anything else is one warning with the request id and the statement's text (never its parameters).
   */
  logQueryError(error: string | Error, query: string, _parameters?: unknown[], queryRunner?: QueryRunner): void {
    if (!this.isLogEnabledFor('query-error')) return;
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('23')) return;
    const scope = (queryRunner?.data as { scope?: { requestId: string } } | undefined)?.scope;
    logger.warn('statement failed', {
      requestId: scope?.requestId,
      code,
      error: error instanceof Error ? error.message : String(error),
      statement: query.replace(/\s+/g, ' ').slice(0, 1000),
    });
  }
  protected writeLog(level: LogLevel, message: LogMessage | LogMessage[]): void {
    const messages = Array.isArray(message) ? message : [message];
    for (const m of messages) {
      if (level === 'warn' || level === 'error') logger.warn('typeorm', { message: String(m.message) });
      else if (level === 'migration' || level === 'schema') logger.info(level, { message: String(m.message) });
    }
  }
}

export interface DataSourceOptions {
  url: string;
  poolSize: number;
  /** The client's bound on a statement (query_timeout); 0: none (the migrations'). */
  queryTimeoutMs: number;
  /**
   * PostgreSQL's statement_timeout of every connection of the pool (0 or absent: none): a statement running
   * longer is cancelled on the server, which queryTimeoutMs (the client giving up) does not do. The embedded
   * database (PGlite) accepts the setting and cannot enforce it: there queryTimeoutMs is the only bound.
   */
  statementTimeoutMs?: number;
  /** A statement slower than this is logged with its time (0: never). */
  slowStatementMs?: number;
  /** Milliseconds a statement waits for a free connection (or a new one to open) before it fails UNAVAILABLE; default queryTimeoutMs. */
  poolWaitMs?: number;
  /**
   * Milliseconds an unused pooled connection stays open; 0: until the pool ends. Default 300,000 (node-postgres's
   * own is 10 s): a connection closed after a quiet spell takes its prepared statements and its cached plans with
   * it, and the first requests after the spell open a new one and plan every statement again (2-4x slower at 10M).
   */
  poolIdleMs?: number;
  /** How many distinct statement texts get a name (the rest run unnamed; see named-statements.ts); for tests. */
  maxNamedStatements?: number;
  /**
   * TypeORM's own lines about migrations (three of counts, then one per migration): what its CLI shows
   * (migration:show, migration:revert); default true. The server turns them off and logs one line itself.
   */
  logMigrations?: boolean;
}

/** The data source of a database URL; connection failures become UNAVAILABLE, with safe retries (see faults.ts). */
export function createDataSource(options: DataSourceOptions): DataSource {
  const ds = new DataSource({
    type: 'postgres',
    url: options.url,
    driver: pgWithNamedStatements(options.maxNamedStatements),
    entities,
    migrations,
    migrationsTransactionMode: 'each',
    synchronize: false,
    // gen_random_uuid() is built into PostgreSQL 13+ and PGlite; no extension to install.
    uuidExtension: 'pgcrypto',
    installExtensions: false,
    poolSize: options.poolSize,
    logging: options.logMigrations === false ? ['warn', 'error'] : ['warn', 'error', 'migration'],
    maxQueryExecutionTime: options.slowStatementMs || undefined,
    logger: new CountingLogger(options.logMigrations === false ? ['warn', 'error'] : ['warn', 'error', 'migration', 'schema']),
    // connectionTimeoutMillis bounds both the wait for a free pooled connection and the opening of a new one.
    // statement_timeout is sent in each connection's start-up message, so it holds for every statement on
    // it: TypeORM's, the SQL plans' (read-statement.ts, on the same pool) and the replicas' (their own pools).
    extra: {
      query_timeout: options.queryTimeoutMs,
      connectionTimeoutMillis: options.poolWaitMs ?? options.queryTimeoutMs,
      idleTimeoutMillis: options.poolIdleMs ?? DEFAULT_POOL_IDLE_MS,
      statement_timeout: options.statementTimeoutMs || undefined,
      // No JIT compilation: the gateway's statements read a page each, and a page whose plan the planner
      // costs high (an index walk with a LIMIT it cannot see through, on a market of millions) was compiled
      // for 1.4 s to run for 20 ms (statistics by floor price at 10,000,000 assets). No parallel workers, for
      // the same reason: such a page was put under a Gather whose workers' start (54 ms idle, 0.5-2 s on a busy
      // machine) cost more than the rows they read, none (page 10 of statistics by a 7-day volume at 10M: the
      // count's fallback for a clock behind the bounds, false at once, 124 ms against 20 ms without workers).
      options: '-c jit=off -c max_parallel_workers_per_gather=0',
    },
  });
  return withConnectionFaultHandling(ds);
}
