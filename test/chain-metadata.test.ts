import http from 'node:http';
import { AddressInfo } from 'node:net';
import { Address } from 'viem';
import { startChainNode, ChainNode, until } from './setup/chain-node';
import { exclusive } from './setup/exclusive';
import { testMetadataSettings } from './factories/metadata';
import { randomAddress, startServer, TestServer } from './setup/server';
import { expandMetadataUpdateRange, queueMetadataUpdates, RANGE_CHUNK } from '../src/modules/chain/chain.metadata-updates';

/**
 * Issue #41 items 3, 5 and 7 and its first goal, on the local EVM with OpenZeppelin's ERC721URIStorage and
 * ERC721Royalty (test/chain/TestERC721Metadata.sol) and a local HTTP host of documents: a token minted on chain
 * shows its document through both doors within 2 s, ERC-4906 MetadataUpdate and BatchMetadataUpdate fetch the
 * documents again (a refresh reads tokenURI from the chain again), ERC-2981 royalties show as the collection's
 * fees. The server runs a fetch worker: files whose workers share the database take turns (exclusive).
 */
const CHAIN_ID = '31345';
const MAX_TOKEN_ID = (1n << 256n) - 1n;

/** Documents by path (/token/<name>); counts the requests per path. */
class DocumentHost {
  readonly docs = new Map<string, Record<string, unknown>>();
  readonly hits = new Map<string, number>();
  private server!: http.Server;
  url = '';

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      const path = req.url ?? '/';
      this.hits.set(path, (this.hits.get(path) ?? 0) + 1);
      const doc = this.docs.get(path);
      res.writeHead(doc ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(doc ?? { error: 'no such document' }));
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Serves a document named `name` whose Background is `background`; answers its URI. */
  serve(name: string, background: string): string {
    this.docs.set(`/token/${name}`, {
      name: `Token ${name} ${background}`,
      description: `Document ${name}`,
      image: `https://img.example/${name}-${background}.png`,
      attributes: [
        { trait_type: 'Background', value: background },
        { trait_type: 'Level', value: 3, display_type: 'number' },
      ],
    });
    return `${this.url}/token/${name}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const host = new DocumentHost();
let node: ChainNode;
let api: TestServer;
let release: () => void;
let admin: { key: string; address: string };


beforeAll(async () => {
  release = await exclusive('metadata-workers');
  await host.start();
  node = await startChainNode(Number(CHAIN_ID));
  api = await startServer({ chains: { follow: [{ chainId: CHAIN_ID, rpcUrl: node.url, confirmations: 0 }], pollMs: 50, blockRange: 2000 }, metadata: testMetadataSettings(host.url) });
  admin = await api.key({ admin: true });
});

afterAll(async () => {
  await api?.close();
  await node?.close();
  await host.close();
  release?.();
});

/** A new TestERC721Metadata and its collection (created by `key`, with `fees` when given). */
async function collectionOnChain(key = admin.key, fees?: { address: string; basis_points: number }[]): Promise<{ contract: Address; id: string }> {
  const contract = await node.deploy('TestERC721Metadata');
  const res = await api.rest('POST', '/v1/collections', { contract_address: contract, chain_id: CHAIN_ID, ...(fees ? { fees } : {}) }, key);
  if (res.status !== 200) throw new Error(`POST /v1/collections: ${res.status} ${JSON.stringify(res.body)}`);
  return { contract, id: res.body.id };
}

const restAsset = (contract: string, tokenId: bigint) => api.rest('GET', `/v1/assets/${contract}/${tokenId}?chain_id=${CHAIN_ID}`);
/** The asset once its name is `name` (its document fetched). */
const named = (contract: string, tokenId: bigint, name: string, withinMs = 10_000) =>
  until(() => restAsset(contract, tokenId), (r) => r.status === 200 && r.body.name === name, `asset ${tokenId} named ${name}`, withinMs);

describe('a token minted on chain with a tokenURI', () => {
  test('when it is minted, then its name, image and traits show through both doors within 2 s of the mint being applied, and a trait filter finds it', async () => {
    const { contract, id } = await collectionOnChain();
    const uri = host.serve('mint-1', 'Teal');
    await node.write(contract, node.accounts[0], 'mint', [node.accounts[1], 1n, uri]);

    await until(() => restAsset(contract, 1n), (r) => r.status === 200, 'the mint to be applied', 10_000);
    const applied = Date.now();
    const asset = await named(contract, 1n, 'Token mint-1 Teal', 2000);
    expect(Date.now() - applied).toBeLessThan(2000);

    expect(asset.body).toMatchObject({ image_url: 'https://img.example/mint-1-Teal.png', metadata_status: 'fetched', description: 'Document mint-1' });
    expect(asset.body.metadata.token_uri).toBe(uri);
    const gql = await api.gql(
      `query ($address: Address!, $chain: String) { asset(tokenAddress: $address, tokenId: "1", chainId: $chain) { name imageUrl metadataStatus traits { traitType value } } }`,
      { address: contract, chain: CHAIN_ID },
    );
    expect(gql.body.data.asset).toEqual({
      name: 'Token mint-1 Teal',
      imageUrl: 'https://img.example/mint-1-Teal.png',
      metadataStatus: 'FETCHED',
      traits: expect.arrayContaining([{ traitType: 'Background', value: 'Teal' }, { traitType: 'Level', value: '3' }]),
    });
    const filtered = await api.rest('GET', `/v1/assets?collection_id=${id}&trait=Background:Teal`);
    expect(filtered.body.result.map((a: { token_id: string }) => a.token_id)).toEqual(['1']);
    const other = await api.rest('GET', `/v1/assets?collection_id=${id}&trait=Background:Red`);
    expect(other.body.result).toEqual([]);
  });
});

describe('ERC-4906', () => {
  test('when the contract sets a new token URI (MetadataUpdate), then the new URI is read from the chain and its document shown', async () => {
    const { contract, id } = await collectionOnChain();
    await node.write(contract, node.accounts[0], 'mint', [node.accounts[1], 7n, host.serve('upd-7', 'Blue')]);
    await named(contract, 7n, 'Token upd-7 Blue');

    const moved = host.serve('upd-7-moved', 'Gold');
    await node.write(contract, node.accounts[0], 'setTokenURI', [7n, moved]);
    const asset = await named(contract, 7n, 'Token upd-7-moved Gold');
    expect(asset.body.metadata.token_uri).toBe(moved);
    const gold = await api.rest('GET', `/v1/assets?collection_id=${id}&trait=Background:Gold`);
    expect(gold.body.result.map((a: { token_id: string }) => a.token_id)).toEqual(['7']);
    const blue = await api.rest('GET', `/v1/assets?collection_id=${id}&trait=Background:Blue`);
    expect(blue.body.result).toEqual([]);
  });

  test('when a BatchMetadataUpdate covers every id (0 to 2^256 - 1), then each known token of the collection is fetched again, from one range row', async () => {
    const { contract, id } = await collectionOnChain();
    for (const n of [1n, 2n, 3n]) await node.write(contract, node.accounts[0], 'mint', [node.accounts[1], n, host.serve(`batch-${n}`, 'Red')]);
    for (const n of [1n, 2n, 3n]) await named(contract, n, `Token batch-${n} Red`);

    for (const n of [1, 2, 3]) host.serve(`batch-${n}`, 'Green');
    await node.write(contract, node.accounts[0], 'announceBatch', [0n, MAX_TOKEN_ID]);
    for (const n of [1n, 2n, 3n]) await named(contract, n, `Token batch-${n} Green`);

    // The range is gone once expanded; the tokens of other collections were not asked for.
    const left = await api.ds.query('SELECT count(*)::int AS n FROM chain_metadata_update_ranges WHERE collection_id = $1', [id]);
    expect(left).toEqual([{ n: 0 }]);
    const green = await api.rest('GET', `/v1/assets?collection_id=${id}&trait=Background:Green`);
    expect(green.body.result).toHaveLength(3);
  });

  test('when a batch names part of the ids, then only those tokens are fetched again', async () => {
    const { contract } = await collectionOnChain();
    for (const n of [10n, 11n, 12n]) await node.write(contract, node.accounts[0], 'mint', [node.accounts[1], n, host.serve(`part-${n}`, 'Red')]);
    for (const n of [10n, 11n, 12n]) await named(contract, n, `Token part-${n} Red`);
    const before = host.hits.get('/token/part-12');

    for (const n of [10, 11, 12]) host.serve(`part-${n}`, 'Green');
    await node.write(contract, node.accounts[0], 'announceBatch', [10n, 11n]);
    for (const n of [10n, 11n]) await named(contract, n, `Token part-${n} Green`);
    // One more poll of the follower and the worker: token 12 was not asked for.
    await new Promise((r) => setTimeout(r, 300));
    expect((await restAsset(contract, 12n)).body.name).toBe('Token part-12 Red');
    expect(host.hits.get('/token/part-12')).toBe(before);
  });

  test('when a MetadataUpdate is undone by a reorg, then nothing breaks: the follower goes on and the next update is applied', async () => {
    const { contract } = await collectionOnChain();
    await node.write(contract, node.accounts[0], 'mint', [node.accounts[1], 5n, host.serve('reorg-5', 'Red')]);
    await named(contract, 5n, 'Token reorg-5 Red');

    const snapshot = await node.rpc<string>('evm_snapshot');
    await node.write(contract, node.accounts[0], 'setTokenURI', [5n, host.serve('reorg-5-orphan', 'Orphan')]);
    await named(contract, 5n, 'Token reorg-5-orphan Orphan');
    await node.rpc('evm_revert', [snapshot]);
    await node.mine(3);
    await node.write(contract, node.accounts[0], 'setTokenURI', [5n, host.serve('reorg-5-new', 'New')]);
    const asset = await named(contract, 5n, 'Token reorg-5-new New');
    expect(asset.body.owner).toBe(node.accounts[1]);
    const sync = await api.rest('GET', `/v1/chains/${CHAIN_ID}/sync`);
    expect(sync.body.last_error).toBeNull();
  });

  test('when a refresh is asked, then the tokenURI is read from the chain again, not only the stored one fetched', async () => {
    const { contract } = await collectionOnChain();
    const uri = host.serve('refresh-4', 'Red');
    await node.write(contract, node.accounts[0], 'mint', [node.accounts[1], 4n, uri]);
    const minted = await named(contract, 4n, 'Token refresh-4 Red');
    // A stored URI that is not the contract's (as one written before the follower knew better).
    await api.ds.query(`UPDATE assets SET metadata = metadata || '{"token_uri": "${host.url}/token/stale"}' WHERE id = $1`, [minted.body.id]);

    const res = await api.rest('POST', `/v1/assets/${contract}/4/refresh`, { chain_id: CHAIN_ID }, admin.key);
    expect(res.status).toBe(200);
    await until(() => restAsset(contract, 4n), (r) => r.body.metadata_status === 'fetched' && r.body.metadata.token_uri === uri, 'the chain URI to be fetched again');
  });
});

describe('a batch over many tokens', () => {
  test('when a BatchMetadataUpdate covers 2,500 known tokens, then it is one row, listed for reads 1,000 at a time and only while fewer than 1,000 wait', async () => {
    // Chain 1 is followed by no follower here: the range is expanded by the calls of the test alone.
    const created = await api.rest('POST', '/v1/collections', { contract_address: randomAddress(), chain_id: '1' }, admin.key);
    const collection = { id: created.body.id as string, contractAddress: created.body.contract_address as string };
    await api.ds.query(
      `INSERT INTO assets (collection_id, chain_id, token_address, token_id, name, description, image_url, metadata, owner)
       SELECT $1, '1', $2, g, '#' || g, '', '', '{}', $3 FROM generate_series(1, 2500) g`,
      [collection.id, collection.contractAddress, admin.address],
    );
    await api.ds.transaction((m) =>
      queueMetadataUpdates(m, '1', [collection], [{ blockNumber: 1n, tokenAddress: collection.contractAddress, fromTokenId: 0n, toTokenId: MAX_TOKEN_ID }]),
    );
    const state = async () =>
      (
        await api.ds.query(
          `SELECT (SELECT count(*)::int FROM chain_metadata_update_ranges WHERE collection_id = $1) AS ranges,
             (SELECT min(next_token_id)::text FROM chain_metadata_update_ranges WHERE collection_id = $1) AS next,
             (SELECT count(*)::int FROM chain_token_uris_pending p JOIN assets a ON a.id = p.asset_id WHERE a.collection_id = $1) AS pending`,
          [collection.id],
        )
      )[0];
    expect(await state()).toEqual({ ranges: 1, next: '0', pending: 0 });

    expect(await expandMetadataUpdateRange(api.ds, '1')).toBe(RANGE_CHUNK);
    expect(await state()).toEqual({ ranges: 1, next: '1001', pending: 1000 });
    // A thousand reads wait: nothing more is listed until they are done.
    expect(await expandMetadataUpdateRange(api.ds, '1')).toBe(0);
    expect(await state()).toEqual({ ranges: 1, next: '1001', pending: 1000 });

    const drain = () => api.ds.query(`DELETE FROM chain_token_uris_pending p USING assets a WHERE a.id = p.asset_id AND a.collection_id = $1`, [collection.id]);
    await drain();
    expect(await expandMetadataUpdateRange(api.ds, '1')).toBe(RANGE_CHUNK);
    expect(await state()).toEqual({ ranges: 1, next: '2001', pending: 1000 });
    await drain();
    // The last 500: the range is done and goes.
    expect(await expandMetadataUpdateRange(api.ds, '1')).toBe(501);
    expect(await state()).toEqual({ ranges: 0, next: null, pending: 500 });
    await drain();
  });
});

describe('ERC-2981', () => {
  const fees = (body: { fees: unknown[] }) => body.fees;

  test('when the contract declares a default royalty, then it shows as the collection royalty fee on both doors, and a refresh reads a new one', async () => {
    const receiver = node.accounts[3];
    const contract = await node.deploy('TestERC721Metadata');
    await node.write(contract, node.accounts[0], 'setDefaultRoyalty', [receiver, 250n]);
    const created = await api.rest('POST', '/v1/collections', { contract_address: contract, chain_id: CHAIN_ID }, admin.key);
    expect(created.status).toBe(200);

    const shown = await until(
      () => api.rest('GET', `/v1/collections/${contract}?chain_id=${CHAIN_ID}`),
      (r) => fees(r.body).length > 0,
      'the royalty to be read',
    );
    expect(fees(shown.body)).toEqual([{ address: receiver, basis_points: 250, type: 'royalty' }]);
    const gql = await api.gql(`query ($a: Address!, $c: String) { collection(address: $a, chainId: $c) { fees { address basisPoints type } } }`, { a: contract, c: CHAIN_ID });
    expect(gql.body.data.collection.fees).toEqual([{ address: receiver, basisPoints: 250, type: 'royalty' }]);

    await node.write(contract, node.accounts[0], 'setDefaultRoyalty', [receiver, 500n]);
    const refreshed = await api.gql(`mutation ($a: Address!, $c: String) { refreshCollectionMetadata(address: $a, chainId: $c) { queued } }`, { a: contract, c: CHAIN_ID }, admin.key);
    expect(refreshed.body.errors).toBeUndefined();
    const again = await until(
      () => api.rest('GET', `/v1/collections/${contract}?chain_id=${CHAIN_ID}`),
      (r) => (r.body.fees as { basis_points: number }[])[0]?.basis_points === 500,
      'the new royalty to be read',
    );
    expect(fees(again.body)).toEqual([{ address: receiver, basis_points: 500, type: 'royalty' }]);
  });

  test("when the collection's owner set fees, then they show, not the contract's royalty", async () => {
    const owner = await api.key();
    const contract = await node.deploy('TestERC721Metadata');
    await node.write(contract, node.accounts[0], 'setDefaultRoyalty', [node.accounts[3], 250n]);
    const ownFees = [{ address: owner.address, basis_points: 100 }];
    const created = await api.rest('POST', '/v1/collections', { contract_address: contract, chain_id: CHAIN_ID, fees: ownFees }, owner.key);
    expect(created.status).toBe(200);

    await until(
      () => api.ds.query('SELECT read_at FROM chain_collection_royalties WHERE collection_id = $1', [created.body.id]),
      (rows: { read_at: Date | null }[]) => rows[0]?.read_at != null,
      'the royalty to be read',
    );
    const res = await api.rest('GET', `/v1/collections/${contract}?chain_id=${CHAIN_ID}`);
    expect(fees(res.body)).toEqual([{ address: owner.address, basis_points: 100, type: 'royalty' }]);
  });

  test('when the contract has no ERC-2981 (the plain ERC721), then the collection has no fees', async () => {
    const contract = await node.deploy();
    const created = await api.rest('POST', '/v1/collections', { contract_address: contract, chain_id: CHAIN_ID }, admin.key);
    const read = await until(
      () => api.ds.query('SELECT supported FROM chain_collection_royalties WHERE collection_id = $1 AND NOT due', [created.body.id]),
      (rows: unknown[]) => rows.length > 0,
      'the royalty to be read',
    );
    expect(read).toEqual([{ supported: false }]);
    expect(fees((await api.rest('GET', `/v1/collections/${contract}?chain_id=${CHAIN_ID}`)).body)).toEqual([]);
  });
});
