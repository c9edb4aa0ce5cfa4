import DataLoader from 'dataloader';
import { DataSource } from 'typeorm';
import { pagesByParent } from '../../common/batch';
import { BadRequestError } from '../../common/errors';
import { Page, PageArgs } from '../../common/pagination';
import { fetchPagesByParent } from '../../common/list-page';
import { Params } from '../../common/sql';
import { EVENT_TYPES, EventType, unknownEventTypes } from './event.log';
import { HistoryEntry } from './history.types';

/** The page arguments of a history, as its loaders key them. */
export type HistoryPageArgs = PageArgs & { types: string[] };

declare module '../../common/request/context' {
  interface Loaders {
    historyByAsset: DataLoader<{ parentId: string; args: HistoryPageArgs }, Page<HistoryEntry>, string>;
    historyBySubject: DataLoader<{ parentId: string; args: HistoryPageArgs }, Page<HistoryEntry>, string>;
  }
}

/** What an asset's history shows unless asked for other types: its creation, its transfers, its listings. */
export const ASSET_HISTORY_TYPES: EventType[] = EVENT_TYPES.filter((t) => t.startsWith('asset.') || t.startsWith('listing.'));

/** The asked types, checked: 400 naming the unknown ones. */
export function historyTypes(asked: string[] | null | undefined, fallback: readonly string[]): string[] {
  if (!asked?.length) return [...fallback];
  const unknown = unknownEventTypes(asked);
  if (unknown) throw new BadRequestError(`types: ${unknown}`, [{ field: 'types', message: unknown }]);
  return [...new Set(asked)].sort();
}

/**
 * An entry from an event's stored resource (`data`) and the extras its writer merged in (a sale names its
 * order, price, offer and listing; a transfer its previous owner).
 */
const ENTRY_COLUMNS = `e.position::text AS id, e.type, e.occurred_at AS "occurredAt", e.asset_id AS "assetId",
  COALESCE(e.data->>'price', e.data->>'start_price') AS price, COALESCE(e.data->>'price', e.data->>'start_price') AS "priceDecimal",
  CASE e.type WHEN 'asset.transferred' THEN e.data->>'previous_owner' WHEN 'order.completed' THEN e.data->>'seller' END AS "from",
  CASE WHEN e.type IN ('asset.transferred', 'asset.created', 'asset.imported') THEN e.data->>'owner'
       WHEN e.type = 'order.completed' THEN e.data->>'buyer' END AS "to",
  CASE WHEN e.type LIKE 'listing.%' THEN e.data->>'id' ELSE e.data->>'listing_id' END AS "listingId",
  CASE WHEN e.type LIKE 'offer.%' THEN e.data->>'id' ELSE e.data->>'offer_id' END AS "offerId",
  CASE WHEN e.type LIKE 'order.%' THEN e.data->>'id' ELSE e.data->>'order_id' END AS "orderId"`;

/** Pages of history for many parents in one statement, by the events' `column` (an index of (column, position) serves it). */
function historyPages(ds: DataSource, name: string, column: string) {
  return pagesByParent<HistoryPageArgs, Page<HistoryEntry>>(name, async (args, parentIds) => {
    const p = new Params();
    return fetchPagesByParent<HistoryEntry>(
      ds,
      {
        from: 'events e',
        columns: ENTRY_COLUMNS,
        idExpression: 'e.position',
        idType: 'bigint',
        where: [`e.type = ANY(${p.add(args.types)}::text[])`],
        params: p,
        sort: { expression: 'e.position', sqlType: 'bigint' },
        orderBy: 'position',
        args,
      },
      { column, ids: parentIds, sqlType: 'uuid' },
    );
  });
}

export function createHistoryLoaders(ds: DataSource) {
  return {
    historyByAsset: historyPages(ds, 'historyByAsset', 'e.asset_id'),
    historyBySubject: historyPages(ds, 'historyBySubject', 'e.subject_id'),
  };
}
