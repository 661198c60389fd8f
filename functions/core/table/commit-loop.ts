/**
 * The one commit loop. Every table change floe makes (append, row delta, rewrite, expiry, schema
 * evolution) goes through here:
 *
 *   lock → base (the caller's table if still current, else a load) → [already committed? done]
 *     → prepare(base) → catalog.commitTable(…, base), whose swap is conditional on that base
 *     CommitFailedError       → it did not land: delete this attempt's manifests, back off, retry on a fresh base
 *     CommitStateUnknownError → it may have landed: reload and look for this change (batch id / snapshot id);
 *     (or an error the          found → success; not found → retry; never delete its files. A request still on
 *     catalog did not classify)  the wire may land later, until the branch head moves past the one it was
 *                               prepared on: while such an attempt is open, every failure this loop throws is
 *                               CommitStateUnknownError (callers delete their files on any other error)
 *   A snapshot of one of this call's attempts found in the table (one that landed late) is `committed`, never
 *   `already-committed`: callers drop their files on `already-committed`, and these files are in the table.
 *   A catalog's success is checked, not trusted (catalog/verify-commit-response.ts): an answer that does
 *   not show the change (another table's metadata, the unchanged metadata) is an unknown outcome, and every
 *   reload must be the same table (`table-uuid`) the loop started on, or nothing can be reconciled on it.
 *
 * Retries follow the table's `commit.retry.*` properties (Iceberg's names and defaults).
 */
import type { Catalog, LoadedTable } from '../catalog/catalog.js';
import { formatIdentifier } from '../catalog/catalog.js';
import type { TableChange } from '../catalog/requirements-updates.js';
import { checkCommitResponse } from '../catalog/verify-commit-response.js';
import { CommitFailedError, CommitStateUnknownError, describeError, NotFoundError } from '../errors.js';
import { TableArea } from '../io/confined-delete.js';
import type { CommitLock, LockLease } from '../lock/commit-lock.js';
import { noLock } from '../lock/commit-lock.js';
import { ancestors, currentSnapshot } from '../spec/metadata.js';
import { readCommitProperties } from '../spec/table-properties.js';
import type { SnapshotId, TableIdentifier } from '../spec/types.js';
import { BATCH_ID_KEY } from './source-offsets.js';

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
  /**
   * The table as the caller last loaded it (e.g. to write the files being committed). Once the lock is
   * held it is taken as the first base when the catalog confirms it is still current (one small
   * request instead of a load); otherwise the table is loaded.
   */
  base?: LoadedTable;
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

/**
 * Iceberg's commit.retry.* properties, with Iceberg's defaults (spec/table-properties.ts).
 * @throws ValidationError naming a malformed commit.* or write.metadata.* property
 */
export function retryPolicyFrom(
  properties: Record<string, string>,
  override: Partial<RetryPolicy> = {},
): RetryPolicy {
  const { numRetries, minWaitMs, maxWaitMs, totalTimeoutMs } = readCommitProperties(properties);
  return { numRetries, minWaitMs, maxWaitMs, totalTimeoutMs, ...override };
}

