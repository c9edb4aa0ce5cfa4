import { getNamedType, GraphQLObjectType, isObjectType, OperationDefinitionNode, parse } from 'graphql';
import { buildAppSchema } from '../../src/app/graphql/schema';
import { planOperation } from '../../src/app/graphql/sql-plan';
import { CollectionRow, saveAsset, saveCollection } from '../factories/marketplace';
import { saveListing } from '../factories/market';
import { HttpResult, startServer, TestServer } from '../setup/server';

/**
 * Relay's connection shape beside the page envelope: every list answers `edges`, `pageInfo` and
 * `totalCount`, and takes `first` and `after` as its `limit` and `page`.
 */
let server: TestServer;
let owner: { key: string; address: string };
let collection: CollectionRow;
const SIZE = 45;

beforeAll(async () => {
  server = await startServer();
  owner = await server.key();
  collection = await saveCollection(server, owner.key);
  for (let i = 0; i < SIZE; i += 1) {
    // Names repeat (ties broken by id), token ids are a permutation of 1..45 unlike the creation order,
    // and one asset in three is listed, at prices that repeat: the others have no current price.
    const asset = await saveAsset(server, owner.key, collection, owner.address, { name: `Asset ${i % 6}`, tokenId: String(((i * 17) % SIZE) + 1) });
    if (i % 3 === 0) await saveListing(server, owner.key, asset.id, { startPrice: 1 + (i % 4) });
  }
}, 120_000);
afterAll(() => server.close());

interface Ordering {
  orderBy: string;
  direction: 'ASC' | 'DESC';
  /** The same order in SQL over `assets a` and its active listing `l`, ties by id. */
  sql: string;
}

const ORDERINGS: Ordering[] = [
  { orderBy: 'CREATED_AT', direction: 'DESC', sql: 'a.created_at DESC, a.id DESC' },
  { orderBy: 'NAME', direction: 'ASC', sql: 'a.name ASC, a.id ASC' },
  { orderBy: 'TOKEN_ID', direction: 'ASC', sql: 'a.token_id ASC, a.id ASC' },
  { orderBy: 'CURRENT_PRICE', direction: 'DESC', sql: 'l.start_price DESC NULLS LAST, a.id DESC' },
  { orderBy: 'CURRENT_PRICE', direction: 'ASC', sql: 'l.start_price ASC NULLS LAST, a.id ASC' },
];

/** The collection's asset ids in this order, read from the database. */
async function idsInDatabase(o: Ordering): Promise<string[]> {
  const rows: { id: string }[] = await server.ds.query(
    `SELECT a.id FROM assets a LEFT JOIN listings l ON l.asset_id = a.id AND l.status = 'active'
     WHERE a.collection_id = $1 ORDER BY ${o.sql}`,
    [collection.id],
  );
  return rows.map((r) => r.id);
}

interface Connection {
  totalCount: number;
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  edges: { cursor: string; node: { id: string } }[];
}

type List = 'assets' | 'collection.assets';

/** One page of the collection's assets as a connection, from the root list or through the collection. */
async function connectionPage(list: List, o: Ordering, first: number, after: string | null) {
  const variables = { first, after, orderBy: o.orderBy, direction: o.direction };
  const res =
    list === 'assets'
      ? await server.gql(ROOT_CONNECTION, { ...variables, c: collection.id })
      : await server.gql(NESTED_CONNECTION, { ...variables, address: collection.contractAddress });
  expect(res.body.errors).toBeUndefined();
  const page: Connection = list === 'assets' ? res.body.data.assets : res.body.data.collection.assets;
  return { page, sql: res.sql };
}

