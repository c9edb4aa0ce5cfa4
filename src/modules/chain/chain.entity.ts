import { Field, ID, ObjectType } from 'type-graphql';
import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A blockchain, by its EIP-155 chain id. Seeded by a migration; read-only for clients. */
@Entity('chains')
@ObjectType({ simpleResolvers: true })
export class Chain {
  @Field(() => ID, { description: 'EIP-155 chain id, e.g. "1" for Ethereum' })
  @PrimaryColumn({ type: 'varchar', length: 20 })
  id: string;

  @Field(() => String)
  @Column({ type: 'varchar', length: 100 })
  name: string;

  @Field(() => String, { description: 'Symbol of the native currency' })
  @Column({ type: 'varchar', length: 20 })
  symbol: string;
}
