import { ArgsType, Field, registerEnumType } from 'type-graphql';
import { PageArgs } from '../../common/pagination';

export enum CatalogOrderBy {
  NAME = 'name',
}
registerEnumType(CatalogOrderBy, { name: 'CatalogOrderBy' });

@ArgsType()
export class CatalogListArgs extends PageArgs {
  @Field(() => CatalogOrderBy, { defaultValue: CatalogOrderBy.NAME })
  orderBy: CatalogOrderBy;
}
