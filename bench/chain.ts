import fs from 'node:fs';
import { AddressInfo } from 'node:net';
import path from 'node:path';
import ganache from 'ganache';
import { Client } from 'pg';
import { Abi, Address, encodeFunctionData, Hex } from 'viem';

/** What the chain row measures (docs/benchmark.md "Following the chain"). */
export interface ChainFigures {
  transfers: number;
  /** Seconds to make the chain: deploying and the batch transactions on the local node. */
  generationSeconds: number;
  /** Seconds from the collection's creation to the follower's last applied block reaching the head. */
  backfillSeconds: number;
  transfersPerSec: number;
  /** Seconds until every minted token's tokenURI was read (after the backfill). */
  tokenUriSeconds: number | null;
  lagP50Ms: number;
  lagP99Ms: number;
  lagSamples: number;
}

/** The local node and the gateway's side of it: the settings a follower of the node needs. */
export interface BenchChain {
  chainId: string;
  url: string;
  close(): Promise<void>;
}

const CHAIN_ID = '31337';
const BATCH = 1000;
/** Enough gas for a transaction of BATCH mints or transfers (about 25 and 30 million). */
const GAS = 1_000_000_000n;

type Rpc = <T>(method: string, params?: unknown[]) => Promise<T>;

/** A ganache node in this process on a loopback port, mining each transaction at once, blocks large enough for BATCH mints. */
export async function startBenchChain(): Promise<BenchChain & { rpc: Rpc }> {
  const server = ganache.server({
    logging: { quiet: true },
    chain: { chainId: Number(CHAIN_ID) },
    miner: { blockGasLimit: `0x${GAS.toString(16)}` },
    wallet: { deterministic: true, totalAccounts: 4 },
  });
  await server.listen(0, '127.0.0.1');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const rpc: Rpc = async <T>(method: string, params: unknown[] = []) => {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
    const body = (await res.json()) as { result?: T; error?: { message: string } };
    if (body.error) throw new Error(`${method}: ${body.error.message}`);
    return body.result as T;
  };
  return { chainId: CHAIN_ID, url, rpc, close: () => server.close() };
}

/**
 * The bench's chain row: `transfers` ERC721 transfers on the local node (70% mints, 30% transfers, BATCH per
 * transaction, one transaction per block), a collection of the contract created through the API of a
 * gateway that follows the node (`base`), the time until its last applied block is the head; then the lag
 * from a mined block (a transfer of one token, `samples` times) to its owner shown by GET /v1/assets.
 */
