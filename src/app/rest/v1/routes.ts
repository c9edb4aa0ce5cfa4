import { ASSET_READ } from '../../../modules/asset/asset.read';
import { COLLECTION_READ } from '../../../modules/collection/collection.read';
import { OFFER_READ } from '../../../modules/offer/offer.read';
import { ORDER_READ } from '../../../modules/order/order.read';
import {
  ASSET,
  ASSET_WITH_TRAITS,
  CATEGORY,
  CHAIN,
  COLLECTION,
  DEPTH,
  HISTORY,
  LISTING,
  listFilters,
  OFFER,
  ORDER,
  PAGE_ARGS,
  PAGE_VARS,
  SERIES,
  STATISTICS,
  SWEEP,
  TAG,
  WEBHOOK,
  WEBHOOK_DELIVERY,
} from './shapes';

/**
 * The /v1 route table: each documented path runs one GraphQL operation against the same schema as
 * /graphql. Each variable takes its value by name from one place (variablePlaces): the path, the query
 * string or the JSON body; a `$input` variable takes the whole body (snake_case keys become camelCase).
 */
export interface RouteSpec {
  method: 'get' | 'post' | 'put' | 'delete';
  path: string;
  /** What the route does, in REST's words (its OpenAPI summary). */
  summary: string;
  operation: string;
  /**
   * Other names a variable is also taken from, in its place: the accept body's legacy `asset_id` for
   * `offer_id`; the events' `page`, the parameter every other list reads on with, for `after`.
   */
  aliases?: Record<string, string[]>;
  /** List parameters given once per value (trait=a:b&trait=c:d), never split at commas (values may hold them). */
  repeated?: string[];
  /** A variable of type Upload filled from the request's file (form field or multipart part). */
  upload?: string;
  /** A create's `Location` header: the /v1 path of what it made, from the response body. */
  location?: (created: Body) => string;
  /** Answers 201 Created (the routes the legacy interface documents answer 200, creates included). */
  created?: true;
  /** A read that needs an API key (401 without one), as every write does. */
  needsKey?: true;
}

/** Where a route reads a variable from. */
export type VariablePlace = 'path' | 'query' | 'body';

/**
 * Each variable's place: a path parameter from the path; `$input` (the whole body) and, on a POST or PUT
 * without `$input`, every other variable from the body; the rest from the query string. The router reads
 * each from there alone and refuses a query parameter that is no query variable or alias (400 naming it);
 * the OpenAPI description lists them so.
 */
export function variablePlaces(spec: RouteSpec, variables: readonly string[]): Map<string, VariablePlace> {
  const pathNames = new Set([...spec.path.matchAll(/:(\w+)/g)].map((m) => m[1]));
  const bodyFromVariables = (spec.method === 'post' || spec.method === 'put') && !variables.includes('input');
  return new Map(variables.map((name) => [name, pathNames.has(name) ? 'path' : name === 'input' || bodyFromVariables ? 'body' : 'query']));
}

/** A response body, read by its documented field names. */
type Body = Record<string, any>;
const assetPath = (a: Body) => `/v1/assets/${a.token_address}/${a.token_id}?chain_id=${a.chain.id}`;

/** A collection's trait counts, or an asset's traits, with rarity (share of the collection's assets). */
const TRAITS = `traits { trait_type: traitType value count rarity }`;

/** `assets` is always present: the page with include_assets=true, null otherwise (the resolver decides). */
const collectionWithAssets = `${COLLECTION}
  assets(limit: $assets_limit) { cursor remaining result { ${ASSET} } }`;

/** The lists whose filters their read models declare. */
const ASSETS = listFilters(ASSET_READ);
const OFFERS = listFilters(OFFER_READ);
const ORDERS = listFilters(ORDER_READ);
const COLLECTIONS = listFilters(COLLECTION_READ);

