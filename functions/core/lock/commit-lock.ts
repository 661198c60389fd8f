/**
 * A commit lock serialises snapshot swaps on one table for throughput. Correctness never rests on it
 * alone: the catalog swap stays conditional, so a holder whose lease expired still fails its swap.
 */
export interface LockLease {
  /** The lock key (one per table). */
  readonly key: string;
  readonly owner: string;
  /** Increases on every acquisition of this key; a later holder always has a larger one. */
  readonly fencingVersion: number;
  /** Releases the lock if this owner still holds it; never throws for a lock already taken over. */
  release(): Promise<void>;
}

export interface CommitLock {
  /**
   * Waits until the lock is acquired (or `timeoutMs` passes), then keeps the lease alive with a
   * heartbeat until released.
   * @throws LockTimeoutError (retryable) when it could not be acquired in time
   */
  acquire(key: string, options?: { timeoutMs?: number }): Promise<LockLease>;
}

/** A lock that never waits: for the embedded catalog, whose swap is already atomic. */
export const noLock: CommitLock = {
  async acquire(key: string) {
    return { key, owner: 'none', fencingVersion: 0, release: async () => {} };
  },
};
