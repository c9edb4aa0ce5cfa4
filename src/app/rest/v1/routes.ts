import type { RouteSpec } from './route-spec';
import { ITEM_ROUTES } from './routes-items';
import { PLATFORM_ROUTES } from './routes-platform';
import { TRADE_ROUTES } from './routes-trade';

/**
 * The /v1 route table (RouteSpec, route-spec.ts), in the order the home page and the OpenAPI description
 * list it: the catalog, collections, assets and listings (routes-items.ts); offers, purchases and orders
 * (routes-trade.ts); chains, the feed, webhooks, statistics and the caller (routes-platform.ts).
 */
export const routes: RouteSpec[] = [...ITEM_ROUTES, ...TRADE_ROUTES, ...PLATFORM_ROUTES];
