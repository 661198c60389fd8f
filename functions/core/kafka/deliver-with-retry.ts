/**
 * Delivering one event the way the ESM does: on failure the whole batch is tried again, with backoff,
 * until it succeeds — but only when trying again can help (`LakeError.retryable`). A configuration
 * problem (no route, a schema that cannot fit) fails the same way every time: it is handed back so the
 * runner stops with the group offsets uncommitted, and a fixed restart gets the same batch again.
 */
import { LakeError } from '../errors.js';

export interface RetryPolicy {
  /** @default 500 */
  initialDelayMs: number;
  /** @default 30,000 */
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { initialDelayMs: 500, maxDelayMs: 30_000 };

export type DeliveryOutcome<T> =
  | { status: 'delivered'; result: T; attempts: number }
  /** Stopped while waiting to retry: nothing of the batch was committed. */
  | { status: 'abandoned'; attempts: number; error: unknown }
  /** An error retrying cannot fix. */
  | { status: 'failed'; attempts: number; error: unknown };

export interface DeliverOptions {
  retry?: RetryPolicy;
  /** Checked before every attempt and while waiting: true abandons the batch whole. */
  shouldStop: () => boolean;
  /** Called while waiting, so a consumer group keeps the partition (errors propagate: a rebalance). */
  heartbeat?: () => Promise<void>;
  onRetry?: (error: unknown, attempt: number, delayMs: number) => void;
  /** @default setTimeout */
  sleep?: (ms: number) => Promise<void>;
}

export function isRetryable(error: unknown): boolean {
  return error instanceof LakeError && error.retryable;
}

/** The delay before attempt `attempt + 1`: doubling from the initial delay, capped. */
export function backoffDelay(policy: RetryPolicy, attempt: number): number {
  return Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** Math.max(0, attempt - 1));
}

const sleepFor = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Tries `deliver` until it succeeds, fails for good, or `shouldStop` says to give up. */
export async function deliverWithRetry<T>(
  deliver: () => Promise<T>,
  options: DeliverOptions,
): Promise<DeliveryOutcome<T>> {
  const policy = options.retry ?? DEFAULT_RETRY;
  const sleep = options.sleep ?? sleepFor;
  for (let attempt = 1; ; attempt++) {
    try {
      return { status: 'delivered', result: await deliver(), attempts: attempt };
    } catch (error) {
      if (!isRetryable(error)) return { status: 'failed', attempts: attempt, error };
      const delay = backoffDelay(policy, attempt);
      options.onRetry?.(error, attempt, delay);
      // Wait in slices: a stop request or a heartbeat due must not wait for the whole backoff.
      for (let waited = 0; waited < delay; waited += 1_000) {
        if (options.shouldStop()) return { status: 'abandoned', attempts: attempt, error };
        await sleep(Math.min(1_000, delay - waited));
        await options.heartbeat?.();
      }
      if (options.shouldStop()) return { status: 'abandoned', attempts: attempt, error };
    }
  }
}
