import { PAGE_ARGS, PAGE_VARS, STATISTICS, WEBHOOK, WEBHOOK_DELIVERY } from './shapes';
import type { RouteSpec } from './route-spec';

/** The /v1 routes of chains, the change feed, webhooks, statistics and the caller (in routes.ts's order). */
export const PLATFORM_ROUTES: RouteSpec[] = [
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
