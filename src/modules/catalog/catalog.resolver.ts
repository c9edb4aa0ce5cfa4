import { Args, ArgsType, Ctx, Info, Field, ObjectType, Query, Resolver, registerEnumType } from 'type-graphql';
import type { GraphQLResolveInfo } from 'graphql';
import type { Context } from '../../common/request/context';
import { keyedNodeResolver } from '../../common/graphql/node';
import { fetchPage, PageArgs, PageType, remainingSelected, SortDirection } from '../../common/pagination';
import { Params, selectColumns } from '../../common/sql';
import { Category } from './category.entity';
import { Tag } from './tag.entity';

export enum CatalogOrderBy {
  NAME = 'name',
}
registerEnumType(CatalogOrderBy, { name: 'CatalogOrderBy' });

@ArgsType()
export class CatalogListArgs extends PageArgs {
  @Field(() => CatalogOrderBy, { defaultValue: CatalogOrderBy.NAME })
  orderBy: CatalogOrderBy;
}

@ObjectType()
export class CategoryPage extends PageType(Category) {}

@ObjectType()
export class TagPage extends PageType(Tag) {}

function listCatalog<T>(ctx: Context, entity: typeof Category | typeof Tag, args: CatalogListArgs) {
  const metadata = ctx.ds.getMetadata(entity);
  return fetchPage<T>(ctx.ds, {
    from: `"${metadata.tableName}" t`,
    columns: selectColumns(metadata, 't'),
    idExpression: 't.id',
    idType: 'text',
    where: [],
    params: new Params(),
    sort: { expression: 't.name', sqlType: 'text', defaultDirection: SortDirection.ASC },
    orderBy: args.orderBy,
    args,
  });
}

/** Categories and tags: read-only reference lists (seeded by a migration). */
@Resolver()
export class CatalogResolver {
  @Query(() => CategoryPage)
  categories(@Args() args: CatalogListArgs, @Ctx() ctx: Context, @Info() info: GraphQLResolveInfo) {
    args.countRemaining = remainingSelected(info);
    return listCatalog<Category>(ctx, Category, args);
  }

  @Query(() => TagPage)
  tags(@Args() args: CatalogListArgs, @Ctx() ctx: Context, @Info() info: GraphQLResolveInfo) {
    args.countRemaining = remainingSelected(info);
    return listCatalog<Tag>(ctx, Tag, args);
  }
}

export const CategoryResolver = keyedNodeResolver('Category', Category, { name: 'categoryId', description: "Its key (a collection's categoryId)" });

export const TagResolver = keyedNodeResolver('Tag', Tag, { name: 'tagId', description: 'Its key' });
