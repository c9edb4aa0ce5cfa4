import { nodeId } from '../../src/common/graphql/node';
import { loadConfig } from '../../src/config';
import { saveAcceptedOffer, saveListing, saveOffer, saveOwnedAsset, saveSiblingAsset } from '../factories/market';
import { saveAsset, saveCollection } from '../factories/marketplace';
import { HttpResult, randomAddress, startServer, TestServer } from '../setup/server';

/** Webhooks may be registered on loopback; nothing is delivered. */
const WEBHOOKS = { ...loadConfig({}).webhooks, deliver: false, allowPrivate: true };

const UUID_NONE = '00000000-0000-4000-8000-000000000000';

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ webhooks: WEBHOOKS });
});
afterAll(() => server.close());

/** What one node(id) answers, with the same selection as `read` under `... on <type>`. */
async function nodeOf(id: string, type: string, fields: string, key?: string) {
  const res = await server.gql(`query ($id: ID!) { node(id: $id) { __typename id ... on ${type} { ${fields} } } }`, { id }, key);
  expect(res.body.errors).toBeUndefined();
  return res.body.data.node;
}

function data(res: HttpResult) {
  expect(res.body.errors).toBeUndefined();
  return res.body.data;
}

function expectBadRequest(res: HttpResult, field: string, mention: string) {
  // A limit on ids is checked before anything runs (400); an id's form while executing (200, a null answer).
  expect([200, 400]).toContain(res.status);
  expect(Object.values(res.body.data ?? {}).every((v) => v === null)).toBe(true);
  expect(res.body.errors).toHaveLength(1);
  expect(res.body.errors[0]).toMatchObject({ message: expect.stringContaining(mention), extensions: { code: 'BAD_REQUEST' } });
  expect(res.body.errors[0].extensions.details).toEqual([expect.objectContaining({ field })]);
}

/** A market with one object of every Node type: an asset with a trait, listed, with an offer; a sale; a webhook; an API key. */
async function market() {
  const owned = await saveOwnedAsset(server);
  const listed = await saveSiblingAsset(server, owned);
  const taker = await server.key();
  const sale = await saveAcceptedOffer(server, owned, taker);
  const listing = await saveListing(server, owned.owner.key, listed.asset.id);
  const offer = await saveOffer(server, taker.key, listed.asset.id);
  return { owned, listed, taker, sale, listing, offer };
}

