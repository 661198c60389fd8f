/**
 * Snapshot expiry: removes the snapshots (and refs) expire-selection.ts picks, through the commit loop,
 * then deletes what only they reached — their manifest lists, the manifests no retained snapshot lists,
 * and the data and delete files no retained snapshot holds live (Iceberg Java's ReachableFileCleanup).
 *
 * Files are deleted only after the commit landed, and only those the retained snapshots of the table as
 * committed do not reach: a reader of any retained snapshot still finds every file it needs.
 *
 * Only the table's own files are deleted (io/confined-delete.ts): an expired snapshot whose manifest list,
 * manifests or data files point outside the table's location, or into a folder holding another table,
 * leaves those files where they are and reports them. A dry run chooses the files by the same code
 * (against the snapshots that would remain) and stops before deleting.
 */
import type { Catalog } from '../catalog/catalog.js';
import type { LoadedTable } from '../catalog/catalog.js';
import { TableArea } from '../io/confined-delete.js';
import { normalizeLocation } from '../io/location.js';
import type { Snapshot, TableIdentifier, TableMetadata } from '../spec/types.js';
import { removeSnapshots } from '../table/actions/expire-snapshots.js';
import type { Noop } from '../table/actions/table-action.js';
import { type CommitOptions, commitAction } from '../table/commit-loop.js';
import { type ExpireSelection, selectExpiredSnapshots } from './expire-selection.js';
import type { MaintenanceSettings } from './maintenance-settings.js';
import { type DeleteRefusals, reportRefusals } from './delete-refusals.js';
import { collectReachable } from './reachable-files.js';

export interface ExpireResult extends DeleteRefusals {
  /** `skipped`: the table's snapshots are managed elsewhere (S3 Tables). */
  status: 'expired' | 'nothing-to-expire' | 'dry-run' | 'skipped';
  snapshotsExpired: number;
  /** The first expired snapshot ids (at most 100: the result travels in a Step Functions state). */
  expiredSnapshotIds: string[];
  refsRemoved: string[];
  manifestListsDeleted: number;
  manifestsDeleted: number;
  /** Data and delete files deleted. */
  filesDeleted: number;
  bytesDeleted: number;
  /** Deletions that failed (left for orphan removal). */
  deleteFailures: number;
  /** Files of every kind the run deletes (a dry run: would delete), refused ones not counted. */
  toDelete: number;
  /** The first of them, up to `sampleSize`. */
  toDeleteSample: string[];
}

export interface ExpireOptions extends CommitOptions {
  nowMs?: number;
  /** Choose, report, change nothing. */
  dryRun?: boolean;
  /** Paths named in `toDeleteSample` and `refusedSample`. @default 100 */
  sampleSize?: number;
}

/** A result for `status` that names `selection`'s snapshots and refs and counts no deletion. Never throws. */
export function expireReport(status: ExpireResult['status'], selection?: ExpireSelection): ExpireResult {
  return {
    status,
    snapshotsExpired: selection?.expire.length ?? 0,
    expiredSnapshotIds: selection?.expire.slice(0, 100).map((s) => String(s['snapshot-id'])) ?? [],
    refsRemoved: selection?.expiredRefs ?? [],
    manifestListsDeleted: 0,
    manifestsDeleted: 0,
    filesDeleted: 0,
    bytesDeleted: 0,
    deleteFailures: 0,
    toDelete: 0,
    toDeleteSample: [],
    ...reportRefusals([]),
  };
}

/**
 * Expires snapshots of a table and deletes the files only they reached.
 * @param settingsOf the retention for the table as loaded (properties may change between attempts)
 * @throws CommitFailedError / CommitStateUnknownError / LockTimeoutError from the commit loop
 * @throws NotFoundError / TransientIOError / ValidationError from reading metadata
 */
