import { HttpResult, randomAddress, startServer, TestServer } from '../setup/server';
import { assetInput, saveAsset, saveCollection } from '../factories/marketplace';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

const upperHex = (address: string) => `0x${address.slice(2).toUpperCase()}`;

describe('GraphQL createAsset', () => {
  test('when an asset is created, then it is returned with its collection, chain and royalty fees and stored', async () => {
    const { key, address: owner } = await server.key();
    const royalty = randomAddress();
    const collection = await saveCollection(server, key, {
      chainId: '137',
      name: 'Polygon Pets',
      imageUrl: 'https://example.com/pets.png',
      fees: [{ address: royalty, basisPoints: 750 }],
    });
    const input = assetInput(collection, upperHex(owner), {
      name: 'Pet 1',
      tokenAddress: upperHex(collection.contractAddress),
      animationUrl: 'https://example.com/pet.mp4',
      externalLink: 'https://example.com/pet',
    });
    const res = await server.gql(CREATE_ASSET, { input }, key);

    expect(res.body.errors).toBeUndefined();
    const asset = res.body.data.createAsset;
    expect(asset).toMatchObject({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      collectionId: collection.id,
      chainId: '137',
      tokenAddress: collection.contractAddress,
      tokenId: '1',
      name: 'Pet 1',
      description: 'A test asset',
      imageUrl: 'https://example.com/a.png',
      animationUrl: 'https://example.com/pet.mp4',
      externalLink: 'https://example.com/pet',
      metadata: input.metadata,
      owner,
      status: 'UNLISTED',
      collection: { id: collection.id, name: 'Polygon Pets', imageUrl: 'https://example.com/pets.png', contractAddress: collection.contractAddress },
      chain: { chainId: '137', name: 'Polygon', symbol: 'POL' },
      fees: [{ address: royalty, basisPoints: 750, type: 'royalty' }],
    });
    expect(asset.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const rows = await server.ds.query(
      'SELECT id, token_id::text AS token_id, owner, chain_id, token_address, metadata FROM assets WHERE collection_id = $1',
      [collection.id],
    );
    expect(rows).toEqual([
      { id: asset.id, token_id: '1', owner, chain_id: '137', token_address: collection.contractAddress, metadata: input.metadata },
    ]);
  });

  test('when assets are created without tokenId, then the contract mints 1, 2, 3; a given tokenId is kept', async () => {
    const { key, address: owner } = await server.key();
    const collection = await saveCollection(server, key);
    const ids = [];
    for (let i = 0; i < 3; i += 1) ids.push((await saveAsset(server, key, collection, owner)).tokenId);
    const given = await saveAsset(server, key, collection, owner, { tokenId: '1000' });
    expect(ids).toEqual(['1', '2', '3']);
    expect(given.tokenId).toBe('1000');
  });

  test('when the tokenId is taken, then the error is CONFLICT and nothing is written', async () => {
    const { key, address: owner } = await server.key();
    const collection = await saveCollection(server, key);
    await saveAsset(server, key, collection, owner, { tokenId: '3' });
    const res = await server.gql(CREATE_ASSET, { input: assetInput(collection, owner, { tokenId: '3' }) }, key);
    expect(res.body.data).toBeNull();
    expect(res.body.errors?.[0].extensions.code).toBe('CONFLICT');
    const [{ count }] = await server.ds.query('SELECT count(*)::int AS count FROM assets WHERE collection_id = $1', [collection.id]);
    expect(count).toBe(1);
  });

  test('when createAsset is sent without a key, then the error is UNAUTHENTICATED', async () => {
    const { key, address: owner } = await server.key();
    const collection = await saveCollection(server, key);
    const res = await server.gql(CREATE_ASSET, { input: assetInput(collection, owner) });
    expect(res.body.errors?.[0].extensions.code).toBe('UNAUTHENTICATED');
  });
});

describe('GraphQL asset and assetById', () => {
  test('when read by token address in any case and token id, then the asset comes with nested collection, chain and fees', async () => {
    const { key, address: owner } = await server.key();
    const collection = await saveCollection(server, key, { name: 'Read Me', fees: [{ address: owner, basisPoints: 100 }] });
    const created = await saveAsset(server, key, collection, owner, { name: 'Readable' });

    const res = await server.gql(ASSET, { tokenAddress: upperHex(collection.contractAddress), tokenId: created.tokenId });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.asset).toMatchObject({
      id: created.id,
      name: 'Readable',
      tokenId: '1',
      collection: { name: 'Read Me', contractAddress: collection.contractAddress },
      chain: { chainId: '1', name: 'Ethereum', symbol: 'ETH' },
      fees: [{ address: owner, basisPoints: 100, type: 'royalty' }],
    });
  });

  test('when the token does not exist, then the error is NOT_FOUND', async () => {
    const res = await server.gql(ASSET, { tokenAddress: randomAddress(), tokenId: '1' });
    expect(res.body.errors?.[0].extensions.code).toBe('NOT_FOUND');
  });

  test('when the same token exists on two chains, then chainId chooses and without it the error is CONFLICT naming both', async () => {
    const { key, address: owner } = await server.key();
    const address = randomAddress();
    const onBnb = await saveCollection(server, key, { contractAddress: address, chainId: '56' });
    const onArbitrum = await saveCollection(server, key, { contractAddress: address, chainId: '42161' });
    await saveAsset(server, key, onBnb, owner, { name: 'BNB one' });
    await saveAsset(server, key, onArbitrum, owner, { name: 'Arbitrum one' });

    const ambiguous = await server.gql(ASSET, { tokenAddress: address, tokenId: '1' });
    expect(ambiguous.body.errors?.[0].extensions.code).toBe('CONFLICT');
    expect(ambiguous.body.errors?.[0].message).toContain('56');
    expect(ambiguous.body.errors?.[0].message).toContain('42161');

    const chosen = await server.gql(ASSET, { tokenAddress: address, tokenId: '1', chainId: '56' });
    expect(chosen.body.errors).toBeUndefined();
    expect(chosen.body.data.asset).toMatchObject({ name: 'BNB one', chain: { chainId: '56', name: 'BNB Chain', symbol: 'BNB' } });
  });

  test('when read by id, then the same asset is returned; an unknown id is NOT_FOUND, a malformed one BAD_REQUEST', async () => {
    const { key, address: owner } = await server.key();
    const collection = await saveCollection(server, key);
    const created = await saveAsset(server, key, collection, owner, { name: 'By Id' });

    const res = await server.gql(ASSET_BY_ID, { id: created.id.toUpperCase() });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.assetById).toMatchObject({ id: created.id, name: 'By Id', collection: { contractAddress: collection.contractAddress } });

    const unknown = await server.gql(ASSET_BY_ID, { id: '00000000-0000-4000-8000-000000000000' });
    expect(unknown.body.errors?.[0].extensions.code).toBe('NOT_FOUND');
    const malformed = await server.gql(ASSET_BY_ID, { id: 'not-a-uuid' });
    expect(malformed.body.errors?.[0].extensions).toMatchObject({ code: 'BAD_REQUEST', details: [{ field: 'id' }] });
  });
});

