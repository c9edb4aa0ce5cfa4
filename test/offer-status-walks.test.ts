import { clock } from '../src/common/clock';
import { saveChain } from './factories/marketplace';
import { startServer, TestServer } from './setup/server';
import { connectionWalk, restWalk } from './setup/list-walks';

/**
 * Issue #38: expired and active offers are read as parts, each by an index of its own (offer.read.ts
 * offerStatusSources: stored expired; stored active and marked by the sweeper; stored active and not marked),
 * merged page by page. On a generated market (seeded: STATUS_SEED replays a run) of offers stored active that
 * ended and were marked or not, stored active and marked but not ended at the reader's moment (a clock behind
 * the sweeper's), stored expired, accepted and cancelled, with ties in every sort, each page of both lists in
 * every sort both ways, walked to the end by its cursor through both doors (and the planned first page), is
 * the rows a plain condition on every row finds, sorted; `remaining` and `totalCount` are exact. The market is
 * of a chain and a contract of its own, read at a moment of its own.
 */
const CHAIN = '990053';
const CONTRACT = `0x${'d4'.repeat(20)}`;
const COLLECTION = '10000000-0000-4000-8000-000000000053';
/** The moment the lists are read at. */
const AT = new Date('2031-06-01T12:00:00.000Z');
const OFFERS = 400;
let server: TestServer;

beforeAll(async () => {
  server = await startServer();
  await saveChain(server, CHAIN, 'Status walks chain');
  await load(Number(process.env.STATUS_SEED ?? 5338));
  clock.set(AT);
}, 120_000);

afterAll(async () => {
  clock.reset();
  await server?.ds.query(`DELETE FROM offers WHERE chain_id = $1`, [CHAIN]);
  await server?.close();
});

/** The offers, each drawn by a seeded generator: status, mark, end around AT, and few distinct prices and creation times (ties). */
async function load(seed: number): Promise<void> {
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const pick = <T>(values: T[]): T => values[Math.floor(random() * values.length)];
  const q = (sql: string, values: unknown[] = []) => server.ds.query(sql, values);
  await q(`INSERT INTO collections (id, chain_id, contract_address, owner, name, slug, created_at) VALUES ($1, $2, $3, $3, 'Status walks', 'status-walks', $4)`, [
    COLLECTION,
    CHAIN,
    CONTRACT,
    AT,
  ]);
  await q(
    `INSERT INTO assets (id, collection_id, chain_id, token_address, token_id, name, description, image_url, metadata, owner, created_at, updated_at)
     SELECT md5('status-a' || t)::uuid, $1, $2, $3, t, 'Asset ' || t, '', '', '{}'::jsonb, $3, $4, $4 FROM generate_series(1, 20) t`,
    [COLLECTION, CHAIN, CONTRACT, AT],
  );
  const rows: unknown[][] = [];
  for (let k = 0; k < OFFERS; k += 1) {
    // Ended (at or before AT, some exactly at AT) or live; the mark on most ended ones, on a few live ones.
    const endMinutes = pick([-600, -60, -1, 0, 0, 1, 60, 600]) + Math.floor(random() * 3);
    const ended = endMinutes <= 0;
    const status = pick(['active', 'active', 'active', 'active', 'expired', 'accepted', 'cancelled']);
    const swept = status === 'active' && (ended ? random() < 0.7 : random() < 0.1);
    const token = 1 + Math.floor(random() * 20);
    rows.push([
      `${token}`,
      pick(['1', '1.5', '2', '7', '7', '30']),
      new Date(AT.getTime() + endMinutes * 60_000),
      status,
      swept,
      new Date(AT.getTime() - pick([1, 2, 3, 5, 8]) * 60_000),
    ]);
  }
  await q(
    `INSERT INTO offers (kind, asset_id, token_id, collection_id, chain_id, token_address, taker, price, start_time, end_time, status, expiry_swept, created_at, updated_at)
     SELECT 'item', md5('status-a' || r.token)::uuid, r.token::numeric, $1, $2, $3, $4, r.price::numeric, $5::timestamptz - interval '10 days', r.end_time::timestamptz,
       r.status, r.swept::boolean, r.created_at::timestamptz, $5
     FROM jsonb_to_recordset($6::jsonb) r(token text, price text, end_time text, status text, swept boolean, created_at text)`,
    [
      COLLECTION,
      CHAIN,
      CONTRACT,
      `0x${'9'.repeat(40)}`,
      AT,
      JSON.stringify(rows.map(([token, price, end, status, swept, created]) => ({ token, price, end_time: end, status, swept, created_at: created }))),
    ],
  );
  await q('ANALYZE offers');
}

