import { buildASTSchema, DocumentNode, GraphQLSchema, ObjectTypeDefinitionNode, OperationDefinitionNode, parse, printSchema, visit } from 'graphql';
import { buildAppSchema } from '../src/app/graphql/schema';
import { planOperation } from '../src/app/graphql/sql-plan';
import { nodeId } from '../src/common/graphql/node';
import { startServer, TestServer } from './setup/server';
import { saveAsset, saveCollection, CollectionRow } from './factories/marketplace';
import { OwnedAsset, Party, saveAcceptedOffer, saveListing, saveOffer, saveOwnedAsset, saveSiblingAsset } from './factories/market';

/**
 * SQL plans (src/app/graphql/sql-plan/): from its third use, a known query whose selection PostgreSQL
 * can answer whole runs as one statement that builds the JSON. The first answer of each document here
 * comes from the resolvers (graphql-js), the third from the plan: they must be the same bytes. Each
 * planned document reads a nested relation, which the resolvers need a second statement for, so an
 * answer in one statement shows that the plan answered it.
 */
let server: TestServer;
let collection: CollectionRow;
let second: CollectionRow;
let owner: string;
const BIG_TOKEN = ((1n << 256n) - 1n).toString();
const ODD_NAME = 'Quote " backslash \\ newline \n tab \t ctrl \u0001 émoji 🐙 </script>';

beforeAll(async () => {
  server = await startServer();
  const { key, address } = await server.key();
  owner = address;
  collection = await saveCollection(server, key, {
    name: ODD_NAME,
    totalSupply: 1000,
    description: { text: 'Deep "json"', n: 12.5, list: [1, 'two', null, { k: true }], unicode: '日本' },
    twitterUsername: 'plans',
    discordUrl: 'https://discord.example/p',
  });
  second = await saveCollection(server, key, { name: 'Second of the owner' });
  await saveAsset(server, key, collection, address, { name: 'Same name', tokenId: '7' });
  await saveAsset(server, key, collection, address, { name: 'Same name', tokenId: BIG_TOKEN, animationUrl: 'https://example.com/a.mp4' });
  await saveAsset(server, key, collection, address, { name: ODD_NAME, tokenId: '42', metadata: { attributes: [{ trait_type: 'x', value: 'y "z"' }], nested: { a: [1, 2.5] } } });
  await saveAsset(server, key, collection, address, { name: 'Alpha', tokenId: '8', externalLink: 'https://example.com/e' });
}, 60_000);
afterAll(() => server.close());

