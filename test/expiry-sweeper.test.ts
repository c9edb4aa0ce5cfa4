import { sweepExpired } from '../src/modules/event/expiry.sweeper';
import { ACCEPT_OFFER, OwnedAsset, saveListing, saveOffer, saveOwnedAsset, saveSiblingAsset } from './factories/market';
import { startServer, TestServer } from './setup/server';

/**
 * The sweeper writes listing.expired / offer.expired within a second of the expiry, once, whatever races it.
 * Other test files' rows expire too and this file's sweepers write their events: every assertion here is
 * about this file's own collections.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startServer({ expirySweeper: true });
});
afterAll(() => server.close());

const SECOND = 1000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const inMs = (ms: number) => new Date(Date.now() + ms).toISOString();

interface FeedEvent {
  id: string;
  type: string;
  occurred_at: string;
  data: Record<string, unknown>;
}

/** The expiry events of one collection, as a client polls them. */
async function expiryEvents(collectionId: string): Promise<FeedEvent[]> {
  const res = await server.rest('GET', `/v1/events?collection_id=${collectionId}&types=listing.expired,offer.expired&limit=1000`);
  expect(res.status).toBe(200);
  return res.body.result;
}

/** Polls until `count` expiry events of the collection are there (or the time is up), then a little longer. */
async function awaitExpiryEvents(collectionId: string, count: number, settleMs = 1200): Promise<FeedEvent[]> {
  const deadline = Date.now() + 10 * SECOND;
  while ((await expiryEvents(collectionId)).length < count && Date.now() < deadline) await sleep(100);
  await sleep(settleMs);
  return expiryEvents(collectionId);
}

/** An asset with a listing and a bidder's offer that both expire `ms` from now. */
async function expiringPair(owned: OwnedAsset, ms: number) {
  const at = inMs(ms);
  const listing = await saveListing(server, owned.owner.key, owned.asset.id, { expirationTime: { at } });
  const bidder = await server.key();
  const offer = await saveOffer(server, bidder.key, owned.asset.id, { startTime: inMs(-60 * SECOND), endTime: at });
  return { at, listing, offer };
}

const lagMs = (event: FeedEvent, at: string) => Date.parse(event.occurred_at) - Date.parse(at);

describe('the expiry sweeper', () => {
  test('when a listing and an offer expire, then each gets exactly one expired event within a second, and the API shows them as before', async () => {
    const owned = await saveOwnedAsset(server);
    const { at, listing, offer } = await expiringPair(owned, 3000);
    const offerBefore = await server.rest('GET', `/v1/offers/${offer.id}`);

    const events = await awaitExpiryEvents(owned.collection.id, 2);

    expect(events.map((e) => e.type).sort()).toEqual(['listing.expired', 'offer.expired']);
    for (const event of events) {
      expect(lagMs(event, at)).toBeGreaterThanOrEqual(0);
      expect(lagMs(event, at)).toBeLessThan(SECOND);
    }
    const byType = Object.fromEntries(events.map((e) => [e.type, e]));
    expect(byType['listing.expired'].data).toMatchObject({ id: listing.id, status: 'expired' });
    expect(byType['offer.expired'].data).toMatchObject({ id: offer.id, status: 'expired' });
    // The sweep changed nothing a client reads: the offer is as it was, only expired by the clock.
    const { assets: _before, ...before } = offerBefore.body;
    const { assets: _after, ...after } = (await server.rest('GET', `/v1/offers/${offer.id}`)).body;
    expect(after).toEqual({ ...before, status: 'expired' });
  });

  test('when three sweeping servers and direct sweeps race over the same expiries, then each expiry is written once', async () => {
    const others = await Promise.all([startServer({ expirySweeper: true }), startServer({ expirySweeper: true })]);
    try {
      const owned = await saveOwnedAsset(server);
      const siblings = [owned, ...(await Promise.all(Array.from({ length: 4 }, () => saveSiblingAsset(server, owned))))];
      const pairs = await Promise.all(siblings.map((s) => expiringPair(s, 4000)));
      const latest = pairs.map((p) => p.at).sort().pop()!;
      await sleep(Date.parse(latest) - Date.now());
      // Besides the three sweepers' loops: eight sweeps at once, each in its own transaction.
      await Promise.all(Array.from({ length: 8 }, (_, i) => sweepExpired((i % 2 ? others[0] : server).ds, new Date())));

      const events = await awaitExpiryEvents(owned.collection.id, 10);

      const ids = events.map((e) => `${e.type}:${e.data.id}`).sort();
      const expected = pairs.flatMap((p) => [`listing.expired:${p.listing.id}`, `offer.expired:${p.offer.id}`]).sort();
      expect(ids).toEqual(expected);
    } finally {
      await Promise.all(others.map((s) => s.close()));
    }
  });

  test('when an offer is accepted just before it expires, then neither it nor the sold listing gets an expired event', async () => {
    const owned = await saveOwnedAsset(server);
    const { at, offer } = await expiringPair(owned, 3000);
    const accepted = await server.gql(ACCEPT_OFFER, { offerId: offer.id }, owned.owner.key);
    expect(accepted.body.data.acceptOffer.offer).toEqual({ id: offer.id, status: 'ACCEPTED' });
    await sleep(Date.parse(at) - Date.now());

    const events = await awaitExpiryEvents(owned.collection.id, 1, 0);

    expect(events).toEqual([]);
  });

  test('when a listing is cancelled before it expires, then it gets no expired event, while an offer beside it does', async () => {
    const owned = await saveOwnedAsset(server);
    const { offer } = await expiringPair(owned, 3000);
    const cancelled = await server.rest('DELETE', `/v1/assets/listing/${owned.asset.tokenAddress}/${owned.asset.tokenId}`, undefined, owned.owner.key);
    expect(cancelled.status).toBe(200);

    const events = await awaitExpiryEvents(owned.collection.id, 1);

    expect(events.map((e) => [e.type, e.data.id])).toEqual([['offer.expired', offer.id]]);
  });

  test('when a new listing replaces a swept one, then the old one is marked expired without a second event', async () => {
    const owned = await saveOwnedAsset(server);
    const first = await saveListing(server, owned.owner.key, owned.asset.id, { expirationTime: { at: inMs(1000) } });
    await awaitExpiryEvents(owned.collection.id, 1, 0);

    await saveListing(server, owned.owner.key, owned.asset.id, { startPrice: 7 });

    const events = await expiryEvents(owned.collection.id);
    expect(events.map((e) => [e.type, e.data.id])).toEqual([['listing.expired', first.id]]);
    const [row] = await server.ds.query('SELECT status, expiry_swept FROM listings WHERE id = $1', [first.id]);
    expect(row).toEqual({ status: 'expired', expiry_swept: true });
  });
});
