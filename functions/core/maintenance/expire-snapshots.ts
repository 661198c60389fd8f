/**
 * Snapshot expiry: removes the snapshots (and refs) expire-selection.ts picks, through the commit loop,
 * then deletes what only they reached — their manifest lists, the manifests no retained snapshot lists,
 * and the data and delete files no retained snapshot holds live (Iceberg Java's ReachableFileCleanup).
 *
 * Files are deleted only after the commit landed, and only those the retained snapshots of the table as
 * committed do not reach: a reader of any retained snapshot still finds every file it needs.
 */
import type { Catalog } from '../catalog/catalog.js';
import type { TableRequirement, TableUpdate } from '../catalog/requirements-updates.js';
import type { FileIO } from '../io/file-io.js';
import { currentSnapshot } from '../spec/metadata.js';
import type { Snapshot, TableIdentifier, TableMetadata } from '../spec/types.js';
import { type CommitOptions, commitWithRetry } from '../table/commit-loop.js';
import { type ExpireSelection, selectExpiredSnapshots } from './expire-selection.js';
import type { MaintenanceSettings } from './maintenance-settings.js';
import { collectReachable } from './reachable-files.js';
import { mapLimited } from '../table/map-limited.js';

export interface ExpireResult {
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
}

export interface ExpireOptions extends CommitOptions {
  nowMs?: number;
  /** Choose, report, change nothing. */
  dryRun?: boolean;
}

class NothingToExpire extends Error {}

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
    return expireReport('dry-run', selectExpiredSnapshots(table.metadata, settingsOf(table.metadata), now));
  }
  let selection: ExpireSelection | undefined;
  let committed: Awaited<ReturnType<typeof commitWithRetry>>;
  try {
    committed = await commitWithRetry(
      catalog,
      id,
      {
        prepare: async (base) => {
          const md = base.metadata;
          selection = selectExpiredSnapshots(md, settingsOf(md), now);
          if (selection.expire.length === 0 && selection.expiredRefs.length === 0)
            throw new NothingToExpire();
          const main = currentSnapshot(md);
          const requirements: TableRequirement[] = [
            { type: 'assert-table-uuid', uuid: md['table-uuid'] },
            { type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': main ? main['snapshot-id'] : null },
          ];
          const updates: TableUpdate[] = selection.expiredRefs.map((name) => ({
            action: 'remove-snapshot-ref' as const,
            'ref-name': name,
          }));
          if (selection.expire.length > 0) {
            updates.push({
              action: 'remove-snapshots',
              'snapshot-ids': selection.expire.map((s) => s['snapshot-id']),
            });
          }
          return { requirements, updates };
        },
      },
      options,
    );
  } catch (error) {
    if (error instanceof NothingToExpire) return expireReport('nothing-to-expire');
    throw error;
  }
  const chosen = selection!;
  const out = expireReport('expired', chosen);
  await deleteUnreachable(committed.table.io, chosen.expire, committed.table.metadata.snapshots, out);
  return out;
}

/** Deletes what `expired` reached and `retained` does not; counts into `out`. */
async function deleteUnreachable(
  io: FileIO,
  expired: readonly Snapshot[],
  retained: readonly Snapshot[],
  out: ExpireResult,
): Promise<void> {
  const keep = await collectReachable(io, retained);
  const files = new Map<string, number>();
  const gone = await collectReachable(io, expired, (manifest, entries) => {
    if (keep.manifests.has(manifest.manifest_path)) return;
    for (const e of entries) {
      const path = e.data_file.file_path;
      if (!keep.liveFiles.has(path)) files.set(path, Number(e.data_file.file_size_in_bytes));
    }
  });
  const lists = [...gone.manifestLists].filter((l) => !keep.manifestLists.has(l));
  const manifests = [...gone.manifests.values()].filter((m) => !keep.manifests.has(m.manifest_path));
  const remove = async (location: string): Promise<boolean> =>
    io.delete(location).then(
      () => true,
      () => false,
    );
  // No metadata points at these any more: a crash half-way leaves the rest to orphan removal.
  for (const [ok, bytes] of await mapLimited(
    [...files],
    8,
    async ([p, b]) => [await remove(p), b] as const,
  )) {
    if (ok) {
      out.filesDeleted++;
      out.bytesDeleted += bytes;
    } else out.deleteFailures++;
  }
  for (const ok of await mapLimited(manifests, 8, (m) => remove(m.manifest_path))) {
    if (ok) out.manifestsDeleted++;
    else out.deleteFailures++;
  }
  for (const ok of await mapLimited(lists, 8, remove)) {
    if (ok) out.manifestListsDeleted++;
    else out.deleteFailures++;
  }
}