describe('GraphQL assets', () => {
  test('when filtered by collectionId as id or as contract address, then only that collection’s assets are listed', async () => {
    const { key, address: owner } = await server.key();
    const collection = await saveCollection(server, key);
    const other = await saveCollection(server, key);
    const a = await saveAsset(server, key, collection, owner);
    await saveAsset(server, key, other, owner);

    const byId = await server.gql(ASSETS, { collectionId: collection.id });
    const byAddress = await server.gql(ASSETS, { collectionId: upperHex(collection.contractAddress) });
    expect(byId.body.errors).toBeUndefined();
    expect(byId.body.data.assets).toMatchObject({ cursor: null, remaining: 0, result: [{ id: a.id }] });
    expect(byAddress.body.data.assets.result.map((x: { id: string }) => x.id)).toEqual([a.id]);
  });

  test('when filtered by assetContract, ownerId and status, then each filter narrows to the matching assets', async () => {
    const { key, address: owner } = await server.key();
    const { key: adminKey } = await server.key({ admin: true });
    const collection = await saveCollection(server, key);
    const mine = await saveAsset(server, key, collection, owner);
    const someoneElse = randomAddress();
    const theirs = await saveAsset(server, adminKey, collection, someoneElse);

    const byContract = await server.gql(ASSETS, { assetContract: collection.contractAddress, orderBy: 'TOKEN_ID', direction: 'ASC' });
    expect(byContract.body.data.assets.result.map((x: { id: string }) => x.id)).toEqual([mine.id, theirs.id]);

    const byOwner = await server.gql(ASSETS, { ownerId: upperHex(someoneElse) });
    expect(byOwner.body.data.assets.result).toEqual([expect.objectContaining({ id: theirs.id, owner: someoneElse })]);

    const unlisted = await server.gql(ASSETS, { collectionId: collection.id, status: 'UNLISTED' });
    const listed = await server.gql(ASSETS, { collectionId: collection.id, status: 'LISTED' });
    expect(unlisted.body.data.assets.remaining).toBe(0);
    expect(unlisted.body.data.assets.result).toHaveLength(2);
    expect(listed.body.data.assets).toEqual({ cursor: null, remaining: 0, result: [] });
  });

  test('when ordered by TOKEN_ID, then ids sort numerically and cursor paging walks them in order', async () => {
    const { key, address: owner } = await server.key();
    const collection = await saveCollection(server, key);
    for (const tokenId of ['20', '3', '100', '1']) await saveAsset(server, key, collection, owner, { tokenId });

    const seen: string[] = [];
    let page: string | null = null;
    do {
      const res: HttpResult = await server.gql(ASSETS, { collectionId: collection.id, orderBy: 'TOKEN_ID', direction: 'ASC', limit: 3, page });
      expect(res.body.errors).toBeUndefined();
      seen.push(...res.body.data.assets.result.map((x: { tokenId: string }) => x.tokenId));
      expect(res.body.data.assets.remaining).toBe(4 - seen.length);
      page = res.body.data.assets.cursor;
    } while (page);
    expect(seen).toEqual(['1', '3', '20', '100']);

    const desc = await server.gql(ASSETS, { collectionId: collection.id, orderBy: 'TOKEN_ID', direction: 'DESC' });
    expect(desc.body.data.assets.result.map((x: { tokenId: string }) => x.tokenId)).toEqual(['100', '20', '3', '1']);
  });

  test('when a page of assets is read, then nested collection and chain cost a fixed number of statements', async () => {
    const { key, address: owner } = await server.key();
    const collection = await saveCollection(server, key);
    await saveAsset(server, key, collection, owner);
    const one = await server.gql(ASSETS, { collectionId: collection.id });
    for (let i = 0; i < 5; i += 1) await saveAsset(server, key, collection, owner);
    const six = await server.gql(ASSETS, { collectionId: collection.id });
    expect(six.body.data.assets.result).toHaveLength(6);
    expect(six.sql).toBe(one.sql);
  });
});

