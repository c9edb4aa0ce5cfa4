import { randomUUID } from 'node:crypto';
import { Party, openWindow, saveListing, saveOffer } from './factories/market';
import { CollectionRow, saveCollection } from './factories/marketplace';
import { saveAssetsOf } from './factories/bulk-market';
import { startServer, TestServer } from './setup/server';

/** Bulk listing and bulk cancelling (docs/api.md "Bulk"), through both doors, with the database read back. */
let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

interface Holder {
  owner: Party;
  collection: CollectionRow;
  assets: { id: string; tokenId: string; tokenAddress: string }[];
}

/** A fresh account with `count` assets in a collection of its own. */
async function holder(count: number, owner?: Party): Promise<Holder> {
  const who = owner ?? (await server.key());
  const collection = await saveCollection(server, who.key);
  return { owner: who, collection, assets: await saveAssetsOf(server.ds, collection, who.address, count) };
}

/** REST items: by token for even places, by asset_id for odd ones, prices 1.5, 2.5, ... */
const restItems = (h: Holder) =>
  h.assets.map((a, i) => (i % 2 ? { asset_id: a.id } : { token_address: a.tokenAddress, token_id: a.tokenId })).map((ref, i) => ({ ...ref, start_price: `${i + 1}.5` }));

const gqlItems = (h: Holder) => h.assets.map((a, i) => ({ assetId: a.id, startPrice: `${i + 1}.5` }));

const bulkRest = (key: string, listings: unknown[], headers: Record<string, string> = {}) => server.rest('POST', '/v1/listings/bulk', { listings }, key, headers);
const bulkGql = (key: string, input: unknown[]) => server.gql(CREATE_LISTINGS, { input }, key);

async function listingsOf(assetIds: string[]): Promise<{ id: string; asset_id: string; status: string; start_price: string }[]> {
  return server.ds.query(
    'SELECT id, asset_id, status, start_price::text FROM listings WHERE asset_id = ANY($1::uuid[]) ORDER BY array_position($1::uuid[], asset_id), created_at',
    [assetIds],
  );
}

async function eventsOf(type: string, ids: string[]): Promise<string[]> {
  const rows: { subject_id: string }[] = await server.ds.query('SELECT subject_id FROM events WHERE type = $1 AND subject_id = ANY($2::uuid[]) ORDER BY position', [type, ids]);
  return rows.map((r) => r.subject_id);
}

const assetIdsOf = (h: Holder) => h.assets.map((a) => a.id);

