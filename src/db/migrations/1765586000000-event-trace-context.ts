import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The trace context (W3C `traceparent`) of the request that wrote an event, while traces are on: a
 * webhook delivery of the event links its trace to that request's (docs/operations.md#traces).
 */
export class EventTraceContext1765586000000 implements MigrationInterface {
  name = 'EventTraceContext1765586000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "events" ADD "traceparent" varchar(55)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "events" DROP COLUMN "traceparent"`);
  }
}
