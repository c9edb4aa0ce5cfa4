import { Address } from 'viem';
import { startChainNode, ChainNode, until } from './setup/chain-node';
import { randomAddress, startServer, TestServer } from './setup/server';
import { CollectionRow, saveAsset, saveCollection } from './factories/marketplace';
import { saveAcceptedOffer, saveListing } from './factories/market';
import { buildCsv, csvRecord, importFormUrlencoded } from './factories/csv';

/**
 * collection_figures and collection_holdings (migration 1765630000000): each collection's holders, and its
 * all-time volume and sales, are kept by triggers in the transaction of every write that changes an
 * asset's owner or a sale (creates, imports, sales, the chain follower's mints, transfers and burns, a
 * reorg's removals), so statistics sorted by them walk an index. What a user sees: after parallel writers,
 * the figures of Collection.statistics and of GET /v1/statistics equal a recount from scratch.
 */
const CHAIN_ID = '31342';
let api: TestServer;
let node: ChainNode;
let follower: TestServer;

beforeAll(async () => {
  node = await startChainNode(Number(CHAIN_ID));
  api = await startServer();
  follower = await startServer({ chains: { follow: [{ chainId: CHAIN_ID, rpcUrl: node.url, confirmations: 0 }], pollMs: 50, blockRange: 2000 } });
});

afterAll(async () => {
  await follower?.close();
  await api?.close();
  await node?.close();
});

interface Figures {
  holders: number;
  holdings: Array<{ owner: string; assets: number }>;
  volume: number;
  sales: number;
}

/** The figures as kept, and as counted again from the assets and orders. */
async function keptAndCounted(collectionId: string): Promise<{ kept: Figures; counted: Figures }> {
  const [kept] = await api.ds.query(
    `SELECT f.holders, f.volume::float8 AS volume, f.sales,
       COALESCE((SELECT json_agg(json_build_object('owner', h.owner, 'assets', h.assets) ORDER BY h.owner) FROM collection_holdings h WHERE h.collection_id = f.collection_id), '[]') AS holdings
     FROM collection_figures f WHERE f.collection_id = $1`,
    [collectionId],
  );
  const [counted] = await api.ds.query(
    `SELECT (SELECT count(DISTINCT owner)::int FROM assets WHERE collection_id = $1) AS holders,
       COALESCE((SELECT json_agg(json_build_object('owner', owner, 'assets', n) ORDER BY owner) FROM (SELECT owner, count(*)::int AS n FROM assets WHERE collection_id = $1 GROUP BY owner) x), '[]') AS holdings,
       (SELECT COALESCE(sum(price), 0)::float8 FROM orders o WHERE o.collection_id = $1 AND o.status = 'completed' AND o.seller <> o.buyer AND o.currency = '0x0000000000000000000000000000000000000000') AS volume,
       (SELECT count(*)::int FROM orders o WHERE o.collection_id = $1 AND o.status = 'completed' AND o.seller <> o.buyer AND o.currency = '0x0000000000000000000000000000000000000000') AS sales`,
    [collectionId],
  );
  return { kept, counted };
}

const STATISTICS = /* GraphQL */ `
  query ($id: String!) { collection(id: $id) { statistics(period: ALL) { totalHolders totalTransactions volume } } }`;

/** Its all-time record as a user reads it. */
async function statisticsOf(collection: CollectionRow | string) {
  const res = await api.gql(STATISTICS, { id: typeof collection === 'string' ? collection : collection.id });
  return res.body.data?.collection?.statistics;
}

