import { createHmac, randomBytes } from 'node:crypto';

/**
 * A new signing secret, shown once at creation: Standard Webhooks' form, `whsec_` + the standard base64
 * of 32 random bytes (44 characters, one `=`). Those bytes are the key of the `webhook-signature` header.
 */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** A secret of the standard form: `whsec_` + standard base64 (a length of a multiple of 4). */
const STANDARD_SECRET = /^whsec_((?:[A-Za-z0-9+/]{4})+(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?)$/;

/**
 * The key of a webhook's `webhook-signature`: the decoded base64 of a standard secret; for a secret made
 * before the gateway signed the standard way (`whsec_` + 43 characters of base64url, which never decode
 * as standard base64), the secret's own UTF-8 text, the key its `x-webhook-signature` always had. Such a
 * receiver verifies with the standard libraries given `whsec_` + base64(its secret) (docs/webhooks.md).
 */
export function signingKey(secret: string): Buffer {
  const standard = STANDARD_SECRET.exec(secret);
  return standard ? Buffer.from(standard[1], 'base64') : Buffer.from(secret, 'utf8');
}

/**
 * The Standard Webhooks signature (`webhook-signature`): `v1,` + base64 HMAC-SHA256 of
 * `id + "." + timestamp + "." + body`, keyed by signingKey.
 */
export function standardSignature(secret: string, messageId: string, timestamp: string, body: string): string {
  return `v1,${createHmac('sha256', signingKey(secret)).update(`${messageId}.${timestamp}.${body}`).digest('base64')}`;
}

/**
 * The legacy signature (`x-webhook-signature`, sent until 2027-05-31): HMAC-SHA256 with the secret's
 * UTF-8 text as the key over `timestamp + "." + body`, in hex, after `v1=`.
 */
export function legacySignature(secret: string, timestamp: string, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** Standard Webhooks' headers (https://www.standardwebhooks.com). */
export const STANDARD_HEADERS = {
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
} as const;

/** The gateway's own headers of before the standard ones; sent alongside them until 2027-05-31 (docs/webhooks.md). */
export const HEADERS = {
  eventId: 'x-webhook-event-id',
  timestamp: 'x-webhook-timestamp',
  signature: 'x-webhook-signature',
  webhookId: 'x-webhook-id',
  deliveryId: 'x-webhook-delivery-id',
} as const;