export async function expireSnapshots(
  catalog: Catalog,
  id: TableIdentifier,
  settingsOf: (metadata: TableMetadata) => MaintenanceSettings,
  options: ExpireOptions = {},
): Promise<ExpireResult> {
  const now = options.nowMs ?? Date.now();
  if (options.dryRun) {
    const table = await catalog.loadTable(id);
    const selection = selectExpiredSnapshots(table.metadata, settingsOf(table.metadata), now);
    const out = expireReport('dry-run', selection);
    const gone = new Set(selection.expire.map((s) => s['snapshot-id']));
    const retained = table.metadata.snapshots.filter((s) => !gone.has(s['snapshot-id']));
    const planned = await planDeletes(table, selection.expire, retained);
    const confined = await planned.area.confine(planned.files.keys());
    report(out, confined.allowed, confined.refused, options.sampleSize);
    return out;
  }
  let selection: ExpireSelection | undefined;
  const expired = await commitAction<Noop<'nothing-to-expire'>>(
    catalog,
    id,
    {
      prepare: async (base) => {
        const md = base.metadata;
        selection = selectExpiredSnapshots(md, settingsOf(md), now);
        return removeSnapshots(md, selection);
      },
    },
    options,
  );
  // Expiry never answers stale: it selects again on every base, and the last selection is the one that
  // committed (a change without a snapshot is found only by its own swap succeeding).
  if (expired.kind !== 'committed' || selection === undefined) return expireReport('nothing-to-expire');
  const committed = expired.result;
  const chosen = selection;
  const out = expireReport('expired', chosen);
  const planned = await planDeletes(committed.table, chosen.expire, committed.table.metadata.snapshots);
  // No metadata points at these any more: a crash half-way leaves the rest to orphan removal.
  const outcome = await planned.area.delete(planned.files.keys());
  report(out, outcome.allowed, outcome.refused, options.sampleSize);
  for (const location of outcome.deleted) {
    const file = planned.files.get(location)!;
    if (file.kind === 'manifest-list') out.manifestListsDeleted++;
    else if (file.kind === 'manifest') out.manifestsDeleted++;
    else {
      out.filesDeleted++;
      out.bytesDeleted += file.bytes;
    }
  }
  out.deleteFailures = outcome.failed.length;
  return out;
}

function report(
  out: ExpireResult,
  allowed: string[],
  refused: Parameters<typeof reportRefusals>[0],
  sampleSize = 100,
): void {
  out.toDelete = allowed.length;
  out.toDeleteSample = allowed.slice(0, sampleSize);
  Object.assign(out, reportRefusals(refused, sampleSize));
}

interface PlannedFile {
  kind: 'manifest-list' | 'manifest' | 'file';
  bytes: number;
}

/**
 * What `expired` reached and `retained` does not (data and delete files, manifests, manifest lists), and
 * the area deletes are confined to. The dry run and the real run both choose their files here.
 */
async function planDeletes(
  table: LoadedTable,
  expired: readonly Snapshot[],
  retained: readonly Snapshot[],
): Promise<{ files: Map<string, PlannedFile>; area: TableArea }> {
  const io = table.io;
  const keep = await collectReachable(io, retained);
  const keptFiles = new Set([...keep.liveFiles].map(normalizeLocation));
  const files = new Map<string, PlannedFile>();
  const gone = await collectReachable(io, expired, (manifest, entries) => {
    if (keep.manifests.has(manifest.manifest_path)) return;
    for (const e of entries) {
      const path = e.data_file.file_path;
      if (!keptFiles.has(normalizeLocation(path)))
        files.set(path, { kind: 'file', bytes: Number(e.data_file.file_size_in_bytes) });
    }
  });
  for (const m of gone.manifests.values())
    if (!keep.manifests.has(m.manifest_path)) files.set(m.manifest_path, { kind: 'manifest', bytes: 0 });
  for (const l of gone.manifestLists)
    if (!keep.manifestLists.has(l)) files.set(l, { kind: 'manifest-list', bytes: 0 });
  return { files, area: new TableArea(table) };
}