describe.each<List>(['assets', 'collection.assets'])('walking %s as a connection', (list) => {
  test.each(ORDERINGS)('when 45 assets are read by $orderBy $direction with first: 20 and after: endCursor, then each comes once, in order, and totalCount stays 45', async (o) => {
    const pages: Connection[] = [];
    let after: string | null = null;
    do {
      const { page } = await connectionPage(list, o, 20, after);
      pages.push(page);
      after = page.pageInfo.endCursor;
    } while (pages[pages.length - 1].pageInfo.hasNextPage && pages.length < 5);

    expect(pages.map((p) => p.edges.length)).toEqual([20, 20, 5]);
    expect(pages.map((p) => p.totalCount)).toEqual([SIZE, SIZE, SIZE]);
    expect(pages.map((p) => p.pageInfo.hasNextPage)).toEqual([true, true, false]);
    expect(pages.map((p) => p.pageInfo.hasPreviousPage)).toEqual([false, true, true]);
    for (const p of pages) {
      expect(p.pageInfo.startCursor).toBe(p.edges[0].cursor);
      expect(p.pageInfo.endCursor).toBe(p.edges[p.edges.length - 1].cursor);
    }
    expect(pages.flatMap((p) => p.edges.map((e) => e.node.id))).toEqual(await idsInDatabase(o));
  });

  test.each(ORDERINGS)('when $orderBy $direction is read after an edge in the middle of a page, then it goes on right after that edge', async (o) => {
    const expected = await idsInDatabase(o);
    const { page } = await connectionPage(list, o, 20, null);
    for (const at of [4, 13]) {
      const next = await connectionPage(list, o, 10, page.edges[at].cursor);
      expect(next.page.edges.map((e) => e.node.id)).toEqual(expected.slice(at + 1, at + 11));
      expect(next.page.totalCount).toBe(SIZE);
    }
  });
});

