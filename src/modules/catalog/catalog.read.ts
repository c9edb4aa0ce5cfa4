import { keyedFields, ReadModel, relatedModel } from '../../common/read-model';
import { SortDirection } from '../../common/pagination';
import { CatalogOrderBy } from './catalog.types';

/**
 * How a catalog's rows (categories, tags) are read: by their lists (catalog.resolver.ts), by name, A to Z
 * unless a direction is given; and by the SQL plans (a collection's `category`): their key, Node id and name.
 * REST shows both as categories (interface.md 4.6): their key as `category_id`, their name as `category_name`.
 */
const catalogModel = (type: 'Category' | 'Tag', table: string, alias: string, key: string): ReadModel =>
  relatedModel(type, table, alias, { ...keyedFields(type, key), name: { sql: 'name', kind: 'value' } }, {
    sorts: { [CatalogOrderBy.NAME]: { expression: `${alias}.name`, sqlType: 'text', defaultDirection: SortDirection.ASC } },
    rest: { shape: [{ field: key, as: 'category_id' }, { field: 'name', as: 'category_name' }], omits: ['id'] },
  });

export const CATEGORY_READ = catalogModel('Category', 'categories', 'cat', 'categoryId');
export const TAG_READ = catalogModel('Tag', 'tags', 'tg', 'tagId');
