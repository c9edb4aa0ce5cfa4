import { WebhookSettings } from '../src/config';
import { hostOf, isInternalAddress } from '../src/modules/webhook/webhook.target';
import { saveCollection } from './factories/marketplace';
import { startServer, TestServer } from './setup/server';

/**
 * IPv6 forms that carry an IPv4 address are judged by that address, and IPv6 outside global unicast is
 * not public. Each URL as a client would write it; the comment says where a packet to it would go.
 */
const REFUSED: [string, string][] = [
  ['http://[64:ff9b::10.0.0.1]/', 'NAT64 of 10.0.0.1'],
  ['http://[64:ff9b::169.254.169.254]/', 'NAT64 of the metadata address'],
  ['http://[64:ff9b::7f00:1]/', 'NAT64 of 127.0.0.1, in hex'],
  ['http://[64:ff9b:1:a00:1::]/', 'local-use NAT64 /48 of 10.0.0.1'],
  ['http://[64:ff9b:1::c0a8:1]/', 'local-use NAT64 /96 of 192.168.0.1'],
  ['http://[64:ff9b:1::808:808]/', 'local-use NAT64: public at /96, but 0.0.0.0 at /48'],
  ['http://[::127.0.0.1]/', 'IPv4-compatible 127.0.0.1'],
  ['http://[::a9fe:a9fe]/', 'IPv4-compatible 169.254.169.254, in hex'],
  ['http://[::10.1.2.3]/', 'IPv4-compatible 10.1.2.3'],
  ['http://[::ffff:0:127.0.0.1]/', 'IPv4-translated 127.0.0.1'],
  ['http://[::ffff:0:a9fe:a9fe]/', 'IPv4-translated 169.254.169.254'],
  ['http://[::ffff:127.0.0.1]/', 'IPv4-mapped 127.0.0.1'],
  ['http://[::ffff:c0a8:101]/', 'IPv4-mapped 192.168.1.1, in hex'],
  ['http://[2002:7f00:1::]/', '6to4 of 127.0.0.1'],
  ['http://[2002:a9fe:a9fe::]/', '6to4 of 169.254.169.254'],
  ['http://[2002:0a00:0001:1234::1]/', '6to4 of 10.0.0.1 with a subnet'],
  ['http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', 'Teredo of client 192.0.2.45 (documentation)'],
  ['http://[2001:0:a00:1::]/', 'Teredo with server 10.0.0.1'],
  ['http://[fec0::1]/', 'site-local'],
  ['http://[fc00::1]/', 'unique local'],
  ['http://[fe80::1]/', 'link-local'],
  ['http://[::]/', 'unspecified'],
  ['http://[::1]/', 'loopback'],
  ['http://[100::1]/', 'discard-only'],
  ['http://[ff02::1]/', 'multicast'],
  ['http://[2001:db8::1]/', 'documentation'],
  ['http://0x7f.1/', '127.0.0.1 written in hex'],
  ['http://2130706433/', '127.0.0.1 as one number'],
  ['http://100.64.0.1/', 'carrier-grade NAT'],
  ['http://192.0.2.1/', 'documentation'],
];

const ACCEPTED: [string, string][] = [
  ['http://[64:ff9b::8.8.8.8]/', 'NAT64 of 8.8.8.8'],
  ['http://[2002:0808:0808::]/', '6to4 of 8.8.8.8'],
  ['http://[2606:4700::1111]/', 'global unicast'],
  ['http://[::ffff:8.8.8.8]/', 'IPv4-mapped 8.8.8.8'],
  ['http://[2001:0:808:808:0:0:f7f7:f7f7]/', 'Teredo: server and client 8.8.8.8'],
  ['http://8.8.8.8/', 'public IPv4'],
];

