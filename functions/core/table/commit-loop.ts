/**
 * The one commit loop. Every table change floe makes (append, row delta, rewrite, expiry, schema
 * evolution) goes through here:
 *
 *   lock → load base → [already committed? done] → prepare(base) → catalog.commitTable
 *     CommitFailedError       → it did not land: delete this attempt's manifests, back off, retry on a fresh base
 *     CommitStateUnknownError → it may have landed: reload and look for this change (batch id / snapshot id);
 *                               found → success; not found → retry as a failure; never delete its files first
 *
 * Retries follow the table's `commit.retry.*` properties (Iceberg's names and defaults).
 */
import type { Catalog, LoadedTable } from '../catalog/catalog.js';
import { formatIdentifier } from '../catalog/catalog.js';
import type { TableChange } from '../catalog/requirements-updates.js';
import { CommitFailedError, CommitStateUnknownError, describeError } from '../errors.js';
import type { CommitLock, LockLease } from '../lock/commit-lock.js';
import { noLock } from '../lock/commit-lock.js';
import type { SnapshotId, TableIdentifier } from '../spec/types.js';
import { findBatch } from './source-offsets.js';

export interface PreparedChange extends TableChange {
  /** The snapshot this change adds, if any (to recognise it after an unknown outcome). */
  snapshot?: { 'snapshot-id': SnapshotId };
  /** Files written for this attempt only; deleted when the attempt certainly did not land. */
  attemptFiles?: string[];
}

export interface CommitAction {
  /** Deterministic id of the change (floe.batch-id); lets replays and unknown outcomes be recognised. */
  readonly batchId?: string;
  /** Builds requirements + updates on a base. Called again on a fresh base after every conflict. */
  prepare(base: LoadedTable, attempt: number): Promise<PreparedChange>;
}

export interface RetryPolicy {
  numRetries: number;
  minWaitMs: number;
  maxWaitMs: number;
  totalTimeoutMs: number;
}

export interface CommitOptions {
  lock?: CommitLock;
  retry?: Partial<RetryPolicy>;
  /** Absolute time (ms) after which no new attempt starts (a Lambda's remaining time). */
  deadlineMs?: number;
  sleep?: (ms: number) => Promise<void>;
  onEvent?: (event: CommitEvent) => void;
}

export type CommitEvent =
  | { type: 'attempt'; attempt: number }
  | { type: 'conflict'; attempt: number; error: string }
  | { type: 'unknown'; attempt: number; error: string; landed: boolean }
  | { type: 'committed'; attempt: number; snapshotId?: SnapshotId; ms: number };

export interface CommitResult {
  status: 'committed' | 'already-committed';
  table: LoadedTable;
  snapshotId?: SnapshotId;
  attempts: number;
  conflicts: number;
  unknownOutcomes: number;
}

/** Iceberg's commit.retry.* properties, with Iceberg's defaults. */
export function retryPolicyFrom(
  properties: Record<string, string>,
  override: Partial<RetryPolicy> = {},
): RetryPolicy {
  const num = (key: string, fallback: number) => {
    const v = Number(properties[key]);
    return Number.isFinite(v) && v >= 0 ? v : fallback;
  };
  return {
    numRetries: num('commit.retry.num-retries', 4),
    minWaitMs: num('commit.retry.min-wait-ms', 100),
    maxWaitMs: num('commit.retry.max-wait-ms', 60_000),
    totalTimeoutMs: num('commit.retry.total-timeout-ms', 1_800_000),
    ...override,
  };
}

