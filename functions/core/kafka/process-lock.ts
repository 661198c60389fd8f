/**
 * A commit lock within one process: `floe run` and `floe backfill` deliver several partitions at once,
 * and without it their commits on one table would mostly conflict and rebase (each a wasted round).
 * Other processes are not excluded — the catalog swap stays conditional, so correctness never rests on it.
 */
import type { CommitLock, LockLease } from '../lock/commit-lock.js';

export function createProcessLock(): CommitLock {
  const tails = new Map<string, Promise<void>>();
  let version = 0;
  const hints = new Map<string, string | undefined>();
  return {
    async acquire(key: string): Promise<LockLease> {
      const previous = tails.get(key) ?? Promise.resolve();
      let release: () => void = () => undefined;
      const mine = new Promise<void>((resolve) => {
        release = resolve;
      });
      const tail = previous.then(() => mine);
      tails.set(key, tail);
      await previous;
      let released = false;
      return {
        key,
        owner: 'process',
        fencingVersion: ++version,
        lastCommit: hints.get(key),
        async release(current?: string) {
          if (released) return;
          released = true;
          hints.set(key, current);
          if (tails.get(key) === tail) tails.delete(key);
          release();
        },
      };
    },
  };
}
