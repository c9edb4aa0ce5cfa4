import { randomAddress, TestServer } from '../setup/server';

export const CREATE_COLLECTION = /* GraphQL */ `
  mutation ($input: CreateCollectionInput!) {
    createCollection(input: $input) { id contractAddress chainId owner name slug status totalSupply }
  }`;

export const CREATE_ASSET = /* GraphQL */ `
  mutation ($input: CreateAssetInput!) {
    createAsset(input: $input) { id tokenId tokenAddress chainId owner name collectionId createdAt }
  }`;

export interface CollectionRow {
  id: string;
  contractAddress: string;
  chainId: string;
  owner: string;
  name: string;
  slug: string;
  totalSupply: number | null;
}

/** A chain of the database alone (no node follows it), with its native currency ETH: a test's own market. */
export async function saveChain(server: TestServer, id: string, name: string): Promise<void> {
  await server.ds.query(`INSERT INTO chains (id, name, symbol) VALUES ($1, $2, 'ETH') ON CONFLICT DO NOTHING`, [id, name]);
  await server.ds.query(`INSERT INTO currencies (chain_id, address, symbol, decimals) VALUES ($1, '0x${'0'.repeat(40)}', 'ETH', 18) ON CONFLICT DO NOTHING`, [id]);
}

/** A collection owned by the key's account, through GraphQL. */
export async function saveCollection(
  server: TestServer,
  key: string,
  overrides: Record<string, unknown> = {},
): Promise<CollectionRow> {
  const input = { contractAddress: randomAddress(), chainId: '1', name: `Collection ${Math.random().toString(36).slice(2, 8)}`, ...overrides };
  const res = await server.gql(CREATE_COLLECTION, { input }, key);
  if (!res.body.data?.createCollection) throw new Error(`createCollection failed: ${JSON.stringify(res.body)}`);
  return res.body.data.createCollection;
}

export function assetInput(collection: CollectionRow, owner: string, overrides: Record<string, unknown> = {}) {
  return {
    collectionId: collection.id,
    name: `Asset ${Math.random().toString(36).slice(2, 8)}`,
    description: 'A test asset',
    imageUrl: 'https://example.com/a.png',
    metadata: { attributes: [{ trait_type: 'kind', value: 'test' }] },
    tokenAddress: collection.contractAddress,
    chainId: collection.chainId,
    owner,
    ...overrides,
  };
}

export async function saveAsset(
  server: TestServer,
  key: string,
  collection: CollectionRow,
  owner: string,
  overrides: Record<string, unknown> = {},
) {
  const res = await server.gql(CREATE_ASSET, { input: assetInput(collection, owner, overrides) }, key);
  if (!res.body.data?.createAsset) throw new Error(`createAsset failed: ${JSON.stringify(res.body)}`);
  return res.body.data.createAsset as { id: string; tokenId: string; tokenAddress: string; name: string; createdAt: string };
}