describe('bulk create of listings', () => {
  test('when 100 listings are sent to POST /v1/listings/bulk, then 201 answers them in order, each is active, its asset listed, with one listing.created each', async () => {
    const h = await holder(100);

    const res = await bulkRest(h.owner.key, restItems(h));

    expect(res.status).toBe(201);
    expect(res.body.count).toBe(100);
    expect(res.body.listings.map((l: any) => [l.asset_id, l.start_price_decimal, l.status, l.seller])).toEqual(
      h.assets.map((a, i) => [a.id, `${i + 1}.5`, 'active', h.owner.address]),
    );
    const stored = await listingsOf(assetIdsOf(h));
    expect(stored).toHaveLength(100);
    expect(stored.every((l) => l.status === 'active')).toBe(true);
    const [{ listed }] = await server.ds.query(`SELECT count(*)::int AS listed FROM assets WHERE id = ANY($1::uuid[]) AND status = 'listed'`, [assetIdsOf(h)]);
    expect(listed).toBe(100);
    expect(await eventsOf('listing.created', res.body.listings.map((l: any) => l.id))).toEqual(res.body.listings.map((l: any) => l.id));
  });

  test('when 2 or 100 listings are created at once (by id and by token), then the request issues the same number of SQL statements', async () => {
    const few = await holder(2);
    const many = await holder(100);

    const forFew = await bulkRest(few.owner.key, restItems(few));
    const forMany = await bulkRest(many.owner.key, restItems(many));

    expect([forFew.status, forMany.status]).toEqual([201, 201]);
    expect(Number.isInteger(forFew.sql)).toBe(true);
    // The key; the assets by id, by token, their collections, their chains' currencies; begin, lock, expire,
    // insert, mark listed, events, commit; the listings read back (with their currencies), their collections'
    // fees and chains, their tokens (a token's own royalty is its listing's: one statement for all): 17 today,
    // and never more per item.
    expect(forFew.sql).toBeLessThanOrEqual(17);
    expect(forMany.sql).toBe(forFew.sql);
  });

  test('when 101 listings are sent, then both doors answer 422 on the list and nothing is written', async () => {
    const h = await holder(101);

    const rest = await bulkRest(h.owner.key, restItems(h));
    const gql = await bulkGql(h.owner.key, gqlItems(h));

    expect(rest.status).toBe(422);
    expect(rest.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ field: 'listings', message: 'must hold 1 to 100 listings, got 101' }] });
    expect(gql.body.errors![0].extensions).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ field: 'input', message: 'must hold 1 to 100 listings, got 101' }] });
    expect(await listingsOf(assetIdsOf(h))).toEqual([]);
  });

  test('when one item of 50 is bad, then 422 lists exactly that index and nothing is written; with two bad, both', async () => {
    const h = await holder(50);
    const items = restItems(h);
    const oneBad = items.map((item, i) => (i === 17 ? { ...item, start_price: 0 } : item));
    const twoBad = oneBad.map((item, i) => (i === 41 ? { ...item, order_type: 'dutch_auction' } : item));

    const one = await bulkRest(h.owner.key, oneBad);
    const two = await bulkRest(h.owner.key, twoBad);

    expect(one.status).toBe(422);
    expect(one.body.error.details).toEqual([{ index: 17, code: 'VALIDATION_FAILED', field: 'start_price', message: 'must be greater than 0, got 0' }]);
    expect(one.body.error.message).toMatch(/^1 of 50 listings refused, so none was written: \[17\] start_price: must be greater than 0/);
    expect(two.status).toBe(422);
    expect(two.body.error.details.map((d: any) => [d.index, d.field])).toEqual([
      [17, 'start_price'],
      [41, 'accept_price'],
      [41, 'expiration_time'],
    ]);
    expect(await listingsOf(assetIdsOf(h))).toEqual([]);
    const [{ listed }] = await server.ds.query(`SELECT count(*)::int AS listed FROM assets WHERE id = ANY($1::uuid[]) AND status = 'listed'`, [assetIdsOf(h)]);
    expect(listed).toBe(0);
  });

  test('when every one of 30 items is bad, then details list all 30 and the message names the first 10', async () => {
    const h = await holder(30);

    const res = await bulkRest(h.owner.key, restItems(h).map((item) => ({ ...item, start_price: 0 })));

    expect(res.status).toBe(422);
    expect(res.body.error.details.map((d: any) => d.index)).toEqual(h.assets.map((_, i) => i));
    expect(res.body.error.message).toMatch(/^30 of 30 listings refused, so none was written: \[0\] start_price: .*; \[9\] start_price: [^;]*; and 20 more problems \(see details\)$/);
  });

  test('when items conflict (an asset already listed, the same asset twice), then 409 lists each and nothing is written; with an invalid item too, 422 lists all', async () => {
    const h = await holder(6);
    await saveListing(server, h.owner.key, h.assets[2].id);
    const items = restItems(h).slice(0, 5);
    const twice = [...items, { asset_id: h.assets[4].id, start_price: 9 }];

    const conflicts = await bulkRest(h.owner.key, twice);
    const mixed = await bulkRest(h.owner.key, [...twice, { asset_id: h.assets[5].id, start_price: -0 }]);

    expect(conflicts.status).toBe(409);
    expect(conflicts.body.error.code).toBe('CONFLICT');
    expect(conflicts.body.error.details).toEqual([
      { index: 2, code: 'CONFLICT', field: 'token_id', message: expect.stringContaining('already has an active listing') },
      { index: 5, code: 'CONFLICT', field: 'asset_id', message: expect.stringContaining('is listed by item 4 of this request already') },
    ]);
    expect(mixed.status).toBe(422);
    expect(mixed.body.error.details.map((d: any) => [d.index, d.code])).toEqual([
      [2, 'CONFLICT'],
      [5, 'CONFLICT'],
      [6, 'VALIDATION_FAILED'],
    ]);
    expect((await listingsOf(assetIdsOf(h))).map((l) => l.asset_id)).toEqual([h.assets[2].id]);
  });

  test("when an item names another account's asset or an unknown one, then 404 lists the unknown and 403 the foreign, each by index", async () => {
    const mine = await holder(2);
    const theirs = await holder(1);
    const foreign = { asset_id: theirs.assets[0].id, start_price: 1 };
    const unknown = { asset_id: randomUUID(), start_price: 1 };

    const forbidden = await bulkRest(mine.owner.key, [...restItems(mine), foreign]);
    const missing = await bulkRest(mine.owner.key, [unknown, ...restItems(mine), foreign]);

    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error.details).toEqual([{ index: 2, code: 'FORBIDDEN', field: 'asset_id', message: expect.stringContaining('only its owner may list it') }]);
    expect(missing.status).toBe(404);
    expect(missing.body.error.details.map((d: any) => [d.index, d.code])).toEqual([
      [0, 'NOT_FOUND'],
      [3, 'FORBIDDEN'],
    ]);
    expect(await listingsOf([...assetIdsOf(mine), ...assetIdsOf(theirs)])).toEqual([]);
  });

  test('when the same items go through GraphQL and REST, then the answers agree: the same listings, and the same refusals in each door\'s names', async () => {
    const viaGql = await holder(3);
    const viaRest = await holder(3);
    const bad = (items: Record<string, unknown>[], price: string) => items.map((item, i) => (i === 1 ? { ...item, [price]: 0 } : item));

    const gqlRefused = await bulkGql(viaGql.owner.key, bad(gqlItems(viaGql), 'startPrice'));
    const restRefused = await bulkRest(viaRest.owner.key, bad(viaRest.assets.map((a, i) => ({ asset_id: a.id, start_price: `${i + 1}.5` })), 'start_price'));
    const gqlMade = await bulkGql(viaGql.owner.key, gqlItems(viaGql));
    const restMade = await bulkRest(viaRest.owner.key, viaRest.assets.map((a, i) => ({ asset_id: a.id, start_price: `${i + 1}.5` })));

    expect(gqlRefused.body.errors![0].extensions.code).toBe(restRefused.body.error.code);
    expect(gqlRefused.body.errors![0].extensions.details).toEqual([{ index: 1, code: 'VALIDATION_FAILED', field: 'startPrice', message: 'must be greater than 0, got 0' }]);
    expect(restRefused.body.error.details).toEqual([{ index: 1, code: 'VALIDATION_FAILED', field: 'start_price', message: 'must be greater than 0, got 0' }]);
    const shape = (l: any) => ({ status: String(l.status).toLowerCase(), price: l.startPriceDecimal ?? l.start_price_decimal, seller: l.seller });
    expect(gqlMade.body.data.createListings.count).toBe(3);
    expect(gqlMade.body.data.createListings.listings.map(shape)).toEqual(restMade.body.listings.map(shape).map((l: any) => ({ ...l, seller: viaGql.owner.address })));
    expect(gqlMade.body.data.createListings.listings.map((l: any) => l.assetId)).toEqual(assetIdsOf(viaGql));
  });

  test('when two bulk creates over the same 10 assets (in opposite orders) race, then one is 201 and the other 409 naming all 10, with no deadlock', async () => {
    const h = await holder(10);
    const items = restItems(h);

    const answers = await Promise.all([bulkRest(h.owner.key, items), bulkRest(h.owner.key, [...items].reverse())]);

    expect(answers.map((a) => a.status).sort()).toEqual([201, 409]);
    const lost = answers.find((a) => a.status === 409)!;
    expect(lost.body.error.details.map((d: any) => d.index)).toEqual(h.assets.map((_, i) => i));
    expect(lost.body.error.details.every((d: any) => d.code === 'CONFLICT')).toBe(true);
    expect(await listingsOf(assetIdsOf(h))).toHaveLength(10);
  });

  test('when a bulk create is retried with its Idempotency-Key, then the first answer is replayed and the listings are written once', async () => {
    const h = await holder(3);
    const headers = { 'idempotency-key': randomUUID() };

    const first = await bulkRest(h.owner.key, restItems(h), headers);
    const retry = await bulkRest(h.owner.key, restItems(h), headers);

    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toEqual(first.body);
    expect(await listingsOf(assetIdsOf(h))).toHaveLength(3);
  });

  test('when a bulk create asks for a costly answer, then the cost estimate counts it once per item the list may hold (100): 400 before anything runs, nothing written', async () => {
    const h = await holder(1);

    const res = await server.gql(COSTLY_CREATE_LISTINGS, { input: gqlItems(h) }, h.owner.key);

    expect(res.status).toBe(400);
    expect(res.body.errors![0].message).toMatch(/may return about \d+ items; the limit is 50000/);
    expect(res.sql).toBe(0);
    expect(await listingsOf(assetIdsOf(h))).toEqual([]);
  });

  test('when a bulk create has no key, then it is a 401 and nothing is written', async () => {
    const h = await holder(1);
    const res = await server.rest('POST', '/v1/listings/bulk', { listings: restItems(h) });
    expect(res.status).toBe(401);
    expect(await listingsOf(assetIdsOf(h))).toEqual([]);
  });
});

