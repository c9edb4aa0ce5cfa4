import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import { NATIVE_CURRENCY } from '../currency/currency.entity';
import type { OrderStatus } from './order.types';

/** A row of `orders` (a sale), as the migrations build it (test/entities.test.ts holds the two equal); GraphQL's `Order` is another shape. */
@Entity('orders')
export class OrderRecord {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  /** The accepted offer; null for a bought listing. */
  @Column({ name: 'offer_id', type: 'uuid', nullable: true })
  offerId: string | null;

  @Column({ name: 'listing_id', type: 'uuid', nullable: true })
  listingId: string | null;

  @Column({ name: 'asset_id', type: 'uuid' })
  assetId: string;

  @Column({ name: 'collection_id', type: 'uuid' })
  collectionId: string;

  @Column({ name: 'chain_id', type: 'varchar', length: 20 })
  chainId: string;

  @Column({ name: 'token_address', type: 'varchar', length: 42 })
  tokenAddress: string;

  @Column({ name: 'token_id', type: 'numeric', precision: 78, scale: 0 })
  tokenId: string;

  @Column({ type: 'numeric', precision: 38, scale: 18 })
  price: string;

  @Column({ type: 'varchar', length: 42 })
  seller: string;

  @Column({ type: 'varchar', length: 42 })
  buyer: string;

  @Column({ type: 'varchar', length: 20, default: 'completed' })
  status: OrderStatus;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz', precision: 3 })
  updatedAt: Date;

  /** Which unit of a multi-unit (collection or trait) offer this sale fills, from 1. */
  @Column({ type: 'integer', default: 1 })
  unit: number;

  @Column({ name: 'settlement_deadline', type: 'timestamptz', precision: 3, nullable: true })
  settlementDeadline: Date | null;

  @Column({ name: 'settlement_tx_hash', type: 'varchar', length: 66, nullable: true })
  settlementTxHash: string | null;

  /** A bigint column: read as a string. */
  @Column({ name: 'settlement_block_number', type: 'bigint', nullable: true })
  settlementBlockNumber: string | null;

  @Column({ name: 'settlement_log_index', type: 'integer', nullable: true })
  settlementLogIndex: number | null;

  @Column({ type: 'varchar', length: 42, default: NATIVE_CURRENCY })
  currency: string;
}
