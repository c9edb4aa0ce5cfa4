import { DataSource } from 'typeorm';
import type { Context } from '../../common/request/context';
import { keyOf } from '../../common/graphql/node';
import { BadRequestError, Problems } from '../../common/errors';
import { rootDataSource } from '../../common/request/scope';
import { Params } from '../../common/sql';
import { UUID } from '../../common/validate';
import { findCollectionByRef } from '../collection/collection.service';
import { unknownEventTypes } from './event.log';
import { EventArgs, EventFeed, EventFilterArgs, MarketEvent, MAX_EVENTS } from './event.types';

const POSITION = /^(0|[1-9][0-9]{0,17})$/;

/** An `after` as a position: an event's id (its Node id) stands for its position. */
export const positionOf = (after: string) => keyOf('MarketEvent', after);

/** Whether a MarketEvent's key (an `after`, read by positionOf) is a position. */
export const isPosition = (key: string) => POSITION.test(key);

/** The checked filters of a read of the feed, with the collection resolved to its id. */
export interface EventFilter {
  types: string[] | null;
  collectionId: string | null;
  assetId: string | null;
}

/** Problems with `after` and the filters, collected into `problems` (shared by the query and the subscription). */
function checkFilter(problems: Problems, args: EventFilterArgs & { after?: string | null }): void {
  if (args.after != null && !POSITION.test(positionOf(args.after))) {
    problems.add('after', `must be an event's position (a whole number from 0) or id, got ${JSON.stringify(args.after)}`);
  }
  const unknownTypes = unknownEventTypes(args.types);
  if (unknownTypes) problems.add('types', unknownTypes);
  if (args.assetId != null && !UUID.test(args.assetId)) problems.add('assetId', `must be an asset id (UUID), got ${JSON.stringify(args.assetId)}`);
}

/** Checks `after` and the filters (400 naming each bad one) and resolves the collection (404 when unknown). */
export async function eventFilterOf(ctx: Context, args: EventFilterArgs & { after?: string | null }): Promise<EventFilter> {
  const problems = new Problems();
  checkFilter(problems, args);
  problems.throwIfAnyMalformed();
  return {
    types: args.types?.length ? args.types : null,
    collectionId: args.collectionId != null ? (await findCollectionByRef(ctx, args.collectionId)).id : null,
    assetId: args.assetId != null ? args.assetId.toLowerCase() : null,
  };
}

/** The fields of a MarketEvent, over the events row `e`. */
const EVENT_COLUMNS = `e.position::text AS position, e.type, e.occurred_at AS "occurredAt", e.chain_id AS "chainId",
  e.collection_id AS "collectionId", e.asset_id AS "assetId", event_data_as_api(e.data) AS data`;

/** The events at these positions (a Node lookup), in no particular order. */
export function eventsAt(ds: DataSource, positions: readonly string[]): Promise<MarketEvent[]> {
  return ds.query(`SELECT ${EVENT_COLUMNS} FROM events e WHERE e.position = ANY($1::bigint[])`, [positions]);
}

export interface EventPage {
  events: MarketEvent[];
  /**
   * The log's head when the page was read, in the same snapshot: every event up to it is committed and
   * was visible to this read (positions follow commit order), so a reader that got fewer than `limit`
   * events may go on after the head without missing one of its filter.
   */
  head: string;
  /** With `countAll`: every event that passes the filter, whatever its position, in the same snapshot. */
  total?: number;
}

/**
 * Up to `limit` events after `after` that pass `filter`, in log order, and the head of the log in the same
 * snapshot (and, with `countAll`, how many events pass the filter in all).
 */
export async function readEventPage(ds: DataSource, filter: EventFilter, after: string, limit: number, countAll = false): Promise<EventPage> {
  const p = new Params();
  const filters: string[] = [];
  if (filter.types) filters.push(`e.type = ANY(${p.add(filter.types)}::text[])`);
  if (filter.collectionId) filters.push(`e.collection_id = ${p.add(filter.collectionId)}`);
  if (filter.assetId) filters.push(`e.asset_id = ${p.add(filter.assetId)}::uuid`);
  const where = [`e.position > ${p.add(after)}::bigint`, ...filters];
  const total = countAll ? `, (SELECT count(*) FROM events e${filters.length ? ` WHERE ${filters.join(' AND ')}` : ''}) AS total` : '';
  const rows: (MarketEvent & { head: string; total?: string })[] = await ds.query(
    `SELECT s.last::text AS head${total}, e.* FROM event_sequence s LEFT JOIN LATERAL (
       SELECT ${EVENT_COLUMNS}
       FROM events e WHERE ${where.join(' AND ')} ORDER BY e.position LIMIT ${p.add(limit)}) e ON true`,
    p.values,
  );
  const head = rows[0]?.head ?? '0';
  const events = rows.filter((r) => r.position != null).map(({ head: _head, total: _total, ...event }) => event);
  return { events, head, total: countAll && rows[0] ? Number(rows[0].total) : undefined };
}

/**
 * The events after a position, in log order. A reader that goes on with `after: cursor` sees every
 * event once, in order, with none appearing later below a position it has passed (positions follow
 * commit order).
 */
export async function readEvents(ctx: Context, args: EventArgs): Promise<Omit<EventFeed, 'edges' | 'pageInfo' | 'totalCount'>> {
  const problems = new Problems();
  checkFilter(problems, args);
  if (!Number.isInteger(args.limit) || args.limit < 1 || args.limit > MAX_EVENTS) {
    problems.add('limit', `must be an integer from 1 to ${MAX_EVENTS}, got ${args.limit}`);
  }
  problems.throwIfAnyMalformed();
  const filter = await eventFilterOf(ctx, args);
  const after = args.after != null ? positionOf(args.after) : '0';
  const countAll = args.countTotal === true;
  let { events, head, total } = await readEventPage(ctx.ds, filter, after, args.limit + 1, countAll);
  if (BigInt(after) > BigInt(head)) {
    // A read replica may be behind the primary, where the position was handed out: the primary decides.
    ({ events, head, total } = await readEventPage(rootDataSource(ctx.ds), filter, after, args.limit + 1, countAll));
    refuseBeyondHead(after, head);
  }
  const hasMore = events.length > args.limit;
  if (hasMore) events.length = args.limit;
  return {
    result: events,
    cursor: events.length ? events[events.length - 1].position : after,
    hasMore,
    connection: { cursorAt: (index) => events[index].position, hasPrevious: BigInt(after) > 0n, total },
  };
}

/**
 * A position beyond the log's head was never handed out by this log (a stale or foreign cursor): reading
 * after it would skip every event up to it, silently, so it is refused (400 naming the head).
 */
export function refuseBeyondHead(after: string, head: string): void {
  if (BigInt(after) <= BigInt(head)) return;
  const message = `is beyond the head of the log, position ${head} (the last event's): read on from an event's id or a cursor the feed gave, or from 0`;
  throw new BadRequestError(`after: ${after} ${message}`, [{ field: 'after', message }]);
}

/** The position of the last committed event: a subscription without `after` starts there. */
export async function eventHead(ds: DataSource): Promise<string> {
  const [row] = await ds.query('SELECT last::text AS last FROM event_sequence');
  return row.last;
}
