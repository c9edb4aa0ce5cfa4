import DataLoader from 'dataloader';
import { DataSource } from 'typeorm';
import { byKey, observed } from '../../common/batch';
import { clock } from '../../common/clock';
import { decodeNodeId, KEYED_TYPES, KeyedType, NodeTypeName, UUID_TYPES, UuidType } from '../../common/graphql/node';
import type { Loaders } from '../../common/request/context';
import { UUID } from '../../common/validate';
import { ApiKey } from '../apikey/api-key.entity';
import { apiKeysByIds } from '../apikey/api-key.service';
import { Asset } from '../asset/asset.entity';
import { Category } from '../catalog/category.entity';
import { Tag } from '../catalog/tag.entity';
import { Chain } from '../chain/chain.entity';
import { Collection } from '../collection/collection.entity';
import { MarketEvent } from '../event/event.types';
import { Listing } from '../listing/listing.types';
import { Offer } from '../offer/offer.types';
import { Order } from '../order/order.types';
import { StatisticsRecord } from '../statistics/statistics.types';
import { Webhook } from '../webhook/webhook.types';
import { Trait, TraitKey, traitsByKeys } from '../asset/asset.traits';
import { eventsAt } from '../event/event.service';
import { listingsByIds } from '../listing/listing.read';
import { webhooksByIds } from '../webhook/webhook.service';
import { Keys, parseKey } from './node.keys';

/** Who may see an object that is not public: the API key a webhook belongs to, the account of an API key. */
export const NODE_OWNER = Symbol('nodeOwner');

/** An object found by its Node id: an instance of its type's class (and, when not public, marked with its owner). */
export interface NodeValue {
  [NODE_OWNER]?: { keyId?: string; address?: string };
}

/** The class of each Node type: the Node interface tells the types of its values apart by instanceof. */
const NODE_CLASSES: Record<NodeTypeName, abstract new () => object> = {
  Asset,
  Collection,
  Listing,
  Offer,
  Order,
  Webhook,
  ApiKey,
  Chain,
  Category,
  Tag,
  MarketEvent,
  Trait,
  StatisticsRecord,
};

const asNode = (type: NodeTypeName, row: object): NodeValue => Object.assign(Object.create(NODE_CLASSES[type].prototype) as object, row);

declare module '../../common/request/context' {
  interface Loaders {
    /** By canonical id (node.keys.ts): a lower-case UUID, or a keyed type's id as given. */
    nodeById: DataLoader<string, NodeValue | null>;
  }
}

const TABLES: Record<UuidType, string> = {
  Asset: 'assets',
  Collection: 'collections',
  Listing: 'listings',
  Offer: 'offers',
  Order: 'orders',
  Webhook: 'webhooks',
  ApiKey: 'api_keys',
};

/** Which table holds each UUID: one statement, whatever the number of ids and tables. */
const TYPE_OF_UUIDS = Object.entries(TABLES)
  .map(([type, table]) => `SELECT id::text AS id, '${type}' AS type FROM ${table} WHERE id = ANY($1::uuid[])`)
  .join(' UNION ALL ');

/** A row of any type, as its by-id loader or lookup gives it. */
type Row = object;

/** Each UUID type's rows by id, in the order of the ids (null when absent), through the request's loaders where there are some. */
const UUID_LOOKUPS: Record<UuidType, (ds: DataSource, loaders: Loaders, ids: string[]) => Promise<(Row | null)[]>> = {
  Asset: (_ds, loaders, ids) => Promise.all(ids.map((id) => loaders.assetById.load(id))),
  Collection: (_ds, loaders, ids) => Promise.all(ids.map((id) => loaders.collectionById.load(id))),
  Offer: (_ds, loaders, ids) => Promise.all(ids.map((id) => loaders.offerById.load(id))),
  Order: (_ds, loaders, ids) => Promise.all(ids.map((id) => loaders.orderById.load(id))),
  Listing: async (ds, _loaders, ids) => byKey(ids, await listingsByIds(ds, ids, clock.now()), (l) => l.id),
  Webhook: async (ds, _loaders, ids) =>
    byKey(ids, await webhooksByIds(ds, ids), (w) => w.id).map((w) => {
      if (!w) return null;
      const { apiKeyId, ...webhook } = w;
      return { ...webhook, [NODE_OWNER]: { keyId: apiKeyId } };
    }),
  ApiKey: async (ds, _loaders, ids) => byKey(ids, await apiKeysByIds(ds, ids), (k) => k.id).map((k) => k && { ...k, [NODE_OWNER]: { address: k.address } }),
};

