import { Args, Ctx, Info, ObjectType, Query, Resolver } from 'type-graphql';
import type { GraphQLResolveInfo } from 'graphql';
import type { Context } from '../../common/request/context';
import { keyedNodeResolver } from '../../common/graphql/node';
import { PageType, remainingSelected } from '../../common/pagination';
import { fetchPage } from '../../common/list-page';
import { ReadModel, sqlScope } from '../../common/read-model';
import { modelListQuery } from '../../common/read-model-sql';
import { Category } from './category.entity';
import { Tag } from './tag.entity';
import { CATEGORY_READ, TAG_READ } from './catalog.read';
import { CatalogListArgs } from './catalog.types';

@ObjectType()
export class CategoryPage extends PageType(Category) {}

@ObjectType()
export class TagPage extends PageType(Tag) {}

/** A catalog list as its read model (catalog.read.ts) reads it. */
const listCatalog = <T>(ctx: Context, model: ReadModel, args: CatalogListArgs) => fetchPage<T>(ctx.ds, modelListQuery(model, sqlScope(), args, 'text'));

/** Categories and tags: read-only reference lists (seeded by a migration). */
@Resolver()
export class CatalogResolver {
  @Query(() => CategoryPage)
  categories(@Args() args: CatalogListArgs, @Ctx() ctx: Context, @Info() info: GraphQLResolveInfo) {
    args.countRemaining = remainingSelected(info);
    return listCatalog<Category>(ctx, CATEGORY_READ, args);
  }

  @Query(() => TagPage)
  tags(@Args() args: CatalogListArgs, @Ctx() ctx: Context, @Info() info: GraphQLResolveInfo) {
    args.countRemaining = remainingSelected(info);
    return listCatalog<Tag>(ctx, TAG_READ, args);
  }
}

export const CategoryResolver = keyedNodeResolver('Category', Category, { name: 'categoryId', description: "Its key (a collection's categoryId)" });

export const TagResolver = keyedNodeResolver('Tag', Tag, { name: 'tagId', description: 'Its key' });
