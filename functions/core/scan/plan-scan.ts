/**
 * Scan planning: which data files a filtered read of one snapshot must open, and which delete files
 * apply to each (Iceberg spec, "Scan Planning"). Reads only metadata: the manifest list and the
 * manifests whose partition summaries may match.
 *
 * Pruning, cheapest first: manifest partition summaries (whole manifests skipped unread), then each
 * entry's partition tuple against the filter's inclusive partition projection, then each data file's
 * column metrics. Delete manifests and delete files are pruned by partition only: a delete file
 * whose partition cannot match scopes only data files that cannot match either, but its column
 * metrics describe deleted rows, not the rows a filter keeps.
 */
import type { LoadedTable } from '../catalog/catalog.js';
import { ValidationError } from '../errors.js';
import { readManifestEntries } from '../manifest/manifest-reader.js';
import { UnsupportedFeatureError } from '../spec/format-version.js';
import { readManifestList } from '../manifest/manifest-list.js';
import { currentSchema, currentSnapshot, snapshotById, specById } from '../spec/metadata.js';
import type { ManifestEntry, ManifestFile, PartitionSpec, Snapshot } from '../spec/types.js';
import { bindExpression } from './bind-expression.js';
import { mapLimited } from '../table/map-limited.js';
import { CountingFileIO } from './counting-file-io.js';
import { DeleteIndex } from './delete-index.js';
import { fileMightMatch } from './evaluate-metrics.js';
import { manifestMightMatch } from './evaluate-manifest.js';
import type { BoundExpression, Expression } from './expression.js';
import { ALWAYS_TRUE, rewriteNot } from './expression-helpers.js';
import { evaluatePartition, projectPartition } from './project-partition.js';
import type { FileScanTask, ScanFunnel, ScanPlan } from './scan-plan.js';

export interface PlanScanOptions {
  /** Row filter, bound here against the table's current schema. @default no filter */
  filter?: Expression;
  /** Snapshot to scan. @default the current snapshot (main) */
  snapshotId?: bigint;
  /** Manifests read at once. @default 8 */
  concurrency?: number;
}

interface OpenedManifest {
  manifest: ManifestFile;
  spec: PartitionSpec;
  projection: BoundExpression;
  entries: ManifestEntry[];
}

/**
 * Plans a scan of `table` at a snapshot. Tasks come in manifest-list order, then manifest order.
 * @throws ValidationError for a filter that does not bind to the current schema, an unknown
 *   snapshot id, or metadata naming a missing spec
 * @throws NotFoundError / TransientIOError / ValidationError from reading the manifest list and manifests
 * @throws ValidationError for two live deletion vectors of one data file, or a deletion vector in
 *   another partition than its data file (delete-index.ts)
 * @throws UnsupportedFeatureError when the snapshot is encrypted
 */
