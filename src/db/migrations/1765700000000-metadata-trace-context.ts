import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The trace context (W3C `traceparent`) of the request that queued a tokenURI document's fetch, while
 * traces are on: the fetch's trace links to that request's (docs/operations.md#traces), as a webhook
 * delivery links to the request that wrote its event.
 */
export class MetadataTraceContext1765700000000 implements MigrationInterface {
  name = 'MetadataTraceContext1765700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "asset_metadata_queue" ADD "traceparent" varchar(55)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "asset_metadata_queue" DROP COLUMN "traceparent"`);
  }
}