test('when assets are created, imported and sold by parallel writers, then holders, volume and sales equal a recount', async () => {
  const creator = await api.key({ admin: true });
  const takers = await Promise.all(Array.from({ length: 4 }, () => api.key()));
  const [first, second] = [await saveCollection(api, creator.key), await saveCollection(api, creator.key)];
  const others = Array.from({ length: 3 }, () => randomAddress());
  const importRows = Array.from({ length: 15 }, (_, i) => csvRecord(others[i % 3], {}, i + 1));
  const created = await Promise.all([
    ...Array.from({ length: 8 }, () => saveAsset(api, creator.key, first, creator.address)),
    ...Array.from({ length: 4 }, (_, i) => saveAsset(api, creator.key, second, others[i % 2])),
  ]);
  const imports = await Promise.all([importFormUrlencoded(api, first.id, buildCsv(importRows), creator.key), importFormUrlencoded(api, second.id, buildCsv(importRows.slice(0, 5)), creator.key)]);
  expect(imports.map((r) => r.status)).toEqual([200, 200]);

  // Six of the creator's assets sold at once to four buyers (two buy twice), one listed on the side.
  const mine = created.slice(0, 8);
  await saveListing(api, creator.key, mine[7].id, { startPrice: 9 });
  await Promise.all(
    mine.slice(0, 6).map((asset, i) =>
      saveAcceptedOffer(api, { owner: creator, collection: first, asset }, takers[i % 4], i + 1),
    ),
  );
  for (const collection of [first, second]) {
    const { kept, counted } = await keptAndCounted(collection.id);
    expect(kept).toEqual(counted);
    expect(await statisticsOf(collection)).toEqual({ totalHolders: counted.holders, totalTransactions: counted.sales, volume: counted.volume });
  }
  // creator, three importers, four buyers.
  expect((await keptAndCounted(first.id)).kept).toMatchObject({ holders: 8, volume: 21, sales: 6 });
});

test('when an import fails on its last row, then no holding of it is kept', async () => {
  const creator = await api.key({ admin: true });
  const collection = await saveCollection(api, creator.key);
  await saveAsset(api, creator.key, collection, creator.address);
  const failed = await importFormUrlencoded(api, collection.id, buildCsv([csvRecord(randomAddress(), {}, 1), csvRecord('not an address', {}, 2)]), creator.key);
  expect(failed.status).toBe(422);
  const { kept, counted } = await keptAndCounted(collection.id);
  expect(kept).toEqual(counted);
  expect(kept.holders).toBe(1);
});

test('when the chain follower applies mints, transfers and a burn, then holders equal a recount and statistics sorted by holders show it', async () => {
  const admin = await api.key({ admin: true });
  const contract = await node.deploy();
  const made = await api.rest('POST', '/v1/collections', { contract_address: contract, chain_id: CHAIN_ID, name: 'Followed holders' }, admin.key);
  expect(made.status).toBe(200);
  const [minter, alice, bob, carol] = node.accounts as Address[];
  await node.write(contract, minter, 'mintBatch', [alice, 1n, 20n]);
  await node.write(contract, alice, 'transferBatch', [bob, 1n, 5n]);
  await node.transfer(contract, alice, carol, 10n);
  await node.write(contract, bob, 'burn', [2n]);
  const owner = async (tokenId: number) => (await api.rest('GET', `/v1/assets/${contract}/${tokenId}?chain_id=${CHAIN_ID}`)).body.owner;
  await until(() => owner(2), (o) => o === '0x0000000000000000000000000000000000000000', 'the burn', 15_000);
  await until(() => owner(10), (o) => o === carol, 'the transfer to carol', 15_000);

  const { kept, counted } = await keptAndCounted(made.body.id);
  expect(kept).toEqual(counted);
  // alice, bob, carol and the zero address of the burned token.
  expect(kept.holders).toBe(4);
  expect(await statisticsOf(made.body.id)).toMatchObject({ totalHolders: 4 });
  const chainPage = await api.rest('GET', `/v1/statistics?period=30d&order_by=total_holders&chain_id=${CHAIN_ID}&limit=100`);
  expect(chainPage.status).toBe(200);
  const holders = chainPage.body.result.map((r: { total_holders: number }) => r.total_holders);
  expect(holders).toEqual([...holders].sort((a: number, b: number) => b - a));
  expect(chainPage.body.result.find((r: { collection: { id: string } }) => r.collection.id === made.body.id)).toMatchObject({ total_holders: 4 });
});
