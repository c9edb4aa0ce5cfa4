import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { AddressInfo } from 'node:net';
import os from 'node:os';
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
  lagP50Ms: number | null;
  lagP99Ms: number | null;
  lagSamples: number;
}

/** The local node and the gateway's side of it: the settings a follower of the node needs. */
export interface BenchChain {
  chainId: string;
  url: string;
  close(): Promise<void>;
}

/** The bench's chain as it was made (kept beside the cached node's database). */
interface MadeChain {
  transfers: number;
  contract: Address;
  deployBlock: number;
  /** The head after the last batch: the block the backfill must reach. */
  head: number;
  mintBatches: number;
  generationSeconds: number;
}

const CHAIN_ID = '31337';
const BATCH = 1000;
/** Enough gas for a transaction of BATCH mints or transfers (about 25 and 30 million). */
const GAS = 1_000_000_000n;

type Rpc = <T>(method: string, params?: unknown[]) => Promise<T>;
type Artefact = { abi: Abi; bytecode: Hex };
const readArtefact = () => JSON.parse(fs.readFileSync(path.resolve('test/chain/TestERC721.json'), 'utf8')) as Artefact;

/** A ganache node in this process on a loopback port, its chain kept in `dbPath`, mining each transaction at once, blocks large enough for BATCH mints. */
async function startNode(dbPath: string): Promise<{ url: string; rpc: Rpc; close(): Promise<void> }> {
  const server = ganache.server({
    logging: { quiet: true },
    chain: { chainId: Number(CHAIN_ID) },
    database: { dbPath },
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
  return { url, rpc, close: () => server.close() };
}

/** Sends a transaction from an unlocked account and waits for its receipt (mined at once). */
function sender(rpc: Rpc, abi: Abi) {
  const send = async (from: Address, to: Address | undefined, data: Hex) => {
    const hash = await rpc<Hex>('eth_sendTransaction', [{ from, to, data, gas: `0x${GAS.toString(16)}` }]);
    const receipt = await rpc<{ status: string; contractAddress: Address | null; blockNumber: Hex }>('eth_getTransactionReceipt', [hash]);
    if (receipt.status !== '0x1') throw new Error(`transaction ${hash} reverted`);
    return receipt;
  };
  const call = (from: Address, contract: Address, functionName: string, args: unknown[]) => send(from, contract, encodeFunctionData({ abi, functionName, args }));
  return { send, call };
}

/**
 * `transfers` ERC721 transfers on the node (70% mints, 30% transfers, BATCH per transaction, one transaction
 * per block): mints to alice first; then alice passes the first minted tokens to bob, a batch at a time.
 */
async function makeChain(rpc: Rpc, artefact: Artefact, transfers: number, log: (line: string) => void): Promise<MadeChain> {
  const [deployer, alice, bob] = await rpc<Address[]>('eth_accounts');
  const { send, call } = sender(rpc, artefact.abi);
  const started = Date.now();
  const deployed = await send(deployer, undefined, artefact.bytecode);
  const contract = deployed.contractAddress!.toLowerCase() as Address;
  const batches = Math.ceil(transfers / BATCH);
  const mintBatches = Math.ceil(batches * 0.7);
  for (let i = 0; i < batches; i += 1) {
    if (i < mintBatches) await call(deployer, contract, 'mintBatch', [alice, BigInt(i * BATCH), BigInt(BATCH)]);
    else await call(alice, contract, 'transferBatch', [bob, BigInt((i - mintBatches) * BATCH), BigInt(BATCH)]);
    if ((i + 1) % 10 === 0) log(`  chain: ${((i + 1) * BATCH).toLocaleString('en')} transfers made`);
  }
  return {
    transfers: batches * BATCH,
    contract,
    deployBlock: Number(deployed.blockNumber),
    head: Number(await rpc<Hex>('eth_blockNumber')),
    mintBatches,
    generationSeconds: (Date.now() - started) / 1000,
  };
}

/**
 * The bench's node with its chain of `transfers` transfers. The chain is made once and kept (ganache's
 * database and what was made) in data/bench-chain-<transfers>-<contract bytecode hash>/; each run starts the
 * node on a copy of it (the lag samples add blocks, which the next run must not see), so a second run starts
 * in seconds instead of the minutes that making 100,000 transfers takes.
 */
export async function startBenchChain(transfers: number, log: (line: string) => void): Promise<BenchChain & { rpc: Rpc; made: MadeChain; cached: boolean }> {
  const artefact = readArtefact();
  const key = `${Math.ceil(transfers / BATCH) * BATCH}-${createHash('sha256').update(artefact.bytecode).digest('hex').slice(0, 12)}`;
  const cache = path.resolve(`data/bench-chain-${key}`);
  const madeFile = path.join(cache, 'chain.json');
  const cached = fs.existsSync(madeFile);
  if (!cached) {
    log(`  chain: making ${transfers.toLocaleString('en')} transfers, kept in ${cache} for the next runs`);
    const making = `${cache}.making-${process.pid}`;
    fs.rmSync(making, { recursive: true, force: true });
    fs.mkdirSync(making, { recursive: true });
    const node = await startNode(path.join(making, 'db'));
    let made: MadeChain;
    try {
      made = await makeChain(node.rpc, artefact, transfers, log);
    } finally {
      await node.close();
    }
    fs.writeFileSync(path.join(making, 'chain.json'), JSON.stringify(made, null, 2));
    fs.rmSync(cache, { recursive: true, force: true });
    fs.renameSync(making, cache);
  } else {
    log(`  chain: the chain kept in ${cache}`);
  }
  const made = JSON.parse(fs.readFileSync(madeFile, 'utf8')) as MadeChain;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-chain-'));
  fs.cpSync(path.join(cache, 'db'), work, { recursive: true });
  const node = await startNode(work);
  const head = Number(await node.rpc<Hex>('eth_blockNumber'));
  if (head !== made.head) throw new Error(`the kept chain in ${cache} ends at block ${head}, not ${made.head}: remove the directory to make it again`);
  return {
    chainId: CHAIN_ID,
    url: node.url,
    rpc: node.rpc,
    made,
    cached,
    close: async () => {
      await node.close();
      fs.rmSync(work, { recursive: true, force: true });
    },
  };
}

/**
 * The bench's chain row: a collection of the chain's contract created through the API of a gateway that
 * follows the node (`base`), the time until its position reaches the chain's last block; then the lag from
 * a mined block (a transfer of one token, `samples` times) to its owner shown by GET /v1/assets.
 */
export async function benchChain(
  chain: BenchChain & { rpc: Rpc; made: MadeChain },
  base: string,
  adminKey: string,
  databaseUrl: string,
  options: { samples: number; log: (line: string) => void },
): Promise<ChainFigures> {
  const { rpc, made } = chain;
  const { contract, head, transfers, mintBatches } = made;
  const [, alice, bob] = await rpc<Address[]>('eth_accounts');
  const { call } = sender(rpc, readArtefact().abi);

  const created = await fetch(`${base}/v1/collections`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'access-token': adminKey },
    body: JSON.stringify({ contract_address: contract, chain_id: chain.chainId, name: 'Bench chain', start_block: made.deployBlock }),
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
    // Without lag samples neither is waited for (`--lag-samples 0`: the backfill alone, for A/B runs).
    const deadline = options.samples ? Date.now() + 15 * 60_000 : 0;
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
  if (options.samples) options.log(`  chain: tokenURIs read ${tokenUriSeconds === null ? 'not within 15 min' : `in ${tokenUriSeconds.toFixed(1)} s`}`);
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
  const at = (p: number) => (lags.length ? Math.round(lags[Math.min(lags.length - 1, Math.floor(lags.length * p))]) : null);
  return {
    transfers,
    generationSeconds: made.generationSeconds,
    backfillSeconds,
    transfersPerSec: Math.round(transfers / backfillSeconds),
    tokenUriSeconds,
    lagP50Ms: at(0.5),
    lagP99Ms: at(0.99),
    lagSamples: lags.length,
  };
}
