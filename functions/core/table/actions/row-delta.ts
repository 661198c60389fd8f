/**
 * Row delta (Iceberg's RowDelta): data files and the delete files that go with them, as one snapshot —
 * the CDC, upsert and aggregate writes (equality deletes; position deletes and deletion vectors belong
 * here too). The operation follows Iceberg Java's rule: only data → `append`, only deletes → `delete`,
 * both → `overwrite`.
 */
import type { LoadedTable } from '../../catalog/catalog.js';
import type { DataFile, SnapshotOperation } from '../../spec/types.js';
import { type PreparedSnapshot, prepareSnapshot } from '../snapshot-producer.js';
import type { AppendedFiles } from './append-files.js';

export interface RowDeltaFiles extends AppendedFiles {
  deleteFiles: DataFile[];
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
  const change = await prepareSnapshot(base, {
    operation: rowDeltaOperation(files.dataFiles.length, files.deleteFiles.length),
    addedDataFiles: files.dataFiles,
    addedDeleteFiles: files.deleteFiles,
    summary: files.summary,
    preUpdates: files.preUpdates,
    preRequirements: files.preRequirements,
  });
  return { kind: 'change', change };
}
