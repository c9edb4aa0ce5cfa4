import { DataSource } from 'typeorm';
import type { Span } from '@opentelemetry/api';
import { CHAIN_STEP_TRANSFERS_DEFAULT, type ChainFollowSettings, type ChainSettings } from '../../config';
import { viem } from '../../common/eip712';
import { logger } from '../../common/logger';
import { traceTask } from '../../common/tracing';
import { chainFollowing, chainHeadBlock, chainLagBlocks, chainReorgs, chainStepErrors, chainTransfersApplied } from '../../common/metrics';
import { applyChainStep, rollBackChain, TrackedCollection } from './chain.transfers';
import { afterRange, planRange, RangePlan, RangeRead, readRange, ReorgDuringRead, stepsOfRange } from './chain.ranges';
import { readPendingTokenUris, TOKEN_URI_BATCH } from './chain.token-uris';
import { expandMetadataUpdateRange } from './chain.metadata-updates';
import { readDueRoyalties } from './chain.royalties';
import { readApprovals, withApprovals } from './chain.approvals';
import { claimsCheckedAbove, OwnersAtFork } from './chain.ownership';
import { callOwnersAt, callRoyalties, callTokenUris } from './chain.contract-calls';
import { ChainLock } from './chain.lock';
import { LogRangeSize, tooManyLogs } from './chain.range-size';
import { tracedTransport } from './chain.viem';

const ERROR_RETRY_MS = 1000;
/** Applied blocks compared with the chain, newest first, when looking for where a reorg forked. */
const REORG_SEARCH_BLOCKS = 64;

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
  private readonly lock: ChainLock;
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
  /** Blocks asked for in one eth_getLogs. */
  private readonly rangeSize: LogRangeSize;
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
    this.stepTransfers = options.stepTransfers ?? CHAIN_STEP_TRANSFERS_DEFAULT;
    this.rangeSize = new LogRangeSize(chain.chainId, BigInt(options.blockRange), this.stepTransfers);
    this.batchClient = createPublicClient({ transport: tracedTransport(chain.rpcUrl, chain.chainId, () => this.roundSpan, { batch: { batchSize: TOKEN_URI_BATCH } }) });
    this.lock = new ChainLock(ds, chain.chainId, () => {
      this.stopFollowing();
      logger.warn('the chain follower lost its lock connection', { chainId: chain.chainId });
    });
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
          this.following = await this.lock.take();
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
        if (err instanceof viem().BlockNotFoundError || err instanceof ReorgDuringRead) {
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
        taken += await readPendingTokenUris(this.ds, this.chain.chainId, (tokens) => this.traced('chain tokenURIs', this.holdRound, () => callTokenUris(this.batchClient, tokens))).catch(
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
    return listed + (await readDueRoyalties(this.ds, this.chain.chainId, (due) => this.traced('chain royalties', this.holdRound, () => callRoyalties(this.batchClient, due))));
  }

  /** Not following (the lock freed or lost): the read ahead is dropped. */
  private stopFollowing(): void {
    this.following = false;
    this.ahead = undefined;
    chainFollowing.set({ chain_id: this.chain.chainId }, 0);
  }

  private async unlock(): Promise<void> {
    this.stopFollowing();
    await this.lock.release();
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
    const plan = confirmed < 0n ? null : planRange(collections, confirmed, this.rangeSize.blocks);
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
      this.rangeSize.tooLarge(to - from + 1n);
      return false;
    }
    this.rangeSize.answered(to - from + 1n, read.logs);
    // The range does not continue the blocks applied before it: a reorg since this step's forkBelow, which the next one finds.
    if (!(await this.chainContinues(from, read.fromParentHash))) return false;
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
    const plan = planRange(collections, confirmed, this.rangeSize.blocks);
    if (!plan || this.stopped || !this.following) return;
    const read = readRange(this.client, plan);
    // Dropped unread, its failure is nobody's.
    read.catch(() => undefined);
    this.ahead = { key: plan.key, read };
  }

  /** Whether the block below `from`, when its hash is kept, is the parent the range was read with. */
  private async chainContinues(from: bigint, parentHash: string): Promise<boolean> {
    const [below]: { hash: string }[] = await this.ds.query('SELECT hash FROM chain_blocks WHERE chain_id = $1 AND number = $2', [this.chain.chainId, (from - 1n).toString()]);
    return !below || below.hash === parentHash;
  }

  /**
   * owner() at the fork block of the collections whose claim was decided above it (chain.ownership.ts), read
   * before the rollback's transaction, in one batch: a contract that reverts or answers the zero address has
   * none (null). A read the node did not answer fails the step, which finds the reorg again and retries.
   */
  private async ownersAt(fork: bigint): Promise<OwnersAtFork> {
    return callOwnersAt(this.batchClient, await claimsCheckedAbove(this.ds, this.chain.chainId, fork), fork);
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
