import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * A row of the event log `events`, as the migrations build it (test/entities.test.ts holds the two equal).
 * Positions come from `event_sequence` (event.log.ts), one gap-free sequence for every subscriber.
 */
@Entity('events')
export class EventRecord {
  /** A bigint column: read as a string. */
  @PrimaryColumn({ type: 'bigint' })
  position: string;

  @Column({ type: 'varchar', length: 40 })
  type: string;

  @Column({ name: 'occurred_at', type: 'timestamptz', default: () => 'now()' })
  occurredAt: Date;

  @Column({ name: 'chain_id', type: 'varchar', length: 20, nullable: true })
  chainId: string | null;

  @Column({ name: 'collection_id', type: 'uuid', nullable: true })
  collectionId: string | null;

  @Column({ name: 'asset_id', type: 'uuid', nullable: true })
  assetId: string | null;

  /** The event's payload as the API shows it. */
  @Column({ type: 'jsonb' })
  data: Record<string, unknown>;

  /** The listing, offer or order the event is about, if any. */
  @Column({ name: 'subject_id', type: 'uuid', nullable: true })
  subjectId: string | null;

  /** The writing request's trace context (W3C traceparent), while traces were on: a webhook delivery of the event links to it. */
  @Column({ type: 'varchar', length: 55, nullable: true })
  traceparent: string | null;
}
