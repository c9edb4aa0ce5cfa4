import { ReadModel, restName } from '../../../common/read-model';
/**
 * GraphQL selections that give the documented REST shapes (interface.md section 2): aliases turn the
 * GraphQL field names into the snake_case names legacy clients read.
 */
/** REST's ids of chains, categories and tags are their keys (GraphQL's `id` of these is their Node id). */
export const CHAIN = `chain { id: chainId name symbol }`;
/** The currency of a price (added to the documented shapes: the native currency's address is 0x000…0). */
export const CURRENCY = `currency { address symbol decimals }`;
export const FEES = `fees { address basis_points: basisPoints type }`;
export const CATEGORY = `category_id: categoryId category_name: name`;
/** Tags have the shape of categories (interface.md 4.6). */
export const TAG = `category_id: tagId category_name: name`;

/**
 * A documented price field (a JSON number) and its exact twin `<name>_decimal` (a string), both read from
 * the exact Decimal field: the router writes a Decimal under a name without `_decimal` as a JSON number
 * whose digits are the decimal's own, so no binary float comes in between.
 */
const price = (name: string, field: string) => `${name}: ${field}Decimal ${name}_decimal: ${field}Decimal`;

export const LISTING = `
  id
  asset_id: assetId
  status
  inactive_reason: inactiveReason
  order_type: orderType
  closing_date: closingDate
  ${FEES}
  ${price('accept_price', 'acceptPrice')}
  ${price('start_price', 'startPrice')}
  ${price('current_price', 'currentPrice')}
  ${CURRENCY}
  listing_time: listingTime
  name
  token_address: tokenAddress
  token_id: tokenId
  ${CHAIN}
  seller
  signature
  created_at: createdAt
  updated_at: updatedAt`;

export const ASSET = `
  id
  collection_id: collectionId
  collection { image_url: imageUrl name contract_address: contractAddress }
  created_at: createdAt
  updated_at: updatedAt
  description
  ${FEES}
  image_url: imageUrl
  animation_url: animationUrl
  external_link: externalLink
  metadata
  metadata_status: metadataStatus
  metadata_error: metadataError
  metadata_fetched_at: metadataFetchedAt
  name
  status
  token_address: tokenAddress
  token_id: tokenId
  ${CHAIN}
  owner
  listing { ${LISTING} }`;

/** An asset with its traits and their rarity: the asset routes (one statement more per request). */
export const ASSET_WITH_TRAITS = `${ASSET}
  traits { trait_type: traitType value count rarity }`;

export const COLLECTION = `
  id
  contract_address: contractAddress
  owner
  total_supply: totalSupply
  category { ${CATEGORY} }
  name
  slug
  description
  image_url: imageUrl
  discord_url: discordUrl
  telegram_url: telegramUrl
  external_url: externalUrl
  twitter_username: twitterUsername
  instagram_username: instagramUsername
  ${FEES}
  ${CHAIN}
  start_block: startBlock
  status
  owner_verification: ownerVerification
  contract_owner: contractOwner
  owner_checked_at: ownerCheckedAt
  owner_checked_block: ownerCheckedBlock
  created_at: createdAt
  updated_at: updatedAt`;

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

export const OFFER = `
  id
  kind
  status
  quantity
  filled
  reserved
  traits { trait_type: traitType value }
  collection_id: collectionId
  assets { cursor remaining result { ${ASSET} } }
  taker
  ${price('price', 'price')}
  ${CURRENCY}
  start_time: startTime
  end_time: endTime
  asset_id: assetId
  chain_id: chainId
  token_address: tokenAddress
  token_id: tokenId
  signature
  created_at: createdAt
  updated_at: updatedAt`;

export const ORDER = `
  id
  offer { ${OFFER} }
  status
  ${price('price', 'price')}
  ${CURRENCY}
  seller
  buyer
  unit
  asset_id: assetId
  listing_id: listingId
  settlement_deadline: settlementDeadline
  settlement_transaction_hash: settlementTransactionHash
  settlement_block_number: settlementBlockNumber
  created_at: createdAt
  updated_at: updatedAt`;

/** A sweep's answer: the orders bought, the listings skipped (why, at what price), the total paid. */
export const SWEEP = `
  orders { ${ORDER} }
  skipped { listing_id: listingId asset_id: assetId reason ${price('price', 'price')} message }
  ${price('total', 'total')}
  currency { address symbol decimals }`;

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