function backoffMs(policy: RetryPolicy, attempt: number): number {
  const exp = Math.min(policy.maxWaitMs, policy.minWaitMs * 2 ** (attempt - 1));
  return Math.round(exp * (0.5 + Math.random() * 0.5));
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Commits an action to a table with retries and reconciliation.
 * @throws CommitFailedError when retries are exhausted (nothing landed)
 * @throws CommitStateUnknownError when the outcome could not be settled (files are kept)
 * @throws LockTimeoutError when the lock could not be had
 */
export async function commitWithRetry(
  catalog: Catalog,
  id: TableIdentifier,
  action: CommitAction,
  options: CommitOptions = {},
): Promise<CommitResult> {
  const lock = options.lock ?? noLock;
  const sleep = options.sleep ?? defaultSleep;
  const emit = options.onEvent ?? (() => {});
  const started = Date.now();
  let lease: LockLease | undefined;
  let conflicts = 0;
  let unknownOutcomes = 0;
  try {
    lease = await lock.acquire(formatIdentifier(id));
    let base = await catalog.loadTable(id);
    const policy = retryPolicyFrom(base.metadata.properties ?? {}, options.retry);
    for (let attempt = 1; ; attempt++) {
      if (action.batchId !== undefined) {
        const existing = findBatch(base.metadata, action.batchId);
        if (existing !== undefined) {
          return {
            status: 'already-committed',
            table: base,
            snapshotId: existing,
            attempts: attempt - 1,
            conflicts,
            unknownOutcomes,
          };
        }
      }
      emit({ type: 'attempt', attempt });
      const prepared = await action.prepare(base, attempt);
      const t0 = Date.now();
      try {
        const table = await catalog.commitTable(id, prepared.requirements, prepared.updates);
        const snapshotId = prepared.snapshot?.['snapshot-id'];
        emit({ type: 'committed', attempt, snapshotId, ms: Date.now() - t0 });
        return { status: 'committed', table, snapshotId, attempts: attempt, conflicts, unknownOutcomes };
      } catch (error) {
        if (error instanceof CommitStateUnknownError) {
          unknownOutcomes++;
          const refreshed = await catalog.loadTable(id);
          const landed = hasLanded(refreshed, action, prepared);
          emit({ type: 'unknown', attempt, error: describeError(error), landed });
          if (landed) {
            return {
              status: 'committed',
              table: refreshed,
              snapshotId: prepared.snapshot?.['snapshot-id'],
              attempts: attempt,
              conflicts,
              unknownOutcomes,
            };
          }
          // Certainly absent now; its manifests may still be referenced by nothing, but a late
          // landing is impossible only if the catalog's swap is conditional (it is): safe to retry.
          base = refreshed;
        } else if (error instanceof CommitFailedError) {
          conflicts++;
          emit({ type: 'conflict', attempt, error: describeError(error) });
          await deleteQuietly(base, prepared.attemptFiles);
          base = await catalog.loadTable(id);
        } else {
          await deleteQuietly(base, prepared.attemptFiles);
          throw error;
        }
        const outOfTime =
          Date.now() - started > policy.totalTimeoutMs ||
          (options.deadlineMs !== undefined && Date.now() + policy.minWaitMs > options.deadlineMs);
        if (attempt > policy.numRetries || outOfTime) {
          throw new CommitFailedError(
            `${formatIdentifier(id)}: commit gave up after ${attempt} attempt(s) (${conflicts} conflict(s), ${unknownOutcomes} unknown outcome(s))`,
            { cause: error },
          );
        }
        await sleep(backoffMs(policy, attempt));
      }
    }
  } finally {
    if (lease) await lease.release().catch(() => {});
  }
}

function hasLanded(table: LoadedTable, action: CommitAction, prepared: PreparedChange): boolean {
  if (action.batchId !== undefined && findBatch(table.metadata, action.batchId) !== undefined) return true;
  const id = prepared.snapshot?.['snapshot-id'];
  return id !== undefined && table.metadata.snapshots.some((s) => s['snapshot-id'] === id);
}

/** Cleanup never hides the error that caused it. */
async function deleteQuietly(table: LoadedTable, files: string[] | undefined): Promise<void> {
  for (const f of files ?? []) {
    await table.io.delete(f).catch(() => {});
  }
}
