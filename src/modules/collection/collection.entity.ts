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

/** How a collection's claim was checked against its contract's ERC-173 owner() (docs/chain.md, "Who may speak for a collection"). */
export enum OwnerVerification {
  /** owner() was read on the followed chain and the collection's owner speaks for it (contractOwner). */
  VERIFIED = 'verified',
  /** Nobody checked: the chain is not followed by this gateway, or the collection was registered before the check existed. */
  UNVERIFIED = 'unverified',
  /** The chain is followed and the contract answers no owner() (no ERC-173, no code, or ownership renounced): first come. */
  NO_CONTRACT_OWNER = 'no_contract_owner',
}
registerEnumType(OwnerVerification, {
  name: 'OwnerVerification',
  description: "How the collection's claim was checked against its contract's ERC-173 owner() on a followed chain",
});

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

  @Field(() => OwnerVerification, { description: "verified: a key acting for the contract's owner() (or proving it with a signature) registered or claimed it" })
  @Column({ name: 'owner_verification', type: 'varchar', length: 20, default: OwnerVerification.UNVERIFIED })
  ownerVerification: OwnerVerification;

  @Field(() => AddressScalar, { nullable: true, description: "The contract's owner() as last read (null when never read or the contract has none)" })
  @Column({ name: 'contract_owner', type: 'varchar', length: 42, nullable: true })
  contractOwner: string | null;

  @Field(() => Date, { nullable: true, description: "When the contract's owner() was last read for this collection" })
  @Column({ name: 'owner_checked_at', type: 'timestamptz', precision: 3, nullable: true })
  ownerCheckedAt: Date | null;

  @Field(() => GraphQLSafeInt, {
    nullable: true,
    description: "The block at which the contract's owner() was last known: read at the chain's latest block, or the block of the OwnershipTransferred log the follower applied",
  })
  @Column({ name: 'owner_checked_block', type: 'bigint', nullable: true })
  ownerCheckedBlock: string | null;

  @Field(() => Date)
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @Field(() => Date)
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz', precision: 3 })
  updatedAt: Date;
}