/** Each keyed type's objects by key, in the order of the keys (null or undefined when absent). */
const KEYED_LOOKUPS: { [T in KeyedType]: (ds: DataSource, loaders: Loaders, keys: Keys[T][]) => Promise<(Row | null | undefined)[]> } = {
  Chain: (_ds, loaders, keys) => Promise.all(keys.map((k) => loaders.chainById.load(k))),
  Category: (_ds, loaders, keys) => Promise.all(keys.map((k) => loaders.categoryById.load(k))),
  Tag: (_ds, loaders, keys) => Promise.all(keys.map((k) => loaders.tagById.load(k))),
  MarketEvent: async (ds, _loaders, positions) => byKey(positions, await eventsAt(ds, positions), (e) => e.position),
  Trait: async (ds, _loaders, keys) => byKey(keys.map(traitText), await traitsByKeys(ds, keys), traitText),
  StatisticsRecord: (_ds, loaders, keys) => Promise.all(keys.map((k) => loaders.statisticsByCollection.load({ parentId: k.collectionId, args: k.period }))),
};

const traitText = (t: TraitKey) => JSON.stringify([t.collectionId, t.traitType, t.value]);

/** Finds the objects of the ids of keyed types (each checked by canonicalNodeId) into `found`. */
async function findKeyed(ds: DataSource, loaders: Loaders, ids: string[], found: Map<string, NodeValue>): Promise<void> {
  const parsed = ids.map((id) => {
    const { type, key } = decodeNodeId(id)!;
    return { id, type, key: parseKey(type, key)! };
  });
  await Promise.all(
    KEYED_TYPES.map(async (type) => {
      const group = parsed.filter((p) => p.type === type);
      if (!group.length) return;
      const rows = await KEYED_LOOKUPS[type](ds, loaders, group.map((g) => g.key as never));
      group.forEach((g, i) => {
        const row = rows[i];
        if (row) found.set(g.id, asNode(type, row));
      });
    }),
  );
}

/** Finds the objects of these UUIDs into `found`: which table holds each (one statement), then each type's rows. */
async function findUuids(ds: DataSource, loaders: Loaders, ids: string[], found: Map<string, NodeValue>): Promise<void> {
  const typed: { id: string; type: UuidType }[] = ids.length ? await ds.query(TYPE_OF_UUIDS, [ids]) : [];
  await Promise.all(
    UUID_TYPES.map(async (type) => {
      const group = typed.filter((t) => t.type === type).map((t) => t.id);
      if (!group.length) return;
      const rows = await UUID_LOOKUPS[type](ds, loaders, group);
      group.forEach((id, i) => {
        const row = rows[i];
        if (row) found.set(id, asNode(type, row));
      });
    }),
  );
}

/**
 * Objects by Node id, batched: one statement tells which table holds each UUID, then each type's rows
 * come through its by-id loader (one statement per type asked for); a keyed type's ids name their keys,
 * so each type costs one statement. The statements do not grow with the number of ids.
 */
export function createNodeLoaders(ds: DataSource, all: () => Loaders) {
  return {
    nodeById: new DataLoader<string, NodeValue | null>(
      observed('nodeById', async (ids) => {
        const found = new Map<string, NodeValue>();
        await Promise.all([
          findUuids(ds, all(), ids.filter((id) => UUID.test(id)), found),
          findKeyed(ds, all(), ids.filter((id) => !UUID.test(id)), found),
        ]);
        return ids.map((id) => found.get(id) ?? null);
      }),
    ),
  };
}
