import { clock } from '../src/common/clock';
import { ACCEPT_OFFER, Party, saveOffer } from './factories/market';
import { CollectionRow, saveAsset, saveChain, saveCollection } from './factories/marketplace';
import { HttpResult, startServer, TestServer } from './setup/server';
import { SECOND } from './setup/time';

/**
 * Issue #38: the offer and order lists that read an index of their own at 10,000,000 assets (active offers
 * ending first; the offers of a token id across contracts and of a taker; the orders of a contract and of a
 * token id) answer as they did: every page in order, the next one by its cursor, `remaining` and
 * `totalCount` exact, and an offer stored active whose end has passed never shown active. The market here is
 * on a chain of its own (and a token id no other file mints), so other files' offers do not move the lists.
 */
const CHAIN = '99003838';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
  await saveChain(server, CHAIN, 'Trade list filters test chain');
});
afterAll(async () => {
  clock.reset();
  await server.close();
});

interface Walked {
  ids: string[];
  /** Each page's `remaining` (REST) or `totalCount` (GraphQL). */
  counts: number[];
}

/** Every page of a REST list, `limit` at a time, each after the previous one's cursor. */
async function restPages(path: string, limit: number): Promise<Walked> {
  const walked: Walked = { ids: [], counts: [] };
  let cursor: string | null = null;
  do {
    const res: HttpResult = await server.rest('GET', `${path}&limit=${limit}${cursor ? `&page=${encodeURIComponent(cursor)}` : ''}`);
    expect(res.status).toBe(200);
    walked.ids.push(...res.body.result.map((item: { id: string }) => item.id));
    walked.counts.push(res.body.remaining);
    cursor = res.body.cursor;
  } while (cursor);
  return walked;
}

/** Every page of a GraphQL connection (`list` in `query`), `first` at a time, each after the previous one's last edge. */
async function graphqlPages(query: string, variables: Record<string, unknown>, first: number): Promise<Walked> {
  const walked: Walked = { ids: [], counts: [] };
  let after: string | null = null;
  for (;;) {
    const res: HttpResult = await server.gql(query, { ...variables, first, after });
    expect(res.body.errors).toBeUndefined();
    const page: { totalCount: number; edges: { node: { id: string } }[]; pageInfo: { endCursor: string; hasNextPage: boolean } } = res.body.data.list;
    walked.ids.push(...page.edges.map((edge) => edge.node.id));
    walked.counts.push(page.totalCount);
    if (!page.pageInfo.hasNextPage) return walked;
    after = page.pageInfo.endCursor;
  }
}

/** A collection of the test chain, with an asset of token id `tokenId` owned by its creator. */
async function assetOf(owner: Party, tokenId: string): Promise<{ collection: CollectionRow; asset: { id: string; tokenAddress: string } }> {
  const collection = await saveCollection(server, owner.key, { chainId: CHAIN });
  const asset = await saveAsset(server, owner.key, collection, owner.address, { tokenId });
  return { collection, asset };
}

const window = (start: Date, endsInSeconds: number) => ({
  startTime: new Date(start.getTime() - 60 * SECOND).toISOString(),
  endTime: new Date(start.getTime() + endsInSeconds * SECOND).toISOString(),
});

