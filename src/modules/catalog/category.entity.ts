import { Field, ObjectType } from 'type-graphql';
import { Node } from '../../common/graphql/node';
import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

@Entity('categories')
@ObjectType({ simpleResolvers: true, implements: Node })
export class Category {
  /** Its key (GraphQL: categoryId; its id is its Node id). */
  @PrimaryColumn({ type: 'varchar', length: 64 })
  id: string;

  @Field(() => String)
  @Column({ type: 'varchar', length: 100 })
  name: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt: Date;
}
