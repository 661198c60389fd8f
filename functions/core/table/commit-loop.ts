/**
 * The one commit loop. Every table change floe makes (append, row delta, rewrite, expiry, schema
 * evolution: the actions of actions/, one file per kind) goes through here:
 *
 *   lock → base (the caller's table if still current, else a load) → [already committed? done]
 *     → prepare(base) → catalog.commitTable(…, base), whose swap is conditional on that base
 *       (or prepare answers noop / stale instead of a change: the call ends with that answer)
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
 * Retries follow the table's `commit.retry.*` properties (Iceberg's names and defaults). Format version 2
 * and 3 tables are changed (v3 with row lineage, table/row-lineage.ts); any other version, and a v3 table
 * with a column type floe does not write, is refused before anything is prepared on it.
 */
import type { Catalog, LoadedTable } from '../catalog/catalog.js';
import { formatIdentifier } from '../catalog/catalog.js';
import { checkCommitResponse } from '../catalog/verify-commit-response.js';
import { CommitFailedError, CommitStateUnknownError, describeError, NotFoundError } from '../errors.js';
import { TableArea } from '../io/confined-delete.js';
import type { CommitLock, LockLease } from '../lock/commit-lock.js';
import { noLock } from '../lock/commit-lock.js';
import { refuseUnwritableVersion } from '../spec/format-version.js';
import { ancestors, currentSnapshot } from '../spec/metadata.js';
import { readCommitProperties } from '../spec/table-properties.js';
import type { SnapshotId, TableIdentifier } from '../spec/types.js';
import type { Answer, PreparedChange, Prepared, TableAction } from './actions/table-action.js';
import { BATCH_ID_KEY } from './source-offsets.js';

/** An action that has a change for every base (commitWithRetry's). */
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

/** How a commit call ended: committed (or found committed), or the action's answer on the last base. */
export type CommitOutcome<A extends Answer = never> = { kind: 'committed'; result: CommitResult } | A;

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
 * Commits an action that has a change for every base, with retries and reconciliation.
 * @throws as commitAction
 */
export async function commitWithRetry(
  catalog: Catalog,
  id: TableIdentifier,
  action: CommitAction,
  options: CommitOptions = {},
): Promise<CommitResult> {
  const outcome = await commitAction<never>(
    catalog,
    id,
    {
      batchId: action.batchId,
      prepare: async (base, attempt) => ({ kind: 'change', change: await action.prepare(base, attempt) }),
    },
    options,
  );
  return outcome.result;
}

/**
 * Commits the change an action builds on each base, with retries and reconciliation, or ends with the
 * action's answer (noop / stale) on the base it was given.
 * @throws CommitFailedError when retries are exhausted and nothing this call sent can still land
 * @throws CommitStateUnknownError when an attempt may have landed, or may still land (files are kept);
 *   also for an answer given while an earlier attempt may still land
 * @throws LockTimeoutError when the lock could not be had
 * @throws the catalog's own error when it refused an attempt in a way it does not classify and that
 *   attempt is not in the table (files are kept)
 */
export function commitAction<A extends Answer = never>(
  catalog: Catalog,
  id: TableIdentifier,
  action: TableAction<A>,
  options: CommitOptions = {},
): Promise<CommitOutcome<A>> {
  return new CommitCall(catalog, id, action, options).run();
}

/** What one attempt left the loop with: an outcome, or a base to try again on (and why). */
type Step<A extends Answer> =
  | { kind: 'done'; outcome: CommitOutcome<A> }
  | { kind: 'retry'; base: LoadedTable; failure: unknown };

/** One call of the commit loop: its counts, and what it knows of its own attempts. */
class CommitCall<A extends Answer> {
  private readonly what: string;
  private readonly started = Date.now();
  private readonly emit: (event: CommitEvent) => void;
  private conflicts = 0;
  private unknownOutcomes = 0;
  /** Snapshots this call's attempts added: finding one in the table means one of them landed (maybe late). */
  private readonly ours = new Set<SnapshotId>();
  /**
   * An attempt that was not found in the table but may still land: its swap was conditional on the branch
   * head it was prepared on, so it is settled only once the head has moved past that.
   */
  private open: { head: SnapshotId | null } | undefined;
  /** The table's location as this call leaves it (known only on success), for the lock's next holder. */
  private leftAt: string | undefined;
  /** The table this call started on (`table-uuid`): every reload must be the same one. */
  private uuid: string | undefined;

