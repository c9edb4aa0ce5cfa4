import { ChainNode, until } from './setup/chain-node';
import { TestServer } from './setup/server';
import { startFollowedChain } from './factories/metadata';

/**
 * Issue #41, per-token royalties: ERC-2981 royaltyInfo(tokenId, price) may answer differently per token
 * (OpenZeppelin's ERC721Royalty `_setTokenRoyalty`, test/chain/TestERC721Metadata.sol). The follower reads a
 * token's royalty with its tokenURI; a token whose royalty differs from its collection's shows its own as the
 * asset's and its listing's fees (both doors), and a listing's fees are checked against it; a change on chain
 * shows at the asset's refresh. Both databases.
 */
const CHAIN_ID = '31350';
let node: ChainNode;
let api: TestServer;
let admin: { key: string; address: string };

beforeAll(async () => {
  ({ node, api, admin } = await startFollowedChain(CHAIN_ID));
});

afterAll(async () => {
  await api?.close();
  await node?.close();
});

type Fee = { address: string; basis_points: number; type: string };
const restAsset = (contract: string, tokenId: number) => api.rest('GET', `/v1/assets/${contract}/${tokenId}?chain_id=${CHAIN_ID}`);
const feesOf = async (contract: string, tokenId: number): Promise<Fee[] | undefined> => (await restAsset(contract, tokenId)).body.fees;
const royalty = (address: string, basisPoints: number): Fee[] => [{ address, basis_points: basisPoints, type: 'royalty' }];

/** A TestERC721Metadata whose default royalty is 2.5% to `receiver`, registered, with tokens minted to `holder`; once the collection's royalty shows. */
async function royaltyCollection(receiver: string, holder: string, tokens: { id: number; own?: [string, number] }[]) {
  const contract = await node.deploy('TestERC721Metadata');
  await node.write(contract, node.accounts[0], 'setDefaultRoyalty', [receiver, 250n]);
  for (const t of tokens) if (t.own) await node.write(contract, node.accounts[0], 'setTokenRoyalty', [BigInt(t.id), t.own[0], BigInt(t.own[1])]);
  const created = await api.rest('POST', '/v1/collections', { contract_address: contract, chain_id: CHAIN_ID }, admin.key);
  expect(created.status).toBe(200);
  await until(async () => (await api.rest('GET', `/v1/collections/${contract}?chain_id=${CHAIN_ID}`)).body.fees, (f: Fee[]) => f.length > 0, "the collection's royalty");
  for (const t of tokens) await node.write(contract, node.accounts[0], 'mint', [holder, BigInt(t.id), '']);
  return { contract, id: created.body.id as string };
}

test("when a token's royaltyInfo differs from its collection's, then the asset shows its own royalty on both doors, and the others the collection's", async () => {
  const [, holder, defaultReceiver, ownReceiver] = node.accounts;
  const { contract } = await royaltyCollection(defaultReceiver, holder, [{ id: 1 }, { id: 2, own: [ownReceiver, 1000] }]);

  await until(() => feesOf(contract, 2), (f) => f?.[0]?.address === ownReceiver, "token 2's own royalty");
  expect(await feesOf(contract, 2)).toEqual(royalty(ownReceiver, 1000));
  expect(await feesOf(contract, 1)).toEqual(royalty(defaultReceiver, 250));
  const gql = await api.gql(
    `query ($a: Address!, $c: String) { one: asset(tokenAddress: $a, tokenId: "1", chainId: $c) { fees { address basisPoints type } }
       two: asset(tokenAddress: $a, tokenId: "2", chainId: $c) { fees { address basisPoints type } }
       collection(address: $a, chainId: $c) { fees { basisPoints } assets { result { tokenId fees { basisPoints } } } } }`,
    { a: contract, c: CHAIN_ID },
  );
  expect(gql.body.errors).toBeUndefined();
  expect(gql.body.data.one.fees).toEqual([{ address: defaultReceiver, basisPoints: 250, type: 'royalty' }]);
  expect(gql.body.data.two.fees).toEqual([{ address: ownReceiver, basisPoints: 1000, type: 'royalty' }]);
  expect(gql.body.data.collection.fees).toEqual([{ basisPoints: 250 }]);
  const byToken = Object.fromEntries(gql.body.data.collection.assets.result.map((a: { tokenId: string; fees: { basisPoints: number }[] }) => [a.tokenId, a.fees.map((f) => f.basisPoints)]));
  expect(byToken).toEqual({ '1': [250], '2': [1000] });
  // Only the token that differs keeps a royalty of its own.
  const stored = await api.ds.query('SELECT token_id::text AS id, royalty_fees AS fees FROM assets WHERE chain_id = $1 AND token_address = $2 ORDER BY token_id', [CHAIN_ID, contract]);
  expect(stored).toEqual([
    { id: '1', fees: null },
    { id: '2', fees: [{ address: ownReceiver, basisPoints: 1000 }] },
  ]);
});

