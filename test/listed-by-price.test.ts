import { clock } from '../src/common/clock';
import { OwnedAsset, Party, saveOwnedAsset, saveSiblingAsset } from './factories/market';
import { HttpResult, startServer, TestServer } from './setup/server';
import { HOUR, later, SECOND } from './setup/time';

/**
 * Listed assets by current price (issue #38): a listing's price bounds are stored by the writes (migration
 * 1765640000000-listing-price-bounds) and the page walks them; the answers are those of pricing every
 * listed asset at the moment of the request.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());
afterEach(() => clock.reset());

/** A listing through /v1 of the asset, expiring in a day unless the terms say otherwise. */
async function list(owned: OwnedAsset, terms: Record<string, unknown>): Promise<{ id: string }> {
  const res = await server.rest('POST', '/v1/assets/listing', { asset_id: owned.asset.id, expiration_time: { duration_seconds: 86400 }, ...terms }, owned.owner.key);
  if (res.status !== 200) throw new Error(`listing refused: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** An item offer (a bid, on an english auction) through /v1, open from a minute ago unless `window` says otherwise. */
function bid(bidder: Party, owned: OwnedAsset, price: number | string, window: { start?: Date; end?: Date } = {}): Promise<HttpResult> {
  const now = clock.now();
  return server.rest(
    'POST',
    '/v1/offers',
    {
      asset_id: owned.asset.id,
      price,
      start_time: (window.start ?? later(now, -60 * SECOND)).toISOString(),
      end_time: (window.end ?? later(now, 2 * HOUR)).toISOString(),
    },
    bidder.key,
  );
}

/**
 * The active listings of these collections whose stored bounds differ from the bounds computed from scratch
 * (the listing's terms and every active item offer on its asset), with both.
 */
async function boundsAstray(collectionIds: string[]) {
  return server.ds.query(
    `SELECT l.id, l.order_type, l.price_low::text AS stored_low, l.price_high::text AS stored_high, x.low::text AS low, x.high::text AS high
     FROM listings l CROSS JOIN LATERAL (
       SELECT CASE l.order_type WHEN 'dutch_auction' THEN trunc(l.accept_price, l.currency_decimals) ELSE l.start_price END AS low,
              CASE l.order_type
                WHEN 'dutch_auction' THEN trunc(l.start_price, l.currency_decimals)
                WHEN 'english_auction' THEN GREATEST(l.start_price, (SELECT max(o.price) FROM offers o WHERE o.asset_id = l.asset_id
                  AND o.status = 'active' AND o.currency = l.currency AND o.price >= l.start_price))
                ELSE l.start_price END AS high) x
     WHERE l.collection_id = ANY($1::uuid[]) AND l.status = 'active'
       AND (l.price_low IS DISTINCT FROM x.low OR l.price_high IS DISTINCT FROM x.high)`,
    [collectionIds],
  );
}

describe('the stored price bounds', () => {
  test('when english auctions take bids and lose them in parallel beside dutch and fixed listings, then every stored bound equals its computation from scratch', async () => {
    const first = await saveOwnedAsset(server);
    const owned = [first];
    for (let i = 1; i < 9; i += 1) owned.push(await saveSiblingAsset(server, first));
    const bidders = await Promise.all(Array.from({ length: 4 }, () => server.key()));
    const english = owned.slice(0, 5);
    await Promise.all(english.map((o, i) => list(o, { order_type: 'english_auction', start_price: 1 + i / 10 })));
    await list(owned[5], { order_type: 'dutch_auction', start_price: 3, accept_price: 1 });
    await list(owned[6], { order_type: 'fixed_price', start_price: 2 });
    // Offers on an asset before its english auction: those at or above its start price are its bids from the start.
    await bid(bidders[0], owned[7], 4);
    await bid(bidders[1], owned[7], 0.5);
    await list(owned[7], { order_type: 'english_auction', start_price: 1 });
    expect(await boundsAstray([first.collection.id])).toEqual([]);

    // Rounds of bids (some refused: below the increment of a bid placed meanwhile) and cancellations, all at once.
    const placed: { bidder: Party; id: string }[] = [];
    for (let round = 0; round < 3; round += 1) {
      const bids = english.flatMap((o, i) => bidders.map((b, j) => ({ b, o, price: (2 + round + i / 10 + j / 100).toFixed(2) })));
      const cancels = placed.splice(0, 6).map(({ bidder, id }) => server.rest('DELETE', `/v1/offers/${id}`, undefined, bidder.key));
      const results = await Promise.all([...bids.map(({ b, o, price }) => bid(b, o, price)), ...cancels]);
      results.slice(0, bids.length).forEach((res, n) => {
        if (res.status === 200) placed.push({ bidder: bids[n].b, id: res.body.id });
      });
      expect(results.every((res) => res.status === 200 || res.status === 422 || res.status === 409)).toBe(true);
      expect(await boundsAstray([first.collection.id])).toEqual([]);
    }
    // A bid that opens later and one that has ended still bound the auction: when read, the clock decides.
    await bid(bidders[2], owned[8], 9, { start: later(clock.now(), HOUR), end: later(clock.now(), 2 * HOUR) });
    await list(owned[8], { order_type: 'english_auction', start_price: 1 });
    const [stored] = await server.ds.query('SELECT price_low::text AS low, price_high::text AS high FROM listings WHERE asset_id = $1 AND status = $2', [owned[8].asset.id, 'active']);
    expect(stored).toEqual({ low: '1.000000000000000000', high: '9.000000000000000000' });
    expect(await boundsAstray([first.collection.id])).toEqual([]);
  });
});

interface RestAsset {
  id: string;
  listing: { current_price_decimal: string } | null;
}

/** Every item of a /v1 list, page after page by cursor, `limit` a page. */
async function allPages(path: string, limit: number): Promise<{ items: RestAsset[]; remaining: number[] }> {
  const items: RestAsset[] = [];
  const remaining: number[] = [];
  let cursor: string | null = null;
  do {
    const res: HttpResult = await server.rest('GET', `${path}&limit=${limit}${cursor ? `&page=${encodeURIComponent(cursor)}` : ''}`);
    expect(res.status).toBe(200);
    items.push(...res.body.result);
    remaining.push(res.body.remaining);
    cursor = res.body.cursor;
  } while (cursor);
  return { items, remaining };
}

const priced = (items: RestAsset[]) => items.map((a) => [a.id, a.listing?.current_price_decimal ?? null]);

describe('pages of listed assets by current price', () => {
  let first: OwnedAsset;
  let made: Date;
  beforeAll(async () => {
    made = clock.now();
    first = await saveOwnedAsset(server);
    const owned = [first];
    for (let i = 1; i < 15; i += 1) owned.push(await saveSiblingAsset(server, first));
    const [bidder, other] = [await server.key(), await server.key()];
    // Fixed prices, two of them equal; dutch auctions falling through them; english auctions without bids,
    // with a bid standing now, with a bid that opens in two hours, with one that ends in half an hour; one
    // listing in WETH; two assets unlisted.
    for (const [i, price] of [[0, 1], [1, 2], [2, 2], [3, 3], [4, 5]]) await list(owned[i], { order_type: 'fixed_price', start_price: price });
    await list(owned[5], { order_type: 'dutch_auction', start_price: 6, accept_price: 0.5 });
    await list(owned[6], { order_type: 'dutch_auction', start_price: 4, accept_price: 2.5, expiration_time: { duration_seconds: 4 * 3600 } });
    await list(owned[7], { order_type: 'english_auction', start_price: 1.5 });
    for (const i of [8, 9, 10]) await list(owned[i], { order_type: 'english_auction', start_price: 1.2 });
    expect((await bid(bidder, owned[8], 4.2)).status).toBe(200);
    expect((await bid(bidder, owned[9], 7, { start: later(made, 2 * HOUR), end: later(made, 5 * HOUR) })).status).toBe(200);
    expect((await bid(other, owned[10], 3.3, { end: later(made, HOUR / 2) })).status).toBe(200);
    await list(owned[11], { order_type: 'fixed_price', start_price: 0.7, currency: 'WETH' });
    await list(owned[12], { order_type: 'fixed_price', start_price: 2.5 });
  });

  // Moments when the dutch prices have fallen through the fixed ones and the english bids have come and gone.
  const moments = [['just after listing', 60 * SECOND], ['after 1 hour', HOUR], ['after 3 hours', 3 * HOUR], ['after 6 hours', 6 * HOUR], ['after 20 hours', 20 * HOUR]] as const;

  test.each(moments)('when read %s, then every page of listed assets by current price is the listed part of the list priced in full, both ways, by cursor and by page number', async (_, after) => {
    clock.set(later(made, after));
    const collection = `collection_id=${first.collection.id}&order_by=current_price`;
    for (const direction of ['asc', 'desc']) {
      // Without a status filter the list prices every asset, the listed ones first (nulls last): the reference.
      const full = (await allPages(`/v1/assets?${collection}&direction=${direction}`, 100)).items.filter((a) => a.listing);
      // The shorter dutch auction has closed after 4 hours.
      expect(full.length).toBe(after < 4 * HOUR ? 13 : 12);
      for (const limit of [1, 3, 20]) {
        const listed = await allPages(`/v1/assets?${collection}&direction=${direction}&status=listed`, limit);
        expect(priced(listed.items)).toEqual(priced(full));
        // Every page's remaining, the pages after a cursor among equal prices included (the fixed prices of 2).
        expect(listed.remaining).toEqual(listed.remaining.map((_, i) => Math.max(0, full.length - limit * (i + 1))));
      }
      const second = await server.rest('GET', `/v1/assets?${collection}&direction=${direction}&status=listed&limit=4&page=2`);
      expect(priced(second.body.result)).toEqual(priced(full.slice(4, 8)));
      const eth = await allPages(`/v1/assets?${collection}&direction=${direction}&currency=ETH`, 3);
      expect(priced(eth.items)).toEqual(priced(full.filter((a) => a.id !== firstWeth())));
      const weth = await allPages(`/v1/assets?${collection}&direction=${direction}&currency=WETH`, 3);
      expect(weth.items.map((a) => a.id)).toEqual([firstWeth()]);
    }
  });

  let wethAsset: string | undefined;
  const firstWeth = () => wethAsset!;
  beforeAll(async () => {
    [{ asset_id: wethAsset }] = await server.ds.query(`SELECT asset_id FROM listings WHERE collection_id = $1 AND currency <> $2 AND status = 'active'`, [
      first.collection.id,
      '0x0000000000000000000000000000000000000000',
    ]);
  });

  test('when GraphQL asks for listed assets by current price, then its connection walks them in the same order as /v1', async () => {
    clock.set(later(made, 3 * HOUR));
    const rest = await allPages(`/v1/assets?collection_id=${first.collection.id}&order_by=current_price&direction=asc&status=listed`, 100);
    const ids: string[] = [];
    let after: string | null = null;
    do {
      const res: HttpResult = await server.gql(LISTED_BY_PRICE, { collectionId: first.collection.id, after });
      expect(res.body.errors).toBeUndefined();
      ids.push(...res.body.data.assets.edges.map((e: { node: { id: string } }) => e.node.id));
      after = res.body.data.assets.pageInfo.hasNextPage ? res.body.data.assets.pageInfo.endCursor : null;
    } while (after);
    expect(ids).toEqual(rest.items.map((a) => a.id));
  });
});

const LISTED_BY_PRICE = /* GraphQL */ `
  query ($collectionId: String, $after: String) {
    assets(collectionId: $collectionId, status: LISTED, orderBy: CURRENT_PRICE, direction: ASC, first: 4, after: $after) {
      edges { node { id listing { currentPriceDecimal } } }
      pageInfo { hasNextPage endCursor }
    }
  }`;
