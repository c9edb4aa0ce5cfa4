/**
 * Requests whose handling has begun and not ended, whether or not their client is still there: on
 * shutdown the database closes only after these are done (a client that hangs up does not stop the
 * resolvers it started, and they must not find the pool gone).
 */
export class InFlight {
  private count = 0;
  private waiters: (() => void)[] = [];

  get size(): number {
    return this.count;
  }

  /** Runs `work` as one in-flight request. */
  async track<T>(work: () => Promise<T>): Promise<T> {
    this.enter();
    try {
      return await work();
    } finally {
      this.leave();
    }
  }

  /** A request begins (track's first half, for a caller that ends it itself: leave, exactly once). */
  enter(): void {
    this.count += 1;
  }

  /** A request that entered has ended. */
  leave(): void {
    this.count -= 1;
    if (this.count === 0) for (const wake of this.waiters.splice(0)) wake();
  }

  /** Resolves once nothing is in flight, or after `timeoutMs` (true when drained). */
  drained(timeoutMs: number): Promise<boolean> {
    if (this.count === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }
}
