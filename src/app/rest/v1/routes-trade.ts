import { OFFER_READ } from '../../../modules/offer/offer.read';
import { ORDER_READ } from '../../../modules/order/order.read';
import { listFilters, OFFER, ORDER, PAGE_ARGS, PAGE_VARS, SWEEP } from './shapes';
import type { RouteSpec } from './route-spec';

/** The /v1 routes of offers, purchases and orders (in routes.ts's order). */

/** The lists whose filters their read models declare. */
const OFFERS = listFilters(OFFER_READ);
const ORDERS = listFilters(ORDER_READ);

export const TRADE_ROUTES: RouteSpec[] = [
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

];