test("when a token has its own royalty, then its listing's fees carry it and the maker fees are checked against it", async () => {
  const [, holder, defaultReceiver, ownReceiver] = node.accounts;
  const { contract } = await royaltyCollection(defaultReceiver, holder, [{ id: 1 }, { id: 2, own: [ownReceiver, 1000] }]);
  await until(() => feesOf(contract, 2), (f) => f?.[0]?.address === ownReceiver, "token 2's own royalty");
  const holderKey = await api.key({ address: holder });
  const maker = node.accounts[4];
  const list = async (tokenId: number, makerBps: number) =>
    api.rest('POST', '/v1/assets/listing', { asset_id: (await restAsset(contract, tokenId)).body.id, start_price: '1', maker_fees: { [maker]: makerBps } }, holderKey.key);

  // 1000 + 9100 is over 10000; 250 + 9100 is not.
  const refused = await list(2, 9100);
  expect(refused.status).toBe(422);
  expect(refused.body.error.details).toEqual([expect.objectContaining({ field: 'maker_fees', message: expect.stringContaining('add up to 10100 basis points') })]);
  const listed = await list(2, 500);
  expect(listed.status).toBe(200);
  expect(listed.body.fees).toEqual([...royalty(ownReceiver, 1000), { address: maker, basis_points: 500, type: 'maker' }]);
  const gql = await api.gql(`query ($a: Address!, $c: String) { asset(tokenAddress: $a, tokenId: "2", chainId: $c) { listing { id fees { address basisPoints type } } } }`, {
    a: contract,
    c: CHAIN_ID,
  });
  expect(gql.body.data.asset.listing.id).toBe(listed.body.id);
  expect(gql.body.data.asset.listing.fees).toEqual([
    { address: ownReceiver, basisPoints: 1000, type: 'royalty' },
    { address: maker, basisPoints: 500, type: 'maker' },
  ]);
  expect((await list(1, 9100)).status).toBe(200);
});

test("when a token's royalty changes on chain, then the asset shows it after its refresh, and one set back to the collection's shows the collection's", async () => {
  const [, holder, defaultReceiver, ownReceiver] = node.accounts;
  const { contract } = await royaltyCollection(defaultReceiver, holder, [{ id: 1 }, { id: 2, own: [ownReceiver, 1000] }]);
  await until(() => feesOf(contract, 2), (f) => f?.[0]?.address === ownReceiver, "token 2's own royalty");

  await node.write(contract, node.accounts[0], 'setTokenRoyalty', [1n, ownReceiver, 500n]);
  await node.write(contract, node.accounts[0], 'setTokenRoyalty', [2n, defaultReceiver, 250n]);
  await node.mine(2);
  // No log says a royalty changed: the assets show the royalty read before until they are refreshed.
  expect(await feesOf(contract, 1)).toEqual(royalty(defaultReceiver, 250));
  expect(await feesOf(contract, 2)).toEqual(royalty(ownReceiver, 1000));

  for (const id of [1, 2]) expect((await api.rest('POST', `/v1/assets/${contract}/${id}/refresh`, { chain_id: CHAIN_ID }, admin.key)).status).toBe(200);
  await until(() => feesOf(contract, 1), (f) => f?.[0]?.address === ownReceiver, "token 1's new royalty");
  expect(await feesOf(contract, 1)).toEqual(royalty(ownReceiver, 500));
  await until(() => feesOf(contract, 2), (f) => f?.[0]?.address === defaultReceiver, "token 2's royalty back to the collection's");
  expect(await api.ds.query('SELECT royalty_fees AS fees FROM assets WHERE chain_id = $1 AND token_address = $2 AND token_id = 2', [CHAIN_ID, contract])).toEqual([{ fees: null }]);
});
