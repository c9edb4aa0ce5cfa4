import { viem } from '../../common/eip712';
import { logger } from '../../common/logger';

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
export function tooManyLogs(err: unknown): boolean {
  const { ResponseBodyTooLargeError, TimeoutError, LimitExceededRpcError, BaseError } = viem();
  if (err instanceof BaseError && err.walk((e) => e instanceof ResponseBodyTooLargeError || e instanceof TimeoutError || e instanceof LimitExceededRpcError)) return true;
  return err instanceof Error && /more than \d+ (results|logs)|too many|response size|range is too (large|wide)|exceed/i.test(err.message);
}

/**
 * Blocks asked for in one eth_getLogs by a chain's follower: from CHAIN_BLOCK_RANGE / 64 at start, halved
 * when an answer was too large, doubled (up to CHAIN_BLOCK_RANGE) after RANGE_GROWTH_READS successive small
 * answers.
 */
export class LogRangeSize {
  blocks: bigint;
  /** Successive small answers at the current (reduced) size. */
  private smallReads = 0;

  /** `full`: CHAIN_BLOCK_RANGE; `stepTransfers`: an answer with fewer than half of these logs is small. */
  constructor(
    private readonly chainId: string,
    private readonly full: bigint,
    private readonly stepTransfers: number,
  ) {
    this.blocks = full / INITIAL_RANGE_SHARE > 1n ? full / INITIAL_RANGE_SHARE : 1n;
  }

  /** The answer for `blocks` blocks had too many logs (tooManyLogs): half of them, for a while. */
  tooLarge(blocks: bigint): void {
    this.blocks = blocks / 2n;
    this.smallReads = 0;
    logger.info('fewer blocks per eth_getLogs', { chainId: this.chainId, blocks: this.blocks.toString() });
  }

  /**
   * A reduced size grows back: after RANGE_GROWTH_READS successive answers of the whole size with fewer
   * than half of stepTransfers logs it is doubled (up to CHAIN_BLOCK_RANGE), so a dense stretch of the chain
   * or a node's busy moment does not slow the rest of the backfill. A read of fewer blocks (the confirmed
   * block came first) says nothing of the size.
   */
  answered(blocks: bigint, logs: number): void {
    if (this.blocks >= this.full || blocks < this.blocks) return;
    this.smallReads = logs < this.stepTransfers / 2 ? this.smallReads + 1 : 0;
    if (this.smallReads < RANGE_GROWTH_READS) return;
    this.blocks = this.blocks * 2n < this.full ? this.blocks * 2n : this.full;
    this.smallReads = 0;
    logger.info('more blocks per eth_getLogs', { chainId: this.chainId, blocks: this.blocks.toString() });
  }
}
