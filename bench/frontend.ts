/**
 * The frontend workloads of issue #26: three pages as an Apollo Client app asks for them (named
 * operations, named fragments, ids for the cache; the client adds `__typename`, see shapes.ts), and the
 * same pages written against PostGraphile's schema of the same tables (bench/anchors/postgraphile.mjs).
 * Each pair is one place to change when the gateway's schema changes.
 */

export interface GraphqlCall {
  query: string;
  variables: Record<string, unknown>;
  /** The answer as comparable data: the two servers must give the same values before anything is measured. */
  normalize: (body: any) => unknown;
}

export interface FrontendWorkload {
  name: string;
  gateway: GraphqlCall;
  postGraphile: GraphqlCall;
}

const lower = (s: string | null | undefined) => s?.toLowerCase() ?? null;
const price = (p: unknown) => (p == null ? null : Number(p));

const GATEWAY_FRAGMENTS = {
  collectionHeader: 'fragment CollectionHeader on Collection { id name slug contractAddress chainId imageUrl owner }',
  listingPrice: 'fragment ListingPrice on Listing { id orderType currentPrice seller closingDate }',
  assetCard: 'fragment AssetCard on Asset { id tokenId tokenAddress name imageUrl owner listing { ...ListingPrice } }',
  assetDetail: 'fragment AssetDetail on Asset { id tokenId tokenAddress name description imageUrl owner status }',
  offerRow: 'fragment OfferRow on Offer { id price taker status endTime createdAt }',
  saleRow: 'fragment SaleRow on Order { id price buyer seller createdAt asset { id tokenId name imageUrl collection { ...CollectionHeader } } }',
};

// PostGraphile has no computed current price: a listing's start price is what it stores (fixed-price
// listings, the data set's only kind, sell at it). Its `id` is the global node id an Apollo cache keys on.
const POSTGRAPHILE_FRAGMENTS = {
  collectionHeader: 'fragment CollectionHeader on Collection { id name slug contractAddress chainId imageUrl owner }',
  listingPrice: 'fragment ListingPrice on Listing { id orderType startPrice seller closingDate }',
  assetCard:
    'fragment AssetCard on Asset { id tokenId tokenAddress name imageUrl owner listingsByAssetId(condition: { status: "active" }, first: 1) { nodes { ...ListingPrice } } }',
  assetDetail: 'fragment AssetDetail on Asset { id tokenId tokenAddress name description imageUrl owner status }',
  offerRow: 'fragment OfferRow on Offer { id price taker status endTime createdAt }',
  saleRow:
    'fragment SaleRow on Order { id price buyer seller createdAt assetByAssetId { id tokenId name imageUrl collectionByCollectionId { ...CollectionHeader } } }',
};

const collectionOf = (c: any) => [c.name, c.slug, c.contractAddress, c.chainId, c.owner];
const listingOf = (l: any, priceField: string) => (l ? [lower(l.orderType), price(l[priceField]), l.seller] : null);

/**
 * F1-F3 on the bench's data set: the page of collection `contract` (its first 24 assets by token id,
 * each with its active listing), the page of its token 3 (listed, with its offers), and the latest sales.
 */
