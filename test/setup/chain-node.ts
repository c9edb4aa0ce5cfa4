import ganache from 'ganache';
import { AddressInfo } from 'node:net';
import { Abi, Address, createPublicClient, encodeFunctionData, Hex, http, PublicClient } from 'viem';
import erc721 from '../chain/TestERC721.json';
import erc721Metadata from '../chain/TestERC721Metadata.json';
import erc721Owned from '../chain/TestERC721Owned.json';

/** The tests' contracts (test/chain/*.sol, compiled by scripts/compile-test-erc721.js). */
const CONTRACTS = {
  /** OpenZeppelin's ERC721, open mint, tokenURI https://nft.test/token/<id>, batch mints and transfers, burn. */
  TestERC721: erc721,
  /** ERC721URIStorage (ERC-4906) + ERC721Royalty (ERC-2981): mint(to, id, uri), setTokenURI, announceBatch, royalties. */
  TestERC721Metadata: erc721Metadata,
  /** ERC-173 ownership (Ownable): owner() is the deployer (accounts[0]) until transferOwnership. */
  TestERC721Owned: erc721Owned,
};
export type TestContract = keyof typeof CONTRACTS;

/**
 * A local EVM node (ganache, in this process, on a loopback port) with the tests' ERC721: OpenZeppelin's
 * contract with an open mint (test/chain/TestERC721.sol, compiled by test/chain/compile.js). Every
 * transaction is mined into a block of its own at once; `mine` adds empty blocks.
 */
export interface ChainNode {
  url: string;
  chainId: number;
  accounts: Address[];
  client: PublicClient;
  /** Deploys a new TestERC721 (or the other contract named); returns its address in lower case (as the gateway stores addresses). */
  deploy(contract?: TestContract): Promise<Address>;
  mint(contract: Address, to: Address, tokenId: bigint): Promise<Hex>;
  transfer(contract: Address, from: Address, to: Address, tokenId: bigint): Promise<Hex>;
  /** Any function of the deployed contract (TestERC721's mintBatch, transferBatch, burn; TestERC721Metadata's setTokenURI ...), sent by `from`. */
  write(contract: Address, from: Address, functionName: string, args: unknown[]): Promise<Hex>;
  mine(blocks?: number): Promise<void>;
  rpc<T = unknown>(method: string, params?: unknown[]): Promise<T>;
  close(): Promise<void>;
}

export async function startChainNode(chainId: number): Promise<ChainNode> {
  const server = ganache.server({ logging: { quiet: true }, chain: { chainId }, wallet: { deterministic: true, totalAccounts: 5 } });
  await server.listen(0, '127.0.0.1');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const transport = http(url, { retryCount: 0 });
  const client = createPublicClient({ transport, pollingInterval: 20 }) as PublicClient;
  const rpc = async <T>(method: string, params: unknown[] = []): Promise<T> => {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
    const body = (await res.json()) as { result?: T; error?: { message: string } };
    if (body.error) throw new Error(`${method}: ${body.error.message}`);
    return body.result as T;
  };
  const accounts = (await rpc<Address[]>('eth_accounts')).map((a) => a.toLowerCase() as Address);
  /** The ABI of each contract deployed, by address. */
  const abis = new Map<string, Abi>();
  /** Sends a transaction from an unlocked account of the node and waits for its receipt. */
  const send = async (tx: { from: Address; to?: Address; data: Hex }) => {
    const hash = await rpc<Hex>('eth_sendTransaction', [{ ...tx, gas: '0x4c4b40' }]);
    const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    if (receipt.status !== 'success') throw new Error(`transaction ${hash} reverted`);
    return receipt;
  };
  const write = async (contract: Address, from: Address, functionName: string, args: unknown[]) =>
    (await send({ from, to: contract, data: encodeFunctionData({ abi: abis.get(contract.toLowerCase()) ?? (erc721.abi as Abi), functionName, args }) }))
      .transactionHash;
  return {
    url,
    chainId,
    accounts,
    client,
    async deploy(contract: TestContract = 'TestERC721') {
      const receipt = await send({ from: accounts[0], data: CONTRACTS[contract].bytecode as Hex });
      const address = receipt.contractAddress!.toLowerCase() as Address;
      abis.set(address, CONTRACTS[contract].abi as Abi);
      return address;
    },
    mint: (contract, to, tokenId) => write(contract, accounts[0], 'mint', [to, tokenId]),
    transfer: (contract, from, to, tokenId) => write(contract, from, 'transferFrom', [from, to, tokenId]),
    write,
    async mine(blocks = 1) {
      for (let i = 0; i < blocks; i++) await rpc('evm_mine');
    },
    rpc,
    close: () => server.close(),
  };
}

/** Polls `read` until `done` holds of its value (`withinMs`, 30 s by default, at most; every 50 ms); returns the value. A follower restarted beside a full suite on the one embedded database took over 5 s to catch up (Node 24 in CI). */
export async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, withinMs = 30_000): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
