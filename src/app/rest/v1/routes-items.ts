import { ASSET_READ } from '../../../modules/asset/asset.read';
import { COLLECTION_READ } from '../../../modules/collection/collection.read';
import { ASSET, ASSET_WITH_TRAITS, CATEGORY, CHAIN, COLLECTION, DEPTH, HISTORY, LISTING, listFilters, OFFER, PAGE_ARGS, PAGE_VARS, SERIES, TAG } from './shapes';
import type { Body, RouteSpec } from './route-spec';

/** The /v1 routes of the catalog, collections, assets and their listings (in routes.ts's order). */

const assetPath = (a: Body) => `/v1/assets/${a.token_address}/${a.token_id}?chain_id=${a.chain.id}`;

/** A collection's trait counts, or an asset's traits, with rarity (share of the collection's assets). */
const TRAITS = `traits { trait_type: traitType value count rarity }`;

/** `assets` is always present: the page with include_assets=true, null otherwise (the resolver decides). */
const collectionWithAssets = `${COLLECTION}
  assets(limit: $assets_limit) { cursor remaining result { ${ASSET} } }`;

/** The lists whose filters their read models declare. */
const ASSETS = listFilters(ASSET_READ);
const COLLECTIONS = listFilters(COLLECTION_READ);

export const ITEM_ROUTES: RouteSpec[] = [
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
];