describe('node(id)', () => {
  test('when node is asked for the id each type shows at its usual root, then it answers the same object', async () => {
    const { owned, listed, sale, offer } = await market();
    const admin = await server.key({ admin: true });
    const webhook = data(
      await server.gql(`mutation ($input: CreateWebhookInput!) { createWebhook(input: $input) { id } }`, { input: { url: 'http://127.0.0.1:9/hook' } }, owned.owner.key),
    ).createWebhook;
    const apiKey = data(await server.gql(`mutation ($a: Address!) { createApiKey(address: $a) { apiKey { id } } }`, { a: owned.owner.address }, admin.key)).createApiKey
      .apiKey;

    const cases: { type: string; fields: string; usual: () => Promise<{ id: string }>; key?: string }[] = [
      { type: 'Asset', fields: 'name tokenId owner status', usual: async () => data(await server.gql(`query ($id: ID!) { assetById(id: $id) { __typename id name tokenId owner status } }`, { id: owned.asset.id })).assetById },
      {
        type: 'Collection',
        fields: 'name slug contractAddress chainId',
        usual: async () =>
          data(await server.gql(`query ($a: Address!) { collection(address: $a) { __typename id name slug contractAddress chainId } }`, { a: owned.collection.contractAddress })).collection,
      },
      {
        type: 'Listing',
        fields: 'status startPrice currentPrice seller',
        usual: async () =>
          data(
            await server.gql(`query ($id: ID!) { assetById(id: $id) { listing { __typename id status startPrice currentPrice seller } } }`, { id: listed.asset.id }),
          ).assetById.listing,
      },
      { type: 'Offer', fields: 'status price taker', usual: async () => data(await server.gql(`query ($id: ID!) { offer(id: $id) { __typename id status price taker } }`, { id: offer.id })).offer },
      { type: 'Order', fields: 'status price seller buyer', usual: async () => data(await server.gql(`query ($id: ID!) { order(id: $id) { __typename id status price seller buyer } }`, { id: sale.orderId })).order },
      { type: 'Chain', fields: 'chainId name symbol', usual: async () => data(await server.gql(`{ chains { __typename id chainId name symbol } }`)).chains.find((c: { chainId: string }) => c.chainId === '137') },
      {
        type: 'Category',
        fields: 'categoryId name',
        usual: async () => data(await server.gql(`{ categories(limit: 100) { result { __typename id categoryId name } } }`)).categories.result.find((c: { categoryId: string }) => c.categoryId === 'art'),
      },
      { type: 'Tag', fields: 'tagId name', usual: async () => data(await server.gql(`{ tags(limit: 100) { result { __typename id tagId name } } }`)).tags.result.find((t: { tagId: string }) => t.tagId === 'rare') },
      {
        type: 'Trait',
        fields: 'traitType value count rarity',
        usual: async () =>
          data(await server.gql(`query ($id: ID!) { assetById(id: $id) { traits { __typename id traitType value count rarity } } }`, { id: owned.asset.id })).assetById.traits[0],
      },
      {
        type: 'MarketEvent',
        fields: 'position type occurredAt collectionId assetId data',
        usual: async () =>
          data(await server.gql(`query ($c: String) { events(collectionId: $c, limit: 1) { result { __typename id position type occurredAt collectionId assetId data } } }`, { c: owned.collection.id })).events
            .result[0],
      },
      {
        type: 'StatisticsRecord',
        fields: 'collectionId period volume totalTransactions totalHolders floorPrice',
        usual: async () =>
          data(
            await server.gql(`query ($a: Address!) { collection(address: $a) { statistics(period: D7) { __typename id collectionId period volume totalTransactions totalHolders floorPrice } } }`, {
              a: owned.collection.contractAddress,
            }),
          ).collection.statistics,
      },
      {
        type: 'Webhook',
        fields: 'url status eventTypes cursor',
        key: owned.owner.key,
        usual: async () => data(await server.gql(`query ($id: ID!) { webhook(id: $id) { __typename id url status eventTypes cursor } }`, { id: webhook.id }, owned.owner.key)).webhook,
      },
      {
        type: 'ApiKey',
        fields: 'address role prefix revokedAt',
        key: admin.key,
        usual: async () => ({ __typename: 'ApiKey', id: apiKey.id, address: owned.owner.address, role: 'USER', prefix: expect.stringMatching(/^nftgw_/), revokedAt: null }),
      },
    ];
    for (const { type, fields, usual, key } of cases) {
      const expected = await usual();
      // Three times: through graphql-js, then compiled by graphql-jit, then by the lean door.
      for (let use = 1; use <= 3; use += 1) expect({ type, use, found: await nodeOf(expected.id, type, fields, key) }).toEqual({ type, use, found: expected });
    }
  });

  test('when ids are read, then UUID-keyed objects keep their REST ids and the others are opaque, with their keys in their own fields', async () => {
    const { owned } = await market();
    const rest = await server.rest('GET', `/v1/assets/${owned.asset.tokenAddress}/${owned.asset.tokenId}`);
    const res = data(
      await server.gql(`query ($id: ID!) { assetById(id: $id) { id collectionId chain { id chainId } collection { id category { id categoryId } } } }`, { id: owned.asset.id }),
    );
    expect(res.assetById.id).toBe(rest.body.id);
    expect(res.assetById.collection.id).toBe(rest.body.collection_id);
    expect(res.assetById.chain).toEqual({ id: nodeId('Chain', '1'), chainId: '1' });
    expect(rest.body.chain.id).toBe('1');
    expect(res.assetById.chain.id).not.toBe('1');
  });

  test('when a page mixes types, then no id is shared by two types, even where their keys are equal (chain 1 and event 1)', async () => {
    const owner = await server.key();
    const collection = await saveCollection(server, owner.key, { categoryId: 'art' });
    await saveAsset(server, owner.key, collection, owner.address);
    const res = data(
      await server.gql(
        `query ($a: Address!, $c: String) {
          collection(address: $a) { __typename id chain { __typename id } category { __typename id } traits { __typename id } statistics { __typename id }
            assets { result { __typename id chain { __typename id } traits { __typename id } } } }
          events(collectionId: $c) { result { __typename id } }
          first: events(after: "0", limit: 1) { result { __typename id position } }
          chains { __typename id chainId }
          categories(limit: 100) { result { __typename id } }
          tags(limit: 100) { result { __typename id } } }`,
        { a: collection.contractAddress, c: collection.id },
      ),
    );
    const typeOfId = new Map<string, string>();
    const visit = (value: unknown): void => {
      if (Array.isArray(value)) return value.forEach(visit);
      if (!value || typeof value !== 'object') return;
      const { __typename, id } = value as { __typename?: string; id?: string };
      if (__typename && id) {
        expect(`${id} is a ${typeOfId.get(id) ?? __typename}`).toBe(`${id} is a ${__typename}`);
        typeOfId.set(id, __typename);
      }
      Object.values(value).forEach(visit);
    };
    visit(res);
    expect(new Set(typeOfId.values())).toEqual(new Set(['Collection', 'Chain', 'Category', 'Trait', 'StatisticsRecord', 'Asset', 'MarketEvent', 'Tag']));
    // The first event's position and a chain's key are both "1": their ids differ, and each refetches its own.
    expect(res.first.result[0].position).toBe('1');
    const chainOne = res.chains.find((c: { chainId: string }) => c.chainId === '1');
    expect(chainOne.id).not.toBe(res.first.result[0].id);
    expect(await nodeOf(chainOne.id, 'Chain', 'chainId')).toEqual({ __typename: 'Chain', id: chainOne.id, chainId: '1' });
    expect(await nodeOf(res.first.result[0].id, 'MarketEvent', 'position')).toEqual({ __typename: 'MarketEvent', id: res.first.result[0].id, position: '1' });
  });

  test('when the same trait is read under its asset and under its collection, then it has the same id', async () => {
    const { owned } = await market();
    const res = data(
      await server.gql(`query ($id: ID!) { assetById(id: $id) { traits { id traitType value } collection { traits { id traitType value } } } }`, { id: owned.asset.id }),
    );
    expect(res.assetById.traits).toEqual([{ id: expect.any(String), traitType: 'kind', value: 'test' }]);
    expect(res.assetById.collection.traits).toEqual(res.assetById.traits);
  });

  test('when the id is well formed but no object has it, then node is null', async () => {
    for (const id of [UUID_NONE, nodeId('Chain', '999999'), nodeId('Category', 'nope'), nodeId('MarketEvent', '999999999'), nodeId('Trait', JSON.stringify([UUID_NONE, 'a', 'b'])), nodeId('StatisticsRecord', `${UUID_NONE}:24h`)]) {
      const res = await server.gql(`query ($id: ID!) { node(id: $id) { id } }`, { id });
      expect({ id, res: res.body }).toEqual({ id, res: { data: { node: null } } });
    }
  });

  test('when the id can be no object id, then it is BAD_REQUEST naming the argument', async () => {
    for (const id of ['nope', '', 'not-a-uuid-0000-0000-000000000000', nodeId('Chain', 'x'.repeat(21)), nodeId('MarketEvent', '-1'), nodeId('StatisticsRecord', `${UUID_NONE}:2h`), Buffer.from('Foo:1').toString('base64url'), `${nodeId('Chain', '1')}=`]) {
      expectBadRequest(await server.gql(`query ($id: ID!) { node(id: $id) { id } }`, { id }), 'id', 'id');
    }
  });
});

