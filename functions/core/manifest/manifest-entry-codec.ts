/**
 * ManifestEntry ↔ the Avro `manifest_entry` record (see manifest-schemas.ts). Reading takes field
 * values by name from records decoded with the writer's own schema, so manifests from other writers
 * (v1, or v2 with fields this model does not name) read too; unknown fields are skipped.
 */
import { ValidationError } from '../errors.js';
import type { DataFile, DataFileContent, ManifestEntry, ManifestEntryStatus } from '../spec/types.js';
import { fromAvroPartition, type PartitionAvroField, toAvroPartition } from './partition-avro.js';

type AvroRecord = Record<string, unknown>;

const asBuffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/**
 * The Avro record of one entry, written as given (sequence numbers stay null for inheritance). The
 * statistics maps go as they are: the manifest's Avro type writes int maps from Maps (avro-int-map.ts).
 * @throws ValidationError on a partition value of the wrong representation or missing partition field
 */
export function toAvroEntry(
  entry: ManifestEntry,
  partitionFields: readonly PartitionAvroField[],
): AvroRecord {
  const df = entry.data_file;
  return {
    status: entry.status,
    snapshot_id: entry.snapshot_id,
    sequence_number: entry.sequence_number,
    file_sequence_number: entry.file_sequence_number,
    data_file: {
      content: df.content,
      file_path: df.file_path,
      file_format: df.file_format,
      partition: toAvroPartition(partitionFields, df.partition),
      record_count: df.record_count,
      file_size_in_bytes: df.file_size_in_bytes,
      column_sizes: df.column_sizes ?? null,
      value_counts: df.value_counts ?? null,
      null_value_counts: df.null_value_counts ?? null,
      nan_value_counts: df.nan_value_counts ?? null,
      lower_bounds: df.lower_bounds ?? null,
      upper_bounds: df.upper_bounds ?? null,
      key_metadata: df.key_metadata ? asBuffer(df.key_metadata) : null,
      split_offsets: df.split_offsets ?? null,
      equality_ids: df.equality_ids ?? null,
      sort_order_id: df.sort_order_id ?? null,
      // Keys a v2 manifest's Avro type does not have are not written.
      first_row_id: df.first_row_id ?? null,
      referenced_data_file: df.referenced_data_file ?? null,
      content_offset: df.content_offset ?? null,
      content_size_in_bytes: df.content_size_in_bytes ?? null,
    },
  };
}

function field(record: AvroRecord, name: string): unknown {
  const value = record[name];
  return value === undefined ? null : value;
}

function requireField(record: AvroRecord, name: string): unknown {
  const value = record[name];
  if (value === undefined || value === null) throw new ValidationError(`manifest entry has no '${name}'`);
  return value;
}

function toBigint(value: unknown): bigint {
  return typeof value === 'bigint' ? value : BigInt(value as number);
}

function copyBytes(value: unknown): Uint8Array {
  return new Uint8Array(value as Uint8Array);
}

/**
 * Reads a map<int, V> written either as an array of key/value records or as an Avro map. The arrays of
 * `{key: int, value: long | bytes}` that Iceberg writes arrive decoded already (avro-type.ts).
 */
function fromAvroMap<V>(value: unknown, toValue: (v: unknown) => V): Map<number, V> | undefined {
  if (value === null || value === undefined) return undefined;
  if (value instanceof Map) return value as Map<number, V>;
  const out = new Map<number, V>();
  if (Array.isArray(value)) {
    const kvs = value as AvroRecord[];
    for (let i = 0; i < kvs.length; i++) out.set(Number(kvs[i].key), toValue(kvs[i].value));
  } else {
    for (const [k, v] of Object.entries(value as AvroRecord)) out.set(Number(k), toValue(v));
  }
  return out;
}

/** A long field that, when present, must be ≥ 0. @throws ValidationError */
function nonNegative(df: AvroRecord, name: string): bigint | null {
  const v = field(df, name);
  if (v === null) return null;
  const n = toBigint(v);
  if (n < 0n) throw new ValidationError(`manifest entry ${String(df.file_path)}: ${name} is negative (${n})`);
  return n;
}

