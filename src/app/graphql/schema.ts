import 'reflect-metadata';
import { GraphQLSchema, lexicographicSortSchema, printSchema } from 'graphql';
import { buildSchema, PubSub } from 'type-graphql';
import { AccountResolver } from '../../modules/account/account.resolver';
import { withConnectionArguments } from '../../common/graphql/connection-arguments';
import { ApiKeyResolver } from '../../modules/apikey/api-key.resolver';
import { AssetResolver, TraitResolver } from '../../modules/asset/asset.resolver';
import { CatalogResolver, CategoryResolver, TagResolver } from '../../modules/catalog/catalog.resolver';
import { ChainNodeResolver, ChainResolver } from '../../modules/chain/chain.resolver';
import { ChainCurrencyResolver, CurrencyResolver } from '../../modules/currency/currency.resolver';
import { EventResolver } from '../../modules/event/event.resolver';
import { AssetHistoryResolver, ListingHistoryResolver, OfferHistoryResolver } from '../../modules/event/history.resolver';
import { CollectionResolver } from '../../modules/collection/collection.resolver';
import { ImportResolver } from '../../modules/import/import.resolver';
import { ListingResolver } from '../../modules/listing/listing.resolver';
import { NodeResolver } from '../../modules/node/node.resolver';
import { OfferResolver } from '../../modules/offer/offer.resolver';
import { OrderResolver } from '../../modules/order/order.resolver';
import { FloorListingResolver, StatisticsResolver } from '../../modules/statistics/statistics.resolver';
import { WebhookResolver } from '../../modules/webhook/webhook.resolver';
import { SearchResolver } from '../../modules/search/search.resolver';
import { TradeResolver } from '../../modules/trade/trade.resolver';
import { MetadataResolver } from '../../modules/metadata/metadata.resolver';

export const resolvers = [
  ChainResolver,
  ChainNodeResolver,
  CurrencyResolver,
  ChainCurrencyResolver,
  CatalogResolver,
  CategoryResolver,
  TagResolver,
  CollectionResolver,
  AssetResolver,
  TraitResolver,
  ListingResolver,
  OfferResolver,
  OrderResolver,
  TradeResolver,
  ImportResolver,
  StatisticsResolver,
  FloorListingResolver,
  ApiKeyResolver,
  EventResolver,
  AssetHistoryResolver,
  ListingHistoryResolver,
  OfferHistoryResolver,
  WebhookResolver,
  MetadataResolver,
  SearchResolver,
  AccountResolver,
  NodeResolver,
] as const;

let built: Promise<GraphQLSchema> | undefined;

/**
 * type-graphql wants a PubSub once there is a subscription, but ours bring their own stream (the event
 * log, see modules/event/event.stream.ts): there are no topics to publish to.
 */
const noTopics: PubSub = {
  publish() {
    throw new Error('subscriptions read the event log; nothing is published to topics');
  },
  subscribe() {
    throw new Error('subscriptions read the event log; there are no topics');
  },
};

/**
 * The schema is built once per process: type-graphql's metadata is global, and building is the slow part of start-up.
 * Its lists take Relay's `first` and `after` as their `limit` and `page` (withConnectionArguments).
 */
export function buildAppSchema(): Promise<GraphQLSchema> {
  built ??= buildSchema({ resolvers, validate: false, pubSub: noTopics }).then(withConnectionArguments);
  return built;
}

/** The SDL committed as schema.graphql (sorted, as type-graphql's emitSchemaFile writes it). */
export function schemaSdl(schema: GraphQLSchema): string {
  return printSchema(lexicographicSortSchema(schema)) + '\n';
}
