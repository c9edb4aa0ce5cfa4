import { Field, ID, ObjectType } from 'type-graphql';
import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** Tags have the shape of categories (interface.md 4.6). */
@Entity('tags')
@ObjectType({ simpleResolvers: true })
export class Tag {
  @Field(() => ID)
  @PrimaryColumn({ type: 'varchar', length: 64 })
  id: string;

  @Field(() => String)
  @Column({ type: 'varchar', length: 100 })
  name: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt: Date;
}
