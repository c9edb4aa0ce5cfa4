import { Any, DataSource } from 'typeorm';
import type { Context } from '../../common/request/context';
import { NotFoundError, Problems, ValidationError } from '../../common/errors';
import { Page, PageArgs, SortKey } from '../../common/pagination';
import { fetchPage } from '../../common/list-page';
import { Params, updateReturning } from '../../common/sql';
import { UUID, uuidOf } from '../../common/validate';
import { findCollectionByRef } from '../collection/collection.service';
import { unknownEventTypes } from '../event/event.log';
import { positionOf } from '../event/event.service';
import { newSecret } from './webhook.signing';
import { checkHost, hostOf, TargetRefusedError } from './webhook.target';
import { Asset } from '../asset/asset.entity';
import { WebhookDeliveryRecord, WebhookRecord } from './webhook.entity';
import { CreateWebhookInput, Webhook, WebhookAttempt, WebhookDelivery, WebhookDeliveryArgs, WebhookDeliveryStatus } from './webhook.types';

const MAX_URL = 2048;
/** Webhooks one API key may have: each costs the workers a look at every new event. */
export const MAX_WEBHOOKS_PER_KEY = 25;
const POSITION = /^(0|[1-9][0-9]{0,17})$/;

const COLUMNS = `w.id, w.url, w.event_types AS "eventTypes", w.collection_id AS "collectionId", w.asset_id AS "assetId",
  w.status, w.disabled_reason AS "disabledReason", w.disabled_at AS "disabledAt", w."cursor"::text AS "cursor",
  NULL::text AS secret, w.created_at AS "createdAt", w.updated_at AS "updatedAt"`;

