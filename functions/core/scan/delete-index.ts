/**
 * Which delete files apply to a data file (spec, "Scan Planning"):
 * - a position delete applies when the data file's data sequence number is ≤ the delete's and both
 *   have the same spec and partition tuple (narrowed further by the delete's `file_path` bounds, as
 *   Iceberg Java does: a delete file whose paths cannot include the data file's path is skipped);
 * - an equality delete applies when the data file's data sequence number is < the delete's, and
 *   either both have the same spec and partition tuple, or the delete's spec is unpartitioned
 *   (no fields, or only void ones) — then it applies to every partition of every spec.
 * A position delete with a referenced_data_file (v3, and optional in v2) applies to that file only.
 *
 * Deletion vectors (v3: position deletes in a Puffin blob) are indexed by the data file they name. The
 * spec: a DV applies when the data file's path is its `referenced_data_file`, the data file's data
 * sequence number is ≤ the DV's, and both have the same spec and partition; and "if a DV is written for
 * a data file, it must replace all previously written position delete files so that when a DV is
 * present, readers can safely ignore matching position delete files" — so a file a DV applies to gets
 * the DV and its equality deletes, no position delete file. At most one DV per data file may be live
 * in a snapshot: a second one, or one in another partition than its data file, is corrupt metadata and
 * refused (as Iceberg Java's DeleteFileIndex does), never guessed around. A DV with a smaller data
 * sequence number than the file at its path does not apply, as the spec's rule says; Iceberg Java
 * refuses that case instead (a writer removing a data file must remove its DV, so it means stale
 * metadata), floe follows the spec's words.
 */
import { ValidationError } from '../errors.js';
import { isDeletionVector } from '../manifest/manifest-entry-codec.js';
import { compareValues, decodeValue } from '../spec/conversions.js';
import type { DataFile, PartitionSpec, TableMetadata } from '../spec/types.js';
import type { DeleteFileRef } from './scan-plan.js';
import { tupleKey } from './value-key.js';

/** Reserved field id of `file_path` in position delete files. */
export const POSITION_DELETE_FILE_PATH_ID = 2147483546;
/** Reserved field id of `pos` in position delete files. */
export const POSITION_DELETE_POS_ID = 2147483545;

/**
 * The file name floe's key-versions rows name (cdc/write-changes.ts): position delete rows under the
 * table's `data/` that name no data file and only carry a deleted key's version.
 */
export const KEY_VERSIONS_NAME = 'floe-deleted-key-versions';

/** Whether a position delete file holds only key-versions rows (both file_path bounds name them). Never throws. */
export function isKeyVersionsFile(file: DataFile): boolean {
  if (file.content !== 1) return false;
  const text = (b: Uint8Array | undefined) => (b ? new TextDecoder().decode(b) : '');
  const lower = text(file.lower_bounds?.get(POSITION_DELETE_FILE_PATH_ID));
  return (
    lower.endsWith(`/data/${KEY_VERSIONS_NAME}`) &&
    lower === text(file.upper_bounds?.get(POSITION_DELETE_FILE_PATH_ID))
  );
}

/**
 * Whether an equality delete file is floe's earlier v3 stand-in for a key-versions file (the keys of
 * rows deleted by position in the same commit, named `key-versions-`, carrying the deleting changes'
 * versions). floe writes version carriers as data files now (isVersionCarrierDataFile), but tables
 * written before hold these and they stay valid: maintenance keeps them as it keeps key-versions
 * files, and cdc/key-versions.ts reads both forms. Never throws.
 */
export function isVersionCarrierFile(metadata: TableMetadata, file: DataFile): boolean {
  return (
    metadata['format-version'] >= 3 && file.content === 2 && /\/[^/]*key-versions-[^/]*$/.test(file.file_path)
  );
}

/** A version carrier's file name: `[prefix-]key-versions-<uuid>-NNNNN.parquet` (cdc/version-carriers.ts). */
const CARRIER_NAME =
  /\/(?:[^/]*-)?key-versions-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-\d{5}\.parquet$/;

/** Whether a path is named as floe names its version carriers. Never throws. */
function isVersionCarrierPath(path: string): boolean {
  return CARRIER_NAME.test(path);
}

/**
 * Whether a data file is floe's v3 version carrier (cdc/version-carriers.ts): one row per key a batch
 * left deleted, holding the key and the deleting change's `_kafka`, every row deleted by a deletion
 * vector in the snapshot that added it. No reader applying deletion vectors sees its rows; floe reads
 * them as versions. Compaction never rewrites one. Never throws.
 */
export function isVersionCarrierDataFile(metadata: TableMetadata, file: DataFile): boolean {
  return metadata['format-version'] >= 3 && file.content === 0 && isVersionCarrierPath(file.file_path);
}

/** Whether a spec leaves every row in one partition. Never throws. */
export function isUnpartitioned(spec: PartitionSpec): boolean {
  return spec.fields.every((f) => f.transform === 'void');
}

