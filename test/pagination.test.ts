import { startServer, TestServer } from './setup/server';
import { CollectionRow, saveAsset, saveCollection } from './factories/marketplace';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

type Door = 'rest' | 'graphql';
type Direction = 'asc' | 'desc';
type OrderBy = 'created_at' | 'name' | 'token_id';

interface ListRequest {
  collectionId: string;
  limit: number;
  page?: string;
  direction?: Direction;
  orderBy?: OrderBy;
}

interface Item {
  id: string;
  name: string;
  tokenId: string;
}

interface Listed {
  /** HTTP status for REST, 200 or the status of the GraphQL error code for GraphQL. */
  status: number;
  code?: string;
  cursor: string | null;
  remaining: number;
  result: Item[];
}

const STATUS_OF_CODE: Record<string, number> = { BAD_REQUEST: 400, NOT_FOUND: 404, VALIDATION_FAILED: 422 };

/** One page of a collection's assets, through GET /v1/assets or the GraphQL `assets` query, in one shape. */
async function listAssets(door: Door, q: ListRequest): Promise<Listed> {
  if (door === 'rest') {
    const params = new URLSearchParams({ collection_id: q.collectionId, limit: String(q.limit) });
    if (q.page !== undefined) params.set('page', q.page);
    if (q.direction) params.set('direction', q.direction);
    if (q.orderBy) params.set('order_by', q.orderBy);
    const res = await server.rest('GET', `/v1/assets?${params}`);
    if (res.status !== 200) return { status: res.status, code: res.body.error?.code, cursor: null, remaining: 0, result: [] };
    return {
      status: 200,
      cursor: res.body.cursor,
      remaining: res.body.remaining,
      result: res.body.result.map((a: { id: string; name: string; token_id: string }) => ({ id: a.id, name: a.name, tokenId: a.token_id })),
    };
  }
  const res = await server.gql(ASSETS, {
    collectionId: q.collectionId,
    limit: q.limit,
    page: q.page,
    direction: q.direction?.toUpperCase(),
    orderBy: q.orderBy?.toUpperCase(),
  });
  if (res.body.errors) {
    const code = res.body.errors[0].extensions?.code;
    return { status: STATUS_OF_CODE[code] ?? 500, code, cursor: null, remaining: 0, result: [] };
  }
  const page = res.body.data.assets;
  return { status: 200, cursor: page.cursor, remaining: page.remaining, result: page.result };
}

async function collectionWithAssets(count: number): Promise<{ key: string; address: string; collection: CollectionRow }> {
  const { key, address } = await server.key();
  const collection = await saveCollection(server, key);
  await addAssets(key, address, collection, count);
  return { key, address, collection };
}

/** Assets one after another, so that each is created after the previous one. */
async function addAssets(key: string, owner: string, collection: CollectionRow, count: number, overrides: Record<string, unknown>[] = []) {
  for (let i = 0; i < count; i += 1) await saveAsset(server, key, collection, owner, overrides[i] ?? {});
}

/** The collection's asset ids in the documented order: created_at, ties broken by id. */
async function idsInDatabase(collectionId: string, direction: Direction): Promise<string[]> {
  const dir = direction === 'asc' ? 'ASC' : 'DESC';
  const rows: { id: string }[] = await server.ds.query(
    `SELECT id FROM assets WHERE collection_id = $1 ORDER BY created_at ${dir}, id ${dir}`,
    [collectionId],
  );
  return rows.map((r) => r.id);
}

const ids = (page: Listed) => page.result.map((a) => a.id);

