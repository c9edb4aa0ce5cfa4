import { DataSource } from 'typeorm';
import { logger } from '../../common/logger';
import { EventFilter, readEventPage } from './event.service';
import { MarketEvent } from './event.types';
import { EventWakeup } from './event.wakeup';

/** Events read from the table per statement. */
const PAGE = 500;
/** A subscriber this many events behind its socket leaves the shared tail and reads at its own pace. */
const MAX_BUFFERED = 5000;
/** After a failed read (the database away), the next try waits this long, doubling up to RETRY_MAX_MS. */
const RETRY_MS = 250;
const RETRY_MAX_MS = 5000;

const NO_FILTER: EventFilter = { types: null, collectionId: null, assetId: null };

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

function passes(filter: EventFilter, event: MarketEvent): boolean {
  return (
    (!filter.types || filter.types.includes(event.type)) &&
    (!filter.collectionId || event.collectionId === filter.collectionId) &&
    (!filter.assetId || event.assetId === filter.assetId)
  );
}

const after = (a: string, b: string) => BigInt(a) > BigInt(b);

/**
 * The live end of the log in one process: on each wake-up, ONE read of the table after the position it
 * has reached, handed to every subscription that has caught up with it (each keeps what passes its
 * filter). So 100 live subscribers cost one statement per wake-up, not 100.
 */
class LiveTail {
  /** Every event up to here has been handed to the joined streams; undefined until the first joins. */
  position: string | undefined;
  private readonly streams = new Set<EventStream>();
  private reading = false;
  private woken = false;
  private retryMs = RETRY_MS;

  constructor(
    private readonly ds: DataSource,
    wakeup: EventWakeup,
  ) {
    wakeup.subscribe(() => void this.read());
  }

  /** A stream at `position`, at or after the tail's own: from now on it is handed each read. */
  join(stream: EventStream, position: string): void {
    this.position ??= position;
    this.streams.add(stream);
    // A wake-up that came while the stream was still reading by itself may have found no one to read for.
    void this.read();
  }

  leave(stream: EventStream): void {
    this.streams.delete(stream);
    if (!this.streams.size) this.position = undefined;
  }

  private async read(): Promise<void> {
    // A wake-up during a read is kept: the read after it sees that commit.
    this.woken = true;
    if (this.reading) return;
    this.reading = true;
    try {
      while (this.woken && this.streams.size && this.position !== undefined) {
        this.woken = false;
        const from = this.position;
        try {
          const { events, head } = await readEventPage(this.ds, NO_FILTER, from, PAGE);
          this.retryMs = RETRY_MS;
          if (this.position !== from) continue;
          const reached = events.length === PAGE ? events[events.length - 1].position : after(head, from) ? head : from;
          if (events.length === PAGE) this.woken = true;
          this.position = reached;
          for (const stream of this.streams) stream.deliver(events, reached);
        } catch (err) {
          logger.warn('the live event tail cannot read the log; retrying', { error: err instanceof Error ? err.message : String(err) });
          this.woken = true;
          await sleep(this.retryMs);
          this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
        }
      }
    } finally {
      this.reading = false;
    }
  }
}

const tails = new WeakMap<EventWakeup, LiveTail>();

function tailOf(ds: DataSource, wakeup: EventWakeup): LiveTail {
  let tail = tails.get(wakeup);
  if (!tail) tails.set(wakeup, (tail = new LiveTail(ds, wakeup)));
  return tail;
}

/**
 * One subscription's events: those after `after` that pass the filter, in log order, each once. Every
 * event comes from the table. It first reads the stored events itself, page by page after the last
 * position it has passed; once it has reached the process's live tail, it joins it and takes from each
 * of the tail's reads the events after its own position. Nothing but that position is carried across
 * the seam, so there is no gap and no duplicate. `return()` (the client completed, or the socket
 * closed) ends it at once, even mid-wait.
 */
export class EventStream implements AsyncIterableIterator<MarketEvent> {
  private readonly buffer: MarketEvent[] = [];
  /** Every event up to here that passes the filter is in the buffer or has been handed out. */
  private position: string;
  private live = false;
  private closed = false;
  private wait: (() => void) | undefined;
  private retryMs = RETRY_MS;
  private readonly tail: LiveTail;

  constructor(
    private readonly ds: DataSource,
    private readonly filter: EventFilter,
    start: string,
    wakeup: EventWakeup,
    private readonly requestId: string,
  ) {
    this.position = start;
    this.tail = tailOf(ds, wakeup);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<MarketEvent>> {
    while (!this.closed) {
      const event = this.buffer.shift();
      if (event) return { value: event, done: false };
      if (this.live) await new Promise<void>((resolve) => (this.wait = resolve));
      else await this.catchUp();
      this.wait = undefined;
    }
    return { value: undefined, done: true };
  }

  async return(): Promise<IteratorResult<MarketEvent>> {
    this.closed = true;
    this.buffer.length = 0;
    this.tail.leave(this);
    this.wait?.();
    return { value: undefined, done: true };
  }

  /** From the tail's read: the events after this stream's position that pass its filter; all up to `reached` are seen. */
  deliver(events: MarketEvent[], reached: string): void {
    for (const event of events) if (after(event.position, this.position) && passes(this.filter, event)) this.buffer.push(event);
    if (after(reached, this.position)) this.position = reached;
    if (this.buffer.length > MAX_BUFFERED) {
      // The client reads slower than the log grows: it goes on by itself from the last event it was given.
      this.tail.leave(this);
      this.live = false;
      this.position = (BigInt(this.buffer[0].position) - 1n).toString();
      this.buffer.length = 0;
    }
    this.wait?.();
  }

  /** One page of the stored events; when fewer than a page remain, it joins the live tail. */
  private async catchUp(): Promise<void> {
    try {
      const { events, head } = await readEventPage(this.ds, this.filter, this.position, PAGE);
      this.retryMs = RETRY_MS;
      if (this.closed) return;
      this.buffer.push(...events);
      if (events.length === PAGE) {
        this.position = events[events.length - 1].position;
        return;
      }
      // Everything up to the head was visible to this read: what the filter left out need not be read again.
      if (after(head, this.position)) this.position = head;
      if (this.tail.position === undefined || !after(this.tail.position, this.position)) {
        this.tail.join(this, this.position);
        this.live = true;
      }
    } catch (err) {
      logger.warn('event subscription cannot read the log; retrying', { requestId: this.requestId, error: err instanceof Error ? err.message : String(err) });
      await sleep(this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
    }
  }
}
