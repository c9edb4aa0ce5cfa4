import pg from 'pg';
import { DataSource } from 'typeorm';

/** A statement a connection sent, with its parameters. */
export interface Sent {
  text: string;
  values: unknown[];
}

/**
 * Captures every statement the process's pg connections send (named ones as a config object), except those
 * of the client `except()` answers (the test's own, which explains them), from now until `restore()`.
 * `take()` answers the statements captured since the last `take()`.
 */
export function captureStatements(except: () => pg.Client | undefined): { take: () => Sent[]; restore: () => void } {
  let sent: Sent[] = [];
  const originalQuery = pg.Client.prototype.query;
  pg.Client.prototype.query = function capture(this: pg.Client, config: unknown, values?: unknown, callback?: unknown) {
    if (this !== except()) {
      const text = typeof config === 'string' ? config : (config as { text?: string }).text;
      const given = Array.isArray(values) ? values : ((config as { values?: unknown[] }).values ?? []);
      if (text) sent.push({ text, values: given });
    }
    return (originalQuery as (...args: unknown[]) => unknown).call(this, config, values, callback);
  } as typeof pg.Client.prototype.query;
  return {
    take: () => {
      const taken = sent;
      sent = [];
      return taken;
    },
    restore: () => {
      pg.Client.prototype.query = originalQuery;
    },
  };
}

/** A statement the data source's logger saw, with its parameters. */
export interface Logged {
  sql: string;
  parameters: unknown[];
}

/**
 * Keeps, in `into`, every statement the data source's logger sees that `keep` accepts (never an EXPLAIN), from
 * now until the returned restore is called: the statements a plan test explains afterwards.
 */
export function logStatements(ds: DataSource, keep: (sql: string) => boolean, into: Logged[]): () => void {
  const logger = ds.logger as { logQuery: (sql: string, parameters?: unknown[]) => void };
  const logQuery = logger.logQuery;
  logger.logQuery = function (this: unknown, sql: string, parameters?: unknown[], ...rest: unknown[]) {
    if (!sql.startsWith('EXPLAIN') && keep(sql)) into.push({ sql, parameters: parameters ?? [] });
    return (logQuery as (...a: unknown[]) => void).call(this, sql, parameters, ...rest);
  };
  return () => {
    logger.logQuery = logQuery;
  };
}
