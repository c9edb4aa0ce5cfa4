import http from 'node:http';
import https from 'node:https';
import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import type { Span } from '@opentelemetry/api';
import { DataSource } from 'typeorm';
import type { WebhookSettings } from '../../config';
import { jsonWithExactNumbers, withExactTwins } from '../../common/decimal';
import { logger } from '../../common/logger';
import { updateReturning } from '../../common/sql';
import type { RequestScope } from '../../common/request/scope';
import { scopedDataSource } from '../../common/request/scope';
import { traceOutgoing, traceTask } from '../../common/tracing';
import { HEADERS, legacySignature, STANDARD_HEADERS, standardSignature } from './webhook.signing';
import { checkedLookup, hostOf, isInternalAddress } from './webhook.target';

/** How the delivery worker of this process behaves (the WEBHOOK_* settings; `deliver` is the app's to read). */
export type WebhookDeliveryOptions = Omit<WebhookSettings, 'deliver'>;

/** Endpoints claimed per look; each is served by its own chain of requests. */
const BATCH = 10;
/** Events one claim may deliver before the endpoint goes back to the queue (others get their turn). */
const EVENTS_PER_CLAIM = 20;

interface Claimed {
  id: string;
  url: string;
  secret: string;
  eventTypes: string[];
  collectionId: string | null;
  assetId: string | null;
  cursor: string;
}

interface NextEvent {
  head: string;
  id: string | null;
  type: string;
  occurredAt: Date;
  chainId: string | null;
  collectionId: string | null;
  assetId: string | null;
  data: Record<string, unknown>;
  /** The writing request's traceparent, when it was traced. */
  traceparent: string | null;
}

interface Outcome {
  status: number | null;
  error: string | null;
  durationMs: number;
}

