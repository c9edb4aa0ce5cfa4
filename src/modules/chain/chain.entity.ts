import { Field, ObjectType } from 'type-graphql';
import { Node } from '../../common/graphql/node';
import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A blockchain, by its EIP-155 chain id. Seeded by a migration; read-only for clients. */
@Entity('chains')
@ObjectType({ simpleResolvers: true, implements: Node })
export class Chain {
  /** The EIP-155 chain id (GraphQL: chainId; its id is its Node id). */
  @PrimaryColumn({ type: 'varchar', length: 20 })
  id: string;

  @Field(() => String)
  @Column({ type: 'varchar', length: 100 })
  name: string;

  @Field(() => String, { description: 'Symbol of the native currency' })
  @Column({ type: 'varchar', length: 20 })
  symbol: string;
}
