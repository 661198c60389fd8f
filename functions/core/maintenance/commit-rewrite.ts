/**
 * Commits a compaction run: one snapshot that replaces every accepted group's files with the files it
 * wrote (the rewrite-files action, table/actions/rewrite-files.ts) — `replace`, or `overwrite` when
 * deletes were applied (or delete files left dangling are removed).
 * Through the one commit loop: on a conflict the groups are validated again on the fresh base
 * (rewrite-validation.ts), so a group that lost a race is abandoned, never merged wrongly.
 *
 * The new files keep the starting snapshot's sequence number (`dataSequenceNumber`), so equality deletes
 * committed while the run worked still apply to them. The snapshot carries floe's committed offsets and
 * batch id, and the run id (`floe.maintenance-run`): a retried commit step finds its own snapshot and
 * reports it instead of committing twice.
 *
 * Clean-up happens only once the outcome is known: the files of abandoned groups and the run's plan and
 * result files are deleted after a commit (or after every group was abandoned); after a failure they are
 * kept, for the step's retry, and collected by orphan removal if the run never commits. Clean-up is
 * confined to the table's own files (io/confined-delete.ts): a group result naming a path elsewhere (a
 * tampered run folder) has that path refused and reported in the result, not deleted.
 */
import type { Catalog, LoadedTable } from '../catalog/catalog.js';
import { ValidationError } from '../errors.js';
import { TableArea } from '../io/confined-delete.js';
import { currentSnapshot } from '../spec/metadata.js';
import type { TableIdentifier, TableMetadata } from '../spec/types.js';
import { rewriteFiles, rewriteOperation } from '../table/actions/rewrite-files.js';
import type { Noop } from '../table/actions/table-action.js';
import { type CommitOptions, commitAction } from '../table/commit-loop.js';
import { carriedFloeSummary, MAINTENANCE_RUN_KEY } from '../table/carried-summary.js';
import type { GroupOutcome } from './compact-group.js';
import { type DeleteRefusals, reportRefusals } from './delete-refusals.js';
import { groupResultLocation, planLocation, readGroupResult, type RewritePlan } from './rewrite-run-files.js';
import { type GroupToCommit, type RewriteValidation, validateRewrite } from './rewrite-validation.js';
import { mapLimited } from '../table/map-limited.js';
import { readSnapshotManifests } from '../table/snapshot-manifests.js';

export interface RewriteCommitResult extends DeleteRefusals {
  status: 'committed' | 'already-committed' | 'abandoned' | 'nothing-to-commit';
  /** The snapshot committed (or found committed), as a decimal string. */
  snapshotId: string | null;
  operation: 'replace' | 'overwrite' | null;
  groupsCommitted: number[];
  groupsAbandoned: { index: number; reason: string }[];
  dataFilesRemoved: number;
  dataFilesAdded: number;
  deleteFilesRemoved: number;
  bytesRemoved: number;
  bytesAdded: number;
  attempts: number;
  conflicts: number;
}

/** Why a rewrite has nothing left to commit on a base. */
type StopReason = 'already-committed' | 'abandoned';

function emptyResult(
  status: RewriteCommitResult['status'],
  snapshotId: string | null = null,
): RewriteCommitResult {
  return {
    status,
    snapshotId,
    operation: null,
    groupsCommitted: [],
    groupsAbandoned: [],
    dataFilesRemoved: 0,
    dataFilesAdded: 0,
    deleteFilesRemoved: 0,
    bytesRemoved: 0,
    bytesAdded: 0,
    attempts: 0,
    conflicts: 0,
    ...reportRefusals([]),
  };
}

/** The snapshot a compaction run committed, if it is still in the table's history. Never throws. */
export function findRunSnapshot(metadata: TableMetadata, runId: string): string | undefined {
  const snapshot = metadata.snapshots.find((s) => s.summary[MAINTENANCE_RUN_KEY] === runId);
  return snapshot === undefined ? undefined : String(snapshot['snapshot-id']);
}

/** The result of a commit step retried after its commit landed. Never throws. */
export function alreadyCommitted(snapshotId: string): RewriteCommitResult {
  return emptyResult('already-committed', snapshotId);
}

/** Deletes the table's own files among `locations`; reports the rest. */
async function deleteAll(table: LoadedTable, locations: readonly string[]): Promise<DeleteRefusals> {
  // Clean-up never fails the step: what is left behind is an orphan for orphan removal.
  return reportRefusals((await new TableArea(table).delete(locations)).refused);
}

/**
 * Commits the groups of a run that compacted. `options.base`, the table as the caller loaded it, saves
 * reading it again (the commit loop checks it is still current before using it).
 * @throws ValidationError when an outcome names a group the plan does not have
 * @throws CommitFailedError / CommitStateUnknownError / LockTimeoutError from the commit loop (files kept)
 */
