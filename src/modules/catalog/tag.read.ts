import { keyedFields, relatedModel } from '../../common/read-model';
import { catalogSorts } from './category.read';

/** How a tag is read by its list (catalog.resolver.ts): its key, Node id and name. */
export const TAG_READ = relatedModel(
  'Tag',
  'tags',
  'tg',
  {
    ...keyedFields('Tag', 'tagId'),
    name: { sql: 'name', kind: 'value' },
  },
  catalogSorts('tg'),
);