describe('bulk cancel', () => {
  test("when a maker cancels one collection's listings, then only those are cancelled, with one listing.cancelled each, and their assets read unlisted", async () => {
    const a = await holder(3);
    const b = await holder(2, a.owner);
    const made = await bulkRest(a.owner.key, [...restItems(a), ...restItems(b)]);
    expect(made.status).toBe(201);
    const ids = made.body.listings.map((l: any) => l.id);

    const one = await server.rest('POST', '/v1/listings/cancel', { maker: a.owner.address, collection: a.collection.contractAddress }, a.owner.key);

    expect(one.status).toBe(200);
    // Listings made by one request share their creation time: the answer is oldest first, then by id.
    const sorted = (list: string[]) => [...list].sort();
    expect({ ...one.body, ids: sorted(one.body.ids) }).toEqual({ ids: sorted(ids.slice(0, 3)), count: 3 });
    expect((await listingsOf([...assetIdsOf(a), ...assetIdsOf(b)])).map((l) => l.status)).toEqual(['cancelled', 'cancelled', 'cancelled', 'active', 'active']);
    expect(await eventsOf('listing.cancelled', ids)).toEqual(one.body.ids);
    const statuses: { status: string }[] = await server.ds.query('SELECT status FROM assets WHERE id = ANY($1::uuid[]) ORDER BY token_id', [assetIdsOf(a)]);
    expect(statuses.map((s) => s.status)).toEqual(['unlisted', 'unlisted', 'unlisted']);

    const viaGql = await server.gql(CANCEL_LISTINGS, { maker: a.owner.address.toUpperCase().replace('0X', '0x') }, a.owner.key);
    expect(sorted(viaGql.body.data.cancelListings.ids)).toEqual(sorted(ids.slice(3)));
    expect(viaGql.body.data.cancelListings.count).toBe(2);
    const again = await server.rest('POST', '/v1/listings/cancel', { maker: a.owner.address }, a.owner.key);
    expect(again.body).toEqual({ ids: [], count: 0 });
  });

  test("when another key cancels a maker's listings or offers, then it is a 403 and nothing changes", async () => {
    const h = await holder(1);
    await saveListing(server, h.owner.key, h.assets[0].id);
    const stranger = await server.key();

    const listings = await server.rest('POST', '/v1/listings/cancel', { maker: h.owner.address }, stranger.key);
    const offers = await server.gql(CANCEL_OFFERS, { maker: h.owner.address }, stranger.key);

    expect(listings.status).toBe(403);
    expect(offers.body.errors![0].extensions.code).toBe('FORBIDDEN');
    expect((await listingsOf(assetIdsOf(h))).map((l) => l.status)).toEqual(['active']);
  });

  test('when a maker cancels its offers, then its active item and collection offers are cancelled with offer.cancelled each; an accepted one is left', async () => {
    const seller = await holder(3);
    const taker = await server.key();
    const item = await saveOffer(server, taker.key, seller.assets[0].id);
    const accepted = await saveOffer(server, taker.key, seller.assets[1].id);
    expect((await server.rest('POST', '/v1/offers/accept', { offer_id: accepted.id }, seller.owner.key)).status).toBe(200);
    const collectionOffer = await server.rest('POST', '/v1/offers', { collection_id: seller.collection.id, price: 1, start_time: openWindow().startTime, end_time: openWindow().endTime }, taker.key);
    expect(collectionOffer.status).toBe(200);

    const res = await server.rest('POST', '/v1/offers/cancel', { maker: taker.address, collection: seller.collection.id }, taker.key);

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ids: [item.id, collectionOffer.body.id], count: 2 });
    const rows: { id: string; status: string }[] = await server.ds.query('SELECT id, status FROM offers WHERE taker = $1 ORDER BY created_at', [taker.address]);
    expect(rows.map((r) => r.status)).toEqual(['cancelled', 'accepted', 'cancelled']);
    expect(await eventsOf('offer.cancelled', rows.map((r) => r.id))).toEqual([item.id, collectionOffer.body.id]);
  });

  test('when a bulk cancel of 20 listings races 20 buys, then each listing ends sold once or cancelled, and the answer names exactly the cancelled ones', async () => {
    const h = await holder(20);
    const made = await bulkRest(h.owner.key, restItems(h));
    expect(made.status).toBe(201);
    const ids: string[] = made.body.listings.map((l: any) => l.id);
    const buyers = await Promise.all(ids.map(() => server.key()));

    const [cancel, ...buys] = await Promise.all([
      server.rest('POST', '/v1/listings/cancel', { maker: h.owner.address }, h.owner.key),
      ...ids.map((id, i) => server.rest('POST', `/v1/listings/${id}/buy`, {}, buyers[i].key)),
    ]);

    // Whole answers, so that a failure shows what was answered.
    expect({ status: cancel.status, error: cancel.body.error }).toEqual({ status: 200, error: undefined });
    expect(buys.filter((b) => b.status !== 200 && b.status !== 409).map((b) => [b.status, b.body])).toEqual([]);
    const stored = await listingsOf(assetIdsOf(h));
    const orders: { listing_id: string }[] = await server.ds.query('SELECT listing_id FROM orders WHERE listing_id = ANY($1::uuid[])', [ids]);
    const sold = stored.filter((l) => l.status === 'sold').map((l) => l.id);
    expect(stored.every((l) => l.status === 'sold' || l.status === 'cancelled')).toBe(true);
    expect(orders.map((o) => o.listing_id).sort()).toEqual([...sold].sort());
    expect(buys.filter((b) => b.status === 200)).toHaveLength(sold.length);
    expect([...cancel.body.ids].sort()).toEqual(stored.filter((l) => l.status === 'cancelled').map((l) => l.id).sort());
    expect(cancel.body.count).toBe(20 - sold.length);
  });
});

const CREATE_LISTINGS = /* GraphQL */ `
  mutation ($input: [CreateListingInput!]!) {
    createListings(input: $input) { count listings { id assetId status startPriceDecimal seller } }
  }`;

/** 100 items (the variable's most) x 100 assets x 100 events each: far over the estimate's 50,000. */
const COSTLY_CREATE_LISTINGS = /* GraphQL */ `
  mutation ($input: [CreateListingInput!]!) {
    createListings(input: $input) { listings { asset { collection { assets(limit: 100) { result { history(limit: 100) { result { type } } } } } } } }
  }`;

const CANCEL_LISTINGS = /* GraphQL */ `
  mutation ($maker: Address!, $collection: String) { cancelListings(maker: $maker, collection: $collection) { ids count } }`;

const CANCEL_OFFERS = /* GraphQL */ `
  mutation ($maker: Address!, $collection: String) { cancelOffers(maker: $maker, collection: $collection) { ids count } }`;