const ASSET_FIELDS = /* GraphQL */ `
  id collectionId chainId tokenAddress tokenId name description imageUrl animationUrl externalLink metadata owner status
  createdAt updatedAt
  collection { id name imageUrl contractAddress }
  chain { chainId name symbol }
  fees { address basisPoints type }`;

const CREATE_ASSET = /* GraphQL */ `
  mutation ($input: CreateAssetInput!) {
    createAsset(input: $input) { ${ASSET_FIELDS} }
  }`;

const ASSET = /* GraphQL */ `
  query ($tokenAddress: Address!, $tokenId: TokenId!, $chainId: String) {
    asset(tokenAddress: $tokenAddress, tokenId: $tokenId, chainId: $chainId) { ${ASSET_FIELDS} }
  }`;

const ASSET_BY_ID = /* GraphQL */ `
  query ($id: ID!) {
    assetById(id: $id) { ${ASSET_FIELDS} }
  }`;

const ASSETS = /* GraphQL */ `
  query (
    $collectionId: String, $assetContract: Address, $ownerId: Address, $status: AssetStatus,
    $orderBy: AssetOrderBy, $direction: SortDirection, $limit: Int, $page: String
  ) {
    assets(
      collectionId: $collectionId, assetContract: $assetContract, ownerId: $ownerId, status: $status,
      orderBy: $orderBy, direction: $direction, limit: $limit, page: $page
    ) { cursor remaining result { ${ASSET_FIELDS} } }
  }`;
