import { MigrationInterface, QueryRunner } from 'typeorm';

export const TIMESTAMPS = `'created_at', 'updated_at', 'listing_time', 'closing_date', 'start_time', 'end_time'`;
const PRICES = `'price', 'start_price', 'accept_price'`;

/** The function over these timestamp keys (a later migration adds keys by replacing it). */
export const eventDataAsApiSql = (timestamps: string) =>
  `CREATE OR REPLACE FUNCTION "event_data_as_api"(d jsonb) RETURNS jsonb LANGUAGE plpgsql STABLE AS $$
    DECLARE
      k text;
      patch jsonb := '{}';
    BEGIN
      FOREACH k IN ARRAY ARRAY[${timestamps}] LOOP
        IF jsonb_typeof(d -> k) = 'string' THEN
          patch := patch || jsonb_build_object(k, to_char((d ->> k)::timestamptz AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'));
        END IF;
      END LOOP;
      IF jsonb_typeof(d -> 'token_id') = 'number' THEN patch := patch || jsonb_build_object('token_id', d ->> 'token_id'); END IF;
      IF jsonb_typeof(d -> 'traits') = 'null' THEN patch := patch || '{"traits": []}'; END IF;
      FOREACH k IN ARRAY ARRAY[${PRICES}] LOOP
        IF jsonb_typeof(d -> k) IN ('number', 'string') THEN
          patch := patch || jsonb_build_object(k, trim_scale((d ->> k)::numeric), k || '_decimal', trim_scale((d ->> k)::numeric)::text);
        ELSIF jsonb_typeof(d -> k) = 'null' THEN
          patch := patch || jsonb_build_object(k || '_decimal', NULL);
        END IF;
      END LOOP;
      RETURN d || patch;
    END $$`;

/**
 * An event's `data` in the API's own words (docs/api.md, "Events"): the log kept each row as to_jsonb wrote
 * it, whose timestamps (`+00:00`, no milliseconds when they are zero), numeric token ids and bare decimals
 * differ from what every other answer shows, and whose decimals a JSON reader rounds to a double.
 * `event_data_as_api` rewrites one event's data: timestamps as Date#toISOString writes them, `token_id` as
 * its decimal string, each price as its exact number with an exact `<name>_decimal` string twin (the
 * readers write the number from the twin: a JSON parser of the pipeline rounds it), `traits` of an offer
 * without any as `[]`. The log's writer applies it to each event it appends; the events already written
 * are rewritten here (it changes a value written its way already into itself).
 */
export class EventDataAsApi1765300000000 implements MigrationInterface {
  name = 'EventDataAsApi1765300000000';

  async up(q: QueryRunner): Promise<void> {
    // One patch merged at the end: plpgsql that reads the few keys is about twice as fast as rebuilding
    // the object from jsonb_each, which an import of 100,000 assets pays per event.
    await q.query(eventDataAsApiSql(TIMESTAMPS));
    await q.query(`UPDATE "events" SET "data" = "event_data_as_api"("data")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION "event_data_as_api"(jsonb)`);
  }
}
