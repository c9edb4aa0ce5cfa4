import { clock } from '../src/common/clock';
import { compactTradeListCounts } from '../src/modules/trade/list-counts';
import { ACCEPT_OFFER, Party, saveOffer } from './factories/market';
import { saveAsset, saveChain, saveCollection } from './factories/marketplace';
import { startServer, TestServer } from './setup/server';
import { SECOND } from './setup/time';

/**
 * Issue #38: the counts of offers and orders that `remaining` and `totalCount` read (trade_list_counts,
 * kept by triggers in the writing transaction) stay exact under parallel writers and while they are
 * folded, and an offer leaves the active count the moment it ends. The lists here are of a chain of their
 * own, so other files' offers on the shared database do not move them.
 */
const CHAIN = '990038';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
  await saveChain(server, CHAIN, 'Counts test chain');
});
afterAll(async () => {
  clock.reset();
  await server.close();
});

/** The kept counts and a recount from scratch by group, in one snapshot. */
async function keptAndRecounted(): Promise<{ kept: unknown; recount: unknown }> {
  const [row] = await server.ds.query(`SELECT
    (SELECT COALESCE(jsonb_object_agg(g, n), '{}') FROM (SELECT concat_ws('/', list, chain_id, currency, kind, status, swept) g, sum(n) n
       FROM trade_list_counts GROUP BY 1 HAVING sum(n) <> 0) k) AS kept,
    (SELECT COALESCE(jsonb_object_agg(g, n), '{}') FROM (
       SELECT concat_ws('/', 'offers', chain_id, currency, kind, status, expiry_swept) g, count(*) n FROM offers GROUP BY 1
       UNION ALL SELECT concat_ws('/', 'orders', chain_id, currency, '', status, false), count(*) FROM orders GROUP BY 1) r) AS recount`);
  return row;
}

/** How many offers of the chain GET /v1/offers and GraphQL's totalCount say there are, with `status`. */
async function listed(status: string): Promise<{ rest: number; totalCount: number }> {
  const res = await server.rest('GET', `/v1/offers?chain_id=${CHAIN}&status=${status}&limit=1`);
  const gql = await server.gql(`query ($status: OfferStatus) { offers(chainId: "${CHAIN}", status: $status, first: 1) { totalCount } }`, { status: status.toUpperCase() });
  return { rest: res.body.remaining + res.body.result.length, totalCount: gql.body.data.offers.totalCount };
}

/** How many offers of the chain have the status at the clock's moment, counted row by row. */
async function recounted(status: string): Promise<number> {
  const [{ n }] = await server.ds.query(
    `SELECT count(*)::int AS n FROM offers WHERE chain_id = $1
       AND (CASE WHEN status = 'active' AND end_time <= $2 THEN 'expired' ELSE status END) = $3`,
    [CHAIN, clock.now(), status],
  );
  return n;
}

/** Folds the deltas again and again until `until` settles. */
async function foldingWhile<T>(until: Promise<T>): Promise<T> {
  let done = false;
  const folding = (async () => {
    while (!done) await compactTradeListCounts(server.ds, 0);
  })();
  try {
    return await until;
  } finally {
    done = true;
    await folding;
  }
}

describe('kept counts of offers and orders', () => {
  test('when takers make, cancel and have accepted offers in parallel while the counts are folded, then the kept counts equal a recount from scratch, and the lists count each status exactly', async () => {
    const owner = await server.key();
    const collection = await saveCollection(server, owner.key, { chainId: CHAIN });
    const assets = await Promise.all(Array.from({ length: 6 }, () => saveAsset(server, owner.key, collection, owner.address)));
    const takers: Party[] = await Promise.all(Array.from({ length: 8 }, () => server.key()));

    const offers = await foldingWhile(Promise.all(takers.flatMap((taker, t) => assets.slice(0, 3).map((asset, a) => saveOffer(server, taker.key, asset.id, { price: 1 + t + a / 10 })))));
    // Offers are made taker by taker, three assets each: these sell three different assets.
    const [accepting, cancelling] = [[offers[0], offers[4], offers[8]], offers.slice(9, 15)];
    const written = await foldingWhile(
      Promise.all([
        ...accepting.map((offer) => server.gql(ACCEPT_OFFER, { offerId: offer.id }, owner.key).then((res) => res.body.errors ?? 'accepted')),
        ...cancelling.map((offer) => server.rest('DELETE', `/v1/offers/${offer.id}`, undefined, takers.find((t) => t.address === offer.taker)!.key).then((res) => res.status)),
        ...takers.map((taker) => saveOffer(server, taker.key, assets[4].id, { price: 2 }).then(() => 'made')),
      ]),
    );
    expect(written).toEqual([...accepting.map(() => 'accepted'), ...cancelling.map(() => 200), ...takers.map(() => 'made')]);

    const { kept, recount } = await keptAndRecounted();
    expect(kept).toEqual(recount);
    for (const status of ['active', 'accepted', 'cancelled', 'expired']) {
      const count = await recounted(status);
      expect({ status, ...(await listed(status)) }).toEqual({ status, rest: count, totalCount: count });
    }
    expect(await recounted('accepted')).toBeGreaterThan(0);
    expect(await recounted('cancelled')).toBeGreaterThan(0);
    const orders = await server.rest('GET', `/v1/orders?chain_id=${CHAIN}&limit=1`);
    const [{ n }] = await server.ds.query('SELECT count(*)::int AS n FROM orders WHERE chain_id = $1', [CHAIN]);
    expect(orders.body.remaining + orders.body.result.length).toBe(n);
  }, 120_000);

  test('when an offer ends, then it leaves the active count and joins the expired one that moment, before and after the sweeper marks it, and a clock behind the mark counts it active again', async () => {
    const owner = await server.key();
    const collection = await saveCollection(server, owner.key, { chainId: CHAIN });
    const asset = await saveAsset(server, owner.key, collection, owner.address);
    const taker = await server.key();
    const start = new Date(Math.floor(Date.now() / SECOND) * SECOND);
    clock.set(start);
    const before = { active: await recounted('active'), expired: await recounted('expired') };
    const offer = await saveOffer(server, taker.key, asset.id, { startTime: new Date(start.getTime() - 60 * SECOND).toISOString(), endTime: new Date(start.getTime() + 60 * SECOND).toISOString() });
    expect(await listed('active')).toEqual({ rest: before.active + 1, totalCount: before.active + 1 });

    clock.set(new Date(start.getTime() + 60 * SECOND));
    expect(await listed('active')).toEqual({ rest: before.active, totalCount: before.active });
    expect(await listed('expired')).toEqual({ rest: before.expired + 1, totalCount: before.expired + 1 });

    // What the expiry sweeper writes once the offer is due.
    await server.ds.query('UPDATE offers SET expiry_swept = true WHERE id = $1', [offer.id]);
    expect(await listed('active')).toEqual({ rest: before.active, totalCount: before.active });
    expect(await listed('expired')).toEqual({ rest: before.expired + 1, totalCount: before.expired + 1 });

    clock.set(new Date(start.getTime() + 59 * SECOND));
    expect(await listed('active')).toEqual({ rest: before.active + 1, totalCount: before.active + 1 });
    expect(await listed('expired')).toEqual({ rest: before.expired, totalCount: before.expired });
  });
});
