import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import { NATIVE_CURRENCY } from '../currency/currency.entity';
import type { OfferKind, OfferStatus } from './offer.types';

/** A row of `offers`, as the migrations build it (test/entities.test.ts holds the two equal); GraphQL's `Offer` is another shape. */
@Entity('offers')
export class OfferRecord {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  /** Null for a collection or trait offer. */
  @Column({ name: 'asset_id', type: 'uuid', nullable: true })
  assetId: string | null;

  @Column({ name: 'collection_id', type: 'uuid' })
  collectionId: string;

  @Column({ name: 'chain_id', type: 'varchar', length: 20 })
  chainId: string;

  @Column({ name: 'token_address', type: 'varchar', length: 42 })
  tokenAddress: string;

  @Column({ name: 'token_id', type: 'numeric', precision: 78, scale: 0, nullable: true })
  tokenId: string | null;

  /** The account that makes the offer (the would-be buyer). */
  @Column({ type: 'varchar', length: 42 })
  taker: string;

  @Column({ type: 'numeric', precision: 38, scale: 18 })
  price: string;

  @Column({ name: 'start_time', type: 'timestamptz', precision: 3 })
  startTime: Date;

  @Column({ name: 'end_time', type: 'timestamptz', precision: 3 })
  endTime: Date;

  @Column({ type: 'varchar', length: 20, default: 'active' })
  status: OfferStatus;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz', precision: 3 })
  updatedAt: Date;

  @Column({ name: 'expiry_swept', type: 'boolean', default: false })
  expirySwept: boolean;

  @Column({ type: 'varchar', length: 20, default: 'item' })
  kind: OfferKind;

  @Column({ type: 'integer', default: 1 })
  quantity: number;

  @Column({ type: 'integer', default: 0 })
  filled: number;

  /** A trait offer's traits, as stored ([{ trait_type, value }]); null otherwise. */
  @Column({ type: 'jsonb', nullable: true })
  traits: { trait_type: string; value: string }[] | null;

  @Column({ type: 'text', nullable: true })
  signature: string | null;

  /** Units held by sales awaiting the chain (SETTLEMENT=chain). */
  @Column({ type: 'integer', default: 0 })
  reserved: number;

  @Column({ type: 'varchar', length: 42, default: NATIVE_CURRENCY })
  currency: string;
}
