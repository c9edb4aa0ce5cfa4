import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { CHAIN_STEP_TRANSFERS_DEFAULT, type ChainFollowSettings, type ChainSettings } from '../../config';
import type { Span } from '@opentelemetry/api';
import { logger } from '../../common/logger';
import { traceTask } from '../../common/tracing';
import { chainFollowing, chainHeadBlock, chainLagBlocks, chainReorgs, chainStepErrors, chainTransfersApplied } from '../../common/metrics';
import { applyChainStep, rollBackChain, TrackedCollection } from './chain.transfers';
import { afterRange, planRange, RangePlan, RangeRead, readRange, stepsOfRange } from './chain.ranges';
import { PendingToken, readPendingTokenUris, TOKEN_URI_BATCH, TokenRead } from './chain.token-uris';
import { expandMetadataUpdateRange } from './chain.metadata-updates';
import { DueRoyalty, readDueRoyalties, ROYALTY_SALE_PRICE, RoyaltyRead } from './chain.royalties';
import { readApprovals, withApprovals } from './chain.approvals';
import { claimsCheckedAbove, OwnersAtFork } from './chain.ownership';
import { OWNER_FUNCTION, ZERO_ADDRESS } from './chain.owner';

import { viem } from '../../common/eip712';
import { tracedTransport, unanswered } from './chain.viem';

const TOKEN_URI_FUNCTION = 'function tokenURI(uint256 tokenId) view returns (string)';
const ERC2981_FUNCTIONS = [
  'function supportsInterface(bytes4 interfaceId) view returns (bool)',
  'function royaltyInfo(uint256 tokenId, uint256 salePrice) view returns (address receiver, uint256 royaltyAmount)',
] as const;
/** ERC-2981's interface id, as supportsInterface is asked about it. */
const ERC2981_INTERFACE = '0x2a55205a';
const ERROR_RETRY_MS = 1000;
/** Applied blocks compared with the chain, newest first, when looking for where a reorg forked. */
const REORG_SEARCH_BLOCKS = 64;
/** Successive reads whose answers were small (fewer than half of CHAIN_STEP_TRANSFERS logs) before a reduced range is doubled. */
const RANGE_GROWTH_READS = 4;
/**
 * A follower starts with CHAIN_BLOCK_RANGE / 64 blocks per eth_getLogs and grows from there (RANGE_GROWTH_READS):
 * a node builds a whole answer before it is found too large, so starting at the full range over a dense
 * stretch cost it several oversized answers (the bench's 100 blocks of 1,000 transfers: 60, 30 and 15 MB,
 * 6 s of ganache's time, before the first fitting read). Over a sparse chain the range reaches
 * CHAIN_BLOCK_RANGE after 24 small reads.
 */
const INITIAL_RANGE_SHARE = 64n;

/**
 * Whether eth_getLogs failed for the size of its answer: viem's limit on a response's body or its timeout,
 * or a node's limit on results or range (geth, Alchemy, Infura and others word it differently).
 */
function tooManyLogs(err: unknown): boolean {
  const { ResponseBodyTooLargeError, TimeoutError, LimitExceededRpcError, BaseError } = viem();
  if (err instanceof BaseError && err.walk((e) => e instanceof ResponseBodyTooLargeError || e instanceof TimeoutError || e instanceof LimitExceededRpcError)) return true;
  return err instanceof Error && /more than \d+ (results|logs)|too many|response size|range is too (large|wide)|exceed/i.test(err.message);
}

/** The advisory lock key of a chain's follower: one per chain across every process on the database. */
const LOCK_SQL = `SELECT pg_try_advisory_lock(hashtext('nftgw:chain-follower'), hashtext($1)) AS locked`;

/**
 * Follows one chain (docs/chain.md): while it holds the chain's advisory lock (on a connection of its own),
 * it reads the head, and applies the confirmed blocks in order from where each collection of the chain was
 * read up to: the ERC721 Transfer logs of their contracts, a range of blocks per step, each step in one
 * transaction. Another process that follows the same chain waits for the lock and takes over when it is free.
 */
