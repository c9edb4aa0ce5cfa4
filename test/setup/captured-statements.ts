import pg from 'pg';

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
