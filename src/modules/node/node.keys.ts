import { decodeNodeId, KeyedType } from '../../common/graphql/node';
import { UUID } from '../../common/validate';
import { TRAIT_MAX_LENGTH, TraitKey } from '../asset/asset.traits';
import { isPosition } from '../event/event.service';
import { Period, PERIODS } from '../statistics/statistics.types';

/** The key each keyed type's id encodes, as its lookup reads it. */
export interface Keys {
  Chain: string;
  Category: string;
  Tag: string;
  MarketEvent: string;
  Trait: TraitKey;
  StatisticsRecord: { collectionId: string; period: Period };
}

/** The widths of the key columns (chains.id, categories.id, tags.id). */
const KEY_LENGTH = { Chain: 20, Category: 64, Tag: 64 } as const;

const isText = (value: unknown, max: number): value is string => typeof value === 'string' && value.length >= 1 && value.length <= max;

/** The key a keyed type's id encodes, or undefined when no object of the type can have it. */
export function parseKey<T extends KeyedType>(type: T, key: string): Keys[T] | undefined {
  const parsed = parseAnyKey(type, key);
  return parsed as Keys[T] | undefined;
}

function parseAnyKey(type: KeyedType, key: string): Keys[KeyedType] | undefined {
  switch (type) {
    case 'Chain':
    case 'Category':
    case 'Tag':
      return isText(key, KEY_LENGTH[type]) ? key : undefined;
    case 'MarketEvent':
      return isPosition(key) ? key : undefined;
    case 'Trait': {
      let parts: unknown;
      try {
        parts = JSON.parse(key);
      } catch {
        return undefined;
      }
      if (!Array.isArray(parts) || parts.length !== 3) return undefined;
      const [collectionId, traitType, value] = parts as unknown[];
      if (typeof collectionId !== 'string' || !UUID.test(collectionId) || !isText(traitType, TRAIT_MAX_LENGTH) || !isText(value, TRAIT_MAX_LENGTH)) return undefined;
      return { collectionId: collectionId.toLowerCase(), traitType, value };
    }
    case 'StatisticsRecord': {
      const [collectionId, period] = key.split(':');
      if (!UUID.test(collectionId ?? '') || !Object.hasOwn(PERIODS, period ?? '') || key.split(':').length !== 2) return undefined;
      return { collectionId: collectionId.toLowerCase(), period: period as Period };
    }
  }
}

/**
 * The one spelling of an id its lookup is keyed by (a UUID lower-case; a keyed type's id as it is), or
 * undefined when it can be the id of no object: neither a UUID nor an id of a keyed type with a
 * well-formed key.
 */
export function canonicalNodeId(id: string): string | undefined {
  if (UUID.test(id)) return id.toLowerCase();
  const decoded = decodeNodeId(id);
  return decoded && parseKey(decoded.type, decoded.key) !== undefined ? id : undefined;
}
