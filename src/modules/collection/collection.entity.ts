import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { GraphQLJSON, GraphQLSafeInt } from 'graphql-scalars';
import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn, Unique, UpdateDateColumn } from 'typeorm';
import { AddressScalar } from '../../common/scalars';
import { Node } from '../../common/graphql/node';

export enum CollectionStatus {
  UNVERIFIED = 'unverified',
  VERIFIED = 'verified',
}
registerEnumType(CollectionStatus, { name: 'CollectionStatus' });

/** A royalty fee as stored on a collection (the `type` is implied: royalty). */
export interface StoredFee {
  address: string;
  basisPoints: number;
}

@Entity('collections')
@Unique('uq_collections_chain_address', ['chainId', 'contractAddress'])
@Index('ix_collections_created', ['createdAt', 'id'])
@ObjectType({ simpleResolvers: true, implements: Node })
export class Collection {
  @Field(() => ID)
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Field(() => String, { description: 'EIP-155 chain id of every asset of this collection' })
  @Column({ name: 'chain_id', type: 'varchar', length: 20 })
  chainId: string;

  @Field(() => AddressScalar)
  @Column({ name: 'contract_address', type: 'varchar', length: 42 })
  contractAddress: string;

  @Field(() => AddressScalar)
  @Index('ix_collections_owner')
  @Column({ type: 'varchar', length: 42 })
  owner: string;

  @Field(() => Int, { nullable: true, description: 'When set, caps the number of assets' })
  @Column({ name: 'total_supply', type: 'integer', nullable: true })
  totalSupply: number | null;

  /** A bigint column: read as a string, shown as a number (a block number stays below 2^53). */
  @Field(() => GraphQLSafeInt, { nullable: true, description: "The block from which a followed chain's transfers of the contract are read (docs/chain.md); from block 0 when null" })
  @Column({ name: 'start_block', type: 'bigint', nullable: true })
  startBlock: string | null;

  @Field(() => String, { nullable: true })
  @Column({ name: 'category_id', type: 'varchar', length: 64, nullable: true })
  categoryId: string | null;

  @Field(() => String)
  @Column({ type: 'varchar', length: 200 })
  name: string;

  @Field(() => String)
  @Column({ type: 'varchar', length: 220, unique: true })
  slug: string;

  @Field(() => GraphQLJSON, { nullable: true, description: 'Free-form JSON (an object in interface.md)' })
  @Column({ type: 'jsonb', nullable: true })
  description: unknown;

  @Field(() => String, { nullable: true })
  @Column({ name: 'image_url', type: 'varchar', length: 2048, nullable: true })
  imageUrl: string | null;

  @Field(() => String, { nullable: true })
  @Column({ name: 'discord_url', type: 'varchar', length: 2048, nullable: true })
  discordUrl: string | null;

  @Field(() => String, { nullable: true })
  @Column({ name: 'telegram_url', type: 'varchar', length: 2048, nullable: true })
  telegramUrl: string | null;

  @Field(() => String, { nullable: true })
  @Column({ name: 'external_url', type: 'varchar', length: 2048, nullable: true })
  externalUrl: string | null;

  @Field(() => String, { nullable: true })
  @Column({ name: 'twitter_username', type: 'varchar', length: 100, nullable: true })
  twitterUsername: string | null;

  @Field(() => String, { nullable: true })
  @Column({ name: 'instagram_username', type: 'varchar', length: 100, nullable: true })
  instagramUsername: string | null;

  @Column({ name: 'fees', type: 'jsonb', default: () => "'[]'" })
  royaltyFees: StoredFee[];

  @Field(() => CollectionStatus)
  @Column({ type: 'varchar', length: 20, default: CollectionStatus.UNVERIFIED })
  status: CollectionStatus;

  @Field(() => Date)
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @Field(() => Date)
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz', precision: 3 })
  updatedAt: Date;
}
