/**
 * Which delete files apply to a data file (spec, "Scan Planning"):
 * - a position delete applies when the data file's data sequence number is ≤ the delete's and both
 *   have the same spec and partition tuple (narrowed further by the delete's `file_path` bounds, as
 *   Iceberg Java does: a delete file whose paths cannot include the data file's path is skipped);
 * - an equality delete applies when the data file's data sequence number is < the delete's, and
 *   either both have the same spec and partition tuple, or the delete's spec is unpartitioned
 *   (no fields, or only void ones) — then it applies to every partition of every spec.
 * v3 fields (referenced_data_file, deletion vectors) are not read.
 */
import { compareValues, decodeValue } from '../spec/conversions.js';
import type { DataFile, PartitionSpec } from '../spec/types.js';
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
  size = 0;

  /** Adds a live delete file (content 1 or 2) of `spec`. Data files (content 0) are ignored. */
  add(ref: DeleteFileRef, spec: PartitionSpec): void {
    const content = ref.file.content;
    if (content === 1) {
      push(this.positionByPartition, partitionKey(spec, ref.file), ref);
    } else if (content === 2) {
      if (isUnpartitioned(spec)) this.globalEquality.push(ref);
      else push(this.equalityByPartition, partitionKey(spec, ref.file), ref);
    } else {
      return;
    }
    this.size++;
  }

  /** The delete files that apply to a data file of `spec` with data sequence number `seq`. Never throws. */
  forDataFile(file: DataFile, seq: bigint, spec: PartitionSpec): DeleteFileRef[] {
    if (this.size === 0) return [];
    const key = partitionKey(spec, file);
    const out: DeleteFileRef[] = [];
    for (const ref of this.positionByPartition.get(key) ?? []) {
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
}

function push(map: Map<string, DeleteFileRef[]>, key: string, ref: DeleteFileRef): void {
  const list = map.get(key);
  if (list) list.push(ref);
  else map.set(key, [ref]);
}

/** Whether the position delete's file_path bounds (inclusive, possibly truncated) admit `path`. */
function mayReferencePath(deleteFile: DataFile, path: string): boolean {
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
