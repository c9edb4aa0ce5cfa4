/**
 * Large queries (an estimate of more than `threshold` items, see estimate in app/graphql/limits.ts) run at most `slots` at
 * a time; the others wait their turn in arrival order. Each one holds its rows and its result while it
 * runs: 32 concurrent pages of 400 full assets took the server past 400 MB, and the two cores gain
 * nothing from running more of them at once. Smaller queries never wait. `slots` 0: no limit.
 */
export class QueryGate {
  private free: number;
  private readonly queue: (() => void)[] = [];
  private running = 0;
  /** The most large queries that have run at once (for tests and the curious). */
  peak = 0;

  constructor(
    readonly slots: number,
    readonly threshold: number,
  ) {
    this.free = slots;
  }

  async run<T>(items: number, work: () => Promise<T>): Promise<T> {
    if (this.slots === 0 || items <= this.threshold) return work();
    if (this.free > 0) this.free -= 1;
    else await new Promise<void>((resolve) => this.queue.push(resolve));
    this.running += 1;
    this.peak = Math.max(this.peak, this.running);
    try {
      return await work();
    } finally {
      this.running -= 1;
      const next = this.queue.shift();
      if (next) next();
      else this.free += 1;
    }
  }
}
