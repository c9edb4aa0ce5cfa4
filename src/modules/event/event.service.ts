import type { Context } from '../../common/request/context';
import { BadRequestError, Problems } from '../../common/errors';
import { Params } from '../../common/sql';
import { UUID } from '../../common/validate';
import { findCollectionByRef } from '../collection/collection.service';
import { EVENT_TYPES } from './event.log';
import { EventArgs, EventFeed, MarketEvent, MAX_EVENTS } from './event.types';

const POSITION = /^(0|[1-9][0-9]{0,17})$/;

/**
 * The events after a position, in log order. A reader that goes on with `after: cursor` sees every
 * event once, in order, with none appearing later below a position it has passed (positions follow
 * commit order).
 */
export async function readEvents(ctx: Context, args: EventArgs): Promise<EventFeed> {
  const problems = new Problems();
  const after = args.after ?? '0';
  if (!POSITION.test(after)) problems.add('after', `must be an event position (a whole number from 0), got ${JSON.stringify(after)}`);
  if (!Number.isInteger(args.limit) || args.limit < 1 || args.limit > MAX_EVENTS) {
    problems.add('limit', `must be an integer from 1 to ${MAX_EVENTS}, got ${args.limit}`);
  }
  const unknown = (args.types ?? []).filter((t) => !(EVENT_TYPES as readonly string[]).includes(t));
  if (unknown.length) problems.add('types', `unknown ${unknown.join(', ')}; one of ${EVENT_TYPES.join(', ')}`);
  if (args.assetId != null && !UUID.test(args.assetId)) problems.add('assetId', `must be an asset id (UUID), got ${JSON.stringify(args.assetId)}`);
  if (problems.list.length) throw new BadRequestError(problems.list.map((p) => `${p.field}: ${p.message}`).join('; '), problems.list);

  const p = new Params();
  const where = [`e.position > ${p.add(after)}::bigint`];
  if (args.types?.length) where.push(`e.type = ANY(${p.add(args.types)}::text[])`);
  if (args.collectionId != null) where.push(`e.collection_id = ${p.add((await findCollectionByRef(ctx, args.collectionId)).id)}`);
  if (args.assetId != null) where.push(`e.asset_id = ${p.add(args.assetId.toLowerCase())}::uuid`);
  const rows: MarketEvent[] = await ctx.ds.query(
    `SELECT e.position::text AS id, e.type, e.occurred_at AS "occurredAt", e.chain_id AS "chainId",
       e.collection_id AS "collectionId", e.asset_id AS "assetId", e.data
     FROM events e WHERE ${where.join(' AND ')} ORDER BY e.position LIMIT ${p.add(args.limit + 1)}`,
    p.values,
  );
  const hasMore = rows.length > args.limit;
  if (hasMore) rows.length = args.limit;
  return { result: rows, cursor: rows.length ? rows[rows.length - 1].id : after, hasMore };
}