/** The v3 fields of a `data_file` record (absent in v2 manifests: then nothing is added). */
function readV3Fields(df: AvroRecord): Partial<DataFile> {
  const out: Partial<DataFile> = {};
  const firstRowId = nonNegative(df, 'first_row_id');
  if (firstRowId !== null) out.first_row_id = firstRowId;
  const referenced = field(df, 'referenced_data_file');
  if (referenced !== null) out.referenced_data_file = String(referenced);
  const offset = nonNegative(df, 'content_offset');
  const size = nonNegative(df, 'content_size_in_bytes');
  if (offset !== null) out.content_offset = offset;
  if (size !== null) out.content_size_in_bytes = size;
  if (offset !== null && size === null) {
    throw new ValidationError(
      `manifest entry ${String(df.file_path)} has content_offset but no content_size_in_bytes`,
    );
  }
  return out;
}

/** True for a v3 deletion vector: a position delete stored as a Puffin blob. Never throws. */
export function isDeletionVector(file: DataFile): boolean {
  return String(file.file_format).toUpperCase() === 'PUFFIN';
}

/**
 * A deletion vector names the one data file it deletes from and where its blob is (spec: required for
 * deletion vectors); without them it cannot be applied, and applying it anywhere else loses rows.
 */
function checkDeletionVector(file: DataFile): void {
  if (!isDeletionVector(file)) return;
  const why = (problem: string) =>
    new ValidationError(`deletion vector ${file.file_path} in a manifest ${problem}`);
  if (file.content !== 1) throw why(`has content ${file.content}; deletion vectors are position deletes (1)`);
  if (!file.referenced_data_file) throw why('has no referenced_data_file');
  if (file.content_offset === undefined || file.content_size_in_bytes === undefined) {
    throw why('has no content_offset / content_size_in_bytes');
  }
}

/**
 * One decoded Avro `manifest_entry` → ManifestEntry, before inheritance (nulls stay null).
 * @throws ValidationError when a required field is missing
 */
export function fromAvroEntry(
  record: AvroRecord,
  partitionFields: readonly PartitionAvroField[],
  specId: number,
): ManifestEntry {
  const df = requireField(record, 'data_file') as AvroRecord;
  const optionalBigint = (name: string) => {
    const v = field(record, name);
    return v === null ? null : toBigint(v);
  };
  const splitOffsets = field(df, 'split_offsets');
  const equalityIds = field(df, 'equality_ids');
  const keyMetadata = field(df, 'key_metadata');
  const sortOrderId = field(df, 'sort_order_id');
  const v3 = readV3Fields(df);
  const dataFile: DataFile = {
    content: Number(field(df, 'content') ?? 0) as DataFileContent,
    file_path: requireField(df, 'file_path') as string,
    file_format: requireField(df, 'file_format') as DataFile['file_format'],
    spec_id: specId,
    partition: fromAvroPartition(partitionFields, (field(df, 'partition') ?? {}) as AvroRecord),
    record_count: toBigint(requireField(df, 'record_count')),
    file_size_in_bytes: toBigint(requireField(df, 'file_size_in_bytes')),
    key_metadata: keyMetadata === null ? null : copyBytes(keyMetadata),
    split_offsets: splitOffsets === null ? null : (splitOffsets as unknown[]).map(toBigint),
    equality_ids: equalityIds === null ? null : (equalityIds as number[]).slice(),
    sort_order_id: sortOrderId === null ? null : Number(sortOrderId),
    ...v3,
  };
  checkDeletionVector(dataFile);
  const maps = {
    column_sizes: fromAvroMap(field(df, 'column_sizes'), toBigint),
    value_counts: fromAvroMap(field(df, 'value_counts'), toBigint),
    null_value_counts: fromAvroMap(field(df, 'null_value_counts'), toBigint),
    nan_value_counts: fromAvroMap(field(df, 'nan_value_counts'), toBigint),
    lower_bounds: fromAvroMap(field(df, 'lower_bounds'), copyBytes),
    upper_bounds: fromAvroMap(field(df, 'upper_bounds'), copyBytes),
  };
  for (const [name, map] of Object.entries(maps)) {
    // Absent maps stay absent (the DataFile type has no null for them).
    if (map !== undefined) Object.assign(dataFile, { [name]: map });
  }
  return {
    status: Number(requireField(record, 'status')) as ManifestEntryStatus,
    snapshot_id: optionalBigint('snapshot_id'),
    sequence_number: optionalBigint('sequence_number'),
    file_sequence_number: optionalBigint('file_sequence_number'),
    data_file: dataFile,
  };
}