describe('offer and order lists read by their own indexes', () => {
  test('when active offers are listed ending first, then an accepted offer and an offer whose end has passed are left out, and the pages by cursor give the rest in order with remaining and totalCount exact', async () => {
    const owner = await server.key();
    const taker = await server.key();
    const start = new Date(Math.floor(Date.now() / SECOND) * SECOND);
    clock.set(start);
    const { collection, asset } = await assetOf(owner, String(Date.now()));
    const sold = await saveAsset(server, owner.key, collection, owner.address);
    // Made in an order other than their ends; the accepted one and the one that ends soon end before all others.
    const later = [];
    for (const endsIn of [5000, 3000, 7000, 4000, 6000]) later.push({ endsIn, offer: await saveOffer(server, taker.key, asset.id, window(start, endsIn)) });
    const endsSoon = await saveOffer(server, taker.key, asset.id, window(start, 60));
    const accepted = await saveOffer(server, taker.key, sold.id, window(start, 30));
    expect((await server.gql(ACCEPT_OFFER, { offerId: accepted.id }, owner.key)).body.errors).toBeUndefined();
    clock.set(new Date(start.getTime() + 61 * SECOND));

    const expected = later.sort((a, b) => a.endsIn - b.endsIn).map((o) => o.offer.id);
    const rest = await restPages(`/v1/offers?chain_id=${CHAIN}&status=active&order_by=end_time&direction=asc`, 2);
    expect(rest).toEqual({ ids: expected, counts: [3, 1, 0] });
    const graphql = await graphqlPages(ACTIVE_OFFERS_ENDING_FIRST, { chainId: CHAIN }, 2);
    expect(graphql).toEqual({ ids: expected, counts: [5, 5, 5] });
    expect(rest.ids).not.toContain(endsSoon.id);

    // The one that ended is listed expired, once.
    const expired = await restPages(`/v1/offers?chain_id=${CHAIN}&status=expired&order_by=end_time&direction=asc`, 2);
    expect(expired).toEqual({ ids: [endsSoon.id], counts: [0] });
  }, 60_000);

  test('when offers are listed by a token id minted by two contracts, and by their taker, then the pages by cursor give each offer once, newest first, with remaining and totalCount exact', async () => {
    const tokenId = String(Date.now() + 1);
    const [first, second] = [await server.key(), await server.key()];
    const taker = await server.key();
    const assets = [(await assetOf(first, tokenId)).asset, (await assetOf(second, tokenId)).asset];
    const made: string[] = [];
    for (let i = 0; i < 5; i += 1) made.push((await saveOffer(server, taker.key, assets[i % 2].id, { price: 1 + i })).id);
    // Newest first: the default order (created_at, then id, descending); offers made within one millisecond tie on created_at.
    const newestFirst = (await server.ds.query(`SELECT id FROM offers WHERE id = ANY($1::uuid[]) ORDER BY created_at DESC, id DESC`, [made])).map((r: { id: string }) => r.id);

    expect(await restPages(`/v1/offers?token_id=${tokenId}`, 2)).toEqual({ ids: newestFirst, counts: [3, 1, 0] });
    expect(await graphqlPages(OFFERS_BY_TOKEN_ID, { tokenId }, 2)).toEqual({ ids: newestFirst, counts: [5, 5, 5] });
    expect(await restPages(`/v1/offers?owner_id=${taker.address}`, 2)).toEqual({ ids: newestFirst, counts: [3, 1, 0] });
  }, 60_000);

  test('when orders are listed by a contract and by a token id, then the pages by cursor give each order once, newest first, with remaining and totalCount exact', async () => {
    const tokenId = String(Date.now() + 2);
    const owner = await server.key();
    const { collection, asset } = await assetOf(owner, tokenId);
    const other = await saveAsset(server, owner.key, collection, owner.address);
    const bought: string[] = [];
    // Each sale moves the asset to its buyer, who sells it on to the next.
    let seller = owner;
    for (let i = 0; i < 3; i += 1) {
      const buyer = await server.key();
      const offer = await saveOffer(server, buyer.key, asset.id, { price: 1 + i });
      const res = await server.gql(ACCEPT_OFFER, { offerId: offer.id }, seller.key);
      expect(res.body.errors).toBeUndefined();
      bought.push(res.body.data.acceptOffer.id);
      seller = buyer;
    }
    const buyer = await server.key();
    const offer = await saveOffer(server, buyer.key, other.id, { price: 9 });
    const otherSale = (await server.gql(ACCEPT_OFFER, { offerId: offer.id }, owner.key)).body.data.acceptOffer.id;
    const newestFirst = async (ids: string[]) =>
      (await server.ds.query(`SELECT id FROM orders WHERE id = ANY($1::uuid[]) ORDER BY created_at DESC, id DESC`, [ids])).map((r: { id: string }) => r.id);

    const ofContract = await newestFirst([...bought, otherSale]);
    expect(await restPages(`/v1/orders?token_address=${collection.contractAddress}`, 3)).toEqual({ ids: ofContract, counts: [1, 0] });
    expect(await graphqlPages(ORDERS_OF_CONTRACT, { tokenAddress: collection.contractAddress }, 3)).toEqual({ ids: ofContract, counts: [4, 4] });
    expect(await restPages(`/v1/orders?token_id=${tokenId}`, 2)).toEqual({ ids: await newestFirst(bought), counts: [1, 0] });
  }, 60_000);
});

const ACTIVE_OFFERS_ENDING_FIRST = `query ($chainId: String, $first: Int, $after: String) {
  list: offers(chainId: $chainId, status: ACTIVE, orderBy: END_TIME, direction: ASC, first: $first, after: $after) {
    totalCount edges { node { id } } pageInfo { endCursor hasNextPage } } }`;
const OFFERS_BY_TOKEN_ID = `query ($tokenId: TokenId, $first: Int, $after: String) {
  list: offers(tokenId: $tokenId, first: $first, after: $after) { totalCount edges { node { id } } pageInfo { endCursor hasNextPage } } }`;
const ORDERS_OF_CONTRACT = `query ($tokenAddress: Address, $first: Int, $after: String) {
  list: orders(tokenAddress: $tokenAddress, first: $first, after: $after) { totalCount edges { node { id } } pageInfo { endCursor hasNextPage } } }`;