/** A stored webhook as the API shows it: never its secret (createWebhook alone returns that). */
function webhookOf(record: WebhookRecord): Webhook {
  return {
    id: record.id,
    url: record.url,
    eventTypes: record.eventTypes,
    collectionId: record.collectionId,
    assetId: record.assetId,
    status: record.status,
    disabledReason: record.disabledReason,
    disabledAt: record.disabledAt,
    cursor: record.cursor,
    secret: null,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}

const BY_CREATED: SortKey = { expression: 't.created_at', sqlType: 'timestamptz' };

function parseUrl(problems: Problems, raw: string): URL | undefined {
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (!url || !['http:', 'https:'].includes(url.protocol) || raw.length > MAX_URL) {
    problems.add('url', `must be an http or https URL of at most ${MAX_URL} characters, got ${JSON.stringify(raw.slice(0, 80))}`);
    return undefined;
  }
  if (url.username || url.password) problems.add('url', 'must not carry a user name or password; authenticate deliveries by their signature');
  return url;
}

export async function createWebhook(ctx: Context, input: CreateWebhookInput): Promise<Webhook> {
  const caller = await ctx.requireCaller();
  const problems = new Problems();
  const url = parseUrl(problems, input.url);
  const types = [...new Set(input.eventTypes ?? [])];
  const unknownTypes = unknownEventTypes(types);
  if (unknownTypes) problems.add('eventTypes', unknownTypes);
  const badAssetId = input.assetId != null && !UUID.test(input.assetId);
  if (badAssetId) problems.add('assetId', `must be an asset id (UUID), got ${JSON.stringify(input.assetId)}`);
  // An unknown event type or a malformed asset id is a 400 (as in the events query, which takes the same filter), naming every problem.
  if (unknownTypes || badAssetId) problems.throwIfAnyMalformed();
  const n = await ctx.ds.getRepository(WebhookRecord).countBy({ apiKeyId: caller.keyId });
  if (n >= MAX_WEBHOOKS_PER_KEY) problems.add('webhooks', `this API key has ${n} webhooks, the most it may have (${MAX_WEBHOOKS_PER_KEY}); delete one first`);
  problems.throwIfAny();
  let privateTarget = false;
  try {
    privateTarget = (await checkHost(hostOf(url!), ctx.policy.webhookAllowPrivate ?? false)).internal;
  } catch (err) {
    if (err instanceof TargetRefusedError) throw new ValidationError([{ field: 'url', message: err.message }]);
    throw err;
  }
  const collectionId = input.collectionId != null ? (await findCollectionByRef(ctx, input.collectionId)).id : null;
  const assetId = input.assetId != null ? input.assetId.toLowerCase() : null;
  if (assetId && !(await ctx.ds.getRepository(Asset).existsBy({ id: assetId }))) throw new NotFoundError(`no asset with id ${assetId}`);
  const secret = newSecret();
  // Deliveries start after the last event committed now: the endpoint receives what happens from here on.
  // Raw SQL: the cursor is read from event_sequence in the same statement.
  const [row] = await ctx.ds.query(
    `INSERT INTO webhooks AS w (api_key_id, url, event_types, collection_id, asset_id, secret, private_target, "cursor")
     SELECT $1, $2, $3::text[], $4, $5, $6, $7, s.last FROM event_sequence s
     RETURNING ${COLUMNS}`,
    [caller.keyId, url!.href, types, collectionId, assetId, secret, privateTarget],
  );
  return { ...row, secret };
}

export async function listWebhooks(ctx: Context, args: PageArgs): Promise<Page<Webhook>> {
  const caller = await ctx.requireCaller();
  const p = new Params();
  return fetchPage<Webhook>(ctx.ds, {
    from: 'webhooks t',
    columns: COLUMNS.replace(/\bw\./g, 't.'),
    idExpression: 't.id',
    where: [`t.api_key_id = ${p.add(caller.keyId)}`],
    params: p,
    sort: BY_CREATED,
    orderBy: 'created_at',
    args,
  });
}

/** Webhooks by id, whoever's they are, each with the id of the API key it belongs to (a Node lookup checks it). */
export async function webhooksByIds(ds: DataSource, ids: readonly string[]): Promise<(Webhook & { apiKeyId: string })[]> {
  const records = await ds.getRepository(WebhookRecord).findBy({ id: Any([...ids]) });
  return records.map((record) => ({ ...webhookOf(record), apiKeyId: record.apiKeyId }));
}

/** A statement on the caller's webhook that returns its columns (raw SQL: one statement, DELETE or UPDATE ... RETURNING); 404 when it finds none. */
async function ownWebhookQuery(ctx: Context, id: string, statement: (where: string) => string): Promise<Webhook> {
  const caller = await ctx.requireCaller();
  const p = new Params();
  const where = `w.id = ${p.add(uuidOf('id', id, 'a webhook'))} AND w.api_key_id = ${p.add(caller.keyId)}`;
  const [row] = await updateReturning<Webhook>(ctx.ds, statement(where), p.values);
  if (!row) throw new NotFoundError(`no webhook with id ${id}`);
  return row;
}

/** The caller's webhook; another key's is as absent as one that never was (404). */
export async function getWebhook(ctx: Context, id: string, field = 'id'): Promise<Webhook> {
  const caller = await ctx.requireCaller();
  const found = await ctx.ds.getRepository(WebhookRecord).findOneBy({ id: uuidOf(field, id, 'a webhook'), apiKeyId: caller.keyId });
  if (!found) throw new NotFoundError(`no webhook with id ${id}`);
  return webhookOf(found);
}

export function deleteWebhook(ctx: Context, id: string): Promise<Webhook> {
  return ownWebhookQuery(ctx, id, (where) => `DELETE FROM webhooks w WHERE ${where} RETURNING ${COLUMNS}`);
}

/**
 * A disabled endpoint is active again: its cursor never passed the event that failed, so delivery
 * resumes with that event and nothing after it is lost. An active one is returned as it is.
 */
export function enableWebhook(ctx: Context, id: string): Promise<Webhook> {
  return ownWebhookQuery(
    ctx,
    id,
    (where) => `UPDATE webhooks w SET
       status = CASE WHEN w.status = 'disabled' THEN 'active' ELSE w.status END,
       disabled_reason = NULL, disabled_at = NULL,
       next_attempt_at = CASE WHEN w.status = 'disabled' THEN now() ELSE w.next_attempt_at END,
       updated_at = now()
     WHERE ${where} RETURNING ${COLUMNS}`,
  );
}

/**
 * Delivers again every matching event after `after` (which may be before or after the cursor): the
 * pending delivery, if any, is cancelled, and the worker's lease is dropped so the new cursor holds.
 */
export async function replayWebhook(ctx: Context, id: string, given: string): Promise<Webhook> {
  const after = positionOf(given);
  if (!POSITION.test(after)) {
    throw new ValidationError([{ field: 'after', message: `must be an event's position (a whole number from 0) or id, got ${JSON.stringify(given)}` }]);
  }
  const [head] = await ctx.ds.query('SELECT last::text AS last FROM event_sequence');
  if (BigInt(after) > BigInt(head.last)) {
    throw new ValidationError([{ field: 'after', message: `must be at most the last event's position, ${head.last}` }]);
  }
  const webhook = await getWebhook(ctx, id);
  await ctx.ds.transaction(async (m) => {
    await m
      .getRepository(WebhookDeliveryRecord)
      .update({ webhookId: webhook.id, status: WebhookDeliveryStatus.PENDING }, { status: WebhookDeliveryStatus.CANCELLED, completedAt: () => 'now()', nextAttemptAt: null });
    await m
      .getRepository(WebhookRecord)
      .update({ id: webhook.id }, { cursor: after, nextAttemptAt: () => 'now()', leaseToken: null, leaseUntil: null, updatedAt: () => 'now()' });
  });
  return getWebhook(ctx, id);
}

export async function listDeliveries(ctx: Context, args: WebhookDeliveryArgs): Promise<Page<WebhookDelivery>> {
  const webhook = await getWebhook(ctx, args.webhookId, 'webhookId');
  const p = new Params();
  const page = await fetchPage<WebhookDelivery>(ctx.ds, {
    from: 'webhook_deliveries t',
    columns: `t.id, t.event_position::text AS "eventId", t.event_type AS "eventType", t.status, t.attempt_count AS "attemptCount",
      t.next_attempt_at AS "nextAttemptAt", t.completed_at AS "completedAt", t.created_at AS "createdAt"`,
    idExpression: 't.id',
    where: [`t.webhook_id = ${p.add(webhook.id)}`],
    params: p,
    sort: BY_CREATED,
    orderBy: 'created_at',
    args,
  });
  const attempts: (WebhookAttempt & { deliveryId: string })[] = page.result.length
    ? await ctx.ds.query(
        `SELECT delivery_id AS "deliveryId", attempted_at AS "attemptedAt", duration_ms AS "durationMs", http_status AS "httpStatus", error
         FROM webhook_attempts WHERE delivery_id = ANY($1::uuid[]) ORDER BY attempted_at, id`,
        [page.result.map((d) => d.id)],
      )
    : [];
  for (const delivery of page.result) delivery.attempts = attempts.filter((a) => a.deliveryId === delivery.id);
  return page;
}