describe('the target check', () => {
  test.each(REFUSED)('when the target is %s (%s), then it is internal', (url) => {
    expect(isInternalAddress(hostOf(new URL(url)))).toBe(true);
  });

  test.each(ACCEPTED)('when the target is %s (%s), then it is public', (url) => {
    expect(isInternalAddress(hostOf(new URL(url)))).toBe(false);
  });

  test('when a resolver hands back an address in any spelling, then it is judged the same', () => {
    // What dns.lookup may return: dotted tails, zone ids, upper case, full zeros.
    expect(['::FFFF:127.0.0.1', 'fe80::1%eth0', '0:0:0:0:0:0:0:1', '64:FF9B:0:0:0:0:A9FE:A9FE', '2002:c0a8:0101::1'].map(isInternalAddress)).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    expect(['2606:4700:4700::1111', '2a00:1450:4001:82b::200e', '0064:ff9b:0000:0000:0000:0000:0808:0808'].map(isInternalAddress)).toEqual([false, false, false]);
  });
});

/** Deliveries on, private targets refused (the default). */
const STRICT: WebhookSettings = {
  deliver: true,
  allowPrivate: false,
  timeoutMs: 2000,
  backoffBaseMs: 100,
  backoffMaxMs: 400,
  retryWindowMs: 60_000,
  pollMs: 50,
};

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ webhooks: STRICT });
});
afterAll(() => server.close());

const CREATE_WEBHOOK = `mutation ($input: CreateWebhookInput!) { createWebhook(input: $input) { id } }`;

describe('registration', () => {
  test.each(REFUSED)('when POST /v1/webhooks names %s (%s), then 422 on url and nothing is stored', async (url) => {
    const { key, address } = await server.key();
    const res = await server.rest('POST', '/v1/webhooks', { url }, key);
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('VALIDATION_FAILED');
    expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'url', message: expect.stringContaining('private, loopback or link-local') })]);
    expect(await server.ds.query('SELECT w.id FROM webhooks w JOIN api_keys k ON k.id = w.api_key_id WHERE k.address = $1', [address])).toEqual([]);
  });

  test.each(REFUSED)('when createWebhook names %s (%s), then VALIDATION_FAILED on url', async (url) => {
    const { key } = await server.key();
    const res = await server.gql(CREATE_WEBHOOK, { input: { url } }, key);
    expect(res.body.data).toBeNull();
    expect(res.body.errors![0].extensions).toEqual(expect.objectContaining({ code: 'VALIDATION_FAILED', details: [expect.objectContaining({ field: 'url' })] }));
  });

  test.each(ACCEPTED)('when POST /v1/webhooks names %s (%s), then it is registered', async (url) => {
    const { key } = await server.key();
    // Limited to a collection with no events, and removed at once: nothing is posted to the internet.
    const quiet = await saveCollection(server, key);
    const res = await server.rest('POST', '/v1/webhooks', { url, collection_id: quiet.id }, key);
    expect(res.status).toBe(200);
    expect((await server.rest('DELETE', `/v1/webhooks/${res.body.id}`, undefined, key)).status).toBe(200);
  });
});

describe('delivery', () => {
  test('when a stored target has become an address that carries an internal IPv4, then each attempt is refused before connecting', async () => {
    const { key } = await server.key();
    const collection = await saveCollection(server, key);
    const created = await server.rest('POST', '/v1/webhooks', { url: 'http://[2606:4700::1111]:9/hook', collection_id: collection.id }, key);
    expect(created.status).toBe(200);
    // As if the name of the target now resolved inward: the process checks again before each attempt.
    await server.ds.query(`UPDATE webhooks SET url = 'http://[64:ff9b::a9fe:a9fe]/latest' WHERE id = $1`, [created.body.id]);
    const update = await server.rest('PUT', `/v1/collections/${collection.contractAddress}`, { description: 'changed' }, key);
    expect(update.status).toBe(200);

    // A worker of another test file (private targets allowed there) may claim this endpoint too and fail
    // to connect; this process's attempts are the ones refused, and none reached a receiver.
    const refused = (errors: (string | null)[]) => errors.some((e) => e?.includes('private, loopback or link-local'));
    let attempts: { error: string | null; http_status: number | null }[] = [];
    const until = Date.now() + 15_000;
    while (!refused(attempts.map((a) => a.error)) && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      attempts = await server.ds.query(
        `SELECT a.error, a.http_status FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.webhook_id = $1`,
        [created.body.id],
      );
    }
    expect(refused(attempts.map((a) => a.error))).toBe(true);
    expect(attempts.filter((a) => a.http_status !== null)).toEqual([]);
    await server.rest('DELETE', `/v1/webhooks/${created.body.id}`, undefined, key);
  });
});