export const routes: RouteSpec[] = [
  {
    method: 'get',
    path: '/v1/categories',
    summary: 'List categories (category_id, category_name), sorted by name',
    operation: `query (${PAGE_VARS}, $order_by: CatalogOrderBy) {
      categories(${PAGE_ARGS}) { cursor remaining result { ${CATEGORY} } } }`,
  },
  {
    method: 'get',
    path: '/v1/tags',
    summary: 'List tags, sorted by name',
    operation: `query (${PAGE_VARS}, $order_by: CatalogOrderBy) {
      tags(${PAGE_ARGS}) { cursor remaining result { ${TAG} } } }`,
  },
  {
    method: 'get',
    path: '/v1/collections',
    summary: `List collections, filtered by ${COLLECTIONS.words}; their assets with include_assets=true`,
    operation: `query (${PAGE_VARS}, $order_by: CollectionOrderBy, ${COLLECTIONS.vars}, $include_assets: Boolean = false, $assets_limit: Int) {
      collections(${PAGE_ARGS}, ${COLLECTIONS.args}, includeAssets: $include_assets) {
        cursor remaining result { ${collectionWithAssets} } } }`,
  },
  {
    method: 'post',
    path: '/v1/collections',
    summary:
      'Create a collection owned by the caller (contract_address and chain_id required); its assets with include_assets=true. On a followed chain whose ' +
      "contract answers ERC-173 owner(), only a key acting for owner() (or an admin, for it) may: 403 otherwise, 503 when the chain's node does not answer (docs/chain.md)",
    operation: `mutation ($input: CreateCollectionInput!, $include_assets: Boolean = false, $assets_limit: Int) {
      createCollection(input: $input, includeAssets: $include_assets) { ${collectionWithAssets} ${TRAITS} } }`,
    location: (c) => `/v1/collections/${c.contract_address}?chain_id=${c.chain.id}`,
  },
  {
    method: 'get',
    path: '/v1/collections/:address',
    summary: 'Get a collection by contract address (chain_id when it is on several chains), id or slug, with its traits; its assets with include_assets=true',
    operation: `query ($address: String!, $chain_id: String, $include_assets: Boolean = false, $assets_limit: Int) {
      collection(id: $address, chainId: $chain_id, includeAssets: $include_assets) { ${collectionWithAssets} ${TRAITS} } }`,
  },
  {
    method: 'put',
    path: '/v1/collections/:address',
    summary:
      "Update a collection's name, description, links or (admin) status; only its owner or an admin. On a followed chain whose contract answers ERC-173 " +
      "owner(): only a key acting for owner() (the claim passes to it) or the owner of a claim proven for the same owner(); 403 otherwise (docs/chain.md)",
    operation: `mutation ($address: String!, $chain_id: String, $input: UpdateCollectionInput!, $include_assets: Boolean = false,
        $assets_limit: Int) {
      updateCollection(id: $address, chainId: $chain_id, input: $input, includeAssets: $include_assets) {
        ${collectionWithAssets} ${TRAITS} } }`,
  },
  {
    method: 'post',
    path: '/v1/collections/:address/claim',
    summary:
      "Take the claim of a collection on a followed chain whose contract answers ERC-173 owner(): a key acting for owner() with an empty body, " +
      'or any key with signature, nonce and expires_at (an EIP-191 signature by owner() of the claim message naming the key\'s address; docs/chain.md). ' +
      '403 when the caller or signer is not owner() or the signature expired, 409 on a chain not followed, a contract without owner() or a used nonce, ' +
      "503 when the chain's node does not answer",
    operation: `mutation ($address: String!, $chain_id: String, $input: ClaimCollectionInput, $include_assets: Boolean = false, $assets_limit: Int) {
      claimCollection(id: $address, chainId: $chain_id, input: $input, includeAssets: $include_assets) { ${collectionWithAssets} ${TRAITS} } }`,
  },
  {
    method: 'get',
    path: '/v1/collections/:address/history',
    summary:
      "A collection's chart: volume, sales, average and lowest sale price per UTC hour (interval=1h) or day (1d, the default), " +
      'every bucket from from to to (by default the last 48 hours or 30 days), empty ones included; at most 2000 buckets',
    operation: `query ($address: String!, $chain_id: String, $interval: SeriesInterval, $from: DateTimeISO, $to: DateTimeISO) {
      collection(id: $address, chainId: $chain_id) {
        id contract_address: contractAddress ${CHAIN}
        series(interval: $interval, from: $from, to: $to) { ${SERIES} } } }`,
  },
  {
    method: 'get',
    path: '/v1/collections/:address/depth',
    summary:
      "A collection's order book now: each trait value's floor (its cheapest active listing) and how many are listed, the active listings " +
      'and offers per price range (buckets, 1 to 100, default 10), and its best collection offer',
    operation: `query ($address: String!, $chain_id: String, $buckets: Int) {
      collection(id: $address, chainId: $chain_id) {
        id contract_address: contractAddress ${CHAIN} ${DEPTH} top_offer: topOffer { ${OFFER} } } }`,
  },
  {
    method: 'get',
    path: '/v1/assets',
    summary: `List assets, filtered by ${ASSETS.words}`,
    operation: `query (${PAGE_VARS}, $order_by: AssetOrderBy, ${ASSETS.vars}) {
      assets(${PAGE_ARGS}, ${ASSETS.args}) { cursor remaining result { ${ASSET_WITH_TRAITS} } } }`,
    repeated: ['trait'],
  },
  {
    method: 'get',
    path: '/v1/search/assets',
    summary: `Search assets by name (query, 1 to 100 characters, any script), ranked best first, filtered by ${ASSETS.words}`,
    operation: `query ($query: String!, ${PAGE_VARS}, ${ASSETS.vars}) {
      searchAssets(query: $query, limit: $limit, page: $page, direction: $direction, ${ASSETS.args}) { cursor remaining result { ${ASSET_WITH_TRAITS} } } }`,
    aliases: { query: ['q'] },
    repeated: ['trait'],
  },
  {
    method: 'get',
    path: '/v1/search/collections',
    summary: `Search collections by name (query, 1 to 100 characters, any script), ranked best first, filtered by ${COLLECTIONS.words}`,
    operation: `query ($query: String!, ${PAGE_VARS}, ${COLLECTIONS.vars}, $include_assets: Boolean = false, $assets_limit: Int) {
      searchCollections(query: $query, limit: $limit, page: $page, direction: $direction, ${COLLECTIONS.args},
          includeAssets: $include_assets) { cursor remaining result { ${collectionWithAssets} } } }`,
    aliases: { query: ['q'] },
  },
  {
    method: 'post',
    path: '/v1/assets',
    summary: 'Create an asset in a collection; the next token_id is minted unless one is given',
    operation: `mutation ($input: CreateAssetInput!) { createAsset(input: $input) { ${ASSET} } }`,
    location: assetPath,
  },
  {
    method: 'get',
    path: '/v1/assets/:token_address/:token_id',
    summary: 'Get an asset by token_address and token_id (chain_id when on several chains), with its traits',
    operation: `query ($token_address: Address!, $token_id: TokenId!, $chain_id: String) {
      asset(tokenAddress: $token_address, tokenId: $token_id, chainId: $chain_id) { ${ASSET_WITH_TRAITS} } }`,
  },
  {
    method: 'get',
    path: '/v1/assets/:token_address/:token_id/history',
    summary: "An asset's history: its creation, transfers, listings and sales, filtered by types",
    operation: `query ($token_address: Address!, $token_id: TokenId!, $chain_id: String, ${PAGE_VARS}, $types: [String!]) {
      assetHistory(tokenAddress: $token_address, tokenId: $token_id, chainId: $chain_id, limit: $limit, page: $page,
          direction: $direction, types: $types) { cursor remaining result { ${HISTORY} } } }`,
  },

  {
    method: 'get',
    path: '/v1/assets/:token_address/:token_id/top-offer',
    summary: "An asset's best offer now: of its item offers, collection offers and the trait offers it matches, the active one of the highest price (null when none)",
    operation: `query ($token_address: Address!, $token_id: TokenId!, $chain_id: String) {
      asset(tokenAddress: $token_address, tokenId: $token_id, chainId: $chain_id) {
        id token_address: tokenAddress token_id: tokenId ${CHAIN} owner top_offer: topOffer { ${OFFER} } } }`,
  },
  {
    method: 'post',
    path: '/v1/assets/:token_address/:token_id/refresh',
    summary:
      "Fetch the document behind an asset's token URI again (any API key; once per key and asset per METADATA_REFRESH_INTERVAL_S, 429 with Retry-After otherwise); " +
      'the asset comes back with metadata_status pending',
    operation: `mutation ($token_address: Address!, $token_id: TokenId!, $chain_id: String) {
      refreshAssetMetadata(tokenAddress: $token_address, tokenId: $token_id, chainId: $chain_id) { ${ASSET} } }`,
  },
  {
    method: 'post',
    path: '/v1/collections/:address/refresh',
    summary:
      "Fetch the token URI documents of every asset of a collection again (its owner or an admin; once per key and collection per METADATA_REFRESH_INTERVAL_S)",
    operation: `mutation ($address: Address!, $chain_id: String) { refreshCollectionMetadata(address: $address, chainId: $chain_id) { queued } }`,
  },
  {
    method: 'post',
    path: '/v1/assets/import',
    summary: 'Import assets from a CSV file into a collection (collection_id and file; form-urlencoded or multipart), all or nothing',
    operation: `mutation ($collection_id: String!, $file: Upload!) {
      importAssets(collectionId: $collection_id, file: $file) {
        data { count first_token_id: firstTokenId last_token_id: lastTokenId } message } }`,
    upload: 'file',
  },
  {
    method: 'post',
    path: '/v1/assets/listing',
    summary: 'List an asset for sale (asset_id, or token_address and token_id) at a fixed price or by auction',
    operation: `mutation ($input: CreateListingInput!) { createListing(input: $input) { ${LISTING} } }`,
    location: assetPath,
  },
  {
    method: 'put',
    path: '/v1/assets/listing/:token_address/:token_id',
    summary: 'Change the active listing of an asset: its prices or expiration_time',
    operation: `mutation ($token_address: Address!, $token_id: TokenId!, $chain_id: String, $input: UpdateListingInput!) {
      updateListing(tokenAddress: $token_address, tokenId: $token_id, chainId: $chain_id, input: $input) { ${LISTING} } }`,
  },
  {
    method: 'delete',
    path: '/v1/assets/listing/:token_address/:token_id',
    summary: 'Cancel the active listing of an asset; only its seller',
    operation: `mutation ($token_address: Address!, $token_id: TokenId!, $chain_id: String) {
      cancelListing(tokenAddress: $token_address, tokenId: $token_id, chainId: $chain_id) { ${LISTING} } }`,
  },
  {
    method: 'post',
    path: '/v1/listings/bulk',
    summary:
      'List up to 100 assets at once (listings: items as POST /v1/assets/listing takes them), all or none: any refused item writes nothing ' +
      'and the error details list each refused item (index, code, field, message); 201 with the listings in order',
    operation: `mutation ($listings: [CreateListingInput!]!) { createListings(input: $listings) { listings { ${LISTING} } count } }`,
    created: true,
  },
  {
    method: 'post',
    path: '/v1/listings/cancel',
    summary: "Cancel all of a maker's active listings (optionally of one collection) at once; only the maker. The answer lists the ids cancelled",
    operation: `mutation ($maker: Address!, $collection: String) { cancelListings(maker: $maker, collection: $collection) { ids count } }`,
  },
  {
    method: 'get',
    path: '/v1/offers',
    summary: `List offers, filtered by ${OFFERS.words}`,
    operation: `query (${PAGE_VARS}, $order_by: OfferOrderBy, ${OFFERS.vars}) {
      offers(${PAGE_ARGS}, ${OFFERS.args}) { cursor remaining result { ${OFFER} } } }`,
  },
  {
    method: 'post',
    path: '/v1/offers',
    summary: 'Make an offer on an asset (asset_id) or on a collection (collection_id, optionally traits) for price, between start_time and end_time',
    operation: `mutation ($input: CreateOfferInput!) { createOffer(input: $input) { ${OFFER} } }`,
    location: (offer) => `/v1/offers/${offer.id}`,
  },
  {
    method: 'post',
    path: '/v1/offers/accept',
    summary: "Accept an offer (offer_id, or the legacy asset_id) as the asset's owner: an order is written, completed (the asset changes hands) or, with settlement on chain, pending until its transfer is seen; 409 on a followed chain when the owner revoked the marketplace operator (approval_revoked)",
    operation: `mutation ($offer_id: ID!, $token_address: Address, $token_id: TokenId, $chain_id: String) {
      acceptOffer(offerId: $offer_id, tokenAddress: $token_address, tokenId: $token_id, chainId: $chain_id) { ${ORDER} } }`,
    aliases: { offer_id: ['asset_id'] },
    location: (order) => `/v1/orders/${order.id}`,
  },
  {
    method: 'post',
    path: '/v1/offers/cancel',
    summary: "Cancel all of a maker's active offers (optionally of one collection) at once; only the maker. The answer lists the ids cancelled",
    operation: `mutation ($maker: Address!, $collection: String) { cancelOffers(maker: $maker, collection: $collection) { ids count } }`,
  },
  {
    method: 'get',
    path: '/v1/offers/:id',
    summary: 'Get an offer by id',
    operation: `query ($id: ID!) { offer(id: $id) { ${OFFER} } }`,
  },
  {
    method: 'delete',
    path: '/v1/offers/:id',
    summary: 'Cancel an offer; only its maker',
    operation: `mutation ($id: ID!) { cancelOffer(id: $id) { ${OFFER} } }`,
  },
  {
    method: 'post',
    path: '/v1/listings/:id/buy',
    summary: 'Buy now: buy an active listing at its current price (at most max_price); the answer is the order (completed, or pending until its transfer is seen on chain), which names the listing',
    operation: `mutation ($id: ID!, $max_price: Price) { buyListing(listingId: $id, maxPrice: $max_price) { ${ORDER} } }`,
    location: (order) => `/v1/orders/${order.id}`,
  },
  {
    method: 'post',
    path: '/v1/collections/:address/sweep',
    summary:
      "Sweep: buy up to count of a collection's cheapest active listings (optionally with traits), each at most max_unit_price, together at most max_total; " +
      'partial false: all or nothing. The answer lists the orders and the listings skipped, with why',
    operation: `mutation ($address: String!, $count: Int!, $max_total: Price!, $max_unit_price: Price!, $traits: [TraitInput!], $partial: Boolean,
        $currency: String) {
      sweepCollection(input: { collectionId: $address, count: $count, maxTotal: $max_total, maxUnitPrice: $max_unit_price, traits: $traits,
          partial: $partial, currency: $currency }) {
        ${SWEEP} } }`,
  },
  {
    method: 'get',
    path: '/v1/orders',
    summary: `List sales (orders: completed, pending on chain, failed), filtered by ${ORDERS.words}`,
    operation: `query (${PAGE_VARS}, $order_by: OrderOrderBy, ${ORDERS.vars}) {
      orders(${PAGE_ARGS}, ${ORDERS.args}) { cursor remaining result { ${ORDER} } } }`,
  },
  {
    method: 'get',
    path: '/v1/orders/:id',
    summary: 'Get an order by id',
    operation: `query ($id: ID!) { order(id: $id) { ${ORDER} } }`,
  },

  {
    method: 'get',
    path: '/v1/chains',
    summary: 'The supported chains (chain_id is the EIP-155 id), by name; not paged: the whole list',
    operation: `query { chains { id: chainId name symbol } }`,
  },
  {
    method: 'get',
    path: '/v1/chains/:id/sync',
    summary: 'How far the gateway has followed a chain: head, confirmed and last applied blocks, lag, last error; following false and every figure null when no process has followed it',
    operation: `query ($id: ID!) { chainSync(chainId: $id) {
      chain_id: chainId following head_block: headBlock confirmations confirmed_block: confirmedBlock last_applied_block: lastAppliedBlock
      last_applied_hash: lastAppliedHash lag last_error: lastError last_error_at: lastErrorAt updated_at: updatedAt } }`,
  },
  {
    method: 'get',
    path: '/v1/chains/:id/currencies',
    summary: "The currencies a price may be given in on a chain: its native currency (address 0x000…0) first, then the configured ERC-20 tokens by symbol",
    operation: `query ($id: ID!) { currencies(chainId: $id) { chain_id: chainId address symbol decimals } }`,
  },

  {
    method: 'get',
    path: '/v1/events',
    summary: 'Read the change feed: the events after the position in after, filtered by types, collection_id or asset_id',
    operation: `query ($after: ID, $types: [String!], $collection_id: String, $asset_id: ID, $limit: Int) {
      events(after: $after, types: $types, collectionId: $collection_id, assetId: $asset_id, limit: $limit) {
        cursor has_more: hasMore
        result { id: position type occurred_at: occurredAt chain_id: chainId collection_id: collectionId asset_id: assetId data } } }`,
    aliases: { after: ['page'] },
  },
  {
    method: 'post',
    path: '/v1/webhooks',
    summary: 'Register a webhook: url receives signed events of event_types (all when absent), of a collection_id or asset_id',
    operation: `mutation ($input: CreateWebhookInput!) { createWebhook(input: $input) { ${WEBHOOK} secret } }`,
    location: (webhook) => `/v1/webhooks/${webhook.id}`,
  },
  {
    method: 'get',
    path: '/v1/webhooks',
    summary: "List the caller's webhooks",
    operation: `query (${PAGE_VARS}) {
      webhooks(limit: $limit, page: $page, direction: $direction) { cursor remaining result { ${WEBHOOK} } } }`,
  },
  {
    method: 'get',
    path: '/v1/webhooks/:id',
    summary: "Get one of the caller's webhooks by id",
    operation: `query ($id: ID!) { webhook(id: $id) { ${WEBHOOK} } }`,
  },
  {
    method: 'delete',
    path: '/v1/webhooks/:id',
    summary: "Delete one of the caller's webhooks",
    operation: `mutation ($id: ID!) { deleteWebhook(id: $id) { ${WEBHOOK} } }`,
  },
  {
    method: 'get',
    path: '/v1/webhooks/:id/deliveries',
    summary: "List a webhook's deliveries, with their attempts",
    operation: `query (${PAGE_VARS}, $id: ID!) {
      webhookDeliveries(webhookId: $id, limit: $limit, page: $page, direction: $direction) {
        cursor remaining result { ${WEBHOOK_DELIVERY} } } }`,
  },
  {
    method: 'post',
    path: '/v1/webhooks/:id/enable',
    summary: 'Enable a webhook that was disabled after failed deliveries',
    operation: `mutation ($id: ID!) { enableWebhook(id: $id) { ${WEBHOOK} } }`,
  },
  {
    method: 'post',
    path: '/v1/webhooks/:id/replay',
    summary: 'Deliver again the events after the position in after',
    operation: `mutation ($id: ID!, $after: ID!) { replayWebhook(id: $id, after: $after) { ${WEBHOOK} } }`,
  },
  {
    method: 'get',
    path: '/v1/statistics',
    summary: 'Statistics per collection for a period: volume, floor_price, total_holders, total_transactions, is_trending',
    operation: `query (${PAGE_VARS}, $order_by: StatisticsOrderBy, $chain_id: String, $period: StatisticsPeriod, $is_trending: Int) {
      statistics(${PAGE_ARGS}, chainId: $chain_id, period: $period, isTrending: $is_trending) {
        cursor remaining result { ${STATISTICS} } } }`,
  },
  {
    method: 'get',
    path: '/v1/me',
    summary: 'The account the API key acts as: its address, role and the key\'s label; 401 without a key',
    operation: `query { me { address role key_label: keyLabel } }`,
    needsKey: true,
  },
];