/** The ids of the offers of the contract whose status at AT is `status`, by a condition on every row, in the list's order. */
async function expected(status: string, orderBy: string, direction: string): Promise<string[]> {
  const rows: { id: string }[] = await server.ds.query(
    `SELECT id FROM offers WHERE token_address = $2 AND (CASE WHEN status = 'active' AND end_time <= $1 THEN 'expired' ELSE status END) = $3
     ORDER BY ${orderBy} ${direction}, id ${direction}`,
    [AT, CONTRACT, status],
  );
  return rows.map((r) => r.id);
}

/** The first page asked three times (the third is the SQL plan's), and page 3 by its number. */
async function pages(variables: Record<string, unknown>): Promise<{ ids: string[]; remaining: number }[]> {
  const answers = [];
  for (const page of [undefined, undefined, undefined, '3']) {
    const res = await server.gql(OFFERS_PAGE, { ...variables, page });
    expect(res.body.errors).toBeUndefined();
    answers.push({ ids: res.body.data.list.result.map((r: { id: string }) => r.id), remaining: res.body.data.list.remaining });
  }
  return answers;
}

describe('expired and active offers read by parts', () => {
  test('the generated market holds every kind of offer the parts read apart', async () => {
    const [kinds] = await server.ds.query(
      `SELECT count(*) FILTER (WHERE status = 'expired')::int AS "storedExpired",
         count(*) FILTER (WHERE status = 'active' AND expiry_swept AND end_time <= $2)::int AS "sweptEnded",
         count(*) FILTER (WHERE status = 'active' AND NOT expiry_swept AND end_time <= $2)::int AS "unsweptEnded",
         count(*) FILTER (WHERE status = 'active' AND expiry_swept AND end_time > $2)::int AS "sweptLive",
         count(*) FILTER (WHERE status = 'active' AND NOT expiry_swept AND end_time > $2)::int AS "live"
       FROM offers WHERE chain_id = $1`,
      [CHAIN, AT],
    );
    for (const [kind, n] of Object.entries(kinds)) expect({ kind, some: (n as number) > 3 }).toEqual({ kind, some: true });
  });

  for (const status of ['expired', 'active'])
    test(`when ${status} offers are read by each sort both ways, page by page, then through both doors they are the offers ${status} at that moment, in order, with exact counts`, async () => {
      for (const orderBy of ['created_at', 'price', 'end_time'])
        for (const direction of ['asc', 'desc']) {
          const ids = await expected(status, orderBy, direction);
          const request = { status, orderBy, direction };
          expect(ids.length).toBeGreaterThan(30);
          // By chain: the kept count (after a cursor, less the rows up to it); by contract: counted, and planned.
          for (const filter of [`chain_id=${CHAIN}`, `token_address=${CONTRACT}`])
            expect({ request, filter, ...(await restWalk(server, `/v1/offers?status=${status}&order_by=${orderBy}&direction=${direction}&${filter}`, 9)) }).toEqual({
              request,
              filter,
              ids,
              remainingExact: true,
            });
          const variables = { status: status.toUpperCase(), orderBy: orderBy.toUpperCase(), direction: direction.toUpperCase() };
          for (const filter of [{ chainId: CHAIN }, { tokenAddress: CONTRACT }])
            expect({ request, filter, ...(await connectionWalk(server, OFFERS_CONNECTION, { ...variables, ...filter })) }).toEqual({
              request,
              filter,
              ids,
              totals: Array<number>(Math.ceil(ids.length / 9)).fill(ids.length),
            });
          const first = { ids: ids.slice(0, 9), remaining: ids.length - 9 };
          const third = { ids: ids.slice(18, 27), remaining: ids.length - 27 };
          expect({ request, answers: await pages({ ...variables, tokenAddress: CONTRACT }) }).toEqual({ request, answers: [first, first, first, third] });
        }
    }, 180_000);
});

const OFFERS_CONNECTION = `query ($status: OfferStatus, $orderBy: OfferOrderBy, $direction: SortDirection, $tokenAddress: Address, $chainId: String, $after: String) {
  list: offers(status: $status, tokenAddress: $tokenAddress, chainId: $chainId, orderBy: $orderBy, direction: $direction, first: 9, after: $after) {
    totalCount edges { node { id } } pageInfo { hasNextPage endCursor } } }`;
const OFFERS_PAGE = `query ($status: OfferStatus, $orderBy: OfferOrderBy, $direction: SortDirection, $tokenAddress: Address, $page: String) {
  list: offers(status: $status, tokenAddress: $tokenAddress, orderBy: $orderBy, direction: $direction, limit: 9, page: $page) { cursor remaining result { id } } }`;
