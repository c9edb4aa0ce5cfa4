import type { ReadModel } from '../common/read-model';
import { ACCOUNT_READ } from './account/account.read';
import { ASSET_READ } from './asset/asset.read';
import { CATEGORY_READ, TAG_READ } from './catalog/catalog.read';
import { CHAIN_READ } from './chain/chain.read';
import { COLLECTION_READ } from './collection/collection.read';
import { CURRENCY_READ } from './currency/currency.read';
import { LISTING_READ } from './listing/listing.read';
import { OFFER_READ } from './offer/offer.read';
import { ORDER_READ } from './order/order.read';

/**
 * Every noun's read model (common/read-model.ts), as db/entities.ts lists the entities: the SQL plans
 * (app/graphql/sql-plan) read these declarations and know no noun of their own. A new noun's read model
 * is added here.
 */
export const READ_MODELS: readonly ReadModel[] = [ASSET_READ, ORDER_READ, OFFER_READ, LISTING_READ, COLLECTION_READ, ACCOUNT_READ, CHAIN_READ, CATEGORY_READ, TAG_READ, CURRENCY_READ];