function backoffMs(policy: RetryPolicy, attempt: number): number {
  const exp = Math.min(policy.maxWaitMs, policy.minWaitMs * 2 ** (attempt - 1));
  return Math.round(exp * (0.5 + Math.random() * 0.5));
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Commits an action to a table with retries and reconciliation.
 * @throws CommitFailedError when retries are exhausted and nothing this call sent can still land
 * @throws CommitStateUnknownError when an attempt may have landed, or may still land (files are kept)
 * @throws LockTimeoutError when the lock could not be had
 * @throws the catalog's own error when it refused an attempt in a way it does not classify and that
 *   attempt is not in the table (files are kept)
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
  const what = formatIdentifier(id);
  const started = Date.now();
  let lease: LockLease | undefined;
  let conflicts = 0;
  let unknownOutcomes = 0;
  // Snapshots this call's attempts added: finding one in the table means one of them landed (maybe late).
  const ours = new Set<SnapshotId>();
  // An attempt that was not found in the table but may still land: its swap was conditional on the branch
  // head it was prepared on, so it is settled only once the head has moved past that.
  let open: { head: SnapshotId | null } | undefined;
  // The table's location as this call leaves it (known only on success), for the lock's next holder.
  let leftAt: string | undefined;
  const outcome = (
    status: CommitResult['status'],
    table: LoadedTable,
    snapshotId: SnapshotId | undefined,
    attempts: number,
  ): CommitResult => {
    leftAt = table.metadataLocation;
    return { status, table, snapshotId, attempts, conflicts, unknownOutcomes };
  };
  let uuid: string | undefined;
  const reload = async (): Promise<LoadedTable> => {
    const table = await catalog.loadTable(id);
    if (table.metadata['table-uuid'] !== uuid) {
      // Dropped and recreated, or a catalog answering with another table: this change was prepared for
      // the table it started on, and whether it landed there cannot be read off another one.
      const message = `${what}: the catalog now answers with table-uuid ${table.metadata['table-uuid']}, not ${uuid} this commit started on`;
      throw open ? new CommitStateUnknownError(message) : new CommitFailedError(message);
    }
    if (open && headOf(table) !== open.head) open = undefined;
    return table;
  };
  /** The table when it is no longer at `from` (another commit landed), else undefined. */
  const movedOn = async (from: LoadedTable): Promise<LoadedTable | undefined> => {
    const table = await reload();
    return table.metadataLocation !== from.metadataLocation || headOf(table) !== headOf(from)
      ? table
      : undefined;
  };
  try {
    lease = await lock.acquire(what);
    let base = await firstBase(catalog, id, options.base, lease.lastCommit);
    uuid = base.metadata['table-uuid'];
    const policy = retryPolicyFrom(base.metadata.properties ?? {}, options.retry);
    for (let attempt = 1; ; attempt++) {
      const existing = findLanded(base, action, ours);
      if (existing !== undefined) {
        // Ours (an attempt that landed late) is `committed`: the caller's files are in it, not spare.
        return outcome(ours.has(existing) ? 'committed' : 'already-committed', base, existing, attempt - 1);
      }
      emit({ type: 'attempt', attempt });
      let failure: unknown;
      let prepared: PreparedChange | undefined;
      try {
        prepared = await action.prepare(base, attempt);
      } catch (error) {
        // A file of the base gone while the change was prepared on it (the parent's manifest list,
        // removed by an expiry once newer snapshots landed): the table moved on. That is a conflict, as
        // a refused swap is — prepare again on the new base. A file gone from a table that did not move
        // is the caller's problem, and its error.
        const moved = error instanceof NotFoundError ? await movedOn(base) : undefined;
        if (moved === undefined) throw error;
        conflicts++;
        emit({ type: 'conflict', attempt, error: describeError(error) });
        failure = error;
        base = moved;
      }
      if (prepared !== undefined) {
        const snapshotId = prepared.snapshot?.['snapshot-id'];
        if (snapshotId !== undefined) ours.add(snapshotId);
        const t0 = Date.now();
        try {
          const table = await catalog.commitTable(id, prepared.requirements, prepared.updates, base);
          const wrong = checkCommitResponse(base.metadata, prepared, table.metadata);
          if (wrong !== undefined) {
            throw new CommitStateUnknownError(`${what}: the catalog answered success, but ${wrong}`);
          }
          emit({ type: 'committed', attempt, snapshotId, ms: Date.now() - t0 });
          return outcome('committed', table, snapshotId, attempt);
        } catch (error) {
          failure = error;
        }
        if (failure instanceof CommitFailedError) {
          conflicts++;
          emit({ type: 'conflict', attempt, error: describeError(failure) });
          await deleteQuietly(base, prepared.attemptFiles);
          base = await reload();
        } else {
          // Unknown outcome, or an error the catalog does not classify (a 2xx answer it could not read):
          // it may have landed. Look before anything else, and never delete its files.
          unknownOutcomes++;
          open = { head: headOf(base) };
          const refreshed = await reload();
          const landed = findLanded(refreshed, action, ours);
          emit({ type: 'unknown', attempt, error: describeError(failure), landed: landed !== undefined });
          if (landed !== undefined) {
            return outcome(ours.has(landed) ? 'committed' : 'already-committed', refreshed, landed, attempt);
          }
          if (!(failure instanceof CommitStateUnknownError)) {
            // Not in the table: the catalog refused it in its own words; pass those on (files are kept).
            open = undefined;
            throw failure;
          }
          base = refreshed;
        }
      }
      const outOfTime =
        Date.now() - started > policy.totalTimeoutMs ||
        (options.deadlineMs !== undefined && Date.now() + policy.minWaitMs > options.deadlineMs);
      if (attempt > policy.numRetries || outOfTime) {
        const gaveUp = `${what}: commit gave up after ${attempt} attempt(s) (${conflicts} conflict(s), ${unknownOutcomes} unknown outcome(s))`;
        if (open) {
          throw new CommitStateUnknownError(`${gaveUp}; an attempt may still land`, { cause: failure });
        }
        throw new CommitFailedError(gaveUp, { cause: failure });
      }
      await sleep(backoffMs(policy, attempt));
    }
  } catch (error) {
    // While an attempt may still land, no failure may read as "did not land": callers delete files then.
    if (open && !(error instanceof CommitStateUnknownError)) {
      throw new CommitStateUnknownError(
        `${what}: ${describeError(error)}; an earlier attempt may still land`,
        {
          cause: error,
        },
      );
    }
    throw error;
  } finally {
    if (lease) await lease.release(leftAt).catch(() => {});
  }
}

/**
 * The caller's table when it is still current — the lock's previous holder left the table there, or
 * the catalog confirms it — else a fresh load. A wrong hint only costs a refused swap and a reload.
 */
async function firstBase(
  catalog: Catalog,
  id: TableIdentifier,
  given: LoadedTable | undefined,
  lastCommit: string | undefined,
): Promise<LoadedTable> {
  if (given && lastCommit !== undefined && lastCommit === given.metadataLocation) return given;
  if (given && catalog.isCurrent && (await catalog.isCurrent(given))) return given;
  return catalog.loadTable(id);
}

/** The head of `main`: what every snapshot-adding swap is conditional on. */
function headOf(table: LoadedTable): SnapshotId | null {
  return currentSnapshot(table.metadata)?.['snapshot-id'] ?? null;
}

/**
 * A snapshot of this call's attempts on `main`'s line (the head or an ancestor), else one there carrying the
 * action's batch id. Only `main`'s line counts: a snapshot listed in the metadata but off it (a server that
 * added it and never moved the branch) holds rows no reader sees, so it has not landed.
 */
function findLanded(table: LoadedTable, action: CommitAction, ours: Set<SnapshotId>): SnapshotId | undefined {
  const line = ancestors(table.metadata);
  for (const s of line) if (ours.has(s['snapshot-id'])) return s['snapshot-id'];
  if (action.batchId === undefined) return undefined;
  return line.find((s) => s.summary[BATCH_ID_KEY] === action.batchId)?.['snapshot-id'];
}

/** Cleanup never hides the error that caused it. */
async function deleteQuietly(table: LoadedTable, files: string[] | undefined): Promise<void> {
  // Through the one delete guard (io/confined-delete.ts): only the table's own files go.
  if (files && files.length > 0) await new TableArea(table).delete(files);
}
