import { readFileSync } from 'node:fs';
import http, { IncomingHttpHeaders } from 'node:http';
import { once } from 'node:events';
import { AddressInfo } from 'node:net';
import path from 'node:path';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { WebhookSettings } from '../src/config';
import { MAX_WEBHOOKS_PER_KEY } from '../src/modules/webhook/webhook.service';
import { checkedLookup, isInternalAddress } from '../src/modules/webhook/webhook.target';
import { saveCollection } from './factories/marketplace';
import { startServer, TestServer } from './setup/server';
import { exclusive } from './setup/exclusive';

/** Short enough for a test: retries 100, 200, 400, 400 ms apart (with jitter), an endpoint disabled after 2.5 s of failures. */
const WEBHOOKS: WebhookSettings = {
  deliver: true,
  allowPrivate: true,
  timeoutMs: 2000,
  backoffBaseMs: 100,
  backoffMaxMs: 400,
  retryWindowMs: 2500,
  pollMs: 50,
};

/** The function of docs/webhooks.md's Node snippet for the legacy headers, exactly as documented. */
function documentedVerifier(): (rawBody: string | Buffer, headers: IncomingHttpHeaders, secret: string) => Record<string, any> {
  const code = /<!-- verify-snippet -->\s*```js\n([\s\S]*?)```/.exec(readFileSync(path.resolve(__dirname, '..', 'docs/webhooks.md'), 'utf8'))?.[1];
  if (!code) throw new Error('docs/webhooks.md has no verification snippet');
  return new Function('require', `${code}\nreturn verifyWebhook;`)(require);
}
const verifyWebhook = documentedVerifier();

interface Received {
  at: number;
  headers: IncomingHttpHeaders;
  body: string;
  eventId: string;
  status: number;
}

