import { keyedFields, relatedModel } from '../../common/read-model';

/** How a category is read by the SQL plans (a collection's `category`): its key, Node id and name. */
export const CATEGORY_READ = relatedModel('Category', 'categories', 'cat', {
  ...keyedFields('Category', 'categoryId'),
  name: { sql: 'name', kind: 'value' },
});
