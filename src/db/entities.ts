import { ApiKey } from '../modules/apikey/api-key.entity';
import { Asset } from '../modules/asset/asset.entity';
import { AssetTraitRecord } from '../modules/asset/asset-trait.entity';
import { Category } from '../modules/catalog/category.entity';
import { Tag } from '../modules/catalog/tag.entity';
import { Chain } from '../modules/chain/chain.entity';
import { Collection } from '../modules/collection/collection.entity';
import { Currency } from '../modules/currency/currency.entity';
import { EventRecord } from '../modules/event/event.entity';
import { ListingRecord } from '../modules/listing/listing.entity';
import { OfferRecord } from '../modules/offer/offer.entity';
import { OrderRecord } from '../modules/order/order.entity';
import { WebhookAttemptRecord, WebhookDeliveryRecord, WebhookRecord } from '../modules/webhook/webhook.entity';

/**
 * Every table of the nouns, each the one list of its columns (test/entities.test.ts holds them equal to what
 * the migrations build). The migrations alone own constraints, foreign keys and partial indexes. Tables with
 * no entity are derived (counts, rollups, the event sequence), the chain follower's bookkeeping, or the
 * gateway's own (idempotency keys, trusted documents): entities.test.ts lists them and why.
 */
export const entities = [
  Chain,
  Currency,
  Category,
  Tag,
  Collection,
  Asset,
  AssetTraitRecord,
  ApiKey,
  ListingRecord,
  OfferRecord,
  OrderRecord,
  EventRecord,
  WebhookRecord,
  WebhookDeliveryRecord,
  WebhookAttemptRecord,
];
