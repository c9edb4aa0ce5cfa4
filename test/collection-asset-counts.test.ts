import { startServer, TestServer } from './setup/server';
import { saveAsset, saveCollection, CollectionRow } from './factories/marketplace';
import { buildCsv, csvRecord, csvRecords, importFormUrlencoded } from './factories/csv';

/**
 * collection_asset_counts (migration 1765000000000): triggers on assets keep each collection's count in
 * the transaction that writes the assets, and a planned first page reads `remaining` from it instead of
 * counting every asset. What a user sees: `remaining` of GET /v1/collections?include_assets=true stays
 * exact through parallel creates, imports and a failed import, in one statement.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

async function storedCount(collection: CollectionRow): Promise<{ kept: number; counted: number }> {
  const [row]: { kept: string | null; counted: string }[] = await server.ds.query(
    `SELECT (SELECT assets FROM collection_asset_counts WHERE collection_id = $1)::text AS kept,
            (SELECT count(*) FROM assets WHERE collection_id = $1)::text AS counted`,
    [collection.id],
  );
  return { kept: Number(row.kept ?? 0), counted: Number(row.counted) };
}

/** The collection's first page of 2 assets as GET /v1/collections shows it, with the request's statements. */
async function firstAssetPage(owner: string, collection: CollectionRow) {
  const res = await server.rest('GET', `/v1/collections?owner_address=${owner}&include_assets=true&assets_limit=2`);
  expect(res.status).toBe(200);
  const found = res.body.result.find((c: { id: string }) => c.id === collection.id);
  return { page: found.assets as { cursor: string | null; remaining: number; result: unknown[] }, sql: res.sql };
}

describe("a collection's asset count", () => {
  test('when assets are created in parallel and imported, then remaining is exact and read in one statement', async () => {
    const { key, address } = await server.key();
    const collection = await saveCollection(server, key);
    expect((await firstAssetPage(address, collection)).page).toEqual({ cursor: null, remaining: 0, result: [] });

    await Promise.all(Array.from({ length: 12 }, () => saveAsset(server, key, collection, address)));
    const imported = await importFormUrlencoded(server, collection.id, buildCsv(csvRecords(address, 30)), key);
    expect(imported.status).toBe(200);

    expect(await storedCount(collection)).toEqual({ kept: 42, counted: 42 });
    const { page, sql } = await firstAssetPage(address, collection);
    expect(sql).toBe(1);
    expect(page.result).toHaveLength(2);
    expect(page.remaining).toBe(40);
    expect(page.cursor).not.toBeNull();
  });

  test('when an import fails on one row, then nothing is counted', async () => {
    const { key, address } = await server.key();
    const collection = await saveCollection(server, key);
    await saveAsset(server, key, collection, address);
    const records = [...csvRecords(address, 20), csvRecord(address, { owner: 'not an address' }, 21)];
    const failed = await importFormUrlencoded(server, collection.id, buildCsv(records), key);
    expect(failed.status).toBe(422);

    expect(await storedCount(collection)).toEqual({ kept: 1, counted: 1 });
    expect((await firstAssetPage(address, collection)).page).toMatchObject({ cursor: null, remaining: 0 });
  });

  test('when two collections get assets at once, then each keeps its own count', async () => {
    const { key, address } = await server.key();
    const [first, second] = [await saveCollection(server, key), await saveCollection(server, key)];
    await Promise.all([
      ...Array.from({ length: 5 }, () => saveAsset(server, key, first, address)),
      ...Array.from({ length: 3 }, () => saveAsset(server, key, second, address)),
      importFormUrlencoded(server, second.id, buildCsv(csvRecords(address, 10)), key),
    ]);
    expect(await storedCount(first)).toEqual({ kept: 5, counted: 5 });
    expect(await storedCount(second)).toEqual({ kept: 13, counted: 13 });
    expect((await firstAssetPage(address, first)).page.remaining).toBe(3);
    expect((await firstAssetPage(address, second)).page.remaining).toBe(11);
  });
});
