import { routes } from '../src/app/rest/v1/routes';
import { openWindow } from './factories/market';
import { randomAddress, startServer, TestServer } from './setup/server';
import { subscribe } from './setup/subscriber';
import { startReceiver } from './setup/webhook-receiver';

/** Prices a double cannot hold: a listing's beyond 2^53 with 18 decimals, a sale's a wei above 0.1. */
const FIRST_PRICE = '1.000000000000000001';
const START = '12345678901234567890.123456789012345678';
const PRICE = '0.100000000000000001';

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ webhooks: { deliver: true, allowPrivate: true, timeoutMs: 2000, backoffBaseMs: 100, backoffMaxMs: 400, retryWindowMs: 10_000, pollMs: 50 } });
});
afterAll(() => server.close());

const NUMBER = /-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?/y;

/** JSON.parse that keeps the digits a JSON number was written with: each number becomes the string `#<digits>`. */
function parseExact(text: string): any {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      NUMBER.lastIndex = i;
      const digits = NUMBER.exec(text)![0];
      out += JSON.stringify(`#${digits}`);
      i += digits.length;
    } else {
      out += c;
      i += 1;
    }
  }
  return JSON.parse(out);
}

/** A REST call whose answer is read with every number's digits (parseExact). */
async function restExact(method: string, path: string, body?: unknown, key?: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...(key ? { 'access-token': key } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return { status: res.status, body: parseExact(text) };
}

async function until(condition: () => boolean, what: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const lastPosition = async () => String((await server.ds.query('SELECT last FROM event_sequence'))[0].last);

/** The fields an event's data and the API's resource both have, each side. */
function shared(data: Record<string, unknown>, resource: Record<string, unknown>, except: string[] = []) {
  const keys = Object.keys(resource).filter((k) => k in data && !except.includes(k)).sort();
  return { keys, data: Object.fromEntries(keys.map((k) => [k, data[k]])), resource: Object.fromEntries(keys.map((k) => [k, resource[k]])) };
}

describe('event data is the resource as the API shows it', () => {
  test('when a listing and a sale are at prices beyond a double, then each event\'s data has the API\'s values, exact, in REST, GraphQL, subscriptions and webhooks', async () => {
    const seller = await server.key();
    const buyer = await server.key();
    const before = await lastPosition();
    const live = subscribe(server.url, { after: before, types: null });
    const collection = await restExact('POST', '/v1/collections', { contract_address: randomAddress(), chain_id: '1', name: 'Exact feed' }, seller.key);
    const receiver = await startReceiver();
    const hook = await server.rest('POST', '/v1/webhooks', { url: receiver.url, collection_id: collection.body.id }, seller.key);
    expect(hook.status).toBe(200);
    try {
      const asset = await restExact(
        'POST',
        '/v1/assets',
        {
          collection_id: collection.body.id,
          token_address: collection.body.contract_address,
          chain_id: '1',
          name: 'Exact',
          description: 'An asset sold at a price beyond a double',
          image_url: 'https://example.com/exact.png',
          metadata: { attributes: [{ trait_type: 'kind', value: 'exact' }] },
          owner: seller.address,
        },
        seller.key,
      );
      const listed = await restExact('POST', '/v1/assets/listing', { asset_id: asset.body.id, start_price: FIRST_PRICE }, seller.key);
      const listingPath = `/v1/assets/listing/${asset.body.token_address}/${asset.body.token_id}`;
      const relisted = await restExact('PUT', listingPath, { start_price: START, accept_price: START }, seller.key);
      const offered = await restExact('POST', '/v1/offers', { asset_id: asset.body.id, price: PRICE, ...snake(openWindow()) }, buyer.key);
      const order = await restExact('POST', '/v1/offers/accept', { offer_id: offered.body.id }, seller.key);
      const assetNow = await restExact('GET', `/v1/assets/${asset.body.token_address}/${asset.body.token_id}`);
      const offerNow = await restExact('GET', `/v1/offers/${offered.body.id}`);
      const orderNow = await restExact('GET', `/v1/orders/${order.body.id}`);

      const feed = await restExact('GET', `/v1/events?collection_id=${collection.body.id}&after=${before}&limit=100`);
      const events: { id: string; type: string; data: Record<string, unknown> }[] = feed.body.result;
      expect(events.map((e) => e.type)).toEqual([
        'collection.created',
        'asset.created',
        'listing.created',
        'listing.updated',
        'offer.created',
        'offer.accepted',
        'listing.sold',
        'asset.transferred',
        'order.completed',
      ]);
      const resources: Record<string, [Record<string, unknown>, string[], string[]]> = {
        'collection.created': [collection.body, ['created_at', 'fees', 'status', 'total_supply'], []],
        'asset.created': [asset.body, ['created_at', 'metadata', 'token_id', 'owner'], []],
        'listing.created': [listed.body, ['start_price', 'start_price_decimal', 'accept_price', 'accept_price_decimal', 'listing_time', 'closing_date'], []],
        'listing.updated': [relisted.body, ['start_price', 'start_price_decimal', 'accept_price', 'accept_price_decimal', 'updated_at'], []],
        'offer.created': [offered.body, ['price', 'price_decimal', 'start_time', 'end_time', 'traits', 'token_id'], ['status', 'filled', 'updated_at']],
        'offer.accepted': [offerNow.body, ['price', 'price_decimal', 'status', 'updated_at', 'traits'], []],
        // The listing as the relisting showed it; the sale changed its status and time.
        'listing.sold': [relisted.body, ['start_price', 'start_price_decimal', 'created_at'], ['status', 'updated_at']],
        'asset.transferred': [assetNow.body, ['owner', 'token_id', 'updated_at'], []],
        'order.completed': [orderNow.body, ['price', 'price_decimal', 'seller', 'buyer', 'created_at'], []],
      };
      for (const event of events) {
        const [resource, expected, except] = resources[event.type];
        const both = shared(event.data, resource, except);
        expect({ type: event.type, ...both.data }).toEqual({ type: event.type, ...both.resource });
        expect(both.keys).toEqual(expect.arrayContaining(expected));
      }
      const byType = Object.fromEntries(events.map((e) => [e.type, e.data]));
      expect(byType['listing.updated']).toMatchObject({ start_price: `#${START}`, start_price_decimal: START });
      expect(byType['order.completed']).toMatchObject({ price: `#${PRICE}`, price_decimal: PRICE });
      // The sale's own price on the listing and the transfer, written as every price is.
      for (const type of ['listing.sold', 'asset.transferred']) expect(byType[type]).toMatchObject({ price: `#${PRICE}`, price_decimal: PRICE });
      expect(byType['listing.created'].created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

      // GraphQL writes a price as a double with its exact twin, as its Price and Decimal fields do.
      const graphql = await server.gql(`query ($c: String, $after: ID) { events(collectionId: $c, after: $after) { result { id: position type data } } }`, {
        c: collection.body.id,
        after: before,
      });
      const plain = JSON.parse(JSON.stringify(events.map(({ id, type, data }) => ({ id, type, data })), (_k, v) => (typeof v === 'string' && v.startsWith('#') ? Number(v.slice(1)) : v)));
      expect(graphql.body.data.events.result).toEqual(plain);
      expect(graphql.body.data.events.result[3].data).toMatchObject({ start_price: Number(START), start_price_decimal: START });

      await live.until(() => live.events.filter((e) => e.collectionId === collection.body.id).length === events.length, 15_000, 'the subscription');
      expect(live.events.filter((e) => e.collectionId === collection.body.id).map((e) => ({ id: e.position, type: e.type, data: e.data }))).toEqual(plain);

      // The webhook was registered after the collection's creation: it gets the events after that one.
      await until(() => receiver.bodies.length === events.length - 1, 'the webhook deliveries');
      expect(receiver.bodies.map((b) => parseExact(b).data)).toEqual(events.slice(1).map((e) => e.data));

      // The log keeps each row as written and its readers rewrite it; the migration rewrote older events once:
      // rewriting a rewritten one changes nothing.
      const [unchanged] = await server.ds.query(
        `SELECT bool_and(event_data_as_api(event_data_as_api(data)) = event_data_as_api(data)) AS same FROM events WHERE collection_id = $1 AND position > $2`,
        [collection.body.id, before],
      );
      expect(unchanged.same).toBe(true);
    } finally {
      await server.rest('DELETE', `/v1/webhooks/${hook.body.id}`, undefined, seller.key);
      await live.stop();
      await receiver.close();
    }
  }, 180_000); // beside the import of 100,000 rows (rest/import), the embedded database's one transaction at a time can hold it over a minute

  test('when an offer names no traits, then its events show `traits: []` as the offer does', async () => {
    const owner = await server.key();
    const buyer = await server.key();
    const collection = await restExact('POST', '/v1/collections', { contract_address: randomAddress(), chain_id: '1' }, owner.key);
    const offer = await restExact('POST', '/v1/offers', { collection_id: collection.body.id, price: PRICE, ...snake(openWindow()) }, buyer.key);

    const feed = await restExact('GET', `/v1/events?collection_id=${collection.body.id}&types=offer.created`);

    expect(offer.body.traits).toEqual([]);
    expect(feed.body.result[0].data).toMatchObject({ traits: [], price: `#${PRICE}`, price_decimal: PRICE, kind: 'collection' });
  });
});

describe('cursors of the feed', () => {
  test('when after is beyond the head of the log, then /v1/events, the events query and the subscription answer 400 naming the head', async () => {
    const head = await lastPosition();
    const beyond = String(BigInt(head) + 100000n);

    const rest = await server.rest('GET', `/v1/events?after=${beyond}`);
    const graphql = await server.gql(`query ($after: ID) { events(after: $after) { cursor } }`, { after: beyond });
    const live = subscribe(server.url, { after: beyond });
    await live.until(() => live.errors.length > 0, 15_000, 'the refusal');
    await live.stop();

    expect(rest.status).toBe(400);
    expect(rest.body.error).toMatchObject({ code: 'BAD_REQUEST', details: [{ field: 'after' }] });
    const named = Number(/beyond the head of the log, position (\d+)/.exec(rest.body.error.message)?.[1]);
    expect(named).toBeGreaterThanOrEqual(Number(head));
    expect(named).toBeLessThan(Number(beyond));
    expect(graphql.body.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_REQUEST', details: [{ field: 'after' }] } });
    expect(graphql.body.errors?.[0].message).toContain('beyond the head of the log');
    expect(live.errors[0]).toMatchObject({ extensions: { code: 'BAD_REQUEST', details: [{ field: 'after' }] } });
  });

  test('when after is the position of the last event a client saw, then the read is an empty page that keeps that cursor', async () => {
    const owner = await server.key();
    const collection = await restExact('POST', '/v1/collections', { contract_address: randomAddress(), chain_id: '1' }, owner.key);
    const [created] = (await restExact('GET', `/v1/events?collection_id=${collection.body.id}`)).body.result;

    const page = await server.rest('GET', `/v1/events?collection_id=${collection.body.id}&after=${created.id}`);

    expect(page.status).toBe(200);
    expect(page.body).toEqual({ cursor: created.id, has_more: false, result: [] });
  });
});

describe('query parameters', () => {
  test('when /v1/events is read on with page=<cursor>, then it is the same read as after=<cursor>', async () => {
    const owner = await server.key();
    const collection = await restExact('POST', '/v1/collections', { contract_address: randomAddress(), chain_id: '1' }, owner.key);
    for (const description of ['one', 'two', 'three']) {
      await server.rest('PUT', `/v1/collections/${collection.body.contract_address}`, { description }, owner.key);
    }
    const first = await server.rest('GET', `/v1/events?collection_id=${collection.body.id}&limit=2`);

    const byPage = await server.rest('GET', `/v1/events?collection_id=${collection.body.id}&limit=2&page=${first.body.cursor}`);
    const byAfter = await server.rest('GET', `/v1/events?collection_id=${collection.body.id}&limit=2&after=${first.body.cursor}`);
    const both = await server.rest('GET', `/v1/events?collection_id=${collection.body.id}&after=${first.body.cursor}&page=${first.body.cursor}`);

    expect(first.body.has_more).toBe(true);
    expect(byPage.status).toBe(200);
    expect(byPage.body).toEqual(byAfter.body);
    expect(byPage.body.result.map((e: { data: { description: string } }) => e.data.description)).toEqual(['two', 'three']);
    expect(both.status).toBe(400);
    expect(both.body.error.details.map((d: { field: string }) => d.field)).toEqual(['after', 'page']);
  });

  test('when a request names a query parameter its route does not take, then every /v1 route answers 400 naming it', async () => {
    const sample: Record<string, string> = { address: randomAddress(), token_address: randomAddress(), token_id: '1', id: '00000000-0000-4000-8000-000000000000' };
    // An upload's key is checked before its body is read (401 first): it is sent with one.
    const { key } = await server.key();
    for (const spec of routes) {
      const path = spec.path.replace(/:(\w+)/g, (_, name: string) => sample[name]);
      const body = spec.upload ? undefined : spec.method === 'post' || spec.method === 'put' ? {} : undefined;
      const res = await server.rest(spec.method.toUpperCase(), `${path}?bogus=1`, body, spec.upload ? key : undefined);

      expect({ route: `${spec.method} ${spec.path}`, status: res.status, code: res.body.error?.code, details: res.body.error?.details }).toEqual({
        route: `${spec.method} ${spec.path}`,
        status: 400,
        code: 'BAD_REQUEST',
        details: [{ field: 'bogus', message: expect.stringMatching(/^not a query parameter of /) }],
      });
    }
  });

  test('when a list is asked with misspelt parameters, then the 400 names each and what the route takes, the same through the lean door and express', async () => {
    const lean = await server.rest('GET', '/v1/assets?pgae=2&limit=5&sort=name');
    // A request with an API key goes through express.
    const express = await server.rest('GET', '/v1/assets?pgae=2&limit=5&sort=name', undefined, (await server.key()).key);
    const events = await server.rest('GET', '/v1/events?order_by=created_at');

    expect(lean.status).toBe(400);
    expect(lean.body.error.details.map((d: { field: string }) => d.field)).toEqual(['pgae', 'sort']);
    expect(lean.body.error.message).toMatch(/^unknown query parameters pgae, sort: not a query parameter of GET \/v1\/assets; it takes limit, page, .*order_by/);
    expect({ ...express.body.error, request_id: null }).toEqual({ ...lean.body.error, request_id: null });
    expect(express.status).toBe(400);
    expect(events.status).toBe(400);
    expect(events.body.error.message).toContain('it takes after, page, types, collection_id, asset_id, limit');
  });
});

/** camelCase keys as REST's snake_case. */
function snake(values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), v]));
}