describe('the envelope and the connection in one selection', () => {
  test('when a page selects both shapes, then they describe the same page, and either cursor continues it', async () => {
    const res = await server.gql(BOTH_SHAPES, { c: collection.id, first: 20 });
    expect(res.body.errors).toBeUndefined();
    const page = res.body.data.assets;
    expect(page.remaining).toBe(SIZE - 20);
    expect(page.totalCount).toBe(SIZE);
    expect(page.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual(page.result.map((a: { id: string }) => a.id));
    expect(page.cursor).toBe(page.pageInfo.endCursor);

    const expected = await idsInDatabase(ORDERINGS[0]);
    // The envelope's cursor as `after`, an edge's cursor as `page`: one kind of cursor.
    const byAfter = await server.gql(BOTH_SHAPES, { c: collection.id, first: 20, after: page.cursor });
    const byPage = await server.gql(ENVELOPE, { c: collection.id, limit: 20, page: page.edges[19].cursor });
    expect(byAfter.body.data.assets.result.map((a: { id: string }) => a.id)).toEqual(expected.slice(20, 40));
    expect(byPage.body.data.assets.result.map((a: { id: string }) => a.id)).toEqual(expected.slice(20, 40));
    expect(byAfter.body.data.assets.remaining).toBe(SIZE - 40);
  });

  test('when totalCount is asked past the end (after the last edge, or a page number beyond it), then it still counts every matching item', async () => {
    const ascending = { orderBy: 'CREATED_AT', direction: 'ASC' };
    const start = await server.gql(ROOT_CONNECTION, { c: collection.id, first: 5, ...ascending });
    const rest = await server.gql(ROOT_CONNECTION, { c: collection.id, first: 50, after: start.body.data.assets.pageInfo.endCursor, ...ascending });
    const past = await server.gql(ROOT_CONNECTION, { c: collection.id, first: 5, after: rest.body.data.assets.pageInfo.endCursor, ...ascending });
    const beyond = await server.gql(
      `query ($c: String!) { assets(collectionId: $c, limit: 20, page: "9") { totalCount remaining edges { cursor } pageInfo { hasNextPage hasPreviousPage endCursor } } }`,
      { c: collection.id },
    );

    expect(rest.body.data.assets.edges).toHaveLength(SIZE - 5);
    expect(rest.body.data.assets.pageInfo.hasNextPage).toBe(false);
    expect(past.body.data.assets).toEqual({ totalCount: SIZE, edges: [], pageInfo: { hasNextPage: false, hasPreviousPage: true, startCursor: null, endCursor: null } });
    expect(beyond.body.data.assets).toEqual({ totalCount: SIZE, remaining: 0, edges: [], pageInfo: { hasNextPage: false, hasPreviousPage: true, endCursor: null } });
  });
});

describe('statements', () => {
  test('when a page is read as a connection, then it takes the statements of the same page as an envelope (counts in the page\'s statement)', async () => {
    const envelope = await server.gql(
      `query ($c: String!, $page: String) { assets(collectionId: $c, limit: 20, page: $page) { remaining cursor result { id collection { name } } } }`,
      { c: collection.id, page: null },
    );
    const connection = await server.gql(
      `query ($c: String!, $after: String) { assets(collectionId: $c, first: 20, after: $after) { totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id collection { name } } } } }`,
      { c: collection.id, after: null },
    );
    const later = await server.gql(
      `query ($c: String!, $after: String) { assets(collectionId: $c, first: 20, after: $after) { totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id collection { name } } } } }`,
      { c: collection.id, after: envelope.body.data.assets.cursor },
    );
    const laterEnvelope = await server.gql(
      `query ($c: String!, $page: String) { assets(collectionId: $c, limit: 20, page: $page) { remaining cursor result { id collection { name } } } }`,
      { c: collection.id, page: envelope.body.data.assets.cursor },
    );

    expect(envelope.sql).toBe(2);
    expect([connection.sql, later.sql]).toEqual([envelope.sql, laterEnvelope.sql]);
    expect(later.body.data.assets.totalCount).toBe(SIZE);
  });

  test('when the connections of 1 and of 3 collections are read through their owner, then the statements are the same, and each counts its own', async () => {
    const lone = await server.key();
    const only = await saveCollection(server, lone.key);
    await saveAsset(server, lone.key, only, lone.address);
    const many = await server.key();
    const sizes = [3, 0, 2];
    for (const size of sizes) {
      const c = await saveCollection(server, many.key);
      for (let i = 0; i < size; i += 1) await saveAsset(server, many.key, c, many.address);
    }

    const one = await server.gql(OWNER_CONNECTIONS, { owner: lone.address });
    const three = await server.gql(OWNER_CONNECTIONS, { owner: many.address });

    expect(one.body.errors).toBeUndefined();
    expect(three.body.errors).toBeUndefined();
    expect(three.sql).toBe(one.sql);
    const counts = three.body.data.collections.result.map((c: { assets: Connection }) => [c.assets.totalCount, c.assets.edges.length, c.assets.pageInfo.hasNextPage]);
    // Oldest collection first: 3 assets, none, 2.
    expect(counts).toEqual([
      [3, 2, true],
      [0, 0, false],
      [2, 2, false],
    ]);
  });
});

describe('refusals', () => {
  const code = (res: { body: { errors?: { extensions: { code: string; details?: { field: string }[] } }[] } }) => res.body.errors?.[0].extensions;

  test('when limit and first, or page and after, are both given, then it is BAD_REQUEST naming both', async () => {
    const limitAndFirst = await server.gql(`{ assets(limit: 5, first: 5) { totalCount } }`);
    const pageAndAfter = await server.gql(`query ($c: String!) { assets(collectionId: $c, page: "2", after: "x") { totalCount } }`, { c: collection.id });
    const nested = await server.gql(`query ($a: Address!) { collection(address: $a) { assets(limit: 2, first: 2) { totalCount } } }`, { a: collection.contractAddress });
    const feed = await server.gql(`{ events(limit: 5, first: 5) { totalCount } }`);

    for (const res of [limitAndFirst, nested, feed]) {
      expect(code(res)).toMatchObject({ code: 'BAD_REQUEST', details: [{ field: 'limit' }, { field: 'first' }] });
    }
    expect(code(pageAndAfter)).toMatchObject({ code: 'BAD_REQUEST', details: [{ field: 'page' }, { field: 'after' }] });
    expect(limitAndFirst.body.errors?.[0].message).toBe("give limit or first, not both (first is Relay's name of limit)");
  });

  test('when a nested list gives both names of an argument, by literal or variable, then the operation is refused once before it runs, not once per parent', async () => {
    const literal = await server.gql(`{ collections(limit: 3) { result { assets(limit: 2, first: 2) { totalCount } } } }`);
    const variables = await server.gql(`query ($p: String, $a: String) { collections(limit: 3) { result { assets(page: $p, after: $a) { totalCount } } } }`, { p: '2', a: 'x' });
    const nullVariable = await server.gql(`query ($n: Int) { collections(limit: 3) { result { assets(limit: 2, first: $n) { totalCount } } } }`, { n: null });

    for (const res of [literal, variables]) {
      expect(res.status).toBe(400);
      expect(res.sql).toBe(0);
      expect(res.body.data).toBeUndefined();
      expect(res.body.errors).toHaveLength(1);
    }
    expect(code(literal)).toMatchObject({ code: 'BAD_REQUEST', details: [{ field: 'limit' }, { field: 'first' }] });
    expect(literal.body.errors?.[0].message).toBe("give limit or first, not both (first is Relay's name of limit)");
    expect(code(variables)).toMatchObject({ code: 'BAD_REQUEST', details: [{ field: 'page' }, { field: 'after' }] });
    // A variable that is null gives no first (first is nullable): limit alone sizes the list.
    expect(nullVariable.status).toBe(200);
    expect(nullVariable.body.errors).toBeUndefined();
  });

  test('when after is not a cursor (a page number, garbage, a cursor of another order), then it is BAD_REQUEST naming after', async () => {
    const newestFirst = await connectionPage('assets', ORDERINGS[0], 5, null);
    const pageNumber = await server.gql(`{ assets(first: 5, after: "2") { totalCount } }`);
    const garbage = await server.gql(`{ assets(first: 5, after: "bm90LWEtY3Vyc29y") { totalCount } }`);
    const otherOrder = await server.gql(`query ($after: String) { assets(first: 5, after: $after, direction: ASC) { totalCount } }`, {
      after: newestFirst.page.pageInfo.endCursor,
    });

    for (const res of [pageNumber, garbage, otherOrder]) expect(code(res)).toMatchObject({ code: 'BAD_REQUEST', details: [{ field: 'after' }] });
    expect(garbage.body.errors?.[0].message).toBe('after must be the cursor of an edge or of a page of a previous response; "bm90LWEtY3Vyc29y" is not one');
    expect(otherOrder.body.errors?.[0].message).toMatch(/^this cursor belongs to orderBy created_at and direction desc/);
  });

  test('when first is out of range, as a literal or a variable, then the operation is refused before it runs, as limit is', async () => {
    const literal = await server.gql(`{ chains { id } assets(first: 1000) { edges { node { id } } } }`);
    const variable = await server.gql(`query ($n: Int) { chains { id } collections(first: 2) { edges { node { assets(first: $n) { totalCount } } } } }`, { n: 0 });
    const feed = await server.gql(`{ events(first: 1001) { totalCount } }`);

    expect([literal.status, variable.status, feed.status]).toEqual([400, 400, 400]);
    expect([literal.sql, variable.sql, feed.sql]).toEqual([0, 0, 0]);
    expect(code(literal)).toMatchObject({ code: 'BAD_REQUEST', details: [{ field: 'assets.first', message: 'must be an integer from 1 to 100, got 1000' }] });
    expect(code(variable)).toMatchObject({ code: 'BAD_REQUEST', details: [{ field: 'n', message: 'must be an integer from 1 to 100, got 0' }] });
    expect(code(feed)).toMatchObject({ code: 'BAD_REQUEST', details: [{ field: 'events.first', message: 'must be an integer from 1 to 1000, got 1001' }] });
  });

  test('when first sizes a list, then the cost estimate counts it as limit does', async () => {
    // 100 collections × 100 assets × 10 traits passes as limit, and is refused the same as first.
    const byLimit = await server.gql(`{ collections(limit: 100) { result { assets(limit: 100) { result { traits { value } history(limit: 10) { remaining } } } } } }`);
    const byFirst = await server.gql(`{ collections(first: 100) { edges { node { assets(first: 100) { edges { node { traits { value } history(first: 10) { totalCount } } } } } } } }`);
    expect(byFirst.status).toBe(byLimit.status);
    expect(byFirst.body.errors?.[0].message).toMatch(/^operation may return about \d+ items; the limit is 50000/);
    expect(byLimit.body.errors?.[0].message).toMatch(/^operation may return about \d+ items; the limit is 50000/);
  });
});

describe('the event feed', () => {
  test('when the feed is read with first and after: endCursor, then every event comes once, in order; edges\' cursors are positions', async () => {
    const ids: string[] = [];
    const totals: number[] = [];
    let after: string | null = null;
    for (let read = 0; read < 5; read += 1) {
      const res: HttpResult = await server.gql(FEED, { c: collection.id, first: 20, after });
      expect(res.body.errors).toBeUndefined();
      const feed = res.body.data.events;
      ids.push(...feed.edges.map((e: { cursor: string; node: { position: string } }) => {
        expect(e.cursor).toBe(e.node.position);
        return e.node.position;
      }));
      totals.push(feed.totalCount);
      expect(feed.pageInfo.hasNextPage).toBe(feed.hasMore);
      after = feed.pageInfo.endCursor;
      if (!feed.pageInfo.hasNextPage) break;
    }
    const rows: { id: string }[] = await server.ds.query(
      `SELECT position::text AS id FROM events WHERE collection_id = $1 AND type = 'asset.created' ORDER BY position`,
      [collection.id],
    );
    expect(ids).toEqual(rows.map((r) => r.id));
    expect(totals).toEqual([SIZE, SIZE, SIZE]);

    const middle = await server.gql(FEED, { c: collection.id, first: 3, after: ids[9] });
    expect(middle.body.data.events.edges.map((e: { node: { position: string } }) => e.node.position)).toEqual(ids.slice(10, 13));
    // totalCount is counted in the read's own statement.
    const uncounted = await server.gql(`query ($c: String!) { events(collectionId: $c, first: 3) { result { id } } }`, { c: collection.id });
    expect(middle.sql).toBe(uncounted.sql);
  });
});

describe('every list', () => {
  test('when the schema is read, then every page type is also a connection and every list field takes first and after', async () => {
    const schema = await buildAppSchema();
    const pages = Object.values(schema.getTypeMap()).filter(
      (t): t is GraphQLObjectType => isObjectType(t) && !t.name.startsWith('__') && Boolean(t.getFields().result) && Boolean(t.getFields().cursor),
    );
    expect(pages.length).toBeGreaterThanOrEqual(10);
    for (const page of pages) {
      const fields = page.getFields();
      const item = getNamedType(fields.result.type).name;
      expect([page.name, Object.keys(fields).filter((f) => ['edges', 'pageInfo', 'totalCount'].includes(f)).sort()]).toEqual([page.name, ['edges', 'pageInfo', 'totalCount']]);
      expect([page.name, getNamedType(fields.edges.type).name]).toEqual([page.name, `${item}Edge`]);
    }
    const lists = Object.values(schema.getTypeMap())
      .filter((t): t is GraphQLObjectType => isObjectType(t) && !t.name.startsWith('__'))
      .flatMap((t) => Object.values(t.getFields()).map((f) => ({ at: `${t.name}.${f.name}`, field: f })))
      .filter(({ field }) => pages.includes(getNamedType(field.type) as GraphQLObjectType) && field.args.some((a) => a.name === 'limit'));
    expect(lists.length).toBeGreaterThanOrEqual(14);
    for (const { at, field } of lists) {
      expect([at, field.args.filter((a) => ['first', 'after'].includes(a.name)).map((a) => a.name).sort()]).toEqual([at, ['after', 'first']]);
    }
  });

  test('when a document selects the connection (edges, pageInfo, totalCount), then it gets no SQL plan', async () => {
    const schema = await buildAppSchema();
    const plan = (text: string) => planOperation(schema, parse(text).definitions[0] as OperationDefinitionNode);
    expect(plan('{ assets(limit: 2) { result { tokenId } } }')).toBeDefined();
    expect(plan('{ collections(limit: 2) { result { assets(limit: 2) { result { tokenId } } } } }')).toBeDefined();
    for (const text of [
      '{ assets(limit: 2) { edges { node { tokenId } } } }',
      '{ assets(limit: 2) { totalCount result { tokenId } } }',
      '{ assets(limit: 2) { pageInfo { endCursor } result { tokenId } } }',
      '{ collections(limit: 2) { result { assets(limit: 2) { edges { node { tokenId } } } } } }',
    ]) {
      expect([text, plan(text)]).toEqual([text, undefined]);
    }
  });

  test('when a known document gives first or after, then the resolvers answer it every time (a plan would take one statement)', async () => {
    const read = async (query: string, variables: Record<string, unknown>) => {
      const answers = [];
      for (let i = 0; i < 3; i += 1) answers.push(await server.gql(query, variables));
      return answers.map((a) => a.sql);
    };
    const byLimit = await read(`query ($c: String!) { assets(collectionId: $c, limit: 2) { result { id collection { name } } } }`, { c: collection.id });
    const byFirst = await read(`query ($c: String!) { assets(collectionId: $c, first: 2) { result { id collection { name } } } }`, { c: collection.id });
    const nested = await read(`query ($a: Address!) { collection(address: $a) { name assets(first: 2) { result { id collection { name } } } } }`, {
      a: collection.contractAddress,
    });

    expect([byLimit[0], byLimit[2]]).toEqual([2, 1]);
    expect(byFirst).toEqual([2, 2, 2]);
    expect(nested[2]).toBe(nested[0]);
    expect(nested[2]).toBeGreaterThan(1);
  });

  test('when statistics are paged as a connection, then an edge\'s cursor continues after its record (records carry no id of their own)', async () => {
    const first = await server.gql(`{ statistics(first: 3, period: ALL) { totalCount edges { cursor node { collectionId } } } }`);
    expect(first.body.errors).toBeUndefined();
    const edges = first.body.data.statistics.edges;
    const next = await server.gql(`query ($after: String) { statistics(first: 2, after: $after, period: ALL) { edges { node { collectionId } } } }`, { after: edges[0].cursor });
    const byPage = await server.gql(`{ statistics(limit: 1, page: "2", period: ALL) { result { collectionId } } }`);
    expect(next.body.errors).toBeUndefined();
    expect(next.body.data.statistics.edges.map((e: { node: { collectionId: string } }) => e.node.collectionId)).toEqual(
      edges.slice(1, 3).map((e: { node: { collectionId: string } }) => e.node.collectionId),
    );
    expect(byPage.body.data.statistics.result[0].collectionId).toBe(edges[1].node.collectionId);
  });
});

const CONNECTION = 'fragment Connection on AssetPage { totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor } edges { cursor node { id name } } }';

const ROOT_CONNECTION = /* GraphQL */ `
  query ($c: String!, $first: Int, $after: String, $orderBy: AssetOrderBy!, $direction: SortDirection!) {
    assets(collectionId: $c, first: $first, after: $after, orderBy: $orderBy, direction: $direction) { ...Connection }
  }
  ${CONNECTION}`;

const NESTED_CONNECTION = /* GraphQL */ `
  query ($address: Address!, $first: Int, $after: String, $orderBy: AssetOrderBy!, $direction: SortDirection!) {
    collection(address: $address) { assets(first: $first, after: $after, orderBy: $orderBy, direction: $direction) { ...Connection } }
  }
  ${CONNECTION}`;

const BOTH_SHAPES = /* GraphQL */ `
  query ($c: String!, $first: Int, $after: String) {
    assets(collectionId: $c, first: $first, after: $after) {
      cursor remaining result { id }
      totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id } }
    }
  }`;

const ENVELOPE = /* GraphQL */ `
  query ($c: String!, $limit: Int!, $page: String) {
    assets(collectionId: $c, limit: $limit, page: $page) { cursor remaining result { id } }
  }`;

const OWNER_CONNECTIONS = /* GraphQL */ `
  query ($owner: Address!) {
    collections(ownerAddress: $owner, orderBy: CREATED_AT, direction: ASC) {
      result { assets(first: 2) { totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id } } } }
    }
  }`;

const FEED = /* GraphQL */ `
  query ($c: String!, $first: Int, $after: ID) {
    events(collectionId: $c, types: ["asset.created"], first: $first, after: $after) {
      hasMore totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id position type } }
    }
  }`;
