import { MigrationInterface, QueryRunner } from 'typeorm';

const TIMESTAMPS = `'created_at', 'updated_at', 'listing_time', 'closing_date', 'start_time', 'end_time'`;
const PRICES = `'price', 'start_price', 'accept_price'`;

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
    await q.query(`CREATE FUNCTION "event_data_as_api"(d jsonb) RETURNS jsonb LANGUAGE sql STABLE AS $$
      SELECT COALESCE(jsonb_object_agg(f.key, f.value), '{}'::jsonb) FROM (
        SELECT e.key, CASE
            WHEN e.value = 'null'::jsonb THEN CASE e.key WHEN 'traits' THEN '[]'::jsonb ELSE e.value END
            WHEN e.key IN (${TIMESTAMPS})
              THEN to_jsonb(to_char((e.value #>> '{}')::timestamptz AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
            WHEN e.key = 'token_id' THEN to_jsonb(e.value #>> '{}')
            WHEN e.key IN (${PRICES}) THEN to_jsonb(trim_scale((e.value #>> '{}')::numeric))
            ELSE e.value END AS value
        FROM jsonb_each(d) e
        UNION ALL
        SELECT e.key || '_decimal', CASE WHEN e.value = 'null'::jsonb THEN e.value ELSE to_jsonb(trim_scale((e.value #>> '{}')::numeric)::text) END
        FROM jsonb_each(d) e WHERE e.key IN (${PRICES})) f
    $$`);
    await q.query(`UPDATE "events" SET "data" = "event_data_as_api"("data")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION "event_data_as_api"(jsonb)`);
  }
}
