/**
 * Produces one new snapshot on a base: new manifests for the added data and delete files, the
 * parent's manifests carried over (merged once they pile up), a manifest list, and the
 * requirements + updates that commit it. Data files are written once by the caller and re-applied
 * unchanged on every retry; only manifests and the manifest list are rewritten per attempt.
 * On a format-version 3 table the manifests and the list are v3 ones, and the snapshot carries row
 * lineage (row-lineage.ts); a Parquet position delete file is refused there (v3 deletes by position
 * with deletion vectors only).
 */
import { randomUUID } from 'node:crypto';
import type { LoadedTable } from '../catalog/catalog.js';
import type { TableChange, TableRequirement, TableUpdate } from '../catalog/requirements-updates.js';
import { joinLocation } from '../io/location.js';
import { writeManifest } from '../manifest/manifest-writer.js';
import { writeManifestList } from '../manifest/manifest-list.js';
import { readManifestList } from '../manifest/manifest-list.js';
import { currentSchema, currentSnapshot, specById } from '../spec/metadata.js';
import type {
  DataFile,
  ManifestEntry,
  ManifestFile,
  Snapshot,
  SnapshotId,
  SnapshotOperation,
  TableMetadata,
} from '../spec/types.js';
import { mergeManifests } from './manifest-merge.js';
import { assignFirstRowIds } from './row-lineage.js';
import { UnsupportedFeatureError } from '../spec/format-version.js';
import { groupBy } from './group-by.js';
import { buildSummary } from './snapshot-summary.js';
import { CARRIED_SUMMARY_KEYS, findInAncestry } from './source-offsets.js';
import { readWriteProperties } from '../spec/table-properties.js';

export interface SnapshotChanges {
  operation: SnapshotOperation;
  addedDataFiles: DataFile[];
  addedDeleteFiles: DataFile[];
  /** Extra summary properties (floe.batch-id, offsets, ...). */
  summary?: Record<string, string>;
  /** Schema, spec or property changes committed in the same snapshot (applied before add-snapshot). */
  preUpdates?: TableUpdate[];
  preRequirements?: TableRequirement[];
  /** Rewrites the parent's manifests (drop entries of removed files); returns the removed files. */
  rewriteExisting?: (
    base: LoadedTable,
    manifests: ManifestFile[],
    snapshotId: bigint,
  ) => Promise<{
    manifests: ManifestFile[];
    removed: DataFile[];
  }>;
  /** The parent snapshot's manifest list, when the caller read it on this base (else it is read here). */
  parentManifests?: ManifestFile[];
  /** Data sequence number for added data files (compaction keeps the starting one); default: new. */
  dataSequenceNumber?: bigint;
}

export interface PreparedSnapshot extends TableChange {
  snapshot: Snapshot;
  /** Files this attempt wrote that are garbage if the commit did not land. */
  attemptFiles: string[];
}

/** A random positive 63-bit snapshot id, as Iceberg Java makes them. */
export function newSnapshotId(): SnapshotId {
  const bytes = new BigUint64Array(1);
  crypto.getRandomValues(bytes);
  return bytes[0] & 0x7fff_ffff_ffff_ffffn || 1n;
}

function entriesFor(files: DataFile[], snapshotId: bigint, dataSequenceNumber?: bigint): ManifestEntry[] {
  return files.map((data_file) => ({
    status: 1,
    snapshot_id: snapshotId,
    sequence_number: dataSequenceNumber ?? null,
    file_sequence_number: null,
    data_file,
  }));
}

/** The floe properties this snapshot inherits from its ancestry (offsets, redriven dead letters). */
function carriedSummary(md: TableMetadata): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of CARRIED_SUMMARY_KEYS) {
    const value = findInAncestry(md, key);
    if (value !== undefined) out[key] = value;
  }
  return out;
}

/**
 * v3 adds no new Parquet position delete files (spec, "Deletion Vectors"): deletes by position are
 * deletion vectors there (cdc/delete-positions.ts writes them).
 */
function refuseParquetPositionDeletes(files: readonly DataFile[]): void {
  const parquet = files.find((f) => f.content === 1 && f.file_format.toUpperCase() !== 'PUFFIN');
  if (parquet === undefined) return;
  throw new UnsupportedFeatureError(
    `${parquet.file_path}: a format-version 3 table takes position deletes as deletion vectors, not ${parquet.file_format} position delete files`,
  );
}

/**
 * Prepares requirements + updates for one snapshot on `base` (writes manifests and the manifest list).
 * @throws UnsupportedFeatureError for a Parquet position delete file added to a v3 table
 * @throws ValidationError from the manifest writers; whatever the FileIO throws
 */
