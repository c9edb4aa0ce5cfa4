import { buildCsv, csvRecords, importFormUrlencoded } from './factories/csv';
import { openWindow, saveListing, saveOffer, saveOwnedAsset } from './factories/market';
import { randomAddress, startServer, TestServer } from './setup/server';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

interface FeedEvent {
  id: string;
  type: string;
  asset_id: string | null;
  collection_id: string | null;
  data: Record<string, unknown>;
}

async function feed(query: string): Promise<{ cursor: string; has_more: boolean; result: FeedEvent[] }> {
  const res = await server.rest('GET', `/v1/events?${query}`);
  expect(res.status).toBe(200);
  return res.body;
}

/** Every event after `after` that matches `query`, page by page. */
async function readAll(query: string, after = '0'): Promise<FeedEvent[]> {
  const events: FeedEvent[] = [];
  for (;;) {
    const page = await feed(`${query}&after=${after}&limit=50`);
    events.push(...page.result);
    after = page.cursor;
    if (!page.has_more) return events;
  }
}

const lastPosition = async () => String((await server.ds.query('SELECT last FROM event_sequence'))[0].last);

describe('the event log', () => {
  test('when an offer is accepted, then the asset\'s feed shows the sale\'s events in order, with the resources as stored', async () => {
    const owned = await saveOwnedAsset(server);
    const listing = await saveListing(server, owned.owner.key, owned.asset.id, { startPrice: 9 });
    const buyer = await server.key();
    const offer = await saveOffer(server, buyer.key, owned.asset.id, { price: 2 });
    const accepted = await server.rest('POST', '/v1/offers/accept', { offer_id: offer.id }, owned.owner.key);

    const events = await readAll(`asset_id=${owned.asset.id}`);

    expect(events.map((e) => e.type)).toEqual([
      'asset.created',
      'listing.created',
      'offer.created',
      'offer.accepted',
      'listing.sold',
      'asset.transferred',
      'order.completed',
    ]);
    const positions = events.map((e) => Number(e.id));
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    const byType = Object.fromEntries(events.map((e) => [e.type, e]));
    expect(byType['listing.sold'].data).toMatchObject({ id: listing.id, status: 'sold' });
    expect(byType['asset.transferred'].data).toMatchObject({ owner: buyer.address, previous_owner: owned.owner.address });
    expect(byType['order.completed'].data).toMatchObject({ id: accepted.body.id, seller: owned.owner.address, buyer: buyer.address });
    expect(new Set(events.map((e) => e.collection_id))).toEqual(new Set([owned.collection.id]));
  });

  test('when a collection is created, changed and verified, then its feed says so, by REST and by GraphQL alike', async () => {
    const owner = await server.key();
    const admin = await server.key({ admin: true });
    const address = randomAddress();
    const created = await server.rest('POST', '/v1/collections', { contract_address: address, chain_id: '1', name: 'Evented' }, owner.key);
    await server.rest('PUT', `/v1/collections/${address}`, { description: 'now described' }, owner.key);
    await server.rest('PUT', `/v1/collections/${address}`, { status: 'verified' }, admin.key);

    const rest = await readAll(`collection_id=${created.body.id}`);
    const graphql = await server.gql(
      `query ($c: String) { events(collectionId: $c, types: ["collection.verified", "collection.created"]) { result { position type } hasMore } }`,
      { c: address },
    );

    expect(rest.map((e) => e.type)).toEqual(['collection.created', 'collection.updated', 'collection.updated', 'collection.verified']);
    expect(rest[1].data).toMatchObject({ description: 'now described' });
    expect(graphql.body.data.events).toEqual({
      result: [rest[0], rest[3]].map((e) => ({ position: e.id, type: e.type })),
      hasMore: false,
    });
  });

  test('when assets are imported, then there is one event per asset and one for the import with its count and token range', async () => {
    const owner = await server.key();
    const created = await server.rest('POST', '/v1/collections', { contract_address: randomAddress(), chain_id: '1' }, owner.key);
    await importFormUrlencoded(server, created.body.id, buildCsv(csvRecords(owner.address, 3)), owner.key);

    const events = await readAll(`collection_id=${created.body.id}&types=asset.imported,import.completed`);

    expect(events.map((e) => e.type)).toEqual(['asset.imported', 'asset.imported', 'asset.imported', 'import.completed']);
    expect(events[3].data.import).toEqual({ count: 3, first_token_id: '1', last_token_id: '3' });
  });

  test('when a write is refused, then no event is written', async () => {
    const owned = await saveOwnedAsset(server);
    const stranger = await server.key();
    const offer = await saveOffer(server, stranger.key, owned.asset.id);
    const before = await lastPosition();

    const refused = await server.rest('POST', '/v1/offers/accept', { offer_id: offer.id }, stranger.key);

    expect(refused.status).toBe(403);
    // Other test files write meanwhile: this asset's events are what must not grow.
    const [after] = await server.ds.query('SELECT count(*)::int AS n FROM events WHERE asset_id = $1 AND position > $2', [owned.asset.id, before]);
    expect(after.n).toBe(0);
  });

  test('when after or types are not valid, then 400 naming them', async () => {
    const res = await server.rest('GET', '/v1/events?after=-1&types=listing.created,listing.moved');

    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['after', 'types']);
    expect(res.body.error.message).toContain('listing.moved');
  });
});

describe('reading the log while 20 writers commit', () => {
  test('when a reader polls throughout, then it sees every event exactly once, in order, with no gap', async () => {
    const start = await lastPosition();
    const writers = await Promise.all(Array.from({ length: 20 }, () => saveOwnedAsset(server)));
    const bidders = await Promise.all(writers.map(() => server.key()));
    const from = await lastPosition();
    let writing = true;

    const seen: number[] = [];
    const reader = (async () => {
      let after = from;
      for (;;) {
        const done = !writing;
        const page = await feed(`after=${after}&limit=7`);
        seen.push(...page.result.map((e) => Number(e.id)));
        after = page.cursor;
        if (done && !page.has_more) return;
      }
    })();
    await Promise.all(
      writers.map(async (owned, i) => {
        for (let round = 0; round < 3; round += 1) {
          const { startTime, endTime } = openWindow();
          await server.rest('POST', '/v1/offers', { asset_id: owned.asset.id, price: round + 1, start_time: startTime, end_time: endTime }, bidders[i].key);
        }
      }),
    );
    writing = false;
    await reader;

    // Other test files write to the same database meanwhile: the reader's range is (from, last seen].
    const last = seen[seen.length - 1];
    expect(Number(from)).toBeGreaterThan(Number(start));
    expect(seen).toEqual(Array.from({ length: last - Number(from) }, (_, i) => Number(from) + 1 + i));
    const [stored] = await server.ds.query('SELECT count(*)::int AS n FROM events WHERE position > $1 AND position <= $2', [from, last]);
    expect(stored.n).toBe(seen.length);
    const [mine] = await server.ds.query(
      `SELECT count(*)::int AS n FROM events WHERE type = 'offer.created' AND position > $1 AND position <= $2 AND asset_id = ANY($3::uuid[])`,
      [from, last, writers.map((w) => w.asset.id)],
    );
    expect(mine.n).toBe(60);
  });
});
