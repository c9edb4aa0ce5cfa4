import 'reflect-metadata';
import { GraphQLSchema, lexicographicSortSchema, printSchema } from 'graphql';
import { buildSchema } from 'type-graphql';
import { ApiKeyResolver } from '../../modules/apikey/api-key.resolver';
import { AssetResolver } from '../../modules/asset/asset.resolver';
import { CatalogResolver } from '../../modules/catalog/catalog.resolver';
import { ChainResolver } from '../../modules/chain/chain.resolver';
import { EventResolver } from '../../modules/event/event.resolver';
import { CollectionResolver } from '../../modules/collection/collection.resolver';
import { ImportResolver } from '../../modules/import/import.resolver';
import { ListingResolver } from '../../modules/listing/listing.resolver';
import { OfferResolver } from '../../modules/offer/offer.resolver';
import { OrderResolver } from '../../modules/order/order.resolver';
import { StatisticsResolver } from '../../modules/statistics/statistics.resolver';

export const resolvers = [
  ChainResolver,
  CatalogResolver,
  CollectionResolver,
  AssetResolver,
  ListingResolver,
  OfferResolver,
  OrderResolver,
  ImportResolver,
  StatisticsResolver,
  ApiKeyResolver,
  EventResolver,
] as const;

let built: Promise<GraphQLSchema> | undefined;

/** The schema is built once per process: type-graphql's metadata is global, and building is the slow part of start-up. */
export function buildAppSchema(): Promise<GraphQLSchema> {
  built ??= buildSchema({ resolvers, validate: false });
  return built;
}

/** The SDL committed as schema.graphql (sorted, as type-graphql's emitSchemaFile writes it). */
export function schemaSdl(schema: GraphQLSchema): string {
  return printSchema(lexicographicSortSchema(schema)) + '\n';
}
