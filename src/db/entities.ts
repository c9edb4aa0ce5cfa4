import { ApiKey } from '../modules/apikey/api-key.entity';
import { Asset } from '../modules/asset/asset.entity';
import { Category } from '../modules/catalog/category.entity';
import { Tag } from '../modules/catalog/tag.entity';
import { Chain } from '../modules/chain/chain.entity';
import { Collection } from '../modules/collection/collection.entity';
import { Currency } from '../modules/currency/currency.entity';

export const entities = [Chain, Currency, Category, Tag, Collection, Asset, ApiKey];
