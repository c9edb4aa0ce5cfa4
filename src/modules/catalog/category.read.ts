import { keyedFields, ReadSort, relatedModel } from '../../common/read-model';
import { SortDirection } from '../../common/pagination';
import { CatalogOrderBy } from './catalog.types';

/** The sorts of a catalog list (categories, tags; CatalogOrderBy) over its row `row`: by name, A to Z unless a direction is given. */
export const catalogSorts = (row: string): Record<string, ReadSort> => ({
  [CatalogOrderBy.NAME]: { expression: `${row}.name`, sqlType: 'text', defaultDirection: SortDirection.ASC },
});

/** How a category is read: by its list (catalog.resolver.ts) and by the SQL plans (a collection's `category`): its key, Node id and name. */
export const CATEGORY_READ = relatedModel(
  'Category',
  'categories',
  'cat',
  {
    ...keyedFields('Category', 'categoryId'),
    name: { sql: 'name', kind: 'value' },
  },
  catalogSorts('cat'),
);