describe.each<Door>(['rest', 'graphql'])('paging through 45 assets with limit 20 while assets are added (%s)', (door) => {
  test('when paging by page number in ascending order, then the added assets come at the end and each asset is seen once', async () => {
    const { key, address, collection } = await collectionWithAssets(45);
    const request = { collectionId: collection.id, limit: 20, direction: 'asc' as const };

    const first = await listAssets(door, { ...request, page: '1' });
    expect(first).toMatchObject({ status: 200, remaining: 25 });
    expect(first.result).toHaveLength(20);
    expect(first.cursor).not.toBeNull();

    await addAssets(key, address, collection, 3);
    const second = await listAssets(door, { ...request, page: '2' });
    expect(second).toMatchObject({ status: 200, remaining: 8 });
    expect(second.result).toHaveLength(20);
    expect(second.cursor).not.toBeNull();

    await addAssets(key, address, collection, 2);
    const third = await listAssets(door, { ...request, page: '3' });
    expect(third).toMatchObject({ status: 200, remaining: 0, cursor: null });
    expect(third.result).toHaveLength(10);

    const seen = [...ids(first), ...ids(second), ...ids(third)];
    expect(new Set(seen).size).toBe(50);
    expect(seen).toEqual(await idsInDatabase(collection.id, 'asc'));
  });

  test('when paging by cursor in the default descending order, then the added assets are never seen and no asset is skipped or repeated', async () => {
    const { key, address, collection } = await collectionWithAssets(45);
    const original = await idsInDatabase(collection.id, 'desc');
    const request = { collectionId: collection.id, limit: 20 };

    const first = await listAssets(door, request);
    expect(first).toMatchObject({ status: 200, remaining: 25 });
    expect(first.result).toHaveLength(20);

    await addAssets(key, address, collection, 3);
    const second = await listAssets(door, { ...request, page: first.cursor! });
    expect(second).toMatchObject({ status: 200, remaining: 5 });
    expect(second.result).toHaveLength(20);

    await addAssets(key, address, collection, 2);
    const third = await listAssets(door, { ...request, page: second.cursor! });
    expect(third).toMatchObject({ status: 200, remaining: 0, cursor: null });
    expect(third.result).toHaveLength(5);

    expect([...ids(first), ...ids(second), ...ids(third)]).toEqual(original);
  });

  test('when paging by cursor in ascending order, then the added assets come at the end and each asset is seen once', async () => {
    const { key, address, collection } = await collectionWithAssets(45);
    const request = { collectionId: collection.id, limit: 20, direction: 'asc' as const };

    const first = await listAssets(door, request);
    expect(first).toMatchObject({ status: 200, remaining: 25 });
    expect(first.result).toHaveLength(20);

    await addAssets(key, address, collection, 3);
    const second = await listAssets(door, { ...request, page: first.cursor! });
    expect(second).toMatchObject({ status: 200, remaining: 8 });
    expect(second.result).toHaveLength(20);

    await addAssets(key, address, collection, 2);
    const third = await listAssets(door, { ...request, page: second.cursor! });
    expect(third).toMatchObject({ status: 200, remaining: 0, cursor: null });
    expect(third.result).toHaveLength(10);

    const seen = [...ids(first), ...ids(second), ...ids(third)];
    expect(new Set(seen).size).toBe(50);
    expect(seen).toEqual(await idsInDatabase(collection.id, 'asc'));
  });
});

/** Every page from the first, following cursors; checks `remaining` of each page against what is left. */
async function allPagesByCursor(door: Door, request: ListRequest): Promise<Item[]> {
  const items: Item[] = [];
  let page: string | undefined;
  for (;;) {
    const res = await listAssets(door, { ...request, page });
    expect(res.status).toBe(200);
    items.push(...res.result);
    if (res.cursor === null) {
      expect(res.remaining).toBe(0);
      return items;
    }
    expect(res.remaining).toBeGreaterThan(0);
    page = res.cursor;
  }
}

async function allPagesByNumber(door: Door, request: ListRequest, pages: number): Promise<Item[]> {
  const items: Item[] = [];
  for (let n = 1; n <= pages; n += 1) {
    const res = await listAssets(door, { ...request, page: String(n) });
    expect(res.status).toBe(200);
    items.push(...res.result);
    expect(res.cursor === null).toBe(n === pages);
  }
  return items;
}

/** PostgreSQL orders uuids byte by byte, which is the order of their lower-case text. */
const byNameThenId = (a: Item, b: Item) => (a.name === b.name ? (a.id < b.id ? -1 : 1) : a.name < b.name ? -1 : 1);

describe.each<Door>(['rest', 'graphql'])('ordering (%s)', (door) => {
  test('when ordered by name with ties, then the ties are broken by id and every asset is seen once by cursor and by page number', async () => {
    const { key, address } = await server.key();
    const collection = await saveCollection(server, key);
    const names = ['beta', 'alpha', 'beta', 'gamma', 'alpha', 'beta', 'alpha'];
    await addAssets(key, address, collection, names.length, names.map((name) => ({ name })));

    for (const direction of ['asc', 'desc'] as const) {
      const request = { collectionId: collection.id, limit: 2, orderBy: 'name' as const, direction };
      const byCursor = await allPagesByCursor(door, request);
      const byNumber = await allPagesByNumber(door, request, 4);
      const expected = [...byCursor].sort(byNameThenId);
      if (direction === 'desc') expected.reverse();
      expect(byCursor).toHaveLength(7);
      expect(new Set(byCursor.map((a) => a.id)).size).toBe(7);
      expect(byCursor).toEqual(expected);
      expect(byNumber).toEqual(expected);
    }
  });

  test('when ordered by token_id, then token ids sort as numbers (2 before 10) across pages', async () => {
    const { key, address } = await server.key();
    const collection = await saveCollection(server, key);
    const tokenIds = ['10', '2', '100', '1', '20', '3'];
    await addAssets(key, address, collection, tokenIds.length, tokenIds.map((tokenId) => ({ tokenId })));

    const asc = await allPagesByCursor(door, { collectionId: collection.id, limit: 2, orderBy: 'token_id', direction: 'asc' });
    expect(asc.map((a) => a.tokenId)).toEqual(['1', '2', '3', '10', '20', '100']);
    const desc = await allPagesByCursor(door, { collectionId: collection.id, limit: 2, orderBy: 'token_id', direction: 'desc' });
    expect(desc.map((a) => a.tokenId)).toEqual(['100', '20', '10', '3', '2', '1']);
    const byNumber = await allPagesByNumber(door, { collectionId: collection.id, limit: 4, orderBy: 'token_id', direction: 'asc' }, 2);
    expect(byNumber.map((a) => a.tokenId)).toEqual(['1', '2', '3', '10', '20', '100']);
  });

  test('when a cursor is passed with a different order_by, then the request is a 400', async () => {
    const { collection } = await collectionWithAssets(3);
    const first = await listAssets(door, { collectionId: collection.id, limit: 2 });
    expect(first.cursor).not.toBeNull();

    const reused = await listAssets(door, { collectionId: collection.id, limit: 2, page: first.cursor!, orderBy: 'name' });
    expect(reused).toMatchObject({ status: 400, code: 'BAD_REQUEST' });
  });

  test('when page is "0", then the request is a 400', async () => {
    const { collection } = await collectionWithAssets(1);
    const res = await listAssets(door, { collectionId: collection.id, limit: 20, page: '0' });
    expect(res).toMatchObject({ status: 400, code: 'BAD_REQUEST' });
  });

  test('when the page is past the end, then the result is empty with remaining 0 and no cursor', async () => {
    const { collection } = await collectionWithAssets(3);
    const res = await listAssets(door, { collectionId: collection.id, limit: 2, page: '3' });
    expect(res).toEqual({ status: 200, cursor: null, remaining: 0, result: [] });
  });
});

