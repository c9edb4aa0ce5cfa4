import { camelToSnake } from '../../../common/names';
import { ReadModel, relatedModel, RestEntry } from '../../../common/read-model';
import { restName } from '../../../common/read-model-sql';
import { READ_MODELS } from '../../../modules/read-models';
import { ASSET_READ } from '../../../modules/asset/asset.read';
import { CATEGORY_READ, TAG_READ } from '../../../modules/catalog/catalog.read';
import { CHAIN_READ } from '../../../modules/chain/chain.read';
import { COLLECTION_READ } from '../../../modules/collection/collection.read';
import { CURRENCY_READ } from '../../../modules/currency/currency.read';
import { LISTING_READ } from '../../../modules/listing/listing.read';
import { OFFER_READ } from '../../../modules/offer/offer.read';
import { ORDER_READ } from '../../../modules/order/order.read';

/**
 * GraphQL selections that give the documented REST shapes (interface.md section 2): aliases turn the
 * GraphQL field names into the snake_case names legacy clients read. A noun's shape is its read model's
 * (ReadModel.rest, declared in its module, common/read-model.ts RestEntry); the shapes of what has no
 * read model (statistics, history, webhooks ...) are written here.
 */

/**
 * A documented price field (a JSON number) and its exact twin `<name>_decimal` (a string), both read from
 * the exact Decimal field: the router writes a Decimal under a name without `_decimal` as a JSON number
 * whose digits are the decimal's own, so no binary float comes in between.
 */
const price = (name: string, field: string) => `${name}: ${field}Decimal ${name}_decimal: ${field}Decimal`;

const MODEL_OF = new Map(READ_MODELS.map((model) => [model.type, model]));

/** The read model of `type`, which must declare a REST shape. */
function restModel(type: string): ReadModel {
  const model = MODEL_OF.get(type);
  if (!model?.rest) throw new Error(`${type} has no REST shape (ReadModel.rest)`);
  return model;
}

const own = <T>(record: Record<string, T>, name: string): T | undefined => (Object.hasOwn(record, name) ? record[name] : undefined);

/** One entry of a REST shape over a row of `model` (none: an object of no read model, whose fields are shown as they are). */
function restEntry(model: ReadModel | undefined, entry: RestEntry): string {
  const { field, as = camelToSnake(field), shape, of, page } = typeof entry === 'string' ? { field: entry } : entry;
  const key = as === field ? field : `${as}: ${field}`;
  const relation = model && own(model.relations, field);
  if (relation?.kind === 'rows') return `${key} { ${restEntries(relatedModel(relation.type, '', '', relation.fields), shape ?? Object.keys(relation.fields))} }`;
  const type = of ?? (relation && relation.kind !== 'presence' ? relation.type : undefined);
  if (shape) return `${key} { ${restEntries(type === undefined ? undefined : MODEL_OF.get(type), shape)} }`;
  if (type !== undefined) return `${key} { ${page ? `cursor remaining result { ${restShape(restModel(type))} }` : restShape(restModel(type))} }`;
  return model && own(model.fields, field)?.kind === 'decimal' ? price(as, field) : key;
}

const restEntries = (model: ReadModel | undefined, entries: readonly RestEntry[]): string => entries.map((entry) => restEntry(model, entry)).join(' ');

const shapes = new Map<ReadModel, string>();

/**
 * A read model's REST shape as a GraphQL selection. Every field it declares for GraphQL is shown or
 * omitted by name (ReadModel.rest): a field added to a noun is placed in its REST shape in the same file.
 */
export function restShape(model: ReadModel): string {
  let selection = shapes.get(model);
  if (selection === undefined) {
    const rest = model.rest!;
    const named = new Set([...rest.shape.map((entry) => (typeof entry === 'string' ? entry : entry.field)), ...(rest.omits ?? [])]);
    const unplaced = Object.entries(model.fields).filter(([name, field]) => !field.serviceOnly && !named.has(name));
    if (unplaced.length) throw new Error(`${model.type}'s REST shape neither shows nor omits ${unplaced.map(([name]) => name).join(', ')}`);
    shapes.set(model, (selection = restEntries(model, rest.shape)));
  }
  return selection;
}

