/**
 * Deleting rows by position the table's way — the one entry point for every path that deletes located
 * rows (CDC batches, maintenance's equality → position conversion, the live tail): Parquet position
 * delete files on a format-version 2 table (write-position-deletes.ts), deletion vectors on a v3 one
 * (write-deletion-vectors.ts), which also supersede the data files' current DVs. Commit `added` as
 * delete files and remove `replaced` in the same snapshot (table/actions/row-delta.ts's
 * `removedDeleteFiles`).
 */
import type { LoadedTable } from '../catalog/catalog.js';
import { ValidationError } from '../errors.js';
import type { DataFile } from '../spec/types.js';
import type { RowLocation } from './locate-rows.js';
import { type PositionDeleteFiles, writeDeletionVectors } from './write-deletion-vectors.js';
import { writePositionDeletes } from './write-position-deletes.js';

export type { PositionDeleteFiles } from './write-deletion-vectors.js';

/**
 * Writes the delete files that delete `rows` (data file and position, located in `table`'s current
 * snapshot) from `table`, and (v3) every row of `wholeFiles` (data files the same commit adds: the
 * version carriers, version-carriers.ts); file names start with `prefix`. Nothing is committed.
 * On failure, the files this call wrote are deleted (best effort) before the error is thrown.
 * @throws ValidationError for `wholeFiles` on a v2 table, a spec the table lacks, a partition tuple that does not fit it, or (v3) a
 *   data file not live in the snapshot; CorruptDeletionVectorError / CorruptPuffinError for a current
 *   deletion vector that does not read; whatever reading and writing throw (NotFoundError,
 *   TransientIOError, LakeError)
 */
export async function deletePositions(
  table: LoadedTable,
  rows: readonly RowLocation[],
  prefix: string,
  wholeFiles: readonly DataFile[] = [],
): Promise<PositionDeleteFiles> {
  if (table.metadata['format-version'] >= 3) return writeDeletionVectors(table, rows, prefix, wholeFiles);
  // v2 keeps deleted keys' versions in key-versions files (write-changes.ts), not in deleted data files.
  if (wholeFiles.length > 0)
    throw new ValidationError('only a format-version 3 table deletes the data files a commit adds');
  return { added: await writePositionDeletes(table, rows, prefix), replaced: [] };
}