export async function commitRewrite(
  catalog: Catalog,
  id: TableIdentifier,
  plan: RewritePlan,
  outcomes: readonly GroupOutcome[],
  options: CommitOptions = {},
): Promise<RewriteCommitResult> {
  const table = options.base ?? (await catalog.loadTable(id));
  const mine = findRunSnapshot(table.metadata, plan.runId);
  if (mine !== undefined) return alreadyCommitted(mine);
  const io = table.io;
  const runFiles = [planLocation(table.metadata.location, plan.runId)];
  const groups: GroupToCommit[] = await mapLimited(outcomes, 8, async (outcome) => {
    const groupPlan = plan.groups.find((g) => g.index === outcome.index);
    if (!groupPlan) throw new ValidationError(`run ${plan.runId} has no group ${outcome.index}`);
    const result = groupResultLocation(table.metadata.location, plan.runId, outcome.index);
    if (outcome.written) runFiles.push(result);
    const added = outcome.written ? await readGroupResult(io, result, groupPlan.specId) : [];
    return { plan: groupPlan, added, deletesApplied: outcome.deletesApplied };
  });
  if (groups.length === 0)
    return { ...emptyResult('nothing-to-commit'), ...(await deleteAll(table, runFiles)) };

  const startingSeq = BigInt(plan.sequenceNumber);
  let last: RewriteValidation | undefined;
  // What each attempt's snapshot holds: an earlier attempt may be the one that lands (late).
  const attempts = new Map<bigint, { validation: RewriteValidation; operation: 'replace' | 'overwrite' }>();
  const outcome = await commitAction<Noop<StopReason>>(
    catalog,
    id,
    {
      prepare: async (base) => {
        if (findRunSnapshot(base.metadata, plan.runId) !== undefined) {
          return { kind: 'noop', reason: 'already-committed' };
        }
        const snapshot = currentSnapshot(base.metadata);
        const manifests = snapshot ? await readSnapshotManifests(base.io, snapshot) : [];
        const validation = await validateRewrite(base.io, base.metadata, manifests, groups, startingSeq);
        last = validation;
        if (validation.accepted.length === 0) {
          const reason = validation.alreadyCommitted.length > 0 ? 'already-committed' : 'abandoned';
          return { kind: 'noop', reason };
        }
        const rewrite = {
          removedDataFiles: validation.accepted.flatMap((g) => g.plan.files),
          removedDeleteFiles: validation.danglingDeletes,
          addedDataFiles: validation.accepted.flatMap((g) => g.added),
          deletesApplied: validation.accepted.some((g) => g.deletesApplied),
          dataSequenceNumber: startingSeq,
          manifests,
          summary: { ...carriedFloeSummary(base.metadata), [MAINTENANCE_RUN_KEY]: plan.runId },
        };
        const prepared = await rewriteFiles(base, rewrite);
        const operation = rewriteOperation(rewrite);
        attempts.set(prepared.change.snapshot['snapshot-id'], { validation, operation });
        return prepared;
      },
    },
    { ...options, base: table },
  );
  if (outcome.kind !== 'committed') {
    // A rewrite never answers stale: it validates against every base itself.
    const reason = outcome.reason;
    const refused = await deleteAll(table, [...abandonedOutputs(groups, last), ...runFiles]);
    return {
      ...emptyResult(reason),
      ...refused,
      groupsCommitted: reason === 'already-committed' ? (last?.alreadyCommitted ?? []) : [],
      groupsAbandoned: last?.abandoned ?? [],
    };
  }
  const result = outcome.result;

  const landed = result.snapshotId === undefined ? undefined : attempts.get(result.snapshotId);
  if (!landed)
    throw new Error(`commit of run ${plan.runId} reported snapshot ${result.snapshotId}, not one of its own`);
  const { validation, operation } = landed;
  const refused = await deleteAll(result.table, [...abandonedOutputs(groups, validation), ...runFiles]);
  const accepted = validation.accepted;
  return {
    status: 'committed',
    snapshotId: result.snapshotId === undefined ? null : String(result.snapshotId),
    operation,
    groupsCommitted: accepted.map((g) => g.plan.index),
    groupsAbandoned: validation.abandoned,
    dataFilesRemoved: accepted.reduce((s, g) => s + g.plan.files.length, 0),
    dataFilesAdded: accepted.reduce((s, g) => s + g.added.length, 0),
    deleteFilesRemoved: validation.danglingDeletes.size,
    bytesRemoved: accepted.reduce((s, g) => s + g.plan.bytes, 0),
    bytesAdded: accepted.reduce(
      (s, g) => s + g.added.reduce((t, f) => t + Number(f.file_size_in_bytes), 0),
      0,
    ),
    attempts: result.attempts,
    conflicts: result.conflicts,
    ...refused,
  };
}

/** The new files of the groups the last validation abandoned (never those it found committed). */
function abandonedOutputs(
  groups: readonly GroupToCommit[],
  validation: RewriteValidation | undefined,
): string[] {
  if (!validation) return [];
  const indexes = new Set(validation.abandoned.map((a) => a.index));
  return groups.filter((g) => indexes.has(g.plan.index)).flatMap((g) => g.added.map((f) => f.file_path));
}