export class ChainFollower {
  private stopped = false;
  /** Ends the sleeps under way (of the steps' loop and of the tokenURI reads' loop) at stop. */
  private readonly wakers = new Set<() => void>();
  private lockClient: Client | undefined;
  private running: Promise<void>[] = [];
  /** True while this process holds the chain's lock and follows it. */
  following = false;
  /** True while the steps have not reached the confirmed block (a backfill): the tokenURIs wait. */
  private catchingUp = false;
  private readonly client;
  /** For tokenURI reads: the calls of a round go to the node as one JSON-RPC batch. */
  private readonly batchClient;
  /** The span of the step under way (its RPC calls' parent), while traced; and of the tokenURI loop's round. */
  private stepSpan: Span | undefined;
  private roundSpan: Span | undefined;
  /**
   * Blocks asked for in one eth_getLogs: from CHAIN_BLOCK_RANGE / 64 at start, halved when an answer was too
   * large, doubled (up to CHAIN_BLOCK_RANGE) after RANGE_GROWTH_READS successive small answers.
   */
  private range: bigint;
  /** Successive small answers at the current (reduced) range. */
  private smallReads = 0;
  /**
   * Transfers applied in one transaction at most (whole blocks: a block with more is applied whole). A read
   * range with more is applied in several; one with fewer than half of it counts towards growing a reduced range.
   */
  private readonly stepTransfers: number;
  /** The next range, read while a step writes (readAhead). */
  private ahead: { key: string; read: Promise<RangeRead> } | undefined;

  constructor(
    private readonly ds: DataSource,
    private readonly chain: ChainFollowSettings,
    private readonly options: Pick<ChainSettings, 'pollMs' | 'blockRange' | 'stepTransfers'>,
  ) {
    const { createPublicClient } = viem();
    this.client = createPublicClient({ transport: tracedTransport(chain.rpcUrl, chain.chainId, () => this.stepSpan) });
    const full = BigInt(options.blockRange);
    this.range = full / INITIAL_RANGE_SHARE > 1n ? full / INITIAL_RANGE_SHARE : 1n;
    this.stepTransfers = options.stepTransfers ?? CHAIN_STEP_TRANSFERS_DEFAULT;
    this.batchClient = createPublicClient({ transport: tracedTransport(chain.rpcUrl, chain.chainId, () => this.roundSpan, { batch: { batchSize: TOKEN_URI_BATCH } }) });
  }

  private readonly holdStep = (span: Span | undefined) => (this.stepSpan = span);
  private readonly holdRound = (span: Span | undefined) => (this.roundSpan = span);

  /**
   * `work` as a trace of its own named `name` (while traces are on), its RPC calls under it (`hold` keeps its
   * span for the transport). Only work that reads the chain for something new is traced: a poll that finds
   * nothing makes no trace (one per poll would bury the requests').
   */
  private traced<T>(name: string, hold: (span: Span | undefined) => void, work: () => Promise<T>): Promise<T> {
    return traceTask(name, { 'gateway.chain_id': this.chain.chainId }, null, async (span) => {
      hold(span);
      try {
        return await work();
      } finally {
        hold(undefined);
      }
    });
  }