/** A real HTTP receiver on loopback; `answer` decides each request's status (200 unless told). */
async function startReceiver(answer: (n: number, eventId: string) => number = () => 200) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    if (receiver.hold.first()) return; // never answered: the gateway's timeout ends it
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const eventId = String(req.headers['x-webhook-event-id']);
      const status = receiver.answer(received.length + 1, eventId);
      received.push({ at: Date.now(), headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), eventId, status });
      res.writeHead(status).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const receiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    answer,
    /** `first()` true: leave this request unanswered. */
    hold: { first: () => false },
    /** The event ids it answered with a 2xx, in the order they came. */
    delivered: () => received.filter((r) => r.status < 300).map((r) => r.eventId),
    async waitFor(done: () => boolean, ms = 15_000): Promise<void> {
      const until = Date.now() + ms;
      while (!done()) {
        if (Date.now() > until) throw new Error(`the receiver did not get what was expected in ${ms} ms; got ${JSON.stringify(received.map((r) => [r.eventId, r.status]))}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return receiver;
}

let a: TestServer;
let b: TestServer;
let strict: TestServer;
const receivers: { close(): Promise<void> }[] = [];
const registered: { id: string; key: string }[] = [];

let release: () => void;

beforeAll(async () => {
  // Other files' delivery workers (tracing.test.ts) would deliver these endpoints with their own settings.
  release = await exclusive('webhook-workers');
  // Two processes' worth of workers on one database share the endpoints; `strict` has the default settings.
  [a, b, strict] = await Promise.all([startServer({ webhooks: WEBHOOKS }), startServer({ webhooks: WEBHOOKS }), startServer()]);
}, 720_000);
afterAll(async () => {
  for (const { id, key } of registered) await a.rest('DELETE', `/v1/webhooks/${id}`, undefined, key);
  await Promise.all([a.close(), b.close(), strict.close()]);
  await Promise.all(receivers.map((r) => r.close()));
  release?.();
});

/** Polls `read` until `done` holds of its result: what the receiver got may be ahead of what the server has recorded. */
async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 10_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > until) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function receiver(answer?: (n: number, eventId: string) => number) {
  const r = await startReceiver(answer);
  receivers.push(r);
  return r;
}

async function register(server: TestServer, key: string, body: Record<string, unknown>) {
  const res = await server.rest('POST', '/v1/webhooks', body, key);
  if (res.status === 200) registered.push({ id: res.body.id, key });
  return res;
}

/** A collection of the key's account, and a way to make `collection.updated` events on it. */
async function collectionOf(key: string) {
  const collection = await saveCollection(a, key);
  let n = 0;
  return {
    collection,
    async update(): Promise<void> {
      n += 1;
      const res = await a.rest('PUT', `/v1/collections/${collection.contractAddress}`, { description: `change ${n}` }, key);
      expect(res.status).toBe(200);
    },
    /** This collection's event ids after `after`, from the log. */
    async eventIds(after: string, types = 'collection.updated'): Promise<string[]> {
      const res = await a.rest('GET', `/v1/events?collection_id=${collection.id}&types=${types}&after=${after}&limit=1000`);
      return res.body.result.map((e: { id: string }) => e.id);
    },
  };
}

describe('delivery', () => {
  test('when a receiver fails its first 3 deliveries, then it gets the event afterwards, signed as documented, and the 4 attempts are listed', async () => {
    const owner = await a.key();
    const { collection, update } = await collectionOf(owner.key);
    const target = await receiver((n) => (n <= 3 ? 500 : 200));
    const created = await register(a, owner.key, { url: target.url, event_types: ['collection.updated'], collection_id: collection.id });
    expect(created.status).toBe(200);
    expect(created.body.secret).toMatch(/^whsec_/);
    expect(created.headers.get('location')).toBe(`/v1/webhooks/${created.body.id}`);

    await update();
    await target.waitFor(() => target.received.length >= 4);

    const [first, , , last] = target.received;
    expect(target.received.map((r) => r.status)).toEqual([500, 500, 500, 200]);
    expect(new Set(target.received.map((r) => r.eventId)).size).toBe(1);
    expect(new Set(target.received.map((r) => r.body)).size).toBe(1);
    const event = verifyWebhook(last.body, last.headers, created.body.secret);
    expect(event).toMatchObject({ id: last.eventId, type: 'collection.updated', collection_id: collection.id, webhook_id: created.body.id });
    expect(event.data).toMatchObject({ id: collection.id, description: 'change 1' });
    expect(() => verifyWebhook(last.body, last.headers, 'whsec_not-the-secret')).toThrow('bad webhook signature');
    expect(() => verifyWebhook(last.body.replace('change 1', 'change 2'), last.headers, created.body.secret)).toThrow('bad webhook signature');
    expect(last.headers['x-webhook-delivery-id']).toBe(first.headers['x-webhook-delivery-id']);

    const deliveries = await eventually(
      () => a.rest('GET', `/v1/webhooks/${created.body.id}/deliveries`, undefined, owner.key),
      (res) => res.body.result?.[0]?.status === 'delivered',
    );
    expect(deliveries.status).toBe(200);
    expect(deliveries.body.result).toHaveLength(1);
    const [delivery] = deliveries.body.result;
    expect(delivery).toMatchObject({ event_id: last.eventId, event_type: 'collection.updated', status: 'delivered', attempt_count: 4, next_attempt_at: null });
    expect(delivery.attempts.map((t: { http_status: number }) => t.http_status)).toEqual([500, 500, 500, 200]);
    expect(delivery.attempts[0].error).toContain('500');
    expect(delivery.attempts[3].error).toBeNull();
    for (const attempt of delivery.attempts) expect(attempt.duration_ms).toBeGreaterThanOrEqual(0);
    // Backoff grows: the third wait (200 to 400 ms with jitter) is longer than the first (50 to 100 ms, plus a poll).
    const waits = delivery.attempts.slice(1).map((t: { attempted_at: string }, i: number) => {
      const before = delivery.attempts[i];
      return Date.parse(t.attempted_at) - (Date.parse(before.attempted_at) + before.duration_ms);
    });
    expect(waits[0]).toBeGreaterThanOrEqual(45);
    expect(waits[2]).toBeGreaterThanOrEqual(195);
    expect(waits[2]).toBeGreaterThan(waits[0]);
  });

  test('when many events come while the receiver fails now and then, then each is delivered in log order, the next only after the one before', async () => {
    const owner = await a.key();
    const { collection, update, eventIds } = await collectionOf(owner.key);
    const target = await receiver((n) => (n % 3 === 0 ? 503 : 200));
    const created = await register(b, owner.key, { url: target.url, collection_id: collection.contractAddress });
    expect(created.status).toBe(200);
    const from = created.body.cursor;

    // Concurrent writers: positions follow commit order, which the endpoint must follow too.
    await Promise.all(Array.from({ length: 4 }, async () => {
      for (let i = 0; i < 3; i += 1) await update();
    }));
    const expected = await eventIds(from);
    expect(expected).toHaveLength(12);
    await target.waitFor(() => target.delivered().length >= expected.length);

    expect(target.delivered()).toEqual(expected);
    // Every request is for the event after the last delivered one, or a retry of it: never one further on.
    let delivered = -1;
    for (const r of target.received) {
      expect(r.eventId).toBe(expected[delivered + 1]);
      if (r.status < 300) delivered += 1;
    }
    const last = BigInt(expected[expected.length - 1]);
    const webhook = await eventually(
      () => a.rest('GET', `/v1/webhooks/${created.body.id}`, undefined, owner.key),
      (res) => BigInt(res.body.cursor) >= last,
    );
    expect(BigInt(webhook.body.cursor)).toBeGreaterThanOrEqual(last);
  });

  test('when an endpoint fails for the whole retry window, then it is disabled with its reason, and once re-enabled it gets every event from the one that failed, then a replay sends them again', async () => {
    const owner = await a.key();
    const { collection, update, eventIds } = await collectionOf(owner.key);
    const target = await receiver(() => 503);
    const created = await register(a, owner.key, { url: target.url, event_types: ['collection.updated'], collection_id: collection.id });
    const id = created.body.id;

    await update();
    const until = Date.now() + 15_000;
    let webhook = await a.rest('GET', `/v1/webhooks/${id}`, undefined, owner.key);
    while (webhook.body.status !== 'disabled' && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      webhook = await a.rest('GET', `/v1/webhooks/${id}`, undefined, owner.key);
    }
    expect(webhook.body.status).toBe('disabled');
    expect(webhook.body.disabled_reason).toMatch(/could not be delivered for 3 s .*attempts; last: the receiver answered 503/);
    const failedAttempts = target.received.length;
    expect(failedAttempts).toBeGreaterThanOrEqual(4);
    // The first failure to the last attempt: the whole window, and one attempt past its end at most (the one
    // before the last still came within it). Not a bound in ms: how late the last attempt runs is the machine's.
    const span = target.received[failedAttempts - 1].at - target.received[0].at;
    expect(span).toBeGreaterThanOrEqual(WEBHOOKS.retryWindowMs - 100);
    expect(target.received[failedAttempts - 2].at - target.received[0].at).toBeLessThan(WEBHOOKS.retryWindowMs);
    const failed = await a.rest('GET', `/v1/webhooks/${id}/deliveries`, undefined, owner.key);
    expect(failed.body.result[0]).toMatchObject({ status: 'failed', attempt_count: failedAttempts });

    // While disabled, nothing is sent, and nothing is lost.
    await update();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(target.received).toHaveLength(failedAttempts);

    target.answer = () => 200;
    const enabled = await a.rest('POST', `/v1/webhooks/${id}/enable`, undefined, owner.key);
    expect(enabled.status).toBe(200);
    expect(enabled.body).toMatchObject({ status: 'active', disabled_reason: null });
    const both = await eventIds(created.body.cursor);
    expect(both).toHaveLength(2);
    await target.waitFor(() => target.delivered().length >= 2);
    expect(target.delivered()).toEqual(both);
    await eventually(
      () => a.rest('GET', `/v1/webhooks/${id}`, undefined, owner.key),
      (res) => BigInt(res.body.cursor) >= BigInt(both[1]),
    );

    const replay = await a.rest('POST', `/v1/webhooks/${id}/replay`, { after: created.body.cursor }, owner.key);
    expect(replay.status).toBe(200);
    expect(replay.body.cursor).toBe(created.body.cursor);
    await target.waitFor(() => target.delivered().length >= 4);
    expect(target.delivered()).toEqual([...both, ...both]);
  });

  test('when a receiver does not answer in time, then that attempt is a timeout and the event comes again', async () => {
    const owner = await a.key();
    const { collection, update } = await collectionOf(owner.key);
    const target = await receiver();
    let hung = false;
    // The first request is held past the timeout; the next are answered at once.
    target.answer = () => 200;
    const hold = target.hold;
    hold.first = () => !hung && (hung = true);
    const created = await register(a, owner.key, { url: target.url, collection_id: collection.id });

    await update();
    await target.waitFor(() => target.delivered().length >= 1);
    const deliveries = await eventually(
      () => a.rest('GET', `/v1/webhooks/${created.body.id}/deliveries`, undefined, owner.key),
      (res) => res.body.result?.[0]?.status === 'delivered',
    );
    const [timedOut, delivered] = deliveries.body.result[0].attempts;
    expect(timedOut).toMatchObject({ http_status: null, error: `no answer within ${WEBHOOKS.timeoutMs} ms` });
    expect(timedOut.duration_ms).toBeGreaterThanOrEqual(WEBHOOKS.timeoutMs);
    expect(delivered).toMatchObject({ http_status: 200, error: null });
  });

  test('when the key is revoked, then its webhooks are no longer delivered', async () => {
    const [owner, watcher] = await Promise.all([a.key(), a.key()]);
    const { collection, update } = await collectionOf(owner.key);
    const target = await receiver();
    const created = await register(a, watcher.key, { url: target.url, collection_id: collection.id });
    await update();
    await target.waitFor(() => target.delivered().length >= 1);

    await a.ds.query(`UPDATE api_keys SET revoked_at = now() WHERE id = (SELECT api_key_id FROM webhooks WHERE id = $1)`, [created.body.id]);
    await update();
    await new Promise((resolve) => setTimeout(resolve, 500));

    expect(target.received).toHaveLength(1);
  });
});

/** The headers of a received request as the standardwebhooks package takes them. */
const asHeaders = (headers: IncomingHttpHeaders): Record<string, string> =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, String(value)]));

describe('Standard Webhooks', () => {
  test("when a new webhook's delivery comes, then the standardwebhooks package's own Webhook.verify accepts it with the webhook's secret", async () => {
    const owner = await a.key();
    const { collection, update } = await collectionOf(owner.key);
    const target = await receiver((n) => (n === 1 ? 500 : 200));
    const created = await register(a, owner.key, { url: target.url, event_types: ['collection.updated'], collection_id: collection.id });
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

    await update();
    await target.waitFor(() => target.delivered().length >= 1);
    const [failed, delivered] = target.received;
    const event = new Webhook(created.body.secret).verify(delivered.body, asHeaders(delivered.headers)) as Record<string, any>;
    expect(event).toMatchObject({ id: delivered.eventId, type: 'collection.updated', webhook_id: created.body.id });
    expect(delivered.headers['webhook-id']).toBe(delivered.eventId);
    // A retry is the same message: the same webhook-id, signed again at its own time.
    expect(failed.headers['webhook-id']).toBe(delivered.headers['webhook-id']);
    expect(delivered.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(() => new Webhook(created.body.secret).verify(delivered.body.replace('change 1', 'change 2'), asHeaders(delivered.headers))).toThrow(
      WebhookVerificationError,
    );
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(delivered.body, asHeaders(delivered.headers))).toThrow(
      WebhookVerificationError,
    );
    // The legacy headers still come, as documented, for receivers not yet moved over.
    expect(verifyWebhook(delivered.body, delivered.headers, created.body.secret)).toMatchObject({ id: delivered.eventId });
  });

  test('when a webhook has a secret of before the standard form, then its deliveries verify with the standard package given whsec_ + base64 of that secret, and the legacy check still passes', async () => {
    const owner = await a.key();
    const { collection, update } = await collectionOf(owner.key);
    const target = await receiver();
    const created = await register(a, owner.key, { url: target.url, event_types: ['collection.updated'], collection_id: collection.id });
    // The form secrets had until now: whsec_ + 43 characters of base64url, which are no standard base64.
    const older = 'whsec_Q-1x_8l3KcU0b2hGv9zN5yTqW7eRjA4sD6fH0kLmP1o';
    await a.ds.query('UPDATE webhooks SET secret = $2 WHERE id = $1', [created.body.id, older]);

    await update();
    await target.waitFor(() => target.delivered().length >= 1);
    const [delivered] = target.received;
    const converted = `whsec_${Buffer.from(older, 'utf8').toString('base64')}`;
    expect(new Webhook(converted).verify(delivered.body, asHeaders(delivered.headers))).toMatchObject({ id: delivered.eventId });
    expect(new Webhook(older, { format: 'raw' }).verify(delivered.body, asHeaders(delivered.headers))).toMatchObject({ id: delivered.eventId });
    expect(verifyWebhook(delivered.body, delivered.headers, older)).toMatchObject({ id: delivered.eventId });
  });
});

describe('registration', () => {
  test('when the target is on a private, loopback or link-local address and the setting is off, then 422 on url', async () => {
    const owner = await strict.key();
    for (const url of ['http://127.0.0.1:9/hook', 'http://localhost:9/', 'http://[::1]/', 'http://[::ffff:127.0.0.1]/', 'http://169.254.169.254/latest', 'http://10.1.2.3/', 'http://192.168.0.1/']) {
      const res = await strict.rest('POST', '/v1/webhooks', { url }, owner.key);
      expect([url, res.status]).toEqual([url, 422]);
      expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'url' })]);
      expect(res.body.error.details[0].message).toContain('WEBHOOK_ALLOW_PRIVATE=on allows them, for development');
    }
    const listed = await strict.rest('GET', '/v1/webhooks', undefined, owner.key);
    expect(listed.body.result).toEqual([]);
  });

  test('when a name resolves inward at delivery time, then the connection is refused before it is made (DNS rebinding)', async () => {
    const target = await receiver();
    const refused = await new Promise<string>((resolve) => {
      const req = http.request(target.url.replace('127.0.0.1', 'localhost'), { method: 'POST', lookup: checkedLookup(false) as never }, () => resolve('connected'));
      req.on('error', (err) => resolve(err.message));
      req.end();
    });
    expect(refused).toContain('private, loopback or link-local');
    expect(target.received).toHaveLength(0);
    expect(['127.0.0.1', '::1', '::ffff:10.0.0.1', 'fe80::1', '169.254.1.1', '100.64.0.1'].map(isInternalAddress)).toEqual([true, true, true, true, true, true]);
    expect(['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'].map(isInternalAddress)).toEqual([false, false]);
  });

  test('when the url, event types or asset id are not valid, then 400 naming each', async () => {
    const owner = await a.key();
    const res = await a.rest('POST', '/v1/webhooks', { url: 'ftp://example.com/', event_types: ['listing.moved'], asset_id: 'nope' }, owner.key);
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['asset_id', 'event_types', 'url']);
  });

  test('when a key has its most webhooks, then one more is a 422', async () => {
    const owner = await a.key();
    const target = await receiver();
    for (let i = 0; i < MAX_WEBHOOKS_PER_KEY; i += 1) expect((await register(a, owner.key, { url: `${target.url}/${i}` })).status).toBe(200);

    const refused = await register(a, owner.key, { url: target.url });

    expect(refused.status).toBe(422);
    expect(refused.body.error.details).toEqual([expect.objectContaining({ field: 'webhooks' })]);
  });

  test('when there is no key, then registering and listing are 401', async () => {
    expect((await a.rest('POST', '/v1/webhooks', { url: 'http://127.0.0.1:9/' })).status).toBe(401);
    expect((await a.rest('GET', '/v1/webhooks')).status).toBe(401);
  });

  test('when another key asks for, lists, deletes or re-enables my webhook, then it is not there for it; for me it is', async () => {
    const [mine, theirs] = await Promise.all([a.key(), a.key()]);
    const target = await receiver();
    const created = await register(a, mine.key, { url: target.url, event_types: ['offer.created'] });
    const id = created.body.id;

    for (const [method, route] of [['GET', ''], ['DELETE', ''], ['GET', '/deliveries'], ['POST', '/enable']]) {
      const res = await a.rest(method, `/v1/webhooks/${id}${route}`, undefined, theirs.key);
      expect([method, route, res.status]).toEqual([method, route, 404]);
    }
    const theirList = await a.rest('GET', '/v1/webhooks', undefined, theirs.key);
    expect(theirList.body.result).toEqual([]);
    const theirGraphql = await a.gql(`{ webhooks { result { id } } }`, {}, theirs.key);
    expect(theirGraphql.body.data.webhooks.result).toEqual([]);

    const myList = await a.rest('GET', '/v1/webhooks', undefined, mine.key);
    expect(myList.body.result).toEqual([expect.objectContaining({ id, url: target.url, event_types: ['offer.created'], status: 'active' })]);
    expect(myList.body.result[0]).not.toHaveProperty('secret');
    const deleted = await a.rest('DELETE', `/v1/webhooks/${id}`, undefined, mine.key);
    expect(deleted.status).toBe(200);
    expect((await a.rest('GET', `/v1/webhooks/${id}`, undefined, mine.key)).status).toBe(404);
  });

  test('when GraphQL creates, lists and deletes a webhook, then it is the same webhook, with the secret only at creation', async () => {
    const owner = await a.key();
    const target = await receiver();
    const made = await a.gql(
      `mutation ($input: CreateWebhookInput!) { createWebhook(input: $input) { id url eventTypes status secret } }`,
      { input: { url: target.url, eventTypes: ['order.completed', 'offer.accepted'] } },
      owner.key,
    );
    const webhook = made.body.data.createWebhook;
    registered.push({ id: webhook.id, key: owner.key });
    expect(webhook).toMatchObject({ url: target.url, eventTypes: ['order.completed', 'offer.accepted'], status: 'ACTIVE' });
    expect(webhook.secret).toMatch(/^whsec_/);

    const listed = await a.gql(`{ webhooks { remaining result { id secret } } }`, {}, owner.key);
    expect(listed.body.data.webhooks).toEqual({ remaining: 0, result: [{ id: webhook.id, secret: null }] });
    const deliveries = await a.gql(`query ($id: ID!) { webhookDeliveries(webhookId: $id) { result { id } } }`, { id: webhook.id }, owner.key);
    expect(deliveries.body.data.webhookDeliveries.result).toEqual([]);
    const deleted = await a.gql(`mutation ($id: ID!) { deleteWebhook(id: $id) { id } }`, { id: webhook.id }, owner.key);
    expect(deleted.body.data.deleteWebhook).toEqual({ id: webhook.id });
    const again = await a.gql(`mutation ($id: ID!) { deleteWebhook(id: $id) { id } }`, { id: webhook.id }, owner.key);
    expect(again.body.errors?.[0].extensions.code).toBe('NOT_FOUND');
  });
});
