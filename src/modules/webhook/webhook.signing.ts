import { createHmac, randomBytes } from 'node:crypto';

/** A new signing secret: shown once, at creation. */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

/**
 * The signature header's value: HMAC-SHA256 with the webhook's secret (its UTF-8 text as the key) over
 * `timestamp + "." + body`, in hex, after `v1=`. docs/webhooks.md shows a receiver's check.
 */
export function signature(secret: string, timestamp: string, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

export const HEADERS = {
  eventId: 'x-webhook-event-id',
  timestamp: 'x-webhook-timestamp',
  signature: 'x-webhook-signature',
  webhookId: 'x-webhook-id',
  deliveryId: 'x-webhook-delivery-id',
} as const;