describe('nodes(ids)', () => {
  test('when ids of several types are asked for, then the objects come in their order, null for each missing one', async () => {
    const { owned, offer, listing } = await market();
    const ids = [owned.asset.id, UUID_NONE, nodeId('Chain', '56'), offer.id, nodeId('Chain', '999999'), listing.id, owned.asset.id.toUpperCase()];
    const res = data(await server.gql(`query ($ids: [ID!]!) { nodes(ids: $ids) { __typename id } }`, { ids }));
    expect(res.nodes).toEqual([
      { __typename: 'Asset', id: owned.asset.id },
      null,
      { __typename: 'Chain', id: nodeId('Chain', '56') },
      { __typename: 'Offer', id: offer.id },
      null,
      { __typename: 'Listing', id: listing.id },
      { __typename: 'Asset', id: owned.asset.id },
    ]);
  });

  test('when one id can be no object id, then the request is BAD_REQUEST naming it by its index', async () => {
    const { owned } = await market();
    expectBadRequest(await server.gql(`query ($ids: [ID!]!) { nodes(ids: $ids) { id } }`, { ids: [owned.asset.id, 'x'] }), 'ids[1]', 'ids[1]');
  });

  test('when more than 100 ids are asked for, then it is a 400 naming the limit', async () => {
    const ids = Array.from({ length: 101 }, () => UUID_NONE);
    expectBadRequest(await server.gql(`query ($ids: [ID!]!) { nodes(ids: $ids) { id } }`, { ids }), 'ids', 'at most 100 ids');
  });

  test("when each id may bring a page of 100 assets, then the operation's estimate counts every id", async () => {
    const query = (n: number) =>
      `{ nodes(ids: [${Array.from({ length: n }, () => `"${UUID_NONE}"`).join(', ')}]) { id ... on Collection { assets(limit: 100) { result { id name owner collection { name } } } } } }`;
    const many = await server.gql(query(100));
    expect(many.status).toBe(400);
    expect(many.body.errors![0]).toMatchObject({ message: expect.stringMatching(/may return about \d+ items; the limit is 50000/), extensions: { code: 'BAD_REQUEST' } });
    expect(data(await server.gql(query(10))).nodes).toEqual(Array.from({ length: 10 }, () => null));
  });

  test('when 50 ids of mixed types are asked for, then the request costs as many statements as one of each type', async () => {
    const markets = await Promise.all(Array.from({ length: 5 }, () => market()));
    const events = data(await server.gql(`{ events(limit: 10) { result { id } } }`)).events.result.map((e: { id: string }) => e.id);
    const traitsOf = async (assetId: string) =>
      data(await server.gql(`query ($id: ID!) { assetById(id: $id) { traits { id } statistics: collection { statistics { id } } } }`, { id: assetId })).assetById;
    const idsOf = async (m: Awaited<ReturnType<typeof market>>, i: number) => {
      const read = await traitsOf(m.owned.asset.id);
      return [m.owned.asset.id, m.owned.collection.id, m.listing.id, m.offer.id, m.sale.orderId, m.sale.offerId, m.listed.asset.id, nodeId('Chain', '1'), nodeId('Category', 'art'), events[i], read.traits[0].id, read.statistics.statistics.id];
    };
    const perMarket = await Promise.all(markets.map(idsOf));
    const one = perMarket[0];
    const fifty = perMarket.flat().slice(0, 50);
    expect(fifty).toHaveLength(50);
    const query = `query ($ids: [ID!]!) { nodes(ids: $ids) { __typename id } }`;
    const single = await server.gql(query, { ids: one });
    const many = await server.gql(query, { ids: fifty });
    expect(data(many).nodes.every((n: unknown) => n !== null)).toBe(true);
    expect(many.sql).toBe(single.sql);
    // One statement finds the UUIDs' tables, then one per type: never one per id.
    expect(many.sql).toBeLessThanOrEqual(12);
  });
});