/** Spec id + tuple in spec field order, as one string. Never throws. */
export function partitionKey(spec: PartitionSpec, file: DataFile): string {
  return `${spec['spec-id']}/${tupleKey(spec.fields.map((f) => file.partition[f.name] ?? null))}`;
}

export class DeleteIndex {
  private readonly positionByPartition = new Map<string, DeleteFileRef[]>();
  private readonly equalityByPartition = new Map<string, DeleteFileRef[]>();
  private readonly globalEquality: DeleteFileRef[] = [];
  /** Deletion vectors by referenced data file, with the partition key of the spec they were added under. */
  private readonly vectorByPath = new Map<string, { ref: DeleteFileRef; partition: string }>();
  size = 0;

  /**
   * Adds a live delete file (content 1 or 2) of `spec`. Data files (content 0) are ignored.
   * @throws ValidationError for a second deletion vector of one data file
   */
  add(ref: DeleteFileRef, spec: PartitionSpec): void {
    const content = ref.file.content;
    if (content === 1 && isDeletionVector(ref.file)) {
      this.addVector(ref, spec);
    } else if (content === 1) {
      push(this.positionByPartition, partitionKey(spec, ref.file), ref);
    } else if (content === 2) {
      if (isUnpartitioned(spec)) this.globalEquality.push(ref);
      else push(this.equalityByPartition, partitionKey(spec, ref.file), ref);
    } else {
      return;
    }
    this.size++;
  }

  /**
   * The delete files that apply to a data file of `spec` with data sequence number `seq`: its deletion
   * vector (then no position delete file) or its position delete files, and its equality deletes.
   * @throws ValidationError when the data file's deletion vector is in another spec or partition
   */
  forDataFile(file: DataFile, seq: bigint, spec: PartitionSpec): DeleteFileRef[] {
    if (this.size === 0) return [];
    const key = partitionKey(spec, file);
    const out: DeleteFileRef[] = [];
    const vector = this.vectorFor(file, seq, key);
    if (vector) out.push(vector);
    for (const ref of vector ? [] : (this.positionByPartition.get(key) ?? [])) {
      if (seq <= ref.dataSequenceNumber && mayReferencePath(ref.file, file.file_path)) out.push(ref);
    }
    for (const ref of this.equalityByPartition.get(key) ?? []) {
      if (seq < ref.dataSequenceNumber) out.push(ref);
    }
    for (const ref of this.globalEquality) {
      if (seq < ref.dataSequenceNumber) out.push(ref);
    }
    return out;
  }

  /** @throws ValidationError for a second vector of the same data file */
  private addVector(ref: DeleteFileRef, spec: PartitionSpec): void {
    // The manifest reader refuses a deletion vector without referenced_data_file.
    const path = ref.file.referenced_data_file ?? '';
    const other = this.vectorByPath.get(path);
    if (other) {
      throw new ValidationError(
        `data file ${path} has two live deletion vectors, ${describeVector(other.ref.file)} and ${describeVector(ref.file)}: a snapshot holds at most one per data file, so the table's metadata is corrupt (rewrite the deletes into one vector)`,
      );
    }
    this.vectorByPath.set(path, { ref, partition: partitionKey(spec, ref.file) });
  }

  /** The deletion vector that applies to `file`, if one does. @throws ValidationError as forDataFile */
  private vectorFor(file: DataFile, seq: bigint, key: string): DeleteFileRef | undefined {
    const vector = this.vectorByPath.get(file.file_path);
    if (!vector || seq > vector.ref.dataSequenceNumber) return undefined;
    if (vector.partition !== key) {
      throw new ValidationError(
        `the deletion vector ${describeVector(vector.ref.file)} is in partition ${vector.partition}, its data file ${file.file_path} in ${key}: the table's metadata is corrupt`,
      );
    }
    return vector.ref;
  }
}

/** A deletion vector as its Puffin file and blob range (several share one file). Never throws. */
export function describeVector(file: DataFile): string {
  return `${file.file_path} at offset ${file.content_offset} (${file.content_size_in_bytes} bytes)`;
}

function push(map: Map<string, DeleteFileRef[]>, key: string, ref: DeleteFileRef): void {
  const list = map.get(key);
  if (list) list.push(ref);
  else map.set(key, [ref]);
}

/**
 * Whether the position delete may name `path`: its referenced_data_file (when set, every delete in it
 * is in that one file), else its file_path bounds (inclusive, possibly truncated).
 */
function mayReferencePath(deleteFile: DataFile, path: string): boolean {
  const referenced = deleteFile.referenced_data_file;
  if (referenced !== undefined && referenced !== null) return referenced === path;
  try {
    const lower = deleteFile.lower_bounds?.get(POSITION_DELETE_FILE_PATH_ID);
    const upper = deleteFile.upper_bounds?.get(POSITION_DELETE_FILE_PATH_ID);
    if (lower && compareValues(decodeValue('string', lower), path) > 0) return false;
    if (upper && compareValues(decodeValue('string', upper), path) < 0) return false;
  } catch {
    // Bounds that do not decode as UTF-8 say nothing.
  }
  return true;
}
