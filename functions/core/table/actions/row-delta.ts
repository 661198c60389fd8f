/**
 * Row delta (Iceberg's RowDelta): data files and the delete files that go with them, as one snapshot —
 * the CDC, upsert and aggregate writes (equality deletes, position deletes, deletion vectors). A new
 * deletion vector replaces its data file's current one in the same snapshot (a snapshot holds at most
 * one per data file): `removedDeleteFiles` are marked DELETED, each known by its Puffin file and blob
 * offset (one Puffin file holds the vectors of many data files, and only the named ones go).
 * The operation follows Iceberg Java's rule: only data → `append`, only deletes → `delete`,
 * both → `overwrite`.
 */
import type { LoadedTable } from '../../catalog/catalog.js';
import type { DataFile, SnapshotOperation } from '../../spec/types.js';
import { readManifestEntries } from '../../manifest/manifest-reader.js';
import { mapLimited } from '../map-limited.js';
import { deleteFileKey, markRemoved } from './mark-removed.js';
import { type PreparedSnapshot, prepareSnapshot, type SnapshotChanges } from '../snapshot-producer.js';
import type { AppendedFiles } from './append-files.js';

export interface RowDeltaFiles extends AppendedFiles {
  deleteFiles: DataFile[];
  /** Delete files of the base these replace (deletion vectors superseded by merged ones). */
  removedDeleteFiles?: readonly DataFile[];
}

/** Iceberg Java's RowDelta rule for a snapshot's operation. Never throws. */
export function rowDeltaOperation(dataFiles: number, deleteFiles: number): SnapshotOperation {
  if (deleteFiles === 0) return 'append';
  return dataFiles === 0 ? 'delete' : 'overwrite';
}

/**
 * The change that commits `files` (data and deletes) on `base`.
 * @throws whatever writing the manifests throws; NotFoundError when the base's manifest list is gone
 */
export async function rowDelta(
  base: LoadedTable,
  files: RowDeltaFiles,
): Promise<{ kind: 'change'; change: PreparedSnapshot }> {
  const removed = new Set((files.removedDeleteFiles ?? []).map(deleteFileKey));
  const written: string[] = [];
  const removing: SnapshotChanges['rewriteExisting'] = async (b, carried, snapshotId) => {
    // Only delete manifests can hold them: data manifests are carried unread.
    const deletes = carried.filter((m) => m.content === 1);
    const loaded = await mapLimited(deletes, 8, async (manifest) => ({
      manifest,
      entries: await readManifestEntries(b.io, manifest),
    }));
    const marked = await markRemoved(
      b,
      carried,
      new Map(loaded.map((m) => [m.manifest.manifest_path, m])),
      snapshotId,
      removed,
      { skipUnloaded: true },
    );
    written.push(...marked.written);
    return marked;
  };
  const change = await prepareSnapshot(base, {
    operation: rowDeltaOperation(files.dataFiles.length, files.deleteFiles.length),
    addedDataFiles: files.dataFiles,
    addedDeleteFiles: files.deleteFiles,
    summary: files.summary,
    preUpdates: files.preUpdates,
    preRequirements: files.preRequirements,
    ...(removed.size > 0 ? { rewriteExisting: removing } : {}),
  });
  change.attemptFiles.push(...written);
  return { kind: 'change', change };
}
