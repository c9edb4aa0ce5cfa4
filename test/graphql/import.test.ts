import { startServer, TestServer } from '../setup/server';
import { CollectionRow, saveCollection } from '../factories/marketplace';
import { buildCsv, csvRecord, csvRecords, importGraphql, tokenIdsOf } from '../factories/csv';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

async function freshCollection(): Promise<{ owner: { key: string; address: string }; collection: CollectionRow }> {
  const owner = await server.key();
  const collection = await saveCollection(server, owner.key);
  return { owner, collection };
}

describe('GraphQL importAssets', () => {
  test('when a multipart request carries the preflight header, then the file is imported', async () => {
    const { owner, collection } = await freshCollection();
    const res = await importGraphql(server, collection.id, buildCsv(csvRecords(owner.address, 3)), owner.key);
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.importAssets).toEqual({
      data: { count: 3, firstTokenId: '1', lastTokenId: '3' },
      message: expect.stringContaining('3 assets'),
    });
    expect(await tokenIdsOf(server, collection.id)).toEqual(['1', '2', '3']);
  });

  test('when a multipart request lacks the preflight header, then it is refused with 400 and nothing is written', async () => {
    const { owner, collection } = await freshCollection();
    const res = await importGraphql(server, collection.id, buildCsv(csvRecords(owner.address, 3)), owner.key, { preflight: false });
    expect(res.status).toBe(400);
    expect(await tokenIdsOf(server, collection.id)).toEqual([]);
  });

  test('when rows are bad, then VALIDATION_FAILED lists each with line and field and nothing is written', async () => {
    const { owner, collection } = await freshCollection();
    const records = csvRecords(owner.address, 4);
    records[1].metadata = '[]';
    records[3].image_url = 'ftp:/broken';
    const res = await importGraphql(server, collection.id, buildCsv(records), owner.key);
    expect(res.body.data).toBeNull();
    expect(res.body.errors).toHaveLength(1);
    expect(res.body.errors[0].extensions).toMatchObject({
      code: 'VALIDATION_FAILED',
      details: [
        { line: 3, field: 'metadata', message: expect.any(String) },
        { line: 5, field: 'image_url', message: expect.any(String) },
      ],
    });
    expect(await tokenIdsOf(server, collection.id)).toEqual([]);
  });

  test('when a file has a BOM, CRLF line ends and a multi-line description, then the description keeps its newline', async () => {
    const { owner, collection } = await freshCollection();
    const csv = '\uFEFF' + buildCsv([csvRecord(owner.address, { description: 'line one\nline two' })], { eol: '\r\n' });
    const res = await importGraphql(server, collection.id, csv, owner.key);
    expect(res.body.errors).toBeUndefined();
    const [row] = await server.ds.query('SELECT description FROM assets WHERE collection_id = $1', [collection.id]);
    expect(row.description).toBe('line one\nline two');
  });

  test('when the header names an unknown column, then BAD_REQUEST', async () => {
    const { owner, collection } = await freshCollection();
    const csv = buildCsv([csvRecord(owner.address)], { columns: ['name', 'description', 'image_url', 'owner', 'rarity'] });
    const res = await importGraphql(server, collection.id, csv, owner.key);
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'BAD_REQUEST', details: [{ field: 'rarity', message: expect.any(String) }] });
  });

  test("when a user key imports into someone else's collection, then FORBIDDEN and nothing is written", async () => {
    const { collection } = await freshCollection();
    const stranger = await server.key();
    const res = await importGraphql(server, collection.id, buildCsv(csvRecords(stranger.address, 1)), stranger.key);
    expect(res.body.errors[0].extensions.code).toBe('FORBIDDEN');
    expect(await tokenIdsOf(server, collection.id)).toEqual([]);
  });

  test('when no key is sent, then UNAUTHENTICATED', async () => {
    const { owner, collection } = await freshCollection();
    const res = await importGraphql(server, collection.id, buildCsv(csvRecords(owner.address, 1)));
    expect(res.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    expect(await tokenIdsOf(server, collection.id)).toEqual([]);
  });
});