describe('REST page errors', () => {
  test('when a REST client passes a cursor with a different order_by, then the 400 names the page parameter', async () => {
    const { collection } = await collectionWithAssets(3);
    const first = await server.rest('GET', `/v1/assets?collection_id=${collection.id}&limit=2`);
    const res = await server.rest('GET', `/v1/assets?collection_id=${collection.id}&limit=2&order_by=name&page=${first.body.cursor}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'BAD_REQUEST', details: [{ field: 'page' }] });
  });
});

const ASSETS = /* GraphQL */ `
  query ($collectionId: String, $limit: Int, $page: String, $direction: SortDirection, $orderBy: AssetOrderBy) {
    assets(collectionId: $collectionId, limit: $limit, page: $page, direction: $direction, orderBy: $orderBy) {
      cursor remaining result { id name tokenId }
    }
  }`;

describe('pages that do not ask for remaining (read one row past the page instead of counting)', () => {
  const LEAN = `query ($collectionId: String!, $limit: Int!, $page: String) {
    assets(collectionId: $collectionId, limit: $limit, page: $page, direction: ASC) { cursor result { id } } }`;

  test('when paging by cursor without remaining, then every asset is seen once and the last page has no cursor', async () => {
    const { collection } = await collectionWithAssets(7);
    const seen: string[] = [];
    const cursors: (string | null)[] = [];
    let page: string | undefined;
    for (let i = 0; i < 5; i += 1) {
      const res = await server.gql(LEAN, { collectionId: collection.id, limit: 3, page });
      expect(res.body.errors).toBeUndefined();
      const { cursor, result } = res.body.data.assets;
      seen.push(...result.map((a: { id: string }) => a.id));
      cursors.push(cursor);
      if (!cursor) break;
      page = cursor;
    }
    expect(seen).toEqual(await idsInDatabase(collection.id, 'asc'));
    expect(cursors.map((c) => c !== null)).toEqual([true, true, false]);
  });

  test('when the page ends exactly at the last asset, then it has no cursor', async () => {
    const { collection } = await collectionWithAssets(4);
    const full = await server.gql(LEAN, { collectionId: collection.id, limit: 4 });
    expect(full.body.data.assets.result).toHaveLength(4);
    expect(full.body.data.assets.cursor).toBeNull();
    const short = await server.gql(LEAN, { collectionId: collection.id, limit: 3 });
    expect(short.body.data.assets.result).toHaveLength(3);
    expect(short.body.data.assets.cursor).not.toBeNull();
  });

  test("when a collection's assets are read with and without remaining in one request, then both pages are right", async () => {
    const { collection } = await collectionWithAssets(5);
    const res = await server.gql(
      `query ($a: Address!) {
        lean: collection(address: $a) { assets(limit: 2, orderBy: TOKEN_ID, direction: ASC) { cursor result { tokenId } } }
        full: collection(address: $a) { assets(limit: 2, orderBy: TOKEN_ID, direction: ASC) { cursor remaining result { tokenId } } }
        last: collection(address: $a) { assets(limit: 5, orderBy: TOKEN_ID, direction: ASC) { cursor result { tokenId } } }
      }`,
      { a: collection.contractAddress },
    );
    expect(res.body.errors).toBeUndefined();
    const { lean, full, last } = res.body.data;
    expect(lean.assets.result).toEqual(full.assets.result);
    expect(lean.assets.result).toHaveLength(2);
    expect(lean.assets.cursor).toBe(full.assets.cursor);
    expect(full.assets.remaining).toBe(3);
    expect(last.assets.result).toHaveLength(5);
    expect(last.assets.cursor).toBeNull();
  });
});