describe('who may see what', () => {
  test("when another account asks for a webhook, then node is null, as webhook(id) refuses it; its own key sees it", async () => {
    const owner = await server.key();
    const other = await server.key();
    const made = data(await server.gql(`mutation ($input: CreateWebhookInput!) { createWebhook(input: $input) { id } }`, { input: { url: 'http://127.0.0.1:9/hook' } }, owner.key));
    const id = made.createWebhook.id;
    const ask = (key?: string) => server.gql(`query ($id: ID!) { node(id: $id) { __typename id } }`, { id }, key);
    expect((await ask(owner.key)).body).toEqual({ data: { node: { __typename: 'Webhook', id } } });
    expect((await ask(other.key)).body).toEqual({ data: { node: null } });
    expect((await ask()).body).toEqual({ data: { node: null } });
    expect((await server.gql(`query ($id: ID!) { webhook(id: $id) { id } }`, { id }, other.key)).body.errors![0].extensions.code).toBe('NOT_FOUND');
  });

  test("when another account asks for an API key, then node is null; the key's account and an admin see it", async () => {
    const admin = await server.key({ admin: true });
    const address = randomAddress();
    const made = data(await server.gql(`mutation ($a: Address!) { createApiKey(address: $a) { key apiKey { id } } }`, { a: address }, admin.key)).createApiKey;
    const sibling = await server.key({ address });
    const other = await server.key();
    const ask = async (key?: string) => (await server.gql(`query ($id: ID!) { node(id: $id) { id ... on ApiKey { address } } }`, { id: made.apiKey.id }, key)).body.data.node;
    expect(await ask(made.key)).toEqual({ id: made.apiKey.id, address });
    expect(await ask(sibling.key)).toEqual({ id: made.apiKey.id, address });
    expect(await ask(admin.key)).toEqual({ id: made.apiKey.id, address });
    expect(await ask(other.key)).toBeNull();
    expect(await ask()).toBeNull();
  });
});

