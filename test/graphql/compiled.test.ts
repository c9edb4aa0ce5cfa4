import { startServer, TestServer } from '../setup/server';
import { saveListing, saveOffer, saveOwnedAsset, saveSiblingAsset } from '../factories/market';

/**
 * /graphql runs a query document through graphql-js the first time it sees it and compiled (graphql-jit)
 * afterwards: a client must not be able to tell the two apart.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

/** Every kind of field: scalars, custom scalars (DateTime, JSON, TokenId, Address), enums, nullable and nested relations, lists. */
const ASSET_PAGE = /* GraphQL */ `
  query ($collectionId: String!, $limit: Int) {
    assets(collectionId: $collectionId, orderBy: TOKEN_ID, direction: ASC, limit: $limit) {
      cursor remaining
      result {
        id tokenId tokenAddress name owner status metadata createdAt animationUrl
        fees { address basisPoints type }
        chain { id name }
        collection { name contractAddress fees { basisPoints } assets(limit: 2) { remaining result { tokenId } } }
        listing { id status orderType startPrice currentPrice closingDate chain { symbol } }
      }
    }
  }`;

const ROYALTY_ADDRESS = '0x00000000000000000000000000000000000000aa';

async function timesThree(query: string, variables: Record<string, unknown>) {
  const runs = [];
  for (let i = 0; i < 3; i += 1) runs.push(await server.gql(query, variables));
  return runs;
}

describe('compiled queries', () => {
  test('when the same query comes three times, then the three answers are the same, nested relations and scalars included', async () => {
    const owned = await saveOwnedAsset(server, [{ address: ROYALTY_ADDRESS, basisPoints: 250 }]);
    const sibling = await saveSiblingAsset(server, owned);
    await saveListing(server, owned.owner.key, sibling.asset.id, { startPrice: 7 });

    const runs = await timesThree(ASSET_PAGE, { collectionId: owned.collection.id, limit: 5 });
    for (const run of runs) {
      expect(run.status).toBe(200);
      expect(run.body.errors).toBeUndefined();
    }
    const [first, ...later] = runs.map((r) => r.body);
    for (const body of later) expect(body).toEqual(first);

    const [unlisted, listed] = first.data!.assets.result;
    expect(unlisted).toMatchObject({ tokenId: owned.asset.tokenId, status: 'UNLISTED', listing: null, fees: [{ basisPoints: 250, type: 'royalty' }] });
    expect(listed).toMatchObject({ tokenId: sibling.asset.tokenId, status: 'LISTED', listing: { status: 'ACTIVE', startPrice: 7 } });
    expect(listed.collection.assets.result.map((a: { tokenId: string }) => a.tokenId).sort()).toEqual([owned.asset.tokenId, sibling.asset.tokenId].sort());
    expect(typeof listed.createdAt).toBe('string');
    expect(listed.metadata).toEqual(expect.any(Object));
  });

  test('when a query that has been compiled gets a bad variable, then it is refused in the same words as the first time', async () => {
    const owned = await saveOwnedAsset(server);
    const good = await timesThree(ASSET_PAGE, { collectionId: owned.collection.id, limit: 1 });
    expect(good.map((r) => r.body.errors)).toEqual([undefined, undefined, undefined]);

    const bad = await timesThree(ASSET_PAGE, { collectionId: owned.collection.id, limit: 'many' });
    for (const run of bad) {
      expect(run.status).toBe(400);
      expect(run.body.errors![0].extensions.code).toBe('BAD_REQUEST');
      expect(run.body.errors![0].message).toBe(bad[0].body.errors![0].message);
    }
    expect(bad[0].body.errors![0].message).toContain('$limit');
  });

  test('when one document holds two queries, then each operation name keeps getting its own query', async () => {
    const owned = await saveOwnedAsset(server);
    const document = `
      query One($id: ID!) { assetById(id: $id) { name } }
      query Both($id: ID!) { assetById(id: $id) { name tokenId } }`;
    for (let i = 0; i < 3; i += 1) {
      for (const operationName of ['One', 'Both']) {
        const res = await fetch(`${server.url}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: document, operationName, variables: { id: owned.asset.id } }),
        });
        const body = (await res.json()) as { data: { assetById: Record<string, unknown> }; errors?: unknown[] };
        expect(body.errors).toBeUndefined();
        expect(Object.keys(body.data.assetById).sort()).toEqual(operationName === 'One' ? ['name'] : ['name', 'tokenId']);
      }
    }
  });

  test('when a compiled query fails in a resolver, then the error is the same as the first time, with its path', async () => {
    const owned = await saveOwnedAsset(server);
    const offer = await saveOffer(server, (await server.key()).key, owned.asset.id);
    const query = 'query ($a: ID!, $b: ID!) { found: offer(id: $a) { id price } missing: offer(id: $b) { id } }';
    const runs = await timesThree(query, { a: offer.id, b: '00000000-0000-4000-8000-000000000000' });
    for (const run of runs) {
      expect(run.body.data).toBeNull();
      expect(run.body.errors).toHaveLength(1);
      expect(run.body.errors![0]).toMatchObject({ path: ['missing'], extensions: { code: 'NOT_FOUND' } });
      expect(run.body.errors![0].message).toBe(runs[0].body.errors![0].message);
    }
  });
});
