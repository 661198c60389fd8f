/**
 * Deletion vectors in Puffin files, as the Iceberg v3 table spec places them: one `deletion-vector-v1`
 * blob per data file, its footer entry with `fields: [2147483645]` (the `_pos` metadata column),
 * snapshot id and sequence number −1 (inherited from the commit that adds the file), and the
 * properties `referenced-data-file` and `cardinality`. A manifest entry for each vector points at its
 * blob by `content_offset` and `content_size_in_bytes`, so a reader fetches just that range.
 */
import type { PuffinFooter } from '../data/puffin/puffin-reader.js';
import { type PuffinSource, readPuffinBlob } from '../data/puffin/puffin-reader.js';
import { writePuffin } from '../data/puffin/puffin-writer.js';
import { ValidationError } from '../errors.js';
import { CorruptDeletionVectorError } from './deletes-errors.js';
import type { DeletionVector } from './deletion-vector.js';
import {
  DELETION_VECTOR_BLOB_TYPE,
  parseDeletionVector,
  serializeDeletionVector,
} from './deletion-vector-blob.js';

/** The `_pos` metadata column's field id (Integer.MAX_VALUE − 2), the one field a DV is computed for. */
export const ROW_POSITION_FIELD_ID = 2147483645;

export interface DeletionVectorToWrite {
  /** The data file's location exactly as its manifest entry has it. */
  referencedDataFile: string;
  vector: DeletionVector;
}

/** What a manifest entry (content = position deletes, file_format = PUFFIN) needs of one vector. */
export interface WrittenDeletionVector {
  referencedDataFile: string;
  /** The blob's offset in the Puffin file (`content_offset`). */
  contentOffset: number;
  /** The blob's length (`content_size_in_bytes`). */
  contentSizeInBytes: number;
  /** The deleted positions (`record_count`). */
  cardinality: number;
}

/**
 * A Puffin file holding one deletion vector per data file.
 * @throws ValidationError for two vectors of the same data file (a snapshot allows one), an empty
 *   vector (nothing to delete is no file), or a file past 2 GiB
 */
export function writeDeletionVectorFile(
  vectors: readonly DeletionVectorToWrite[],
  properties: Record<string, string> = { 'created-by': 'floe' },
): { bytes: Uint8Array; footerSize: number; vectors: WrittenDeletionVector[] } {
  const seen = new Set<string>();
  for (const { referencedDataFile, vector } of vectors) {
    if (seen.has(referencedDataFile)) {
      throw new ValidationError(
        `two deletion vectors for ${referencedDataFile}: a data file has at most one`,
      );
    }
    if (vector.cardinality === 0)
      throw new ValidationError(`the deletion vector for ${referencedDataFile} is empty`);
    seen.add(referencedDataFile);
  }
  const written = writePuffin(
    vectors.map(({ referencedDataFile, vector }) => ({
      type: DELETION_VECTOR_BLOB_TYPE,
      fields: [ROW_POSITION_FIELD_ID],
      'snapshot-id': -1,
      'sequence-number': -1,
      data: serializeDeletionVector(vector),
      properties: { 'referenced-data-file': referencedDataFile, cardinality: String(vector.cardinality) },
    })),
    properties,
  );
  return {
    bytes: written.bytes,
    footerSize: written.footerSize,
    vectors: written.metadata.blobs.map((blob, i) => ({
      referencedDataFile: vectors[i]!.referencedDataFile,
      contentOffset: blob.offset,
      contentSizeInBytes: blob.length,
      cardinality: vectors[i]!.vector.cardinality,
    })),
  };
}

/**
 * One deletion vector, read by the range its manifest entry gives; `recordCount` (the entry's
 * record_count), when given, must be its cardinality.
 * @throws CorruptPuffinError when the range is not inside the file
 * @throws CorruptDeletionVectorError when the bytes are not a valid vector or the count disagrees
 * @throws NotFoundError, TransientIOError from the FileIO
 */
export async function readDeletionVector(
  source: PuffinSource,
  contentOffset: number,
  contentSizeInBytes: number,
  recordCount?: number | bigint,
): Promise<DeletionVector> {
  const blob = await readPuffinBlob(source, contentOffset, contentSizeInBytes);
  return parseDeletionVector(blob, recordCount);
}

/**
 * The deletion vectors a Puffin footer lists, as manifest entries would point at them; other blob
 * types are left out.
 * @throws CorruptDeletionVectorError for a DV entry that is compressed or lacks a valid
 *   `referenced-data-file` or `cardinality`
 */
export function deletionVectorsInFooter(footer: PuffinFooter): WrittenDeletionVector[] {
  return footer.metadata.blobs
    .filter((blob) => blob.type === DELETION_VECTOR_BLOB_TYPE)
    .map((blob) => {
      const where = `deletion vector at offset ${blob.offset}`;
      if (blob['compression-codec'] !== undefined) {
        throw new CorruptDeletionVectorError(
          `${where} is ${blob['compression-codec']}-compressed; DVs never are`,
        );
      }
      const referencedDataFile = blob.properties?.['referenced-data-file'];
      const cardinality = blob.properties?.cardinality;
      if (referencedDataFile === undefined || referencedDataFile === '') {
        throw new CorruptDeletionVectorError(`${where} has no referenced-data-file property`);
      }
      if (cardinality === undefined || !/^\d{1,15}$/.test(cardinality)) {
        throw new CorruptDeletionVectorError(
          `${where} has cardinality ${cardinality ?? '(none)'}, not a count`,
        );
      }
      return {
        referencedDataFile,
        contentOffset: blob.offset,
        contentSizeInBytes: blob.length,
        cardinality: Number(cardinality),
      };
    });
}
