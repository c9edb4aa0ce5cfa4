import { startServer, TestServer } from './setup/server';
import { assetInput, CollectionRow, CREATE_ASSET, saveCollection } from './factories/marketplace';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

interface Created {
  door: 'graphql' | 'rest';
  ok: boolean;
  status: number;
  code?: string;
  tokenId?: string;
}

/** One createAsset, through GraphQL on even `i` and POST /v1/assets on odd `i`, in one shape. */
async function createAsset(i: number, key: string, owner: string, collection: CollectionRow): Promise<Created> {
  const input = assetInput(collection, owner, { name: `Parallel ${i}` });
  if (i % 2 === 0) {
    const res = await server.gql(CREATE_ASSET, { input }, key);
    const asset = res.body.data?.createAsset;
    if (asset) return { door: 'graphql', ok: true, status: res.status, tokenId: asset.tokenId };
    return { door: 'graphql', ok: false, status: res.status, code: res.body.errors?.[0]?.extensions?.code };
  }
  const res = await server.rest(
    'POST',
    '/v1/assets',
    {
      collection_id: input.collectionId,
      name: input.name,
      description: input.description,
      image_url: input.imageUrl,
      metadata: input.metadata,
      token_address: input.tokenAddress,
      chain_id: input.chainId,
      owner: input.owner,
    },
    key,
  );
  if (res.status === 200) return { door: 'rest', ok: true, status: 200, tokenId: res.body.token_id };
  return { door: 'rest', ok: false, status: res.status, code: res.body.error?.code };
}

async function tokenIdsInDatabase(collectionId: string): Promise<string[]> {
  const rows: { token_id: string }[] = await server.ds.query(
    'SELECT a.token_id::text AS token_id FROM assets a WHERE a.collection_id = $1 ORDER BY a.token_id',
    [collectionId],
  );
  return rows.map((r) => r.token_id);
}

/** Seconds on a healthy database; a stuck one fails here instead of holding the run for the default minute. */
const PARALLEL_TIMEOUT_MS = 20_000;
const oneTo = (n: number) => Array.from({ length: n }, (_, i) => String(i + 1));
const numerically = (a: string, b: string) => Number(a) - Number(b);

describe('concurrent asset creation', () => {
  test('when 50 assets are created in parallel through GraphQL and REST, then they get the distinct token ids 1 to 50', async () => {
    const { key, address } = await server.key();
    const collection = await saveCollection(server, key);

    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => createAsset(i, key, address, collection)));

    expect(results.filter((r) => !r.ok)).toEqual([]);
    expect(results.map((r) => r.tokenId!).sort(numerically)).toEqual(oneTo(50));
    expect(await tokenIdsInDatabase(collection.id)).toEqual(oneTo(50));
  }, PARALLEL_TIMEOUT_MS);

  test('when 25 assets are created in parallel in a collection of total_supply 10, then exactly 10 are created and the rest are refused with 422', async () => {
    const { key, address } = await server.key();
    const collection = await saveCollection(server, key, { totalSupply: 10 });

    const results = await Promise.all(Array.from({ length: 25 }, (_, i) => createAsset(i, key, address, collection)));

    const created = results.filter((r) => r.ok);
    expect(created.map((r) => r.tokenId!).sort(numerically)).toEqual(oneTo(10));
    const refused = results.filter((r) => !r.ok);
    expect(refused).toHaveLength(15);
    expect(refused.map((r) => r.code)).toEqual(Array(15).fill('VALIDATION_FAILED'));
    expect(refused.filter((r) => r.door === 'rest').map((r) => r.status)).toEqual(expect.arrayContaining([422]));
    expect(refused.filter((r) => r.door === 'rest' && r.status !== 422)).toEqual([]);
    expect(await tokenIdsInDatabase(collection.id)).toEqual(oneTo(10));
  }, PARALLEL_TIMEOUT_MS);
});
