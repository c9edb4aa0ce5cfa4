import { Field, ID, ObjectType, registerEnumType } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';
import type { StoredFee } from '../collection/collection.entity';
import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn, Unique, UpdateDateColumn } from 'typeorm';
import { AddressScalar, TokenIdScalar } from '../../common/scalars';
import { Node } from '../../common/graphql/node';

export enum AssetStatus {
  UNLISTED = 'unlisted',
  LISTED = 'listed',
}
registerEnumType(AssetStatus, { name: 'AssetStatus' });

/** Where fetching the document behind an asset's tokenURI stands (docs/metadata.md). */
export enum MetadataStatus {
  PENDING = 'pending',
  FETCHED = 'fetched',
  FAILED = 'failed',
}
registerEnumType(MetadataStatus, { name: 'MetadataStatus', description: "The fetch of the document behind an asset's tokenURI" });

@Entity('assets')
@Unique('uq_assets_chain_token', ['chainId', 'tokenAddress', 'tokenId'])
@Index('ix_assets_collection_token', ['collectionId', 'tokenId'])
@Index('ix_assets_collection_created', ['collectionId', 'createdAt', 'id'])
@Index('ix_assets_created', ['createdAt', 'id'])
@ObjectType({ simpleResolvers: true, implements: Node })
export class Asset {
  @Field(() => ID)
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Field(() => ID)
  @Column({ name: 'collection_id', type: 'uuid' })
  collectionId: string;

  @Field(() => String)
  @Column({ name: 'chain_id', type: 'varchar', length: 20 })
  chainId: string;

  @Field(() => AddressScalar, { description: 'Address of the ERC721 contract' })
  @Column({ name: 'token_address', type: 'varchar', length: 42 })
  tokenAddress: string;

  @Field(() => TokenIdScalar)
  @Column({ name: 'token_id', type: 'numeric', precision: 78, scale: 0 })
  tokenId: string;

  @Field(() => String)
  @Column({ type: 'varchar', length: 500 })
  name: string;

  @Field(() => String)
  @Column({ type: 'text' })
  description: string;

  @Field(() => String)
  @Column({ name: 'image_url', type: 'varchar', length: 2048 })
  imageUrl: string;

  @Field(() => String, { nullable: true })
  @Column({ name: 'animation_url', type: 'varchar', length: 2048, nullable: true })
  animationUrl: string | null;

  @Field(() => String, { nullable: true })
  @Column({ name: 'external_link', type: 'varchar', length: 2048, nullable: true })
  externalLink: string | null;

  @Field(() => GraphQLJSONObject)
  @Column({ type: 'jsonb' })
  metadata: Record<string, unknown>;

  /** Its token's ERC-2981 royalty as fees, where it differs from its collection's (docs/chain.md "Royalties"); null: the collection's. */
  @Column({ name: 'royalty_fees', type: 'jsonb', nullable: true })
  royaltyFees: StoredFee[] | null;

  @Field(() => MetadataStatus, {
    nullable: true,
    description: 'The fetch of its tokenURI document (metadata.token_uri): pending (queued or being retried), fetched, failed; null without a tokenURI',
  })
  @Column({ name: 'metadata_status', type: 'varchar', length: 10, nullable: true })
  metadataStatus: MetadataStatus | null;

  @Field(() => String, { nullable: true, description: 'Why the last fetch of its tokenURI document failed (when failed, or pending a retry)' })
  @Column({ name: 'metadata_error', type: 'text', nullable: true })
  metadataError: string | null;

  @Field(() => Date, { nullable: true, description: 'When its tokenURI document was last fetched' })
  @Column({ name: 'metadata_fetched_at', type: 'timestamptz', precision: 3, nullable: true })
  metadataFetchedAt: Date | null;

  @Field(() => AddressScalar, { description: 'Address of the owning account' })
  @Index('ix_assets_owner')
  @Column({ type: 'varchar', length: 42 })
  owner: string;

  @Field(() => AssetStatus)
  @Column({ type: 'varchar', length: 20, default: AssetStatus.UNLISTED })
  status: AssetStatus;

  @Field(() => Date)
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @Field(() => Date)
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz', precision: 3 })
  updatedAt: Date;
}