  constructor(
    private readonly catalog: Catalog,
    private readonly id: TableIdentifier,
    private readonly action: TableAction<A>,
    private readonly options: CommitOptions,
  ) {
    this.what = formatIdentifier(id);
    this.emit = options.onEvent ?? (() => {});
  }

  async run(): Promise<CommitOutcome<A>> {
    let lease: LockLease | undefined;
    try {
      lease = await (this.options.lock ?? noLock).acquire(this.what);
      const base = await firstBase(this.catalog, this.id, this.options.base, lease.lastCommit);
      this.uuid = base.metadata['table-uuid'];
      return await this.loop(base, retryPolicyFrom(base.metadata.properties ?? {}, this.options.retry));
    } catch (error) {
      throw this.asUnknownWhileOpen(error);
    } finally {
      if (lease) await lease.release(this.leftAt).catch(() => {});
    }
  }

  private async loop(first: LoadedTable, policy: RetryPolicy): Promise<CommitOutcome<A>> {
    let base = first;
    for (let attempt = 1; ; attempt++) {
      const existing = findLanded(base, this.action, this.ours);
      if (existing !== undefined) return this.landed(base, existing, attempt - 1);
      const step = await this.attempt(base, attempt);
      if (step.kind === 'done') return step.outcome;
      base = step.base;
      this.giveUpWhenSpent(policy, attempt, step.failure);
      await (this.options.sleep ?? defaultSleep)(backoffMs(policy, attempt));
    }
  }

  /** Prepares the change on `base` and swaps it in: the commit point. */
  private async attempt(base: LoadedTable, attempt: number): Promise<Step<A>> {
    // Every base passes here, the first and each reload: a table upgraded meanwhile is checked too.
    refuseUnwritableVersion(base.metadata, this.what);
    this.emit({ type: 'attempt', attempt });
    let prepared: Prepared<A>;
    try {
      prepared = await this.action.prepare(base, attempt);
    } catch (error) {
      return this.onPrepareFailure(base, attempt, error);
    }
    if (prepared.kind !== 'change') return { kind: 'done', outcome: this.answered(prepared) };
    const change = prepared.change;
    const snapshotId = change.snapshot?.['snapshot-id'];
    if (snapshotId !== undefined) this.ours.add(snapshotId);
    const t0 = Date.now();
    let failure: unknown;
    try {
      const table = await this.catalog.commitTable(this.id, change.requirements, change.updates, base);
      const wrong = checkCommitResponse(base.metadata, change, table.metadata);
      if (wrong !== undefined) {
        throw new CommitStateUnknownError(`${this.what}: the catalog answered success, but ${wrong}`);
      }
      this.emit({ type: 'committed', attempt, snapshotId, ms: Date.now() - t0 });
      return { kind: 'done', outcome: this.committed('committed', table, snapshotId, attempt) };
    } catch (error) {
      failure = error;
    }
    return failure instanceof CommitFailedError
      ? this.onConflict(base, attempt, change, failure)
      : this.onUnknownOutcome(base, attempt, failure);
  }

  /**
   * A file of the base gone while the change was prepared on it (the parent's manifest list, removed by an
   * expiry once newer snapshots landed): the table moved on. That is a conflict, as a refused swap is —
   * prepare again on the new base. A file gone from a table that did not move is the caller's problem,
   * and its error.
   */
  private async onPrepareFailure(base: LoadedTable, attempt: number, error: unknown): Promise<Step<A>> {
    const moved = error instanceof NotFoundError ? await this.movedOn(base) : undefined;
    if (moved === undefined) throw error;
    this.conflicts++;
    this.emit({ type: 'conflict', attempt, error: describeError(error) });
    return { kind: 'retry', base: moved, failure: error };
  }

  /** The swap was refused: it did not land. Its files go; the next attempt is on a fresh base. */
  private async onConflict(
    base: LoadedTable,
    attempt: number,
    change: PreparedChange,
    failure: CommitFailedError,
  ): Promise<Step<A>> {
    this.conflicts++;
    this.emit({ type: 'conflict', attempt, error: describeError(failure) });
    await deleteQuietly(base, change.attemptFiles);
    return { kind: 'retry', base: await this.reload(), failure };
  }

