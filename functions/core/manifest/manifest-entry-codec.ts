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
  };
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