async function post(query: string, variables: Record<string, unknown> = {}) {
  const res = await fetch(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
  return { status: res.status, text: await res.text(), sql: Number(res.headers.get('x-sql-statements')) };
}

/** The first answer (resolvers) and the third (lean path, with the plan when there is one). */
async function firstAndThird(query: string, variables: Record<string, unknown> = {}) {
  const first = await post(query, variables);
  await post(query, variables);
  const third = await post(query, variables);
  return { first, third };
}

const ASSET_FIELDS = 'id collectionId chainId tokenAddress tokenId name description imageUrl animationUrl externalLink metadata owner createdAt updatedAt';
const COLLECTION_FIELDS =
  'id chainId contractAddress owner totalSupply categoryId name slug description imageUrl discordUrl telegramUrl externalUrl twitterUsername instagramUsername status createdAt updatedAt';

describe('queries answered by one JSON-building statement', () => {
  test('when collections with their assets are read with every plain field, then the planned answer is the same bytes in one statement', async () => {
    const query = `query ($owner: Address!) {
      __typename
      collections(limit: 5, orderBy: NAME, direction: ASC, ownerAddress: $owner) {
        __typename
        result { __typename ${COLLECTION_FIELDS} assets(limit: 3, orderBy: TOKEN_ID, direction: DESC) { __typename result { __typename ${ASSET_FIELDS} } } }
      }
    }`;
    const { first, third } = await firstAndThird(query, { owner });
    expect(first.status).toBe(200);
    expect(first.sql).toBe(2);
    expect(third.sql).toBe(1);
    expect(third.text).toBe(first.text);
    const data = JSON.parse(third.text).data;
    expect(data.collections.result.map((c: { name: string }) => c.name)).toEqual([ODD_NAME, 'Second of the owner']);
    expect(data.collections.result[0].assets.result.map((a: { tokenId: string }) => a.tokenId)).toEqual([BIG_TOKEN, '42', '8']);
    expect(data.collections.result[0].description.unicode).toBe('日本');
    expect(data.collections.result[0].status).toBe('UNVERIFIED');
    expect(data.collections.result[1].assets.result).toEqual([]);
  });

  test('when collections with their assets are paged with cursor and remaining (one row per collection), then the same bytes, and the cursor leads on', async () => {
    const query = `query ($owner: Address!, $limit: Int!) {
      collections(limit: $limit, orderBy: NAME, direction: DESC, ownerAddress: $owner) {
        cursor remaining result { name assets(limit: 2, orderBy: TOKEN_ID, direction: ASC) { remaining cursor result { tokenId } } }
      }
    }`;
    const { first, third } = await firstAndThird(query, { owner, limit: 1 });
    expect(third.sql).toBe(1);
    expect(third.text).toBe(first.text);
    const page = JSON.parse(third.text).data.collections;
    expect(page.remaining).toBe(1);
    expect(page.cursor).not.toBeNull();
    // The planned cursor continues where the resolvers' first page ends.
    const next = `query ($owner: Address!, $page: String!) { collections(limit: 1, page: $page, orderBy: NAME, direction: DESC, ownerAddress: $owner) { remaining result { name } } }`;
    const after = JSON.parse((await post(next, { owner, page: page.cursor })).text).data.collections;
    expect(after).toEqual({ remaining: 0, result: [{ name: page.result[0].name === ODD_NAME ? 'Second of the owner' : ODD_NAME }] });
    // A page with nothing on it: the count is 0, in the same one statement.
    const none = await firstAndThird(query, { owner: '0x00000000000000000000000000000000000000ee', limit: 3 });
    expect(none.third.sql).toBe(1);
    expect(none.third.text).toBe(none.first.text);
    expect(JSON.parse(none.third.text).data.collections).toEqual({ cursor: null, remaining: 0, result: [] });
  });

  test('when assets of a collection are read by name with aliases and their collection, then ties and aliases come out as the resolvers give them', async () => {
    const query = `query ($c: String!) {
      page: assets(collectionId: $c, orderBy: NAME, direction: ASC, limit: 4) {
        result { token: tokenId label: name metadata createdAt collection { id name description totalSupply } owner }
      }
    }`;
    const { first, third } = await firstAndThird(query, { c: collection.id.toUpperCase() });
    expect(first.sql).toBe(2);
    expect(third.sql).toBe(1);
    expect(third.text).toBe(first.text);
    expect(JSON.parse(third.text).data.page.result.map((a: { label: string }) => a.label)).toEqual(['Alpha', 'Same name', 'Same name', ODD_NAME].sort());
  });

  test('when one asset is read by a 256-bit token id with its collection, beside other roots, then the answer is the same bytes in one statement', async () => {
    const query = `query ($a: Address!, $t: TokenId!, $c: String!) {
      asset(tokenAddress: $a, tokenId: $t) { ${ASSET_FIELDS} collection { ${COLLECTION_FIELDS} } }
      again: asset(tokenAddress: $a, tokenId: "42", chainId: "1") { name tokenId }
      assets(collectionId: $c, limit: 1, orderBy: TOKEN_ID, direction: ASC) { result { tokenId } }
    }`;
    const { first, third } = await firstAndThird(query, { a: collection.contractAddress.toUpperCase().replace('0X', '0x'), t: BIG_TOKEN, c: collection.id });
    expect(first.status).toBe(200);
    expect(third.sql).toBe(1);
    expect(third.text).toBe(first.text);
    const data = JSON.parse(third.text).data;
    expect(data.asset.tokenId).toBe(BIG_TOKEN);
    expect(data.asset.animationUrl).toBe('https://example.com/a.mp4');
    expect(data.again.name).toBe(ODD_NAME);
    expect(data.assets.result).toEqual([{ tokenId: '7' }]);
  });

  test("when chains and categories are read by their ids and keys, and collections filtered by a category's id, then the planned answer is the same bytes in one statement", async () => {
    const other = await server.key();
    const categorised = await saveCollection(server, other.key, { name: 'Categorised', categoryId: 'gaming' });
    await saveAsset(server, other.key, categorised, other.address, { tokenId: '1' });
    const query = `query ($o: Address!, $cat: String) {
      collections(ownerAddress: $o, categoryId: $cat, limit: 5, orderBy: NAME, direction: ASC) {
        result { name chain { id chainId name } category { __typename id categoryId name } assets(limit: 2, orderBy: TOKEN_ID, direction: ASC) { result { chain { id chainId } } } }
      }
    }`;
    for (const cat of ['gaming', nodeId('Category', 'gaming')]) {
      const { first, third } = await firstAndThird(query, { o: other.address, cat });
      expect(third.sql).toBe(1);
      expect(third.text).toBe(first.text);
      expect(JSON.parse(third.text).data.collections.result).toEqual([
        {
          name: 'Categorised',
          chain: { id: nodeId('Chain', '1'), chainId: '1', name: 'Ethereum' },
          category: { __typename: 'Category', id: nodeId('Category', 'gaming'), categoryId: 'gaming', name: 'Gaming' },
          assets: { result: [{ chain: { id: nodeId('Chain', '1'), chainId: '1' } }] },
        },
      ]);
    }
  });

  test("when an account's assets and collections are read (the read models' pages of an account), then the planned answer is the same bytes in one statement", async () => {
    const query = `query ($a: Address!) {
      account(address: $a) {
        __typename address
        assets(limit: 3, orderBy: TOKEN_ID, direction: DESC) { remaining cursor result { ${ASSET_FIELDS} collection { name } } }
        named: assets(limit: 2, orderBy: NAME, minPrice: "0") { remaining result { tokenId } }
        collections(limit: 5, orderBy: NAME, direction: ASC) { remaining result { name owner assets(limit: 2, orderBy: TOKEN_ID, direction: ASC) { result { tokenId } } } }
      }
    }`;
    const { first, third } = await firstAndThird(query, { a: owner.toUpperCase().replace('0X', '0x') });
    expect(first.status).toBe(200);
    expect(first.sql).toBeGreaterThan(1);
    expect(third.sql).toBe(1);
    expect(third.text).toBe(first.text);
    const { account } = JSON.parse(third.text).data;
    expect(account.assets.result.map((a: { tokenId: string }) => a.tokenId)).toEqual([BIG_TOKEN, '42', '8']);
    expect(account.assets.remaining).toBe(1);
    expect(account.named).toEqual({ remaining: 0, result: [] });
    expect(account.collections.result.map((c: { name: string }) => c.name)).toEqual([ODD_NAME, 'Second of the owner']);
    // An address with nothing is an empty account, planned too.
    const empty = await firstAndThird(query, { a: `0x${'ab'.repeat(20)}` });
    expect(empty.third.sql).toBe(1);
    expect(empty.third.text).toBe(empty.first.text);
    expect(JSON.parse(empty.third.text).data.account.collections).toEqual({ remaining: 0, result: [] });
  });
});

describe('where the resolvers must answer, the plan steps aside', () => {
  const withoutRequestId = (text: string) => text.replace(/"requestId":"[^"]+"/g, '"requestId":"-"');

  test('when an asset is not found, then the error is the resolvers\' own, every time', async () => {
    const query = `query ($a: Address!) { asset(tokenAddress: $a, tokenId: "999999") { name collection { name } } }`;
    const { first, third } = await firstAndThird(query, { a: collection.contractAddress });
    expect(first.status).toBe(200);
    expect(JSON.parse(first.text).errors[0].extensions.code).toBe('NOT_FOUND');
    expect(withoutRequestId(third.text)).toBe(withoutRequestId(first.text));
  });

  test('when the assets of an unknown collection id or of an empty collection are asked, then NOT_FOUND and an empty page as before', async () => {
    const query = `query ($c: String!) { assets(collectionId: $c, limit: 5) { result { name collection { name } } } }`;
    for (const c of ['00000000-0000-4000-8000-000000000000', second.id]) {
      const { first, third } = await firstAndThird(query, { c });
      expect(withoutRequestId(third.text)).toBe(withoutRequestId(first.text));
    }
    expect(JSON.parse((await post(query, { c: '00000000-0000-4000-8000-000000000000' })).text).errors[0].extensions.code).toBe('NOT_FOUND');
    expect(JSON.parse((await post(query, { c: second.id })).text).data.assets.result).toEqual([]);
  });

  test('when a known document gets a bad limit, a later page or includeAssets: false, then the answers are the resolvers\'', async () => {
    const query = `query ($owner: Address!, $limit: Int!, $page: String, $include: Boolean!) {
      collections(ownerAddress: $owner, limit: $limit, page: $page, includeAssets: $include, orderBy: NAME, direction: ASC) {
        result { name assets(limit: 2) { result { name } } }
      }
    }`;
    await firstAndThird(query, { owner, limit: 1, page: null, include: true });
    const bad = await post(query, { owner, limit: 0, page: null, include: true });
    expect(JSON.parse(bad.text).errors[0].extensions.code).toBe('BAD_REQUEST');
    const later = JSON.parse((await post(query, { owner, limit: 1, page: '2', include: true })).text);
    expect(later.data.collections.result).toEqual([{ name: 'Second of the owner', assets: { result: [] } }]);
    const without = JSON.parse((await post(query, { owner, limit: 2, page: null, include: false })).text);
    expect(without.data.collections.result).toEqual([
      { name: ODD_NAME, assets: null },
      { name: 'Second of the owner', assets: null },
    ]);
  });

  test('when a selection reads what a plan does not cover (remaining, a resolved field), then the resolvers answer it', async () => {
    const query = `query ($c: String!) { assets(collectionId: $c, limit: 2) { remaining result { name status } } }`;
    const { first, third } = await firstAndThird(query, { c: collection.id });
    expect(third.text).toBe(first.text);
    expect(JSON.parse(third.text).data.assets.remaining).toBe(2);
  });

  test('when SQL plans are off, then the same document takes the resolvers\' statements', async () => {
    const off = await startServer({ sqlPlans: false });
    try {
      const query = `query ($c: String!) { assets(collectionId: $c, limit: 2) { result { name collection { name } } } }`;
      const answers = [];
      for (let i = 0; i < 3; i += 1) {
        const res = await fetch(`${off.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables: { c: collection.id } }) });
        answers.push({ text: await res.text(), sql: res.headers.get('x-sql-statements') });
      }
      expect(answers.map((a) => a.sql)).toEqual(['2', '2', '2']);
      expect(answers[2].text).toBe(answers[0].text);
      expect(answers[2].text).toBe((await firstAndThird(query, { c: collection.id })).third.text);
    } finally {
      await off.close();
    }
  });

  test('when planned queries run in parallel with writes to the same collection, then each answer is whole and ordered', async () => {
    const { key } = await server.key({ address: owner });
    const query = `query ($c: String!) { assets(collectionId: $c, orderBy: TOKEN_ID, direction: ASC, limit: 100) { result { tokenId collection { id } } } }`;
    await firstAndThird(query, { c: collection.id });
    const writes = Array.from({ length: 5 }, (_, i) => saveAsset(server, key, collection, owner, { tokenId: String(100 + i) }));
    const reads = Array.from({ length: 20 }, () => post(query, { c: collection.id }));
    await Promise.all(writes);
    for (const read of await Promise.all(reads)) {
      expect(read.status).toBe(200);
      expect(read.sql).toBe(1);
      const ids = JSON.parse(read.text).data.assets.result.map((a: { tokenId: string; collection: { id: string } }) => {
        expect(a.collection.id).toBe(collection.id);
        return BigInt(a.tokenId);
      });
      expect(ids.length).toBeGreaterThanOrEqual(4);
      expect([...ids].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0))).toEqual(ids);
    }
  });
});

describe('plans by an allow-list of arguments', () => {
  /**
   * The app's schema as SDL, with one more argument on a field when asked: a schema change that the planner
   * has not learned. Both are built from the same text, so only the argument tells them apart.
   */
  async function schemaFromSdl(change?: { typeName: string; fieldName: string }): Promise<GraphQLSchema> {
    let document = parse(printSchema(await buildAppSchema()));
    if (change) {
      let typeName = '';
      document = visit(document, {
        ObjectTypeDefinition: { enter: (node) => void (typeName = node.name.value) },
        FieldDefinition: (node) => {
          if (typeName !== change.typeName || node.name.value !== change.fieldName) return undefined;
          const argument = parse('type X { f(nameContains: String): Int }') as DocumentNode;
          const added = (argument.definitions[0] as ObjectTypeDefinitionNode).fields![0].arguments![0];
          return { ...node, arguments: [...(node.arguments ?? []), added] };
        },
      });
    }
    return buildASTSchema(document);
  }

  const operationOf = (text: string) => parse(text).definitions[0] as OperationDefinitionNode;

  test.each([
    ['Query', 'assets', '{ assets(limit: 2) { result { tokenId } } }'],
    ['Query', 'collections', '{ collections(limit: 2) { result { name } } }'],
    ['Query', 'asset', '{ asset(tokenAddress: "0x0000000000000000000000000000000000000001", tokenId: "1") { name } }'],
    ['Collection', 'assets', '{ collections(limit: 2) { result { assets(limit: 2) { result { tokenId } } } } }'],
    ['Asset', 'listing', '{ assets(limit: 2) { result { listing { id } } } }'],
  ])('when %s.%s takes an argument the planner does not read, then its documents get no plan (the resolvers answer)', async (typeName, fieldName, text) => {
    expect(planOperation(await schemaFromSdl(), operationOf(text))).toBeDefined();
    expect(planOperation(await schemaFromSdl({ typeName, fieldName }), operationOf(text))).toBeUndefined();
  });
});

const withoutRequestId = (text: string) => text.replace(/"requestId":"[^"]*"/g, '"requestId":""');

describe("a frontend's pages as Apollo Client writes them (fragments, __typename, ids)", () => {
  const HEADER = 'fragment CollectionHeader on Collection { __typename id name slug contractAddress chainId imageUrl owner }';
  const LISTING = 'fragment ListingPrice on Listing { __typename id orderType currentPrice currentPriceDecimal seller closingDate }';
  const OFFER = 'fragment OfferRow on Offer { __typename id kind price priceDecimal taker status quantity filled tokenId assetId startTime endTime createdAt }';
  const SALE = `fragment SaleRow on Order { __typename id price priceDecimal buyer seller unit status listingId createdAt asset { __typename id tokenId name imageUrl status collection { ...CollectionHeader } } }`;
  let market: { owned: OwnedAsset; taker: Party; sold: OwnedAsset };

  beforeAll(async () => {
    const owned = await saveOwnedAsset(server);
    const taker = await server.key();
    const bidder = await server.key();
    await saveListing(server, owned.owner.key, owned.asset.id, { startPrice: '2.000000000000000001' });
    await saveOffer(server, taker.key, owned.asset.id, { price: '0.100000000000000001' });
    await saveOffer(server, bidder.key, owned.asset.id, { price: 1.25 });
    const sold = await saveSiblingAsset(server, owned);
    await saveAcceptedOffer(server, sold, taker, 3);
    market = { owned, taker, sold };
  }, 60_000);

  test('when an asset page reads the asset, its collection, its listing and its newest offers, then the planned answer is the same bytes in one statement', async () => {
    const query = `query AssetPage($tokenAddress: Address!, $tokenId: TokenId!) {
      asset(tokenAddress: $tokenAddress, tokenId: $tokenId) { __typename id tokenId name owner status collection { ...CollectionHeader } listing { ...ListingPrice } }
      offers(tokenAddress: $tokenAddress, tokenId: $tokenId, orderBy: CREATED_AT, direction: DESC, limit: 10) { __typename cursor remaining result { ...OfferRow asset { id name } } }
    }
    ${HEADER} ${LISTING} ${OFFER}`;
    const { first, third } = await firstAndThird(query, { tokenAddress: market.owned.asset.tokenAddress, tokenId: market.owned.asset.tokenId });
    expect(first.status).toBe(200);
    expect(first.sql).toBeGreaterThan(1);
    expect(third.sql).toBe(1);
    expect(third.text).toBe(first.text);
    const data = JSON.parse(third.text).data;
    expect(data.offers.result.map((o: { priceDecimal: string }) => o.priceDecimal)).toEqual(['1.25', '0.100000000000000001']);
    expect(data.asset.listing.currentPriceDecimal).toBe('2.000000000000000001');
  });

  test("when an asset's, its collection's and its seller's listings are read (the listing read model's pages), then the planned answer is the same bytes in one statement", async () => {
    const query = `query Listings($tokenAddress: Address!, $tokenId: TokenId!, $seller: Address!) {
      asset(tokenAddress: $tokenAddress, tokenId: $tokenId) {
        listings(limit: 5, orderBy: CREATED_AT) {
          remaining cursor
          result { ...ListingPrice name tokenId tokenAddress status startPrice chain { chainId } currency { symbol decimals } fees { type basisPoints } }
        }
        collection { listings(limit: 1, orderBy: LISTING_TIME, status: ACTIVE) { remaining cursor result { id name chain { name } } } }
      }
      account(address: $seller) { address listings(limit: 2, orderBy: CREATED_AT, direction: ASC) { remaining result { ...ListingPrice tokenId } } }
    }
    ${LISTING}`;
    const variables = { tokenAddress: market.owned.asset.tokenAddress, tokenId: market.owned.asset.tokenId, seller: market.owned.owner.address };
    const { first, third } = await firstAndThird(query, variables);
    expect(first.status).toBe(200);
    expect(first.sql).toBeGreaterThan(1);
    expect(third.sql).toBe(1);
    expect(third.text).toBe(first.text);
    const { asset, account } = JSON.parse(third.text).data;
    expect(asset.listings.result.map((l: { currentPriceDecimal: string; status: string }) => [l.currentPriceDecimal, l.status])).toEqual([['2.000000000000000001', 'ACTIVE']]);
    expect(asset.collection.listings.remaining).toBe(0);
    expect(account.listings.result).toHaveLength(1);
  });

  test('when an asset page reads its offers through asset { offers }, then the planned answer is the same bytes in one statement, collection offers included', async () => {
    const other = await saveOwnedAsset(server);
    const collector = await server.key();
    await saveOffer(server, collector.key, other.asset.id, { price: 9 });
    await saveOffer(server, collector.key, null as unknown as string, { collectionId: market.owned.collection.id, price: '0.5' });
    const query = `query AssetPage($tokenAddress: Address!, $tokenId: TokenId!, $status: OfferStatus) {
      asset(tokenAddress: $tokenAddress, tokenId: $tokenId) {
        __typename id tokenId name owner status collection { ...CollectionHeader } listing { ...ListingPrice }
        offers(orderBy: CREATED_AT, direction: DESC, limit: 10) { __typename cursor remaining result { ...OfferRow asset { id name } } }
        best: offers(orderBy: PRICE, direction: DESC, limit: 2, status: $status, kind: ITEM) { cursor result { priceDecimal } }
      }
    }
    ${HEADER} ${LISTING} ${OFFER}`;
    const { first, third } = await firstAndThird(query, { tokenAddress: market.owned.asset.tokenAddress, tokenId: market.owned.asset.tokenId, status: 'ACTIVE' });
    expect(first.status).toBe(200);
    expect(first.sql).toBeGreaterThan(1);
    expect(third.sql).toBe(1);
    expect(third.text).toBe(first.text);
    const { asset } = JSON.parse(third.text).data;
    expect(asset.offers.result.map((o: { kind: string; priceDecimal: string }) => [o.kind, o.priceDecimal])).toEqual([
      ['COLLECTION', '0.5'],
      ['ITEM', '1.25'],
      ['ITEM', '0.100000000000000001'],
    ]);
    expect(asset.best).toEqual({ cursor: null, result: [{ priceDecimal: '1.25' }, { priceDecimal: '0.100000000000000001' }] });
  });

  test('when recent sales are read with their asset and its collection, then the planned answer is the same bytes in one statement', async () => {
    const query = `query RecentSales($owner: Address!) { orders(ownerId: $owner, orderBy: CREATED_AT, direction: DESC, limit: 20) { __typename cursor result { ...SaleRow } } }
    ${SALE} ${HEADER}`;
    const { first, third } = await firstAndThird(query, { owner: market.taker.address });
    expect(first.status).toBe(200);
    expect(first.sql).toBeGreaterThan(1);
    expect(third.sql).toBe(1);
    expect(third.text).toBe(first.text);
    const [sale] = JSON.parse(third.text).data.orders.result;
    expect([sale.priceDecimal, sale.buyer, sale.asset.id, sale.asset.collection.id]).toEqual(['3', market.taker.address, market.sold.asset.id, market.sold.collection.id]);
  });

  test("when an account's offers and orders are read by its part in them (role), then the planned answer is the same bytes in one statement", async () => {
    const query = `query ($a: Address!) {
      account(address: $a) {
        made: offers(orderBy: PRICE, direction: DESC) { cursor remaining result { ...OfferRow } }
        received: offers(role: RECEIVED, limit: 1) { cursor remaining result { ...OfferRow asset { id } } }
        bought: orders(role: BOUGHT) { remaining result { ...SaleRow } }
        sold: orders(role: SOLD, orderBy: PRICE) { remaining result { id } }
        any: orders(limit: 1, direction: ASC) { cursor remaining result { id price } }
      }
    }
    ${OFFER} ${SALE} ${HEADER}`;
    const answers: Record<string, { remaining: number; result: unknown[] }>[] = [];
    for (const a of [market.taker.address, market.owned.owner.address]) {
      // A document of its own per account: its first answer is the resolvers'.
      const { first, third } = await firstAndThird(`${query}\n# ${a}`, { a });
      expect(first.status).toBe(200);
      expect(first.sql).toBeGreaterThan(1);
      expect(third.sql).toBe(1);
      expect(third.text).toBe(first.text);
      answers.push(JSON.parse(third.text).data.account);
    }
    const count = (page: { remaining: number; result: unknown[] }) => page.remaining + page.result.length;
    const [taker, owner] = answers;
    // The taker made two offers (one accepted: it bought the sibling) and received none (its own offer is not received).
    expect([count(taker.made), count(taker.received), count(taker.bought), count(taker.sold), count(taker.any)]).toEqual([2, 0, 1, 0, 1]);
    // The owner received the taker's and the bidder's offers on the asset it still owns, and sold the sibling.
    expect([count(owner.made), count(owner.received), count(owner.bought), count(owner.sold), count(owner.any)]).toEqual([0, 2, 0, 1, 1]);
  });

  test('when offers are filtered by status, kind and collection, or the collection is unknown, then every use answers as the resolvers do', async () => {
    const query = `query ($c: String, $status: OfferStatus, $kind: OfferKind) { offers(collectionId: $c, status: $status, kind: $kind, orderBy: PRICE, direction: ASC, limit: 1) { cursor remaining result { id price status } } }`;
    const cases: Record<string, unknown>[] = [
      { c: market.owned.collection.id, status: 'ACTIVE', kind: 'ITEM' },
      { c: market.owned.collection.id, status: 'ACCEPTED' },
      { c: market.owned.collection.id, status: 'EXPIRED' },
      { c: '00000000-0000-4000-8000-000000000000' },
    ];
    for (const variables of cases) {
      const { first, third } = await firstAndThird(query, variables);
      expect(withoutRequestId(third.text)).toBe(withoutRequestId(first.text));
    }
    const { third } = await firstAndThird(query, cases[0]);
    expect(JSON.parse(third.text).data.offers).toMatchObject({ remaining: 1, result: [{ price: 0.1, status: 'ACTIVE' }] });
    expect(JSON.parse((await firstAndThird(query, cases[3])).third.text).errors[0].extensions.code).toBe('NOT_FOUND');
  });
});
