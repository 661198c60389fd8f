/**
 * Compaction planning: which data files to rewrite, in which groups. Per partition (spec + tuple), the
 * candidates are the files below the small-file threshold and the files that live deletes apply to; a
 * partition is rewritten when it has at least `minInputFiles` candidates, or any candidate carrying deletes.
 * Candidates are bin-packed into groups of at most `maxGroupBytes` input bytes, each one Lambda's work.
 *
 * Planning is a scan plan of the current snapshot (metadata only): it says which deletes apply to which
 * file with the spec's sequence-number rules, and how many manifests planning had to read.
 *
 * A v3 version carrier (cdc/version-carriers.ts) is never a candidate: its rows are deleted by design,
 * so a rewrite would drop it as fully deleted and lose the versions of deleted keys it carries. (A file
 * named like one whose rows no vector deletes whole holds live rows: it is compacted as any file.)
 */
import type { LoadedTable } from '../catalog/catalog.js';
import { isDeletionVector } from '../manifest/manifest-entry-codec.js';
import { isVersionCarrierDataFile, partitionKey } from '../scan/delete-index.js';
import { planScan } from '../scan/plan-scan.js';
import type { FileScanTask, ScanPlan } from '../scan/scan-plan.js';
import { currentSchema, specById } from '../spec/metadata.js';
import { partitionPath } from '../spec/transforms.js';
import { binPack } from './bin-pack.js';
import type { MaintenanceSettings } from './maintenance-settings.js';
import type { RewriteGroupPlan, RewritePlan } from './rewrite-run-files.js';

/** The table as planning found it, for the run's summary. */
export interface TableFileStats {
  dataFiles: number;
  dataBytes: number;
  records: number;
  /** Delete files applying to some live data file. */
  deleteFiles: number;
  /** Manifests opened and metadata bytes read to plan a full scan. */
  manifestsRead: number;
  metadataBytesRead: number;
}

export interface CompactionPlanResult {
  /** Undefined when the table has no snapshot, or compaction is skipped (`skipped`). */
  plan?: RewritePlan;
  before: TableFileStats;
  smallFiles: number;
  /** Why the table is not compacted at all. */
  skipped?: string;
}

/** Whether a deletion vector deletes every row of the task's file. Never throws. */
function deletedWhole(task: FileScanTask): boolean {
  return task.deletes.some((d) => isDeletionVector(d.file) && d.file.record_count >= task.file.record_count);
}

function sumBytes(tasks: readonly FileScanTask[]): number {
  return tasks.reduce((s, t) => s + Number(t.file.file_size_in_bytes), 0);
}

function statsOf(scan: ScanPlan): TableFileStats {
  const deleteFiles = new Set(scan.tasks.flatMap((t) => t.deletes.map((d) => d.file.file_path)));
  return {
    dataFiles: scan.tasks.length,
    dataBytes: sumBytes(scan.tasks),
    records: scan.tasks.reduce((s, t) => s + Number(t.file.record_count), 0),
    deleteFiles: deleteFiles.size,
    manifestsRead: scan.manifestsRead,
    metadataBytesRead: scan.bytesRead,
  };
}

/**
 * The live files of the table's current snapshot, and what planning a full scan of it reads.
 * @throws NotFoundError / TransientIOError / ValidationError from reading metadata
 */
export async function readTableFileStats(table: LoadedTable): Promise<TableFileStats> {
  return statsOf(await planScan(table));
}

/**
 * Plans the compaction of a table's current snapshot.
 * @throws NotFoundError / TransientIOError / ValidationError from reading metadata
 */
export async function planCompaction(
  table: LoadedTable,
  settings: MaintenanceSettings,
  runId: string,
  tableName: string,
): Promise<CompactionPlanResult> {
  const scan = await planScan(table);
  const before = statsOf(scan);
  if (scan.snapshotId === null) return { before, smallFiles: 0 };
  const md = table.metadata;
  const snapshot = md.snapshots.find((s) => s['snapshot-id'] === scan.snapshotId)!;
  const schema = currentSchema(md);

  const byPartition = new Map<string, FileScanTask[]>();
  let smallFiles = 0;
  for (const task of scan.tasks) {
    if (isVersionCarrierDataFile(md, task.file) && deletedWhole(task)) continue;
    const small = Number(task.file.file_size_in_bytes) < settings.smallFileBytes;
    if (small) smallFiles++;
    if (!small && task.deletes.length === 0) continue;
    const key = partitionKey(specById(md, task.specId), task.file);
    const list = byPartition.get(key);
    if (list) list.push(task);
    else byPartition.set(key, [task]);
  }

  const groups: Omit<RewriteGroupPlan, 'index'>[] = [];
  for (const candidates of byPartition.values()) {
    const withDeletes = candidates.filter((t) => t.deletes.length > 0).length;
    if (candidates.length < settings.minInputFiles && withDeletes === 0) continue;
    const spec = specById(md, candidates[0].specId);
    // For people (logs, the execution history): a long tuple is cut, the plan file has the files.
    const path = spec.fields.length ? partitionPath(spec, schema, candidates[0].file.partition) : '';
    const partition = path.length > 120 ? `${path.slice(0, 119)}…` : path;
    for (const bin of binPack(candidates, (t) => Number(t.file.file_size_in_bytes), settings.maxGroupBytes)) {
      // A lone small file without deletes gains nothing from being rewritten on its own.
      if (bin.length === 1 && bin[0].deletes.length === 0) continue;
      groups.push({
        specId: spec['spec-id'],
        partition,
        files: bin.map((t) => t.file.file_path),
        bytes: sumBytes(bin),
        records: bin.reduce((s, t) => s + Number(t.file.record_count), 0),
        filesWithDeletes: bin.filter((t) => t.deletes.length > 0).length,
      });
    }
  }
  // The groups that remove the most files first, as many as one run takes on.
  const chosen = groups
    .sort((a, b) => b.files.length - a.files.length)
    .slice(0, settings.maxGroupsPerRun)
    .map((g, index) => ({ ...g, index }));
  return {
    before,
    smallFiles,
    plan: {
      version: 1,
      runId,
      table: tableName,
      snapshotId: String(snapshot['snapshot-id']),
      sequenceNumber: snapshot['sequence-number'],
      targetFileSizeBytes: settings.targetFileSizeBytes,
      groups: chosen,
    },
  };
}
