import { DataSource, EntityManager } from 'typeorm';
import type { RequestScope } from '../../common/request/scope';
import { traceparentOf } from '../../common/tracing';
import { EVENTS_CHANNEL, eventsCommitted } from './event.wakeup';

/** Every kind of event the log holds. */
export const EVENT_TYPES = [
  'collection.created',
  'collection.updated',
  'collection.verified',
  'collection.claimed',
  'collection.royalties_updated',
  'asset.created',
  'asset.imported',
  'asset.transferred',
  'asset.transfer_reverted',
  'asset.metadata_updated',
  'asset.royalties_updated',
  'listing.created',
  'listing.updated',
  'listing.sold',
  'listing.cancelled',
  'listing.expired',
  'listing.inactivated',
  'listing.reactivated',
  'listing.pending',
  'offer.created',
  'offer.accepted',
  'offer.filled',
  'offer.cancelled',
  'offer.expired',
  'offer.released',
  'order.pending',
  'order.completed',
  'order.failed',
  'import.completed',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** What is wrong with a list of event types (an unknown value of a closed list: a 400 wherever it is given), or null. */
export function unknownEventTypes(types: readonly string[] | null | undefined): string | null {
  const unknown = (types ?? []).filter((t) => !(EVENT_TYPES as readonly string[]).includes(t));
  return unknown.length ? `unknown ${unknown.join(', ')}; each one of ${EVENT_TYPES.join(', ')}` : null;
}

/** The table an event's resource is read from: its `data` is that row as it stands at commit, in the API's words. */
export type EventSubject = 'collection' | 'asset' | 'listing' | 'offer' | 'order';

/** `{"currency": {address, symbol, decimals}}`, as the API shows a price's currency, of a row's chain and currency address. */
const currencyOf = (chainId: string, address: string) =>
  `jsonb_build_object('currency', (SELECT jsonb_build_object('address', c.address, 'symbol', c.symbol, 'decimals', c.decimals)
    FROM currencies c WHERE c.chain_id = ${chainId} AND c.address = ${address}))`;

/**
 * The events of one transaction, kept until its end and then appended by one statement that takes
 * the next positions from event_sequence. That statement is the transaction's last, so the sequence's
 * row stays locked until the commit: positions follow commit order (see the events migration).
 */
export class EventLog {
  private readonly types: string[] = [];
  private readonly subjects: string[] = [];
  private readonly ids: string[] = [];
  private readonly extras: (string | null)[] = [];
  private readonly committed: (() => void)[] = [];

  /** One event about one row; `extra` is merged into its data (e.g. an import's count and token range). */
  add(type: EventType, subject: EventSubject, id: string, extra?: Record<string, unknown>): void {
    this.types.push(type);
    this.subjects.push(subject);
    this.ids.push(id);
    this.extras.push(extra ? JSON.stringify(extra) : null);
  }

  /**
   * Appends the events added so far now, not at the end of the transaction: for events about rows the
   * transaction then deletes (their data is the row as it is now). Later events are appended after them.
   */
  async flush(m: EntityManager): Promise<void> {
    await this.append(m);
    for (const list of [this.types, this.subjects, this.ids, this.extras]) list.length = 0;
  }

  /** Runs `done` once the transaction has committed (a figure counted then is never one that rolled back). */
  afterCommit(done: () => void): void {
    this.committed.push(done);
  }

  /** The transaction has committed: what waited for it runs. */
  commitDone(): void {
    for (const done of this.committed.splice(0)) done();
  }

  get size(): number {
    return this.types.length;
  }

  /**
   * `data` is the row as stored, less the expiry sweeper's own mark (`expiry_swept`) and a listing's copy of its
   * currency's decimals (`currency_decimals`), which no client reads; a price's `currency` is shown as the API
   * shows it, `{address, symbol, decimals}`.
   * Its readers (the feed, subscriptions, webhooks) give it in the API's words (event_data_as_api, see its
   * migration): applied here, inside the write that holds the log's sequence row until commit, it made
   * every concurrent write wait for it (50 parallel asset creations on PostgreSQL: 9 s to over 20 s).
   * The sequence's row is read as a scalar (and the NOTIFY made by its UPDATE): joined as a table, its
   * estimate of 1,100 rows squared made the planner expect millions of rows, and JIT-compile the append
   * of a few events (1.2-1.5 s of JIT for a chain step's 5,000 events, EXPLAIN ANALYZE).
   */
  async append(m: EntityManager): Promise<void> {
    if (!this.size) return;
    await m.query(
      `WITH e AS (
         SELECT * FROM unnest($1::text[], $2::text[], $3::uuid[], $4::jsonb[]) WITH ORDINALITY AS e(type, subject, id, extra, n)),
       seq AS (
         UPDATE event_sequence SET last = last + $5::bigint WHERE id
         RETURNING last - $5::bigint AS base, pg_notify('${EVENTS_CHANNEL}', last::text) AS woken)
       INSERT INTO events (position, type, subject_id, chain_id, collection_id, asset_id, data, traceparent)
       SELECT (SELECT base FROM seq) + e.n, e.type, CASE WHEN e.subject IN ('listing', 'offer', 'order') THEN e.id END, d.chain_id, d.collection_id, d.asset_id, d.data || COALESCE(e.extra, '{}'::jsonb), $6::text
       FROM e CROSS JOIN LATERAL (
         SELECT c.chain_id, c.id AS collection_id, NULL::uuid AS asset_id, to_jsonb(c) AS data
           FROM collections c WHERE e.subject = 'collection' AND c.id = e.id
         UNION ALL SELECT a.chain_id, a.collection_id, a.id, to_jsonb(a) FROM assets a WHERE e.subject = 'asset' AND a.id = e.id
         UNION ALL SELECT a.chain_id, l.collection_id, l.asset_id, to_jsonb(l) - 'expiry_swept' - 'currency_decimals' || ${currencyOf('a.chain_id', 'l.currency')}
           FROM listings l JOIN assets a ON a.id = l.asset_id WHERE e.subject = 'listing' AND l.id = e.id
         UNION ALL SELECT o.chain_id, o.collection_id, o.asset_id, to_jsonb(o) - 'expiry_swept' || ${currencyOf('o.chain_id', 'o.currency')}
           FROM offers o WHERE e.subject = 'offer' AND o.id = e.id
         UNION ALL SELECT r.chain_id, r.collection_id, r.asset_id, to_jsonb(r) || ${currencyOf('r.chain_id', 'r.currency')}
           FROM orders r WHERE e.subject = 'order' AND r.id = e.id
       ) d`,
      // The writing request's span, while it is traced: a webhook delivery of these events links to it.
      [this.types, this.subjects, this.ids, this.extras, this.size, traceparentOf((m.queryRunner?.data as { scope?: RequestScope } | undefined)?.scope)],
    );
  }
}

/**
 * A writing transaction with its event log: `work` changes rows and records what happened; the events
 * are appended, numbered in commit order, as the transaction's last statement. The same statement
 * NOTIFYs the listening gateway processes (PostgreSQL delivers it at commit); the subscriptions of
 * this process are woken once the commit is done.
 */
export async function withEvents<T>(ds: DataSource, work: (m: EntityManager, events: EventLog) => Promise<T>): Promise<T> {
  const events = new EventLog();
  const result = await ds.transaction(async (m) => {
    const done = await work(m, events);
    await events.append(m);
    return done;
  });
  if (events.size > 0) eventsCommitted();
  events.commitDone();
  return result;
}
