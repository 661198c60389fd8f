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
  /**
   * The table's metadata location as the previous holder left it when it released the lock (it
   * committed there, or found the table there under the lock); undefined when no holder knew (it failed,
   * crashed or timed out). A hint that saves re-checking the table, never a guarantee: swaps stay
   * conditional, so a wrong hint costs one refused attempt.
   */
  readonly lastCommit?: string;
  /**
   * Releases the lock if this owner still holds it; never throws for a lock already taken over.
   * @param current the table's metadata location as this holder leaves it, when it knows it
   */
  release(current?: string): Promise<void>;
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
