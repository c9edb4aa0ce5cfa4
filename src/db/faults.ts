import { DataSource, QueryRunner } from 'typeorm';
import { StatementTimeoutError, UnavailableError } from '../common/errors';
import { logger } from '../common/logger';
import { statementsCancelled } from '../common/metrics';
import { RequestScope } from '../common/request/scope';

/**
 * Connection-level failures: the connection (not the statement) failed. 57P01-57P03: the backend was
 * terminated or the server is shutting down or starting; class 08: connection exceptions; the socket
 * errors of Node; pg's own messages for a connection that ended or never came free.
 */
const FAULT_CODES = new Set(['57P01', '57P02', '57P03', 'ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
const FAULT_MESSAGES = /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|timeout expired)/;
/** pg-pool's answer when no connection came free within connectionTimeoutMillis (DB_POOL_WAIT_MS). */
export const POOL_WAIT = /^timeout exceeded when trying to connect/;
const NOT_SENT = /^Client has encountered a connection error/;

export function driverErrorOf(err: unknown): { code?: unknown; message?: unknown; severity?: unknown } | undefined {
  const e = err as { driverError?: unknown } | undefined;
  return (e?.driverError ?? err) as { code?: unknown; message?: unknown; severity?: unknown } | undefined;
}

/** True when `err` (a pg error, or TypeORM's QueryFailedError around one) is a connection-level failure. */
export function isConnectionFailure(err: unknown): boolean {
  if (err instanceof UnavailableError) return true;
  const e = driverErrorOf(err);
  if (!e) return false;
  // PostgreSQL's ERROR (not FATAL): the statement failed and the session goes on, whatever the code. A
  // protocol violation (08P01) such as a bind of more values than the statement names is one of them;
  // taken for a lost connection, it dropped every pooled connection it was retried on.
  if (e.severity === 'ERROR') return false;
  const code = typeof e.code === 'string' ? e.code : '';
  return FAULT_CODES.has(code) || code.startsWith('08') || (typeof e.message === 'string' && FAULT_MESSAGES.test(e.message));
}

/** PostgreSQL's query_canceled: statement_timeout ran out (or pg_cancel_backend); an ERROR, the connection goes on. */
const QUERY_CANCELED = '57014';

/** True when `err` (a pg error, or TypeORM's QueryFailedError around one) is a statement the server cancelled. */
export function isStatementCancelled(err: unknown): boolean {
  return driverErrorOf(err)?.code === QUERY_CANCELED;
}

/** The TIMEOUT error of a statement of `scope`'s request that the server cancelled, logged with the statement's start. */
export function timedOutFor(scope: RequestScope | undefined, sql: string, cause: unknown): StatementTimeoutError {
  logger.warn('statement cancelled by the database', {
    requestId: scope?.requestId,
    statement: sql.replace(/\s+/g, ' ').slice(0, 200),
    error: (driverErrorOf(cause)?.message as string | undefined) ?? String(cause),
  });
  statementsCancelled.inc();
  return new StatementTimeoutError();
}

/**
 * PostgreSQL's deadlock_detected (40P01) and serialization_failure (40001): the statement lost a race with a
 * concurrent transaction and was rolled back, so nothing it did remains; the same statement may run again.
 */
const TRANSIENT_CONFLICT_CODES = new Set(['40P01', '40001']);

/** True when `err` (a pg error, or TypeORM's QueryFailedError around one) is a deadlock or serialization failure. */
export function isTransientConflict(err: unknown): boolean {
  const code = driverErrorOf(err)?.code;
  return typeof code === 'string' && TRANSIENT_CONFLICT_CODES.has(code);
}

/** pg's own error when no answer came within query_timeout (DB_QUERY_TIMEOUT_MS): the client gave up waiting. */
const QUERY_READ_TIMEOUT = /^Query read timeout/;

/** True when `err` is the client's query_timeout running out (the statement's fate on the server is unknown). */
export function isClientQueryTimeout(err: unknown): boolean {
  const message = driverErrorOf(err)?.message;
  return typeof message === 'string' && QUERY_READ_TIMEOUT.test(message);
}

export const CLIENT_TIMEOUT_MESSAGE =
  'the database did not answer in time; retry shortly (a write may have been applied: send writes with an Idempotency-Key to retry them safely)';

/** The UNAVAILABLE error of a statement of `scope`'s request whose answer did not come within the client's query_timeout, logged. */
export function clientTimedOutFor(scope: RequestScope | undefined, sql: string): UnavailableError {
  logger.warn('the database did not answer within the query timeout (DB_QUERY_TIMEOUT_MS)', { requestId: scope?.requestId, statement: sql.replace(/\s+/g, ' ').slice(0, 200) });
  return new UnavailableError(CLIENT_TIMEOUT_MESSAGE);
}

/** How many times a single statement (outside a transaction) that lost a deadlock runs in all. */
const CONFLICT_ATTEMPTS = 4;

/** UNAVAILABLE errors of a transaction that certainly did not commit: the whole transaction may run again. */
const uncommitted = new WeakSet<object>();

const WRITES = /\b(insert\s+into|update\s+\S+\s+set|delete\s+from|merge\s+into)\b/i;
function isRead(sql: string): boolean {
  return /^\s*(select|with)\b/i.test(sql) && !WRITES.test(sql);
}

/** TypeORM's PostgresQueryRunner, with the parts the retry resets to take a fresh connection. */
type PgQueryRunner = QueryRunner & {
  databaseConnection?: unknown;
  databaseConnectionPromise?: unknown;
  releasePostgresConnection(err?: unknown): Promise<void>;
};

const scopeOf = (runner: QueryRunner) => (runner.data as { scope?: RequestScope } | undefined)?.scope;

function unavailable(runner: QueryRunner, sql: string, cause: unknown, retried: boolean): UnavailableError {
  return unavailableFor(scopeOf(runner), sql, cause, retried);
}

/** The UNAVAILABLE error of a statement of `scope`'s request that met a connection failure, logged with its cause. */
export function unavailableFor(scope: RequestScope | undefined, sql: string, cause: unknown, retried: boolean): UnavailableError {
  logger.warn('database connection failed', {
    requestId: scope?.requestId,
    statement: sql.slice(0, 60),
    error: (driverErrorOf(cause)?.message as string | undefined) ?? String(cause),
    retried,
  });
  return new UnavailableError();
}

/**
 * How many times a statement that certainly changed nothing may run: once per pooled connection and once
 * more. A fault rarely comes alone (an administrator's pg_terminate_backend, a restart), and the pool may
 * still hold idle connections whose backends are gone but whose goodbye has not arrived yet: each failed
 * attempt drops one of them, so the last attempt runs on a connection opened for it.
 */
function attemptsFor(ds: DataSource | undefined): number {
  const poolSize = (ds?.options as { poolSize?: number } | undefined)?.poolSize ?? 10;
  return poolSize + 1;
}

/**
 * Makes one query runner meet connection failures: every one becomes an UnavailableError (503). Outside
 * a transaction, a statement that certainly changed nothing (a read, or one that never reached the
 * server) is run again on another connection first (up to attemptsFor times, never on the same one).
 * Inside a transaction, a failure on any statement but COMMIT (or on COMMIT before it was sent) means the
 * transaction did not commit: the error is marked so that `transaction()` runs the whole transaction
 * again (see withConnectionFaultHandling).
 */
function guardRunner(runner: PgQueryRunner): QueryRunner {
  const query = runner.query;
  const release = runner.releasePostgresConnection;
  // TypeORM releases a connection that emits 'error' while held between statements: remember why, and
  // keep the runner looking unreleased, so that its next statement reaches `attempt` (TypeORM's own
  // callers would refuse it as released) and meets the failure as UNAVAILABLE.
  let brokenBy: unknown;
  let released = runner.isReleased;
  Object.defineProperty(runner, 'isReleased', {
    get: () => released && brokenBy === undefined,
    set: (value: boolean) => {
      released = value;
    },
    configurable: true,
  });
  runner.releasePostgresConnection = function releaseWithCause(err?: unknown) {
    if (err !== undefined) brokenBy = err;
    return release.call(this, err);
  };

  const attempts = attemptsFor(runner.connection);
  async function attempt(sql: string, parameters: unknown[] | undefined, structured: boolean | undefined, tries: number): Promise<never> {
    const retried = tries > 1;
    const inTransaction = runner.isTransactionActive;
    const hadConnection = runner.databaseConnection !== undefined;
    try {
      if (released && brokenBy !== undefined) throw brokenBy;
      return (await (query as (...a: unknown[]) => Promise<unknown>).call(runner, sql, parameters, structured)) as never;
    } catch (err) {
      if (isStatementCancelled(err)) throw timedOutFor(scopeOf(runner), sql, err);
      // A statement of its own (autocommit) that lost a deadlock was rolled back whole: run it again after a
      // short, random pause (the other side has its locks by then). In a transaction the error goes up: the
      // transaction is aborted, and its caller (or the client, as a 503) decides.
      if (isTransientConflict(err) && !inTransaction && tries < CONFLICT_ATTEMPTS) {
        logger.warn('statement lost a deadlock; running it again', { requestId: scopeOf(runner)?.requestId, statement: sql.slice(0, 60), attempt: tries });
        await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20 * tries));
        return attempt(sql, parameters, structured, tries + 1);
      }
      if (isClientQueryTimeout(err)) throw clientTimedOutFor(scopeOf(runner), sql);
      if (!isConnectionFailure(err)) throw err;
      const notSent = (released && brokenBy === err) || (!hadConnection && runner.databaseConnection === undefined) || NOT_SENT.test(String(driverErrorOf(err)?.message));
      const poolWait = POOL_WAIT.test(String(driverErrorOf(err)?.message));
      if (!inTransaction && tries < attempts && !poolWait && (notSent || isRead(sql))) {
        if (!released) await release.call(runner, err);
        brokenBy = undefined;
        Object.assign(runner, { isReleased: false, databaseConnection: undefined, databaseConnectionPromise: undefined });
        return attempt(sql, parameters, structured, tries + 1);
      }
      const error = unavailable(runner, sql, err, retried);
      if (inTransaction && !poolWait && (notSent || !/^\s*commit\b/i.test(sql))) uncommitted.add(error);
      throw error;
    }
  }
  runner.query = ((sql: string, parameters?: unknown[], structured?: boolean) => attempt(sql, parameters, structured, 1)) as QueryRunner['query'];
  return runner;
}

/**
 * Installs the connection-fault handling on a data source: every query runner it (or a request's view of
 * it) creates is guarded (guardRunner), and `transaction()` runs a transaction again (up to once per pooled
 * connection and once more) when it failed on a lost connection before its COMMIT was sent.
 */
export function withConnectionFaultHandling(ds: DataSource): DataSource {
  const driver = ds.driver as DataSource['driver'] & { createQueryRunner(mode: string): QueryRunner };
  const create = driver.createQueryRunner.bind(driver);
  driver.createQueryRunner = (mode: string) => guardRunner(create(mode) as PgQueryRunner);
  const transaction = ds.transaction;
  ds.transaction = async function retryingTransaction(this: DataSource, ...args: unknown[]) {
    const attempts = attemptsFor(this);
    for (let tries = 1; ; tries++) {
      try {
        return await (transaction as (...a: unknown[]) => Promise<unknown>).apply(this, args);
      } catch (err) {
        if (!uncommitted.has(err as object) || tries >= attempts) throw err;
      }
    }
  } as DataSource['transaction'];
  return ds;
}
