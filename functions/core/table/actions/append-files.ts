/**
 * Append files (Iceberg's AppendFiles, iceberg-rust's transaction/append.rs): new data files as one
 * `append` snapshot on the base, with the schema or spec changes they were written for committed in
 * the same snapshot. The files are written once by the caller; every attempt builds new manifests for
 * them on its own base (snapshot-producer.ts).
 */
import type { LoadedTable } from '../../catalog/catalog.js';
import type { TableRequirement, TableUpdate } from '../../catalog/requirements-updates.js';
import type { DataFile } from '../../spec/types.js';
import { type PreparedSnapshot, prepareSnapshot } from '../snapshot-producer.js';

export interface AppendedFiles {
  dataFiles: DataFile[];
  /** Extra summary properties (floe.batch-id, offsets, ...). */
  summary?: Record<string, string>;
  /** Schema or spec changes the files were written for (committed before the snapshot is added). */
  preUpdates?: TableUpdate[];
  preRequirements?: TableRequirement[];
}

/**
 * The change that appends `files` on `base`.
 * @throws whatever writing the manifests throws; NotFoundError when the base's manifest list is gone
 */
export async function appendFiles(
  base: LoadedTable,
  files: AppendedFiles,
): Promise<{ kind: 'change'; change: PreparedSnapshot }> {
  const change = await prepareSnapshot(base, {
    operation: 'append',
    addedDataFiles: files.dataFiles,
    addedDeleteFiles: [],
    summary: files.summary,
    preUpdates: files.preUpdates,
    preRequirements: files.preRequirements,
  });
  return { kind: 'change', change };
}