  start(): void {
    this.running = [this.run(), this.readTokenUris()];
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeSleepers();
    await Promise.all(this.running);
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        if (!this.following) {
          this.following = await this.lock();
          chainFollowing.set({ chain_id: this.chain.chainId }, this.following ? 1 : 0);
        }
        if (this.following) {
          const caughtUp = await this.step();
          this.catchingUp = !caughtUp;
          if (!caughtUp) continue;
        }
      } catch (err) {
        this.catchingUp = false;
        // A block read between the head and now is gone: a reorg under way, which the next step finds.
        if (err instanceof viem().BlockNotFoundError) {
          await this.sleep(this.options.pollMs);
          continue;
        }
        await this.recordError(err);
        await this.sleep(ERROR_RETRY_MS);
        continue;
      }
      await this.sleep(this.options.pollMs);
    }
    await this.unlock();
  }

  /**
   * The tokenURIs of the tokens the steps saw minted, a round at a time, apart from the steps (which do not
   * wait for them); only while this process follows the chain, and once it has caught up: during a backfill
   * the node's time (a round is 200 eth_calls) goes to the owners first. A failed round is tried again.
   */
  private async readTokenUris(): Promise<void> {
    while (!this.stopped) {
      let taken = 0;
      if (this.following && !this.catchingUp) {
        // The collections' royalties first: a token's own is kept only where it differs from its collection's.
        taken = await this.describeRound().catch((err: unknown) => {
          logger.warn('reading metadata updates or royalties failed; retrying', { chainId: this.chain.chainId, error: err instanceof Error ? err.message.split('\n')[0] : String(err) });
          return 0;
        });
        taken += await readPendingTokenUris(this.ds, this.chain.chainId, (tokens) => this.traced('chain tokenURIs', this.holdRound, () => this.tokenUris(tokens))).catch(
          (err: unknown) => {
            logger.warn('reading tokenURIs failed; retrying', { chainId: this.chain.chainId, error: err instanceof Error ? err.message.split('\n')[0] : String(err) });
            return 0;
          },
        );
      }
      if (!taken) await this.sleep(this.options.pollMs);
    }
  }

  /**
   * What the contracts say of their tokens and collections besides transfers, a round at a time with the
   * tokenURIs: one chunk of a BatchMetadataUpdate range listed for tokenURI reads (chain.metadata-updates.ts),
   * and the ERC-2981 royalties due (chain.royalties.ts). Returns the rows taken (0: nothing to do).
   */
  private async describeRound(): Promise<number> {
    const listed = await expandMetadataUpdateRange(this.ds, this.chain.chainId);
    return listed + (await readDueRoyalties(this.ds, this.chain.chainId, (due) => this.traced('chain royalties', this.holdRound, () => this.royalties(due))));
  }

  /**
   * Each contract's ERC-2981 royalty, in one batch: supportsInterface(0x2a55205a), then royaltyInfo of those
   * that answer true. A contract that answers false or reverts (no ERC-165) has none (null); a call that did
   * not reach an answer is undefined (read again later).
   */
  private async royalties(due: DueRoyalty[]): Promise<RoyaltyRead[]> {
    const { parseAbi } = viem();
    const abi = parseAbi(ERC2981_FUNCTIONS);
    const answered = (reason: unknown) => !unanswered(reason);
    const supports = await Promise.allSettled(
      due.map((d) => this.batchClient.readContract({ address: d.contractAddress as `0x${string}`, abi, functionName: 'supportsInterface', args: [ERC2981_INTERFACE] })),
    );
    const infos = await Promise.allSettled(
      due.map((d, i) =>
        supports[i].status === 'fulfilled' && supports[i].value
          ? this.batchClient.readContract({ address: d.contractAddress as `0x${string}`, abi, functionName: 'royaltyInfo', args: [d.tokenId, ROYALTY_SALE_PRICE] })
          : Promise.resolve(null),
      ),
    );
    return due.map((_, i) => {
      const support = supports[i];
      if (support.status === 'rejected') return answered(support.reason) ? null : undefined;
      const info = infos[i];
      if (info.status === 'rejected') return answered(info.reason) ? null : undefined;
      return info.value ? { receiver: info.value[0], amount: info.value[1] } : null;
    });
  }

  /**
   * tokenURI(id) of each token, and royaltyInfo(id, ROYALTY_SALE_PRICE) of those whose collection may declare
   * an ERC-2981 royalty, in one batch. A call that failed at the node (a revert: nodes report it with various
   * codes; a contract without the function) is null; one that did not reach an answer (the node did not
   * answer or limits the rate) is undefined: a tokenURI is read again later, a royalty kept as it is.
   */
  private async tokenUris(tokens: PendingToken[]): Promise<TokenRead[]> {
    const { parseAbi } = viem();
    const abi = parseAbi([TOKEN_URI_FUNCTION, ...ERC2981_FUNCTIONS]);
    const address = (t: PendingToken) => t.tokenAddress as `0x${string}`;
    const [uris, royalties] = await Promise.all([
      Promise.allSettled(tokens.map((t) => this.batchClient.readContract({ address: address(t), abi, functionName: 'tokenURI', args: [t.tokenId] }))),
      Promise.allSettled(
        tokens.map((t) =>
          t.royalty ? this.batchClient.readContract({ address: address(t), abi, functionName: 'royaltyInfo', args: [t.tokenId, ROYALTY_SALE_PRICE] }) : Promise.resolve(undefined),
        ),
      ),
    ]);
    const settled = <T>(r: PromiseSettledResult<T>): T | null | undefined => (r.status === 'fulfilled' ? r.value : unanswered(r.reason) ? undefined : null);
    return tokens.map((_, i) => {
      const royalty = settled(royalties[i]);
      return { uri: settled(uris[i]), royalty: royalty ? { receiver: royalty[0], amount: royalty[1] } : royalty };
    });
  }

  /** Takes the chain's advisory lock on a connection of its own; the embedded database is one process's alone. */
  private async lock(): Promise<boolean> {
    const url = (this.ds.options as { url?: string }).url;
    if (!url) return true;
    const client = new Client({ connectionString: url, application_name: `nftgw-chain-${this.chain.chainId}` });
    client.on('error', () => this.lost(client));
    try {
      await client.connect();
      const [{ version }] = (await client.query('SELECT version()')).rows as { version: string }[];
      if (version.includes('PGlite')) {
        await client.end();
        return true;
      }
      const [{ locked }] = (await client.query(LOCK_SQL, [this.chain.chainId])).rows as { locked: boolean }[];
      if (!locked) {
        await client.end();
        return false;
      }
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    client.on('end', () => this.lost(client));
    this.lockClient = client;
    logger.info('following the chain', { chainId: this.chain.chainId });
    return true;
  }

  /** The lock's connection ended: the lock is gone with it, so this process stops following until it has it again. */
  private lost(client: Client): void {
    if (this.lockClient !== client) return;
    this.lockClient = undefined;
    this.following = false;
    this.ahead = undefined;
    chainFollowing.set({ chain_id: this.chain.chainId }, 0);
    logger.warn('the chain follower lost its lock connection', { chainId: this.chain.chainId });
  }

  private async unlock(): Promise<void> {
    const client = this.lockClient;
    this.lockClient = undefined;
    this.following = false;
    this.ahead = undefined;
    chainFollowing.set({ chain_id: this.chain.chainId }, 0);
    if (client) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
    }
  }

  /** One range of confirmed blocks; true when every collection of the chain has reached the confirmed block. */
  async step(): Promise<boolean> {
    const { chainId, confirmations } = this.chain;
    // The read ahead is this step's to use or drop, whatever happens to the step.
    const ahead = this.ahead;
    this.ahead = undefined;
    const head = await this.client.getBlockNumber({ cacheTime: 0 });
    const confirmed = head - BigInt(confirmations);
    const labels = { chain_id: chainId };
    chainHeadBlock.set(labels, Number(head));
    await this.ds.query(
      `INSERT INTO chain_sync (chain_id, head_block, confirmations, updated_at) VALUES ($1, $2, $3, now())
       ON CONFLICT (chain_id) DO UPDATE SET head_block = EXCLUDED.head_block, confirmations = EXCLUDED.confirmations, updated_at = now()`,
      [chainId, head.toString(), confirmations],
    );
    const fork = await this.forkBelow(head);
    if (fork !== null) {
      const undone = await rollBackChain(this.ds, chainId, fork, await this.ownersAt(fork));
      chainReorgs.inc(labels);
      logger.warn('reorg: the applied blocks above the fork are rolled back', { chainId, forkBlock: fork.toString(), transfersUndone: undone });
    }
    const rows: { id: string; contractAddress: string; synced: string }[] = await this.ds.query(
      `SELECT c.id, c.contract_address AS "contractAddress", COALESCE(s.synced_block, c.start_block - 1, -1)::text AS synced
       FROM collections c LEFT JOIN chain_collection_sync s ON s.collection_id = c.id WHERE c.chain_id = $1`,
      [chainId],
    );
    const collections: TrackedCollection[] = rows.map((r) => ({ id: r.id, chainId, contractAddress: r.contractAddress, syncedBlock: BigInt(r.synced) }));
    const plan = confirmed < 0n ? null : planRange(collections, confirmed, this.range);
    if (confirmed < 0n) return true;
    if (!plan) {
      chainLagBlocks.set(labels, 0);
      // A chain without collections has nothing to apply: it is followed up to the confirmed block, no hash kept.
      if (!collections.length) {
        await this.ds.query('UPDATE chain_sync SET last_block = $2, last_hash = NULL WHERE chain_id = $1 AND last_block IS DISTINCT FROM $2', [
          chainId,
          confirmed.toString(),
        ]);
      }
      return true;
    }
    return this.traced('chain range', this.holdStep, () => this.applyRange(plan, collections, fork === null ? ahead : undefined, confirmed));
  }

  /**
   * The planned range's logs read (or taken from the read ahead, `ahead`, when it is this range's) and applied
   * a step at a time; true when every collection of the chain has reached the confirmed block.
   */
  private async applyRange(plan: RangePlan, collections: TrackedCollection[], ahead: { key: string; read: Promise<RangeRead> } | undefined, confirmed: bigint): Promise<boolean> {
    const { chainId } = this.chain;
    const labels = { chain_id: chainId };
    const { from, to, reading } = plan;
    let read: RangeRead;
    try {
      // The range read while the previous step wrote, when it is the one this step reads (no reorg, no new collection).
      read = await (ahead && ahead.key === plan.key ? ahead.read : readRange(this.client, plan));
    } catch (err) {
      if (to === from || !tooManyLogs(err)) throw err;
      // Too many logs for one answer (the node's limit, viem's 10 MiB, its 10 s): half the blocks, for a while.
      this.range = (to - from + 1n) / 2n;
      this.smallReads = 0;
      logger.info('fewer blocks per eth_getLogs', { chainId, blocks: this.range.toString() });
      return false;
    }
    this.rangeAnswered(to - from + 1n, read.logs);
    this.readAhead(afterRange(collections, plan), confirmed);
    let steps = stepsOfRange(chainId, plan, read, this.stepTransfers);
    // With an operator set, the range's approval logs too (chain.approvals.ts), each applied with the step of its block.
    if (this.chain.operator) steps = withApprovals(steps, await readApprovals(this.client, plan, this.chain.operator), this.chain.operator);
    for (const step of steps) {
      // A lost lock or a stop ends the range between its transactions; the next holder resumes from the positions.
      if (!this.following || this.stopped) return false;
      const applied = await applyChainStep(this.ds, step);
      chainTransfersApplied.inc(labels, applied);
      // Mints and metadata updates list tokenURI reads: the reader, asleep between its rounds, starts one now.
      if (applied || step.metadataUpdates?.length) this.wakeSleepers();
    }
    const low = collections.reduce((min, c) => (c.syncedBlock < to && !reading.includes(c) && c.syncedBlock < min ? c.syncedBlock : min), to);
    chainLagBlocks.set(labels, Number(confirmed - low));
    return to === confirmed && reading.length === collections.filter((c) => c.syncedBlock < confirmed).length;
  }

  /**
   * Starts reading the range that follows, while this step writes: the next step uses it when it plans the
   * same range (its key), and drops it otherwise (a reorg, a collection added, the confirmed block moved
   * within the range). A read that fails is the next step's failure, as if it had made the read itself.
   */
  private readAhead(collections: TrackedCollection[], confirmed: bigint): void {
    const plan = planRange(collections, confirmed, this.range);
    if (!plan || this.stopped || !this.following) return;
    const read = readRange(this.client, plan);
    // Dropped unread, its failure is nobody's.
    read.catch(() => undefined);
    this.ahead = { key: plan.key, read };
  }

  /**
   * owner() at the fork block of the collections whose claim was decided above it (chain.ownership.ts), read
   * before the rollback's transaction, in one batch: a contract that reverts or answers the zero address has
   * none (null). A read the node did not answer fails the step, which finds the reorg again and retries.
   */
  private async ownersAt(fork: bigint): Promise<OwnersAtFork> {
    const collections = await claimsCheckedAbove(this.ds, this.chain.chainId, fork);
    const { parseAbi } = viem();
    const abi = parseAbi([OWNER_FUNCTION]);
    const reads = await Promise.allSettled(
      collections.map((c) => this.batchClient.readContract({ address: c.contractAddress as `0x${string}`, abi, functionName: 'owner', blockNumber: fork })),
    );
    return new Map(
      collections.map((c, i): [string, string | null] => {
        const read = reads[i];
        if (read.status === 'rejected') {
          if (unanswered(read.reason)) throw read.reason instanceof Error ? read.reason : new Error(String(read.reason));
          return [c.id, null];
        }
        const owner = read.value.toLowerCase();
        return [c.id, owner === ZERO_ADDRESS ? null : owner];
      }),
    );
  }

  /**
   * A reduced range grows back: after RANGE_GROWTH_READS successive answers of the whole range with fewer
   * than half of stepTransfers logs it is doubled (up to CHAIN_BLOCK_RANGE), so a dense stretch of the chain
   * or a node's busy moment does not slow the rest of the backfill. A read of fewer blocks (the confirmed
   * block came first) says nothing of the range.
   */
  private rangeAnswered(blocks: bigint, logs: number): void {
    const full = BigInt(this.options.blockRange);
    if (this.range >= full || blocks < this.range) return;
    this.smallReads = logs < this.stepTransfers / 2 ? this.smallReads + 1 : 0;
    if (this.smallReads < RANGE_GROWTH_READS) return;
    this.range = this.range * 2n < full ? this.range * 2n : full;
    this.smallReads = 0;
    logger.info('more blocks per eth_getLogs', { chainId: this.chain.chainId, blocks: this.range.toString() });
  }

  /**
   * The highest applied block still on the chain when the newest applied block is not (a reorg), else null.
   * The newest one is compared at every step; the search goes down the kept hashes only after a mismatch.
   * When none of the last REORG_SEARCH_BLOCKS kept matches, the fork is taken below the lowest of them.
   */
  private async forkBelow(head: bigint): Promise<bigint | null> {
    const kept: { number: string; hash: string }[] = await this.ds.query(
      // Ordered by the column, not by the text of the same name (which puts block 9 above block 10).
      'SELECT b.number::text AS number, b.hash FROM chain_blocks b WHERE b.chain_id = $1 ORDER BY b.number DESC LIMIT $2',
      [this.chain.chainId, REORG_SEARCH_BLOCKS],
    );
    for (const [i, block] of kept.entries()) {
      const n = BigInt(block.number);
      if (n > head) continue;
      const onChain = await this.client.getBlock({ blockNumber: n });
      if (onChain.hash === block.hash) return i === 0 ? null : n;
    }
    return kept.length ? BigInt(kept[kept.length - 1].number) - 1n : null;
  }

  private async recordError(err: unknown): Promise<void> {
    const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
    logger.warn('the chain follower failed a step; retrying', { chainId: this.chain.chainId, error: message });
    chainStepErrors.inc({ chain_id: this.chain.chainId });
    await this.ds
      .query(
        `INSERT INTO chain_sync (chain_id, last_error, last_error_at) VALUES ($1, $2, now())
         ON CONFLICT (chain_id) DO UPDATE SET last_error = EXCLUDED.last_error, last_error_at = now()`,
        [this.chain.chainId, message],
      )
      .catch(() => undefined);
  }

  /** Ends the sleeps under way: at stop, and after a step that listed tokenURI reads (the reader starts a round at once; the steps' loop is not asleep while it steps). */
  private wakeSleepers(): void {
    for (const wake of [...this.wakers]) wake();
  }

  private sleep(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.wakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.wakers.add(wake);
    });
  }
}

/** A follower per configured chain, started now; stop() ends them all (and frees their locks). */
export function startChainFollowers(ds: DataSource, settings: ChainSettings): { followers: ChainFollower[]; stop(): Promise<void> } {
  const followers = settings.follow.map((chain) => new ChainFollower(ds, chain, settings));
  for (const f of followers) f.start();
  return {
    followers,
    async stop() {
      await Promise.all(followers.map((f) => f.stop()));
    },
  };
}