/** A window as people say it: 24 h, 90 min, 3 s. */
function duration(ms: number): string {
  if (ms >= 3_600_000 && ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${Math.round(ms / 1000)} s`;
}

/** Exponential backoff with equal jitter: half the doubled delay, plus a random part of the other half. */
export function backoffMs(attempt: number, baseMs: number, maxMs: number): number {
  const full = Math.min(maxMs, baseMs * 2 ** Math.min(attempt - 1, 40));
  return Math.round(full / 2 + (Math.random() * full) / 2);
}

/** One POST, bounded by the timeout; the connection goes only to an address that passed the check. */
function post(target: string, body: string, headers: Record<string, string>, options: WebhookDeliveryOptions, signal: AbortSignal): Promise<Outcome> {
  const started = Date.now();
  const url = new URL(target);
  const host = hostOf(url);
  // A literal address is not looked up (the lookup below never runs for it): it is checked here.
  if (isIP(host) && isInternalAddress(host) && !options.allowPrivate) {
    return Promise.resolve({ status: null, error: `the target ${host} is a private, loopback or link-local address; such targets are refused`, durationMs: 0 });
  }
  return new Promise((resolve) => {
    let done = false;
    const finish = (status: number | null, error: string | null) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve({ status, error, durationMs: Date.now() - started });
    };
    const client = url.protocol === 'https:' ? https : http;
    // No redirect is followed (a 3xx is a failed attempt): a redirect could point anywhere, inward too.
    const req = client.request(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        agent: false,
        lookup: checkedLookup(options.allowPrivate) as never,
        signal,
      },
      (res) => {
        res.resume();
        const ok = res.statusCode! >= 200 && res.statusCode! < 300;
        res.on('end', () => finish(res.statusCode!, ok ? null : `the receiver answered ${res.statusCode}`));
        res.on('error', () => finish(res.statusCode!, ok ? null : `the receiver answered ${res.statusCode}`));
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      finish(null, `no answer within ${options.timeoutMs} ms`);
    }, options.timeoutMs);
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (signal.aborted) finish(null, 'the gateway process stopped before an answer came');
      else finish(null, (err.code === 'ETARGETREFUSED' ? err.message : `${err.code ?? 'error'}: ${err.message}`).slice(0, 500));
    });
    req.end(body);
  });
}

/**
 * The delivery worker of one process. It claims due endpoints with FOR UPDATE SKIP LOCKED and a lease
 * (several processes share the work, none posts to an endpoint another holds), then per endpoint posts
 * the next matching event after its cursor; the cursor moves past an event only once it is delivered,
 * so delivery is at least once and in order per endpoint. Nothing is held open in the database while a
 * request is under way (the embedded database runs one transaction at a time).
 */
export class WebhookWorker {
  private running = true;
  /** Aborts the requests under way when the process stops: shutdown does not wait for slow receivers. */
  private readonly stopping = new AbortController();
  private wake: (() => void) | undefined;
  private readonly loop: Promise<void>;
  /** Longer than one delivery can take: a lease outlives its holder only when the holder died. */
  private readonly leaseMs: number;

  constructor(
    private readonly ds: DataSource,
    private readonly options: WebhookDeliveryOptions,
  ) {
    this.leaseMs = options.timeoutMs + 30_000;
    this.loop = this.run();
  }

  /** Ends the requests under way and waits up to `waitMs` for the round's last statements (an unrecorded attempt is retried later). */
  async stop(waitMs = 5000): Promise<void> {
    this.running = false;
    this.stopping.abort();
    this.wake?.();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.loop, new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
    clearTimeout(timer);
  }

  private async run(): Promise<void> {
    while (this.running) {
      let claimed = 0;
      try {
        claimed = await this.tick();
      } catch (err) {
        logger.warn('webhook delivery: a round failed', { error: err instanceof Error ? err.message : String(err) });
      }
      if (!claimed && this.running) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.options.pollMs);
          this.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    }
  }

  private async tick(): Promise<number> {
    const token = randomUUID();
    const claimed = await updateReturning<Claimed>(
      this.ds,
      `WITH due AS (
         SELECT w.id FROM webhooks w
         WHERE w.status = 'active' AND w.next_attempt_at <= now() AND (w.lease_until IS NULL OR w.lease_until < now())
           AND w."cursor" < (SELECT last FROM event_sequence) AND ($2 OR NOT w.private_target)
           AND EXISTS (SELECT 1 FROM api_keys k WHERE k.id = w.api_key_id AND k.revoked_at IS NULL)
         ORDER BY w.next_attempt_at LIMIT ${BATCH}
         FOR UPDATE OF w SKIP LOCKED)
       UPDATE webhooks w SET lease_token = $1, lease_until = now() + $3 * interval '1 millisecond'
       FROM due WHERE w.id = due.id
       RETURNING w.id, w.url, w.secret, w.event_types AS "eventTypes", w.collection_id AS "collectionId",
         w.asset_id AS "assetId", w."cursor"::text AS "cursor"`,
      [token, this.options.allowPrivate, this.leaseMs],
    );
    const served = await Promise.allSettled(claimed.map((webhook) => this.serve(webhook, token)));
    for (const result of served) {
      // The endpoint's lease runs out and another round (of any process) takes it up again.
      if (result.status === 'rejected') logger.warn('webhook delivery: an endpoint\'s round failed', { error: String(result.reason) });
    }
    return claimed.length;
  }

  /** Delivers the endpoint's next events in order until one fails, none is left, or its turn is over. */
  private async serve(webhook: Claimed, token: string): Promise<void> {
    let cursor = webhook.cursor;
    for (let n = 0; n < EVENTS_PER_CLAIM && this.running; n += 1) {
      const event = await this.nextEvent(webhook, cursor);
      if (!event.id) {
        // Nothing after the cursor matches, up to the last committed event: the cursor moves there.
        await this.ds.query(
          `UPDATE webhooks SET "cursor" = GREATEST("cursor", $3::bigint), lease_token = NULL, lease_until = NULL WHERE id = $1 AND lease_token = $2`,
          [webhook.id, token, event.head],
        );
        return;
      }
      // A trace per attempt (OTEL_*), linked to the request that wrote the event: its statements and its
      // POST, which carries the trace's traceparent.
      const attributes = { 'webhook.id': webhook.id, 'webhook.event_id': event.id, 'webhook.event_type': event.type };
      const delivered = await traceTask('webhook delivery', attributes, event.traceparent, (span) => this.deliver(webhook, token, event, span));
      if (!delivered) return;
      cursor = event.id;
    }
    await this.ds.query(`UPDATE webhooks SET lease_token = NULL, lease_until = NULL WHERE id = $1 AND lease_token = $2`, [webhook.id, token]);
  }

  /** In one statement (one snapshot): the last committed position and the first matching event up to it. */
  private async nextEvent(webhook: Claimed, cursor: string): Promise<NextEvent> {
    const [row] = await this.ds.query(
      `SELECT h.last::text AS head, e.position::text AS id, e.type, e.occurred_at AS "occurredAt", e.chain_id AS "chainId",
         e.collection_id AS "collectionId", e.asset_id AS "assetId", event_data_as_api(e.data) AS data, e.traceparent
       FROM (SELECT last FROM event_sequence) h
       LEFT JOIN LATERAL (
         SELECT * FROM events e
         WHERE e.position > $1::bigint AND e.position <= h.last
           AND (cardinality($2::text[]) = 0 OR e.type = ANY($2::text[]))
           AND ($3::uuid IS NULL OR e.collection_id = $3::uuid)
           AND ($4::uuid IS NULL OR e.asset_id = $4::uuid)
         ORDER BY e.position LIMIT 1) e ON true`,
      [cursor, webhook.eventTypes, webhook.collectionId, webhook.assetId],
    );
    return row;
  }

  /** The endpoint's pending delivery of this event, made when there is none yet. */
  private async pendingDelivery(ds: DataSource, webhook: Claimed, event: NextEvent): Promise<{ id: string; attemptCount: number; retryingSince: Date | null }> {
    const columns = `id, attempt_count AS "attemptCount", retrying_since AS "retryingSince", event_position::text AS position`;
    const [pending] = await ds.query(`SELECT ${columns} FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'pending'`, [webhook.id]);
    if (pending?.position === event.id) return pending;
    if (pending) {
      await ds.query(`UPDATE webhook_deliveries SET status = 'cancelled', completed_at = now(), next_attempt_at = NULL WHERE id = $1`, [pending.id]);
    }
    const [created] = await ds.query(
      `INSERT INTO webhook_deliveries (webhook_id, event_position, event_type, next_attempt_at) VALUES ($1, $2, $3, now()) RETURNING ${columns}`,
      [webhook.id, event.id, event.type],
    );
    return created;
  }

  /** One attempt at the event; true when it was delivered and the endpoint may go on to the next. */
  private async deliver(webhook: Claimed, token: string, event: NextEvent, span: Span | undefined): Promise<boolean> {
    // Traced, its statements are the delivery span's children.
    const scope: RequestScope | undefined = span && { requestId: `webhook-delivery-${event.id}`, sqlStatements: 0, span };
    const ds = scope ? scopedDataSource(this.ds, scope) : this.ds;
    const delivery = await this.pendingDelivery(ds, webhook, event);
    // Prices as /v1/events writes them: numbers of their exact digits.
    const body = jsonWithExactNumbers({
      id: event.id,
      type: event.type,
      occurred_at: new Date(event.occurredAt).toISOString(),
      chain_id: event.chainId,
      collection_id: event.collectionId,
      asset_id: event.assetId,
      data: withExactTwins(event.data),
      webhook_id: webhook.id,
    });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const attemptedAt = new Date();
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'nft-marketplace-gateway-webhooks/1',
      // Standard Webhooks: the message id is the event's, the same on every retry and replay of it.
      [STANDARD_HEADERS.id]: event.id!,
      [STANDARD_HEADERS.timestamp]: timestamp,
      [STANDARD_HEADERS.signature]: standardSignature(webhook.secret, event.id!, timestamp, body),
      [HEADERS.eventId]: event.id!,
      [HEADERS.timestamp]: timestamp,
      [HEADERS.signature]: legacySignature(webhook.secret, timestamp, body),
      [HEADERS.webhookId]: webhook.id,
      [HEADERS.deliveryId]: delivery.id,
    };
    const outcome = await traceOutgoing(span, 'POST', webhook.url, headers, () => post(webhook.url, body, headers, this.options, this.stopping.signal), (o) => o.status);
    const ok = outcome.error === null;
    const attempts = delivery.attemptCount + 1;
    const retryingSince = delivery.retryingSince ? new Date(delivery.retryingSince) : attemptedAt;
    const windowEnds = retryingSince.getTime() + this.options.retryWindowMs;
    const giveUp = !ok && Date.now() >= windowEnds;
    // The last retry falls at the end of the window at the latest, so the window is what decides.
    const next = new Date(Math.min(Date.now() + backoffMs(attempts, this.options.backoffBaseMs, this.options.backoffMaxMs), windowEnds));
    let kept = false;
    await ds.transaction(async (m) => {
      await m.query(
        `INSERT INTO webhook_attempts (delivery_id, attempted_at, duration_ms, http_status, error)
         SELECT $1, $2, $3, $4, $5 WHERE EXISTS (SELECT 1 FROM webhook_deliveries WHERE id = $1 AND status = 'pending')`,
        [delivery.id, attemptedAt, outcome.durationMs, outcome.status, outcome.error],
      );
      await m.query(
        `UPDATE webhook_deliveries SET attempt_count = attempt_count + 1, status = $2, retrying_since = $3,
           next_attempt_at = $4, completed_at = $5 WHERE id = $1 AND status = 'pending'`,
        [delivery.id, ok ? 'delivered' : giveUp ? 'failed' : 'pending', ok ? delivery.retryingSince : retryingSince, ok || giveUp ? null : next, ok || giveUp ? new Date() : null],
      );
      const reason = giveUp
        ? `event ${event.id} could not be delivered for ${duration(this.options.retryWindowMs)} (${attempts} attempts; last: ${outcome.error})`
        : null;
      const changed = ok
        ? await updateReturning<{ id: string }>(
            m,
            `UPDATE webhooks SET "cursor" = $3, next_attempt_at = now(), lease_until = now() + $4 * interval '1 millisecond'
             WHERE id = $1 AND lease_token = $2 RETURNING id`,
            [webhook.id, token, event.id, this.leaseMs],
          )
        : await updateReturning<{ id: string }>(
            m,
            `UPDATE webhooks SET next_attempt_at = $3, lease_token = NULL, lease_until = NULL,
               status = CASE WHEN $4::text IS NULL THEN status ELSE 'disabled' END, disabled_reason = $4,
               disabled_at = CASE WHEN $4::text IS NULL THEN NULL ELSE now() END,
               updated_at = CASE WHEN $4::text IS NULL THEN updated_at ELSE now() END
             WHERE id = $1 AND lease_token = $2 RETURNING id`,
            [webhook.id, token, next, reason],
          );
      kept = changed.length > 0;
    });
    if (!ok) logger.info('webhook delivery failed', { webhook: webhook.id, event: event.id, attempt: attempts, error: outcome.error, disabled: giveUp });
    return ok && kept;
  }
}
