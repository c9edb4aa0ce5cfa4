import { ClassType, Field, FieldResolver, ID, InterfaceType, Resolver } from 'type-graphql';
import { base64urlSql } from '../sql';
import { Parent } from './parent';

/**
 * Global object identification (docs/api.md, "Object identification"): every object a client may cache
 * implements Node, whose `id` is unique across types. Types keyed by a random UUID keep it (REST shows the
 * same ids); the others' ids are base64url (no padding) of `<TypeName>:<key>`, opaque to clients.
 */

/** Types whose id is their UUID. */
export const UUID_TYPES = ['Asset', 'Collection', 'Listing', 'Offer', 'Order', 'Webhook', 'ApiKey'] as const;
/** Types whose id encodes their key. */
export const KEYED_TYPES = ['Chain', 'Category', 'Tag', 'MarketEvent', 'Trait', 'StatisticsRecord'] as const;

export type UuidType = (typeof UUID_TYPES)[number];
export type KeyedType = (typeof KEYED_TYPES)[number];
export type NodeTypeName = UuidType | KeyedType;

/**
 * The Node interface. A value of a field of this type (node, nodes) is an instance of its type's class:
 * TypeGraphQL resolves the interface by instanceof, synchronously, as graphql-jit needs (it does not
 * await a resolveType, and TypeGraphQL makes a given resolveType async).
 */
@InterfaceType({ description: 'An object with a global id: node(id) refetches it (docs/api.md, "Object identification")' })
export abstract class Node {
  @Field(() => ID, { description: 'Unique across every type; opaque (pass it to node or nodes)' })
  id: string;
}

/** The id of a keyed type's object. */
export function nodeId(type: KeyedType, key: string): string {
  return Buffer.from(`${type}:${key}`).toString('base64url');
}

/** nodeId in SQL, of the text key `keySql`. */
export const nodeIdSql = (type: KeyedType, keySql: string) => base64urlSql(`'${type}:' || ${keySql}`);

/** A trait's key: its collection, type and value (the same Trait under Asset.traits and Collection.traits). */
export const traitNodeId = (collectionId: string, traitType: string, value: string) => nodeId('Trait', JSON.stringify([collectionId, traitType, value]));

/** A statistics record's key: its collection and period (REST's spelling: 24h). */
export const statisticsNodeId = (collectionId: string, period: string) => nodeId('StatisticsRecord', `${collectionId}:${period}`);

const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** The type and key an id of a keyed type encodes, or undefined when it is none (a UUID, a raw key, anything else). */
export function decodeNodeId(id: string): { type: KeyedType; key: string } | undefined {
  if (!BASE64URL.test(id)) return undefined;
  const text = Buffer.from(id, 'base64url').toString();
  // Only the one spelling nodeId writes (no padding, no stray bits, valid UTF-8).
  if (Buffer.from(text).toString('base64url') !== id) return undefined;
  const colon = text.indexOf(':');
  const type = text.slice(0, colon) as KeyedType;
  if (colon < 1 || !KEYED_TYPES.includes(type)) return undefined;
  return { type, key: text.slice(colon + 1) };
}

/**
 * An argument that takes a key of `type` also takes its Node id: the key it encodes, else the value
 * as given (read as a raw key).
 */
export function keyOf(type: KeyedType, value: string): string {
  const decoded = decodeNodeId(value);
  return decoded?.type === type ? decoded.key : value;
}

/**
 * The resolver of a type keyed by a text key in its `id` column (a chain, a category, a tag): GraphQL's
 * `id` is its Node id, and the key is read under its own name (`key.name`).
 */
export function keyedNodeResolver(type: KeyedType, target: ClassType<{ id: string }>, key: { name: string; description: string }) {
  @Resolver(() => target)
  class KeyedNodeResolver {
    @FieldResolver(() => ID, { description: `Its Node id (its key is ${key.name})` })
    id(@Parent() row: { id: string }): string {
      return nodeId(type, row.id);
    }

    @FieldResolver(() => ID, { name: key.name, description: key.description })
    key(@Parent() row: { id: string }): string {
      return row.id;
    }
  }
  return KeyedNodeResolver;
}
