import { randomAddress, startServer, TestServer } from '../setup/server';
import { saveAsset, saveCollection } from '../factories/marketplace';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

describe('GraphQL collections', () => {
  test('when a collection is created, then it is read back by address with its chain, fees and assets', async () => {
    const { key, address } = await server.key();
    const collection = await saveCollection(server, key, {
      name: 'Night Owls',
      fees: [{ address: randomAddress(), basisPoints: 250 }],
      categoryId: 'art',
    });
    expect(collection.owner).toBe(address);
    expect(collection.slug).toBe('night-owls');
    await saveAsset(server, key, collection, address, { name: 'Owl 1' });

    const res = await server.gql(COLLECTION_BY_ADDRESS, { address: collection.contractAddress.toUpperCase().replace('0X', '0x') });
    expect(res.body.errors).toBeUndefined();
    const read = res.body.data.collection;
    expect(read).toMatchObject({
      id: collection.id,
      name: 'Night Owls',
      status: 'UNVERIFIED',
      chain: { chainId: '1', name: 'Ethereum', symbol: 'ETH' },
      category: { categoryId: 'art', name: 'Art' },
      fees: [{ basisPoints: 250, type: 'royalty' }],
    });
    expect(read.assets.result.map((a: { name: string }) => a.name)).toEqual(['Owl 1']);
    expect(read.assets.remaining).toBe(0);
    expect(read.assets.cursor).toBeNull();
  });

  test('when two collections take the same name, then the second gets a numbered slug', async () => {
    const { key } = await server.key();
    const name = `Twin ${Date.now()}`;
    const a = await saveCollection(server, key, { name });
    const b = await saveCollection(server, key, { name });
    expect(b.slug).toBe(`${a.slug}-2`);
  });
});

const COLLECTION_BY_ADDRESS = /* GraphQL */ `
  query ($address: Address!) {
    collection(address: $address) {
      id name status
      chain { chainId name symbol }
      category { categoryId name }
      fees { address basisPoints type }
      assets(limit: 5) { cursor remaining result { name tokenId } }
    }
  }`;