export async function benchChain(
  chain: BenchChain & { rpc: Rpc },
  base: string,
  adminKey: string,
  databaseUrl: string,
  options: { transfers: number; samples: number; log: (line: string) => void },
): Promise<ChainFigures> {
  const { rpc } = chain;
  const artefact = JSON.parse(fs.readFileSync(path.resolve('test/chain/TestERC721.json'), 'utf8')) as { abi: Abi; bytecode: Hex };
  const [deployer, alice, bob] = await rpc<Address[]>('eth_accounts');
  const send = async (from: Address, to: Address | undefined, data: Hex) => {
    const hash = await rpc<Hex>('eth_sendTransaction', [{ from, to, data, gas: `0x${GAS.toString(16)}` }]);
    const receipt = await rpc<{ status: string; contractAddress: Address | null; blockNumber: Hex }>('eth_getTransactionReceipt', [hash]);
    if (receipt.status !== '0x1') throw new Error(`transaction ${hash} reverted`);
    return receipt;
  };
  const call = (from: Address, contract: Address, functionName: string, args: unknown[]) => send(from, contract, encodeFunctionData({ abi: artefact.abi, functionName, args }));

  const started = Date.now();
  const deployed = await send(deployer, undefined, artefact.bytecode);
  const contract = deployed.contractAddress!.toLowerCase() as Address;
  const batches = Math.ceil(options.transfers / BATCH);
  const mintBatches = Math.ceil(batches * 0.7);
  for (let i = 0; i < batches; i += 1) {
    // Mints to alice first; then alice passes the first minted tokens to bob, a batch at a time.
    if (i < mintBatches) await call(deployer, contract, 'mintBatch', [alice, BigInt(i * BATCH), BigInt(BATCH)]);
    else await call(alice, contract, 'transferBatch', [bob, BigInt((i - mintBatches) * BATCH), BigInt(BATCH)]);
    if ((i + 1) % 10 === 0) options.log(`  chain: ${((i + 1) * BATCH).toLocaleString('en')} transfers made`);
  }
  const generationSeconds = (Date.now() - started) / 1000;
  const head = Number(await rpc<Hex>('eth_blockNumber'));
  const transfers = batches * BATCH;

  const created = await fetch(`${base}/v1/collections`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'access-token': adminKey },
    body: JSON.stringify({ contract_address: contract, chain_id: chain.chainId, name: 'Bench chain', start_block: Number(deployed.blockNumber) }),
  });
  if (!created.ok) throw new Error(`creating the bench's collection: HTTP ${created.status} ${await created.text()}`);
  const backfillStart = process.hrtime.bigint();
  const { id: collectionId } = (await created.json()) as { id: string };
  // The collection's own position (the chain's last applied block was at the head before it existed).
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  let tokenUriSeconds: number | null = null;
  let backfillSeconds: number;
  try {
    for (;;) {
      const { rows } = await db.query('SELECT synced_block::int AS synced FROM chain_collection_sync WHERE collection_id = $1', [collectionId]);
      if (rows.length && (rows[0] as { synced: number }).synced >= head) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    backfillSeconds = Number(process.hrtime.bigint() - backfillStart) / 1e9;
    options.log(`  chain: ${transfers.toLocaleString('en')} transfers applied in ${backfillSeconds.toFixed(1)} s`);

    // The tokenURIs are read after the backfill; the lag is measured once they are (they share the node).
    const deadline = Date.now() + 15 * 60_000;
    while (Date.now() < deadline) {
      const [{ n }] = (await db.query('SELECT count(*)::int AS n FROM chain_token_uris_pending')).rows as { n: number }[];
      if (n === 0) {
        tokenUriSeconds = Number(process.hrtime.bigint() - backfillStart) / 1e9 - backfillSeconds;
        break;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    await db.end();
  }
  options.log(`  chain: tokenURIs read ${tokenUriSeconds === null ? 'not within 15 min' : `in ${tokenUriSeconds.toFixed(1)} s`}`);
  const lastMinted = mintBatches * BATCH - 1;
  const asset = async (tokenId: number) => (await (await fetch(`${base}/v1/assets/${contract}/${tokenId}?chain_id=${chain.chainId}`)).json()) as { owner?: string };

  // Lag: a token moves back and forth between alice and bob (tokens past the transferred ones are alice's).
  const token = lastMinted;
  const lags: number[] = [];
  for (let i = 0; i < options.samples; i += 1) {
    const [from, to] = i % 2 === 0 ? [alice, bob] : [bob, alice];
    await call(from, contract, 'transferFrom', [from, to, BigInt(token)]);
    const mined = process.hrtime.bigint();
    for (;;) {
      if ((await asset(token)).owner === to.toLowerCase()) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    lags.push(Number(process.hrtime.bigint() - mined) / 1e6);
  }
  lags.sort((a, b) => a - b);
  const at = (p: number) => Math.round(lags[Math.min(lags.length - 1, Math.floor(lags.length * p))]);
  return {
    transfers,
    generationSeconds,
    backfillSeconds,
    transfersPerSec: Math.round(transfers / backfillSeconds),
    tokenUriSeconds,
    lagP50Ms: at(0.5),
    lagP99Ms: at(0.99),
    lagSamples: lags.length,
  };
}