describe('arguments that take a key also take its id', () => {
  test("when events are read after an event's id, then they are those after its position", async () => {
    const { owned } = await market();
    const feed = data(await server.gql(`query ($c: String) { events(collectionId: $c) { result { id position } } }`, { c: owned.collection.id })).events.result;
    expect(feed.length).toBeGreaterThan(2);
    const read = async (after: string) => data(await server.gql(`query ($c: String, $after: ID) { events(collectionId: $c, after: $after) { cursor result { position } } }`, { c: owned.collection.id, after })).events;
    const byId = await read(feed[0].id);
    expect(byId).toEqual(await read(feed[0].position));
    expect(byId.result.map((e: { position: string }) => e.position)).toEqual(feed.slice(1).map((e: { position: string }) => e.position));
  });

  test("when collections are filtered by a category's or a chain's id, then they are those of its key", async () => {
    const owner = await server.key();
    await saveCollection(server, owner.key, { categoryId: 'music' });
    const list = async (variables: Record<string, unknown>) =>
      data(await server.gql(`query ($cat: String, $chain: String) { collections(categoryId: $cat, chainId: $chain, limit: 100) { result { id } } }`, variables)).collections.result;
    const byKey = await list({ cat: 'music', chain: '1' });
    expect(byKey.length).toBeGreaterThan(0);
    expect(await list({ cat: nodeId('Category', 'music'), chain: nodeId('Chain', '1') })).toEqual(byKey);
    expect(await list({ cat: nodeId('Category', 'music') })).toEqual(await list({ cat: 'music' }));
  });
});