  /**
   * Unknown outcome, or an error the catalog does not classify (a 2xx answer it could not read): it may
   * have landed. Look before anything else, and never delete its files.
   */
  private async onUnknownOutcome(base: LoadedTable, attempt: number, failure: unknown): Promise<Step<A>> {
    this.unknownOutcomes++;
    this.open = { head: headOf(base) };
    const refreshed = await this.reload();
    const landed = findLanded(refreshed, this.action, this.ours);
    this.emit({ type: 'unknown', attempt, error: describeError(failure), landed: landed !== undefined });
    if (landed !== undefined) return { kind: 'done', outcome: this.landed(refreshed, landed, attempt) };
    if (!(failure instanceof CommitStateUnknownError)) {
      // Not in the table: the catalog refused it in its own words; pass those on (files are kept).
      this.open = undefined;
      throw failure;
    }
    return { kind: 'retry', base: refreshed, failure };
  }

  /** Gives up when the retries or the time are spent. */
  private giveUpWhenSpent(policy: RetryPolicy, attempt: number, failure: unknown): void {
    const outOfTime =
      Date.now() - this.started > policy.totalTimeoutMs ||
      (this.options.deadlineMs !== undefined && Date.now() + policy.minWaitMs > this.options.deadlineMs);
    if (attempt <= policy.numRetries && !outOfTime) return;
    const gaveUp = `${this.what}: commit gave up after ${attempt} attempt(s) (${this.conflicts} conflict(s), ${this.unknownOutcomes} unknown outcome(s))`;
    if (this.open) {
      throw new CommitStateUnknownError(`${gaveUp}; an attempt may still land`, { cause: failure });
    }
    throw new CommitFailedError(gaveUp, { cause: failure });
  }

  /** The action has nothing to commit on this base: its answer ends the call. */
  private answered(answer: A): A {
    if (this.open) {
      throw new CommitStateUnknownError(`${this.what}: ${answer.reason}; an earlier attempt may still land`);
    }
    return answer;
  }

  /** Ours (an attempt that landed late) is `committed`: the caller's files are in it, not spare. */
  private landed(table: LoadedTable, snapshotId: SnapshotId, attempts: number): CommitOutcome<A> {
    const status = this.ours.has(snapshotId) ? 'committed' : 'already-committed';
    return this.committed(status, table, snapshotId, attempts);
  }

  private committed(
    status: CommitResult['status'],
    table: LoadedTable,
    snapshotId: SnapshotId | undefined,
    attempts: number,
  ): CommitOutcome<A> {
    this.leftAt = table.metadataLocation;
    const { conflicts, unknownOutcomes } = this;
    return { kind: 'committed', result: { status, table, snapshotId, attempts, conflicts, unknownOutcomes } };
  }

  /** While an attempt may still land, no failure may read as "did not land": callers delete files then. */
  private asUnknownWhileOpen(error: unknown): unknown {
    if (!this.open || error instanceof CommitStateUnknownError) return error;
    return new CommitStateUnknownError(
      `${this.what}: ${describeError(error)}; an earlier attempt may still land`,
      { cause: error },
    );
  }

  private async reload(): Promise<LoadedTable> {
    const table = await this.catalog.loadTable(this.id);
    if (table.metadata['table-uuid'] !== this.uuid) {
      // Dropped and recreated, or a catalog answering with another table: this change was prepared for
      // the table it started on, and whether it landed there cannot be read off another one.
      const message = `${this.what}: the catalog now answers with table-uuid ${table.metadata['table-uuid']}, not ${this.uuid} this commit started on`;
      throw this.open ? new CommitStateUnknownError(message) : new CommitFailedError(message);
    }
    if (this.open && headOf(table) !== this.open.head) this.open = undefined;
    return table;
  }

  /** The table when it is no longer at `from` (another commit landed), else undefined. */
  private async movedOn(from: LoadedTable): Promise<LoadedTable | undefined> {
    const table = await this.reload();
    return table.metadataLocation !== from.metadataLocation || headOf(table) !== headOf(from)
      ? table
      : undefined;
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
function findLanded(
  table: LoadedTable,
  action: { readonly batchId?: string },
  ours: Set<SnapshotId>,
): SnapshotId | undefined {
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
