import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { logger } from '../../common/logger';

/** The channel every writing transaction notifies (at its commit) and every process listens on. */
export const EVENTS_CHANNEL = 'nftgw_events';

export interface EventWakeupOptions {
  /** The database to LISTEN on: one dedicated connection per process. None: in-process wake-ups and the poll only. */
  listenUrl?: string;
  /** How often the head of the log is read, whatever the notifications say (EVENTS_POLL_MS). */
  pollMs: number;
}

type Listener = () => void;

/** The wake-ups of this process, so that a commit made here wakes its subscribers without a round trip. */
const running = new Set<EventWakeup>();

/** Called after a transaction that appended events has committed. */
export function eventsCommitted(): void {
  for (const wakeup of running) wakeup.wake();
}

/**
 * Tells the live subscriptions of one process that the log may have grown. It carries no data: each
 * subscription reads the table after the last position it delivered, so a lost or doubled wake-up
 * costs at most a read. Three sources, any of which is enough on its own to deliver:
 * - a commit in this process (eventsCommitted);
 * - PostgreSQL's NOTIFY, sent by every writing transaction at its commit, received by one LISTEN
 *   connection per process (re-opened when lost, with a wake-up after each reconnect);
 * - a poll of the log's head every pollMs, which wakes everyone when the head has moved.
 * The embedded database (PGlite) runs one session, so notifications cannot reach another connection
 * there: the listener is not opened, and one process has the in-process wake-ups.
 */
export class EventWakeup {
  private readonly listeners = new Set<Listener>();
  private client: Client | undefined;
  private poll: NodeJS.Timeout | undefined;
  private reconnect: NodeJS.Timeout | undefined;
  private reconnectMs = 250;
  private polledHead: string | undefined;
  private polling = false;
  private stopped = false;
  /** True while the LISTEN connection is up (for tests and /readyz-style checks). */
  listening = false;

  constructor(
    private readonly ds: DataSource,
    private readonly options: EventWakeupOptions,
  ) {}

  start(): void {
    running.add(this);
    this.poll = setInterval(() => void this.pollHead(), this.options.pollMs);
    this.poll.unref();
    if (this.options.listenUrl) void this.listen(this.options.listenUrl);
  }

  /** Calls `listener` on every wake-up until the returned function is called. */
  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  wake(): void {
    for (const listener of this.listeners) listener();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    running.delete(this);
    clearInterval(this.poll);
    clearTimeout(this.reconnect);
    this.listeners.clear();
    const client = this.client;
    this.client = undefined;
    this.listening = false;
    await client?.end().catch(() => undefined);
  }

  private async pollHead(): Promise<void> {
    if (this.polling || this.stopped || !this.listeners.size) return;
    this.polling = true;
    try {
      const [row] = await this.ds.query('SELECT last::text AS last FROM event_sequence');
      if (row && row.last !== this.polledHead) {
        this.polledHead = row.last;
        this.wake();
      }
    } catch {
      // The database is away: the subscriptions' own reads fail and retry; the next poll tries again.
    } finally {
      this.polling = false;
    }
  }

  private async listen(url: string): Promise<void> {
    const client = new Client({ connectionString: url, application_name: 'nftgw-events-listen' });
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    client.on('notification', () => this.wake());
    try {
      await client.connect();
      const [{ version }] = (await client.query('SELECT version()')).rows as { version: string }[];
      if (version.includes('PGlite')) {
        logger.debug('the database is PGlite: no LISTEN; subscriptions wake up in process and by poll');
        client.removeAllListeners('end');
        await client.end();
        return;
      }
      await client.query(`LISTEN ${EVENTS_CHANNEL}`);
    } catch (err) {
      logger.warn('event listener cannot connect; retrying', { error: err instanceof Error ? err.message : String(err) });
      this.lost(client);
      return;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.listening = true;
    this.reconnectMs = 250;
    // What was committed while there was no listener: every subscription re-reads after its last position.
    this.wake();
  }

  private lost(client: Client): void {
    client.removeAllListeners('end');
    client.removeAllListeners('notification');
    if (this.client === client) {
      this.client = undefined;
      this.listening = false;
    }
    void client.end().catch(() => undefined);
    if (this.stopped || this.reconnect) return;
    const delay = this.reconnectMs;
    this.reconnectMs = Math.min(this.reconnectMs * 2, 5000);
    this.reconnect = setTimeout(() => {
      this.reconnect = undefined;
      if (!this.stopped && this.options.listenUrl) void this.listen(this.options.listenUrl);
    }, delay);
    this.reconnect.unref();
  }
}