/** REST's ids of chains, categories and tags are their keys (GraphQL's `id` of these is their Node id). */
export const CHAIN = `chain { ${restShape(CHAIN_READ)} }`;
/** The currency of a price (added to the documented shapes: the native currency's address is 0x000…0). */
const CURRENCY = `currency { ${restShape(CURRENCY_READ)} }`;
export const CATEGORY = restShape(CATEGORY_READ);
/** Tags have the shape of categories (interface.md 4.6). */
export const TAG = restShape(TAG_READ);
export const LISTING = restShape(LISTING_READ);
export const ASSET = restShape(ASSET_READ);
/** An asset with its traits and their rarity: the asset routes (one statement more per request). */
export const ASSET_WITH_TRAITS = `${ASSET} ${restEntry(ASSET_READ, 'traits')}`;
export const COLLECTION = restShape(COLLECTION_READ);
export const OFFER = restShape(OFFER_READ);
export const ORDER = restShape(ORDER_READ);

export const PAGE_ARGS = `limit: $limit, page: $page, orderBy: $order_by, direction: $direction`;
export const PAGE_VARS = `$limit: Int, $page: String, $direction: SortDirection`;

/**
 * A read model's root list filters (common/read-model.ts) as a /v1 list route takes them, each a query
 * parameter of its REST name: the variables, the list field's arguments, and the summary's words.
 */
export function listFilters(model: ReadModel) {
  const filters = [...model.rootFilters, ...model.filters];
  const words = filters.map((f) => `${restName(f)}${f.note ? ` (${f.note})` : ''}`);
  return {
    vars: filters.map((f) => `$${restName(f)}: ${f.type}`).join(', '),
    args: filters.map((f) => `${f.arg}: $${restName(f)}`).join(', '),
    words: `${words.slice(0, -1).join(', ')} or ${words[words.length - 1]}`,
  };
}

/** A sweep's answer: the orders bought, the listings skipped (why, at what price), the total paid. */
export const SWEEP = `
  orders { ${ORDER} }
  skipped { listing_id: listingId asset_id: assetId reason ${price('price', 'price')} message }
  ${price('total', 'total')}
  ${CURRENCY}`;

export const STATISTICS = `
  ${CHAIN}
  collection { ${COLLECTION} }
  ${price('floor_price', 'floorPrice')}
  ${price('volume', 'volume')}
  total_holders: totalHolders
  total_transactions: totalTransactions
  period
  is_trending: isTrending
  period_start: periodStart
  period_end: periodEnd
  floor_listing_id: floorListingId
  floor_asset_id: floorAssetId
  floor_listing: floorListing {
    id
    ${price('price', 'price')}
    asset_id: assetId
    token_address: tokenAddress
    token_id: tokenId
  }
  as_of: asOf
  ${price('trend_volume', 'trendVolume')}
  ${price('previous_volume', 'previousVolume')}
  trending_score: trendingScore`;

/** A collection's depth now (GET /v1/collections/{address}/depth): trait floors and price ranges. */
export const DEPTH = `
  trait_floors: traitFloors {
    trait_type: traitType
    value
    ${price('floor_price', 'floorPrice')}
    floor_listing_id: floorListingId
    listed_count: listedCount
    asset_count: assetCount
  }
  price_depth: priceDepth(buckets: $buckets) { ${price('min_price', 'minPrice')} ${price('max_price', 'maxPrice')} listings offers }`;

/** A collection's chart (GET /v1/collections/{address}/history). */
export const SERIES = `
  interval
  from
  to
  buckets {
    start_time: startTime
    ${price('volume', 'volume')}
    sales
    ${price('average_price', 'averagePrice')}
    ${price('floor_price', 'floorPrice')}
  }`;

export const HISTORY = `
  id
  type
  occurred_at: occurredAt
  asset_id: assetId
  ${price('price', 'price')}
  from
  to
  listing_id: listingId
  offer_id: offerId
  order_id: orderId`;

/** A webhook as /v1 shows it (the secret only in the create's answer). */
export const WEBHOOK = `id url event_types: eventTypes collection_id: collectionId asset_id: assetId status
  disabled_reason: disabledReason disabled_at: disabledAt cursor created_at: createdAt updated_at: updatedAt`;

export const WEBHOOK_DELIVERY = `id event_id: eventId event_type: eventType status attempt_count: attemptCount
  next_attempt_at: nextAttemptAt completed_at: completedAt created_at: createdAt
  attempts { attempted_at: attemptedAt duration_ms: durationMs http_status: httpStatus error }`;
