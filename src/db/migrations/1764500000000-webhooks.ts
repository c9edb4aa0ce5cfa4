import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhooks: endpoints registered by an API key, each with its own cursor in the event log (every event up
 * to `cursor` has been delivered or did not match). A delivery is one event on its way to one endpoint;
 * at most one is pending per endpoint (in order: the next waits for it). The delivery worker leases an
 * endpoint (`lease_token`, `lease_until`) before it posts, so several processes never post to one at once.
 */
export class Webhooks1764500000000 implements MigrationInterface {
  name = 'Webhooks1764500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "webhooks" (
      "id" uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      "api_key_id" uuid NOT NULL REFERENCES "api_keys" ("id") ON DELETE CASCADE,
      "url" varchar(2048) NOT NULL,
      "event_types" text[] NOT NULL DEFAULT '{}',
      "collection_id" uuid,
      "asset_id" uuid,
      "secret" varchar(100) NOT NULL,
      "private_target" boolean NOT NULL DEFAULT false,
      "status" varchar(10) NOT NULL DEFAULT 'active',
      "disabled_reason" text,
      "disabled_at" timestamp(3) with time zone,
      "cursor" bigint NOT NULL,
      "next_attempt_at" timestamp(3) with time zone NOT NULL DEFAULT now(),
      "lease_token" uuid,
      "lease_until" timestamp(3) with time zone,
      "created_at" timestamp(3) with time zone NOT NULL DEFAULT now(),
      "updated_at" timestamp(3) with time zone NOT NULL DEFAULT now())`);
    await q.query(`CREATE INDEX "ix_webhooks_api_key" ON "webhooks" ("api_key_id", "created_at")`);
    await q.query(`CREATE INDEX "ix_webhooks_due" ON "webhooks" ("next_attempt_at") WHERE "status" = 'active'`);
    await q.query(`CREATE TABLE "webhook_deliveries" (
      "id" uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      "webhook_id" uuid NOT NULL REFERENCES "webhooks" ("id") ON DELETE CASCADE,
      "event_position" bigint NOT NULL,
      "event_type" varchar(40) NOT NULL,
      "status" varchar(10) NOT NULL DEFAULT 'pending',
      "attempt_count" integer NOT NULL DEFAULT 0,
      "retrying_since" timestamp(3) with time zone,
      "next_attempt_at" timestamp(3) with time zone,
      "completed_at" timestamp(3) with time zone,
      "created_at" timestamp(3) with time zone NOT NULL DEFAULT now())`);
    await q.query(`CREATE INDEX "ix_webhook_deliveries_webhook" ON "webhook_deliveries" ("webhook_id", "created_at")`);
    await q.query(`CREATE UNIQUE INDEX "ux_webhook_deliveries_pending" ON "webhook_deliveries" ("webhook_id") WHERE "status" = 'pending'`);
    await q.query(`CREATE TABLE "webhook_attempts" (
      "id" uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      "delivery_id" uuid NOT NULL REFERENCES "webhook_deliveries" ("id") ON DELETE CASCADE,
      "attempted_at" timestamp(3) with time zone NOT NULL,
      "duration_ms" integer NOT NULL,
      "http_status" integer,
      "error" text)`);
    await q.query(`CREATE INDEX "ix_webhook_attempts_delivery" ON "webhook_attempts" ("delivery_id", "attempted_at")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "webhook_attempts"`);
    await q.query(`DROP TABLE "webhook_deliveries"`);
    await q.query(`DROP TABLE "webhooks"`);
  }
}
