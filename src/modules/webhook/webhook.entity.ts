import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import type { WebhookDeliveryStatus, WebhookStatus } from './webhook.types';

/** Rows of `webhooks`, `webhook_deliveries` and `webhook_attempts`, as the migrations build them (test/entities.test.ts holds them equal). */
@Entity('webhooks')
export class WebhookRecord {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  /** The API key that owns it (deleted with it). */
  @Column({ name: 'api_key_id', type: 'uuid' })
  apiKeyId: string;

  @Column({ type: 'varchar', length: 2048 })
  url: string;

  /** Empty: every type. */
  @Column({ name: 'event_types', type: 'text', array: true, default: () => "'{}'" })
  eventTypes: string[];

  @Column({ name: 'collection_id', type: 'uuid', nullable: true })
  collectionId: string | null;

  @Column({ name: 'asset_id', type: 'uuid', nullable: true })
  assetId: string | null;

  @Column({ type: 'varchar', length: 100 })
  secret: string;

  /** Its URL may reach a private address (an admin's choice, webhook.target.ts). */
  @Column({ name: 'private_target', type: 'boolean', default: false })
  privateTarget: boolean;

  @Column({ type: 'varchar', length: 10, default: 'active' })
  status: WebhookStatus;

  @Column({ name: 'disabled_reason', type: 'text', nullable: true })
  disabledReason: string | null;

  @Column({ name: 'disabled_at', type: 'timestamptz', precision: 3, nullable: true })
  disabledAt: Date | null;

  /** The position of the last event it has been sent or skipped (a bigint, read as a string). */
  @Column({ type: 'bigint' })
  cursor: string;

  @Column({ name: 'next_attempt_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  nextAttemptAt: Date;

  /** The worker holding it, until lease_until (webhook.worker.ts). */
  @Column({ name: 'lease_token', type: 'uuid', nullable: true })
  leaseToken: string | null;

  @Column({ name: 'lease_until', type: 'timestamptz', precision: 3, nullable: true })
  leaseUntil: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz', precision: 3 })
  updatedAt: Date;
}

/** One event's delivery to one webhook, over its attempts. */
@Entity('webhook_deliveries')
export class WebhookDeliveryRecord {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'webhook_id', type: 'uuid' })
  webhookId: string;

  @Column({ name: 'event_position', type: 'bigint' })
  eventPosition: string;

  @Column({ name: 'event_type', type: 'varchar', length: 40 })
  eventType: string;

  @Column({ type: 'varchar', length: 10, default: 'pending' })
  status: WebhookDeliveryStatus;

  @Column({ name: 'attempt_count', type: 'integer', default: 0 })
  attemptCount: number;

  @Column({ name: 'retrying_since', type: 'timestamptz', precision: 3, nullable: true })
  retryingSince: Date | null;

  @Column({ name: 'next_attempt_at', type: 'timestamptz', precision: 3, nullable: true })
  nextAttemptAt: Date | null;

  @Column({ name: 'completed_at', type: 'timestamptz', precision: 3, nullable: true })
  completedAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt: Date;
}

/** One HTTP attempt of a delivery. */
@Entity('webhook_attempts')
export class WebhookAttemptRecord {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'delivery_id', type: 'uuid' })
  deliveryId: string;

  @Column({ name: 'attempted_at', type: 'timestamptz', precision: 3 })
  attemptedAt: Date;

  @Column({ name: 'duration_ms', type: 'integer' })
  durationMs: number;

  /** Null when no answer came (a timeout, a refused connection). */
  @Column({ name: 'http_status', type: 'integer', nullable: true })
  httpStatus: number | null;

  @Column({ type: 'text', nullable: true })
  error: string | null;
}