export async function planScan(table: LoadedTable, options: PlanScanOptions = {}): Promise<ScanPlan> {
  const md = table.metadata;
  const schema = currentSchema(md);
  const filter = rewriteNot(options.filter ? bindExpression(options.filter, schema) : ALWAYS_TRUE);
  const snapshot = resolveSnapshot(table, options.snapshotId);
  const funnel: ScanFunnel = {
    manifestsTotal: 0,
    manifestsAfterPartitionSummaries: 0,
    filesInTable: 0,
    filesAfterPartitionPruning: 0,
    filesAfterManifestSummaries: 0,
    filesAfterStats: 0,
  };
  if (!snapshot) return { snapshotId: null, tasks: [], funnel, manifestsRead: 0, bytesRead: 0 };

  const io = new CountingFileIO(table.io);
  refuseEncrypted(snapshot);
  const manifests = await readManifestList(io, snapshot['manifest-list']);
  const projections = new Map<number, BoundExpression>();
  const projectionFor = (spec: PartitionSpec): BoundExpression => {
    let projection = projections.get(spec['spec-id']);
    if (!projection) {
      projection = projectPartition(filter, spec);
      projections.set(spec['spec-id'], projection);
    }
    return projection;
  };

  let filesInSkippedManifests = 0;
  const toOpen: Omit<OpenedManifest, 'entries'>[] = [];
  for (const manifest of manifests) {
    funnel.manifestsTotal++;
    const spec = specById(md, manifest.partition_spec_id);
    const projection = projectionFor(spec);
    const liveFiles = liveFileCount(manifest);
    if (!manifestMightMatch(projection, manifest, spec)) {
      if (manifest.content === 0) filesInSkippedManifests += liveFiles;
      continue;
    }
    funnel.manifestsAfterPartitionSummaries++;
    // Only DELETED entries inside: nothing live to plan.
    if (liveFiles === 0) continue;
    toOpen.push({ manifest, spec, projection });
  }

  const opened = await mapLimited(toOpen, options.concurrency ?? 8, async (m) => ({
    ...m,
    entries: await readManifestEntries(io, m.manifest),
  }));

  const deletes = new DeleteIndex();
  const candidates: { entry: ManifestEntry; spec: PartitionSpec; seq: bigint }[] = [];
  let filesPrunedByPartition = 0;
  for (const { manifest, spec, projection, entries } of opened) {
    for (const entry of entries) {
      if (entry.status === 2) continue; // DELETED entries are not part of the snapshot
      const file = entry.data_file;
      const seq = entry.sequence_number ?? manifest.sequence_number;
      const partitionMatches = evaluatePartition(projection, file.partition);
      if (manifest.content === 1 || file.content !== 0) {
        if (partitionMatches) {
          deletes.add({ file, dataSequenceNumber: seq, specId: manifest.partition_spec_id }, spec);
        }
        continue;
      }
      funnel.filesInTable++;
      if (!partitionMatches) {
        filesPrunedByPartition++;
        continue;
      }
      candidates.push({ entry, spec, seq });
    }
  }

  funnel.filesInTable += filesInSkippedManifests;
  funnel.filesAfterPartitionPruning = funnel.filesInTable - filesPrunedByPartition;
  funnel.filesAfterManifestSummaries = funnel.filesAfterPartitionPruning - filesInSkippedManifests;

  const tasks: FileScanTask[] = [];
  for (const { entry, spec, seq } of candidates) {
    const file = entry.data_file;
    if (!fileMightMatch(filter, file)) continue;
    const applying = deletes.forDataFile(file, seq, spec);
    tasks.push({ file, dataSequenceNumber: seq, specId: spec['spec-id'], deletes: applying });
  }
  funnel.filesAfterStats = tasks.length;

  return {
    snapshotId: snapshot['snapshot-id'],
    tasks,
    funnel,
    manifestsRead: opened.length,
    bytesRead: io.bytesRead,
  };
}

/**
 * A v3 snapshot with a `key-id` has an encrypted manifest list (and manifests): floe has no decryption,
 * and reading the ciphertext as Avro would fail with a less useful message.
 * @throws UnsupportedFeatureError when the snapshot names an encryption key
 */
function refuseEncrypted(snapshot: Snapshot): void {
  const keyId = snapshot['key-id'];
  if (keyId === undefined) return;
  throw new UnsupportedFeatureError(
    `snapshot ${snapshot['snapshot-id']} is encrypted (key-id ${keyId}): reading encrypted tables is not supported`,
  );
}

function resolveSnapshot(table: LoadedTable, snapshotId: bigint | undefined): Snapshot | undefined {
  if (snapshotId === undefined) return currentSnapshot(table.metadata);
  const snapshot = snapshotById(table.metadata, snapshotId);
  if (!snapshot) {
    throw new ValidationError(`table has no snapshot ${snapshotId} (it may have expired)`);
  }
  return snapshot;
}

/** Live files of a manifest per the manifest list; a missing count is "assumed non-zero" (spec). */
function liveFileCount(manifest: ManifestFile): number {
  const added = manifest.added_files_count as number | null | undefined;
  const existing = manifest.existing_files_count as number | null | undefined;
  if (added === null || added === undefined || existing === null || existing === undefined) {
    return Math.max(1, (added ?? 0) + (existing ?? 0));
  }
  return added + existing;
}