export function frontendWorkloads(contract: string): FrontendWorkload[] {
  const g = GATEWAY_FRAGMENTS;
  const p = POSTGRAPHILE_FRAGMENTS;
  return [
    {
      name: 'F1 collection page',
      gateway: {
        query: `query CollectionPage($address: Address!) {
          collection(address: $address) {
            ...CollectionHeader
            assets(orderBy: TOKEN_ID, direction: ASC, limit: 24) { cursor result { ...AssetCard } }
          }
        }
        ${g.collectionHeader} ${g.assetCard} ${g.listingPrice}`,
        variables: { address: contract },
        normalize: (d) => {
          const c = d.data.collection;
          return [collectionOf(c), c.assets.result.map((a: any) => [String(a.tokenId), a.name, a.owner, listingOf(a.listing, 'currentPrice')])];
        },
      },
      postGraphile: {
        query: `query CollectionPage($address: String!) {
          allCollections(condition: { contractAddress: $address }, first: 1) {
            nodes {
              ...CollectionHeader
              assetsByCollectionId(orderBy: [TOKEN_ID_ASC], first: 24) { pageInfo { hasNextPage endCursor } nodes { ...AssetCard } }
            }
          }
        }
        ${p.collectionHeader} ${p.assetCard} ${p.listingPrice}`,
        variables: { address: contract },
        normalize: (d) => {
          const c = d.data.allCollections.nodes[0];
          return [
            collectionOf(c),
            c.assetsByCollectionId.nodes.map((a: any) => [String(a.tokenId), a.name, a.owner, listingOf(a.listingsByAssetId.nodes[0], 'startPrice')]),
          ];
        },
      },
    },
    {
      name: 'F2 asset page',
      // The asset's offers are its own relation (Asset.offers: its item offers and its collection's
      // collection offers; the data set has item offers only), as PostGraphile's offersByAssetId.
      gateway: {
        query: `query AssetPage($tokenAddress: Address!, $tokenId: TokenId!) {
          asset(tokenAddress: $tokenAddress, tokenId: $tokenId) {
            ...AssetDetail
            collection { ...CollectionHeader }
            listing { ...ListingPrice }
            offers(orderBy: CREATED_AT, direction: DESC, limit: 10) {
              cursor
              result { ...OfferRow }
            }
          }
        }
        ${g.assetDetail} ${g.collectionHeader} ${g.listingPrice} ${g.offerRow}`,
        variables: { tokenAddress: contract, tokenId: '3' },
        normalize: (d) => {
          const a = d.data.asset;
          return [
            [String(a.tokenId), a.name, a.description, a.owner, lower(a.status)],
            collectionOf(a.collection),
            listingOf(a.listing, 'currentPrice'),
            a.offers.result.map((o: any) => [price(o.price), o.taker, lower(o.status)]),
          ];
        },
      },
      postGraphile: {
        query: `query AssetPage($tokenAddress: String!, $tokenId: BigFloat!) {
          allAssets(condition: { tokenAddress: $tokenAddress, tokenId: $tokenId }, first: 1) {
            nodes {
              ...AssetDetail
              collectionByCollectionId { ...CollectionHeader }
              listingsByAssetId(condition: { status: "active" }, first: 1) { nodes { ...ListingPrice } }
              offersByAssetId(orderBy: [CREATED_AT_DESC, PRIMARY_KEY_DESC], first: 10) { pageInfo { hasNextPage endCursor } nodes { ...OfferRow } }
            }
          }
        }
        ${p.assetDetail} ${p.collectionHeader} ${p.listingPrice} ${p.offerRow}`,
        variables: { tokenAddress: contract, tokenId: '3' },
        normalize: (d) => {
          const a = d.data.allAssets.nodes[0];
          return [
            [String(a.tokenId), a.name, a.description, a.owner, lower(a.status)],
            collectionOf(a.collectionByCollectionId),
            listingOf(a.listingsByAssetId.nodes[0], 'startPrice'),
            a.offersByAssetId.nodes.map((o: any) => [price(o.price), o.taker, lower(o.status)]),
          ];
        },
      },
    },
    {
      name: 'F3 recent sales',
      gateway: {
        query: `query RecentSales {
          orders(orderBy: CREATED_AT, direction: DESC, limit: 20) { cursor result { ...SaleRow } }
        }
        ${g.saleRow} ${g.collectionHeader}`,
        variables: {},
        normalize: (d) => d.data.orders.result.map((o: any) => [price(o.price), o.buyer, o.seller, String(o.asset.tokenId), o.asset.name, collectionOf(o.asset.collection)]),
      },
      postGraphile: {
        query: `query RecentSales {
          allOrders(orderBy: [CREATED_AT_DESC, PRIMARY_KEY_DESC], first: 20) { pageInfo { hasNextPage endCursor } nodes { ...SaleRow } }
        }
        ${p.saleRow} ${p.collectionHeader}`,
        variables: {},
        normalize: (d) =>
          d.data.allOrders.nodes.map((o: any) => [
            price(o.price),
            o.buyer,
            o.seller,
            String(o.assetByAssetId.tokenId),
            o.assetByAssetId.name,
            collectionOf(o.assetByAssetId.collectionByCollectionId),
          ]),
      },
    },
  ];
}
