/**
 * Reads the deletion vector a manifest entry points at: one ranged read of its blob
 * (`content_offset`, `content_size_in_bytes`) from the Puffin file through the table's FileIO, without
 * the footer (as Iceberg Java does), checked whole and against the entry's `record_count`.
 */
import { CorruptPuffinError } from '../data/puffin/puffin-errors.js';
import { CorruptDeletionVectorError } from '../deletes/deletes-errors.js';
import type { DeletionVector } from '../deletes/deletion-vector.js';
import { readDeletionVector } from '../deletes/deletion-vector-file.js';
import type { FileIO } from '../io/file-io.js';
import type { DataFile } from '../spec/types.js';
import { describeVector } from './delete-index.js';

/**
 * The deletion vector of a manifest entry (content 1, file_format PUFFIN; the manifest reader has
 * checked it names its data file and blob range).
 * @throws CorruptDeletionVectorError when the blob is not a valid vector or holds another number of
 *   positions than the entry's record_count; CorruptPuffinError when the range is not inside the file
 *   (both name the Puffin file, the range and the data file)
 * @throws NotFoundError, TransientIOError from the FileIO
 */
export async function loadDeletionVector(io: FileIO, file: DataFile): Promise<DeletionVector> {
  const where = `${describeVector(file)}, the deletion vector of ${file.referenced_data_file}`;
  try {
    return await readDeletionVector(
      { io, location: file.file_path, size: Number(file.file_size_in_bytes) },
      Number(file.content_offset),
      Number(file.content_size_in_bytes),
      file.record_count,
    );
  } catch (err) {
    if (err instanceof CorruptDeletionVectorError) {
      throw new CorruptDeletionVectorError(`${where}: ${err.message}`, { cause: err });
    }
    if (err instanceof CorruptPuffinError)
      throw new CorruptPuffinError(`${where}: ${err.message}`, { cause: err });
    throw err;
  }
}