export async function prepareSnapshot(
  base: LoadedTable,
  changes: SnapshotChanges,
): Promise<PreparedSnapshot> {
  const md = base.metadata;
  const parent = currentSnapshot(md);
  const snapshotId = newSnapshotId();
  const sid = snapshotId;
  const sequenceNumber = md['last-sequence-number'] + 1;
  const schemaUpdate = changes.preUpdates?.find((u) => u.action === 'add-schema');
  const schema =
    schemaUpdate && schemaUpdate.action === 'add-schema' ? schemaUpdate.schema : currentSchema(md);
  const specUpdate = changes.preUpdates?.find((u) => u.action === 'add-spec');
  const metadataDir = joinLocation(md.location, 'metadata');
  const attemptFiles: string[] = [];
  const attempt = randomUUID();
  const codec = readWriteProperties(md.properties).avroCodec;
  const formatVersion = md['format-version'];
  if (formatVersion >= 3) refuseParquetPositionDeletes(changes.addedDeleteFiles);

  let carried: ManifestFile[] = !parent
    ? []
    : (changes.parentManifests ?? (await readManifestList(base.io, parent['manifest-list'])));
  let removed: DataFile[] = [];
  if (changes.rewriteExisting) {
    const rewritten = await changes.rewriteExisting(base, carried, sid);
    carried = rewritten.manifests;
    removed = rewritten.removed;
  }

  const newManifests: ManifestFile[] = [];
  const groups: [0 | 1, DataFile[]][] = [
    [0, changes.addedDataFiles],
    [1, changes.addedDeleteFiles],
  ];
  for (const [content, files] of groups) {
    for (const [specId, specFiles] of groupBy(files, (f) => f.spec_id)) {
      const spec =
        specUpdate?.action === 'add-spec' && specUpdate.spec['spec-id'] === specId
          ? specUpdate.spec
          : specById(md, specId);
      const location = joinLocation(metadataDir, `${attempt}-m${newManifests.length}.avro`);
      attemptFiles.push(location);
      newManifests.push(
        await writeManifest({
          io: base.io,
          location,
          schema,
          spec,
          content,
          snapshotId: sid,
          entries: entriesFor(specFiles, sid, content === 0 ? changes.dataSequenceNumber : undefined),
          codec,
          formatVersion,
        }),
      );
    }
  }

  const merged = await mergeManifests(base, carried, {
    snapshotId: sid,
    metadataDir,
    attempt,
    schema,
  });
  attemptFiles.push(...merged.written);

  let listed = [...newManifests, ...merged.manifests];
  let lineage: Pick<Snapshot, 'first-row-id' | 'added-rows'> = {};
  if (formatVersion >= 3) {
    const assigned = assignFirstRowIds(md, listed);
    listed = assigned.manifests;
    lineage = { 'first-row-id': assigned.firstRowId, 'added-rows': assigned.addedRows };
  }
  const manifestList = joinLocation(metadataDir, `snap-${snapshotId}-1-${attempt}.avro`);
  attemptFiles.push(manifestList);
  await writeManifestList({
    io: base.io,
    location: manifestList,
    snapshotId: sid,
    parentSnapshotId: parent ? parent['snapshot-id'] : null,
    sequenceNumber: BigInt(sequenceNumber),
    manifests: listed,
    codec,
    formatVersion,
  });

  const snapshot: Snapshot = {
    'snapshot-id': snapshotId,
    ...(parent ? { 'parent-snapshot-id': parent['snapshot-id'] } : {}),
    'sequence-number': sequenceNumber,
    'timestamp-ms': Math.max(Date.now(), md['last-updated-ms'] + 1),
    'manifest-list': manifestList,
    summary: buildSummary(
      changes.operation,
      { added: [...changes.addedDataFiles, ...changes.addedDeleteFiles], removed },
      parent,
      { ...carriedSummary(md), ...changes.summary },
    ),
    'schema-id': schema['schema-id'],
    ...lineage,
  };

  const requirements: TableRequirement[] = [
    { type: 'assert-table-uuid', uuid: md['table-uuid'] },
    { type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': parent ? parent['snapshot-id'] : null },
    ...(changes.preRequirements ?? []),
  ];
  const updates: TableUpdate[] = [
    ...(changes.preUpdates ?? []),
    { action: 'add-snapshot', snapshot },
    { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': snapshotId },
  ];
  return { requirements, updates, snapshot, attemptFiles };
}
