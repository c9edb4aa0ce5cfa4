import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import { NATIVE_CURRENCY } from '../currency/currency.entity';
import type { StoredFee } from '../collection/collection.entity';
import type { ListingOrderType, ListingStatus } from './listing.types';

/**
 * A row of `listings`, as the migrations build it (test/entities.test.ts holds the two equal). The GraphQL
 * `Listing` is another shape: its status and current price are computed when read, its name is the asset's.
 */
@Entity('listings')
export class ListingRecord {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'asset_id', type: 'uuid' })
  assetId: string;

  @Column({ name: 'collection_id', type: 'uuid' })
  collectionId: string;

  @Column({ type: 'varchar', length: 42 })
  seller: string;

  @Column({ name: 'order_type', type: 'varchar', length: 20 })
  orderType: ListingOrderType;

  /** numeric(38,18): read as a decimal string. */
  @Column({ name: 'start_price', type: 'numeric', precision: 38, scale: 18 })
  startPrice: string;

  @Column({ name: 'accept_price', type: 'numeric', precision: 38, scale: 18, nullable: true })
  acceptPrice: string | null;

  @Column({ name: 'listing_time', type: 'timestamptz', precision: 3 })
  listingTime: Date;

  @Column({ name: 'closing_date', type: 'timestamptz', precision: 3, nullable: true })
  closingDate: Date | null;

  @Column({ name: 'maker_fees', type: 'jsonb', default: () => "'[]'" })
  makerFees: StoredFee[];

  @Column({ type: 'text', nullable: true })
  signature: string | null;

  /** As stored: an active listing past its closing date is read as expired before the sweeper marks it. */
  @Column({ type: 'varchar', length: 20, default: 'active' })
  status: ListingStatus;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz', precision: 3 })
  updatedAt: Date;

  /** Set by the expiry sweeper once it has announced the listing's expiry. */
  @Column({ name: 'expiry_swept', type: 'boolean', default: false })
  expirySwept: boolean;

  @Column({ name: 'inactive_reason', type: 'varchar', length: 40, nullable: true })
  inactiveReason: string | null;

  @Column({ type: 'varchar', length: 42, default: NATIVE_CURRENCY })
  currency: string;

  /** The currency's decimals when listed (a price keeps at most this many). */
  @Column({ name: 'currency_decimals', type: 'smallint', default: 18 })
  currencyDecimals: number;

  /**
   * The least and the most its current price can be while it is active, whatever the moment (equal when only
   * writes change it: a fixed price, an english auction without bids). Kept by triggers (migration
   * 1765640000000-listing-price-bounds), never written by the application; read by listedByPriceSql.
   */
  @Column({ name: 'price_low', type: 'numeric', precision: 38, scale: 18, nullable: true, insert: false, update: false })
  priceLow: string | null;

  @Column({ name: 'price_high', type: 'numeric', precision: 38, scale: 18, nullable: true, insert: false, update: false })
  priceHigh: string | null;

  /**
   * Its asset's name, kept by triggers (migration 1765870000000-listing-asset-names), never written by the
   * application; searches among listed assets walk it (listedByNameSql).
   */
  @Column({ name: 'asset_name', type: 'varchar', length: 500, nullable: true, insert: false, update: false })
  assetName: string | null;
}
