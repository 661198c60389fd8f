/**
 * The Iceberg table spec (format versions 2 and 3) as plain data. Field names mirror the spec's JSON exactly
 * (`'snapshot-id'`, `'manifest-list'`, ...), so metadata.json and REST payloads round-trip
 * with no mapping layer. Objects read from elsewhere may carry fields this model does not
 * name; they are kept (the index signatures below), never dropped.
 */

export type PrimitiveType =
  | 'boolean'
  | 'int'
  | 'long'
  | 'float'
  | 'double'
  | 'date'
  | 'time'
  | 'timestamp'
  | 'timestamptz'
  | 'timestamp_ns'
  | 'timestamptz_ns'
  | 'string'
  | 'uuid'
  | 'binary'
  | `decimal(${number}, ${number})`
  | `decimal(${number},${number})`
  | `fixed[${number}]`
  | V3OnlyOpaqueType;

/**
 * v3 types floe parses but cannot read: `unknown` (always null, never stored in data files) reads as
 * null; a scan that projects `variant`, `geometry(C)` or `geography(C, A)` is refused.
 */
export type V3OnlyOpaqueType =
  | 'unknown'
  | 'variant'
  | 'geometry'
  | `geometry(${string})`
  | 'geography'
  | `geography(${string})`;

export interface StructField {
  id: number;
  name: string;
  required: boolean;
  type: IcebergType;
  doc?: string;
  'initial-default'?: unknown;
  'write-default'?: unknown;
  [extra: string]: unknown;
}

export interface StructType {
  type: 'struct';
  fields: StructField[];
  [extra: string]: unknown;
}

export interface ListType {
  type: 'list';
  'element-id': number;
  element: IcebergType;
  'element-required': boolean;
  [extra: string]: unknown;
}

export interface MapType {
  type: 'map';
  'key-id': number;
  key: IcebergType;
  'value-id': number;
  value: IcebergType;
  'value-required': boolean;
  [extra: string]: unknown;
}

export type NestedType = StructType | ListType | MapType;
export type IcebergType = PrimitiveType | NestedType;

export interface Schema extends StructType {
  'schema-id': number;
  'identifier-field-ids'?: number[];
}

export type Transform =
  | 'identity'
  | 'year'
  | 'month'
  | 'day'
  | 'hour'
  | 'void'
  | `bucket[${number}]`
  | `truncate[${number}]`;

export interface PartitionField {
  'source-id': number;
  'field-id': number;
  name: string;
  transform: Transform;
  [extra: string]: unknown;
}

export interface PartitionSpec {
  'spec-id': number;
  fields: PartitionField[];
  [extra: string]: unknown;
}

export interface SortField {
  transform: Transform;
  'source-id': number;
  direction: 'asc' | 'desc';
  'null-order': 'nulls-first' | 'nulls-last';
  [extra: string]: unknown;
}

export interface SortOrder {
  'order-id': number;
  fields: SortField[];
  [extra: string]: unknown;
}

export type SnapshotOperation = 'append' | 'replace' | 'overwrite' | 'delete';

export interface SnapshotSummary {
  operation: SnapshotOperation;
  [key: string]: string;
}

/**
 * Snapshot ids are 64-bit (Iceberg Java draws them from 63 random bits): always `bigint` here, read and
 * written exactly by spec/json-codec.ts.
 */
export type SnapshotId = bigint;

export interface Snapshot {
  'snapshot-id': SnapshotId;
  'parent-snapshot-id'?: SnapshotId;
  'sequence-number': number;
  'timestamp-ms': number;
  'manifest-list': string;
  summary: SnapshotSummary;
  'schema-id'?: number;
  /** v3 row lineage: the first `_row_id` this snapshot assigned (absent on snapshots from before an upgrade). */
  'first-row-id'?: number;
  /** v3 row lineage: how many row ids this snapshot assigned. */
  'added-rows'?: number;
  /** v3: the encryption key (in `encryption-keys`) of the manifest list's key metadata. */
  'key-id'?: string;
  [extra: string]: unknown;
}

/** A v3 `encryption-keys` entry. */
export interface EncryptedKey {
  'key-id': string;
  'encrypted-key-metadata': string;
  'encrypted-by-id'?: string;
  properties?: Record<string, string>;
  [extra: string]: unknown;
}

export interface SnapshotRef {
  'snapshot-id': SnapshotId;
  type: 'branch' | 'tag';
  'max-ref-age-ms'?: number;
  'max-snapshot-age-ms'?: number;
  'min-snapshots-to-keep'?: number;
  [extra: string]: unknown;
}

export interface SnapshotLogEntry {
  'snapshot-id': SnapshotId;
  'timestamp-ms': number;
}

export interface MetadataLogEntry {
  'metadata-file': string;
  'timestamp-ms': number;
}

/** The format versions floe reads and writes (v3 with row lineage: table/row-lineage.ts). */
export type FormatVersion = 2 | 3;

export interface TableMetadata {
  'format-version': FormatVersion;
  'table-uuid': string;
  location: string;
  'last-sequence-number': number;
  'last-updated-ms': number;
  'last-column-id': number;
  schemas: Schema[];
  'current-schema-id': number;
  'partition-specs': PartitionSpec[];
  'default-spec-id': number;
  'last-partition-id': number;
  properties: Record<string, string>;
  /** -1n (what Iceberg Java writes), null or absent: no current snapshot. */
  'current-snapshot-id'?: SnapshotId | null;
  snapshots: Snapshot[];
  'snapshot-log': SnapshotLogEntry[];
  'metadata-log': MetadataLogEntry[];
  'sort-orders': SortOrder[];
  'default-sort-order-id': number;
  refs: Record<string, SnapshotRef>;
  statistics?: unknown[];
  'partition-statistics'?: unknown[];
  /** v3 (required there): the next `_row_id` to assign. */
  'next-row-id'?: number;
  /** v3: keys that encrypt manifest lists' key metadata. */
  'encryption-keys'?: EncryptedKey[];
  [extra: string]: unknown;
}

/** Table identifier: namespace levels plus the table name. */
export interface TableIdentifier {
  namespace: string[];
  name: string;
}

// ---------------------------------------------------------------------------
// Manifests (Avro) — names mirror the spec's Avro field names.
// ---------------------------------------------------------------------------

/** 0 = data, 1 = position deletes, 2 = equality deletes. */
export type DataFileContent = 0 | 1 | 2;

/**
 * One partition tuple, keyed by partition field name, in the transform's result
 * representation (see `Value`). `null` is a null partition value.
 */
export type PartitionValues = Record<string, Value>;

export interface DataFile {
  content: DataFileContent;
  file_path: string;
  /** As the writer spelled it (Java writes upper case; v3 deletion vectors are `PUFFIN`/`puffin`). */
  file_format: 'PARQUET' | 'AVRO' | 'ORC' | 'PUFFIN';
  spec_id: number;
  partition: PartitionValues;
  record_count: bigint;
  file_size_in_bytes: bigint;
  column_sizes?: Map<number, bigint>;
  value_counts?: Map<number, bigint>;
  null_value_counts?: Map<number, bigint>;
  nan_value_counts?: Map<number, bigint>;
  lower_bounds?: Map<number, Uint8Array>;
  upper_bounds?: Map<number, Uint8Array>;
  key_metadata?: Uint8Array | null;
  split_offsets?: bigint[] | null;
  equality_ids?: number[] | null;
  sort_order_id?: number | null;
  /** v3: the `_row_id` of the file's first row (null: inherited from the manifest, or unassigned). */
  first_row_id?: bigint | null;
  /** The one data file all of a position delete file's deletes are in (required for deletion vectors). */
  referenced_data_file?: string | null;
  /** v3 deletion vectors: where the vector's blob starts in the Puffin file. */
  content_offset?: bigint | null;
  /** v3 deletion vectors: the blob's length (required with content_offset). */
  content_size_in_bytes?: bigint | null;
}

/** 0 = EXISTING, 1 = ADDED, 2 = DELETED. */
export type ManifestEntryStatus = 0 | 1 | 2;

export interface ManifestEntry {
  status: ManifestEntryStatus;
  /** null only for ADDED entries, where it is inherited from the manifest list. */
  snapshot_id: bigint | null;
  /** Data sequence number; null for ADDED entries (inherited). */
  sequence_number: bigint | null;
  file_sequence_number: bigint | null;
  data_file: DataFile;
}

export interface FieldSummary {
  contains_null: boolean;
  contains_nan: boolean | null;
  lower_bound: Uint8Array | null;
  upper_bound: Uint8Array | null;
}

/** 0 = data, 1 = deletes. */
export type ManifestContent = 0 | 1;

export interface ManifestFile {
  manifest_path: string;
  manifest_length: bigint;
  partition_spec_id: number;
  content: ManifestContent;
  sequence_number: bigint;
  min_sequence_number: bigint;
  added_snapshot_id: bigint;
  added_files_count: number;
  existing_files_count: number;
  deleted_files_count: number;
  added_rows_count: bigint;
  existing_rows_count: bigint;
  deleted_rows_count: bigint;
  partitions: FieldSummary[] | null;
  key_metadata?: Uint8Array | null;
  /** v3: the first `_row_id` of rows the manifest's ADDED data files hold (null before an upgrade). */
  first_row_id?: bigint | null;
}

// ---------------------------------------------------------------------------
// In-memory values. One representation per Iceberg type, used by rows, partition
// tuples, bounds decoding and expressions alike:
//   boolean → boolean; int, date (days) → number; float, double → number;
//   long, time (µs), timestamp(tz) (µs), timestamp(tz)_ns (ns) → bigint; decimal → bigint (unscaled);
//   string → string; uuid → string (canonical lower-case); fixed, binary → Uint8Array;
//   struct → Row; list → Value[]; map → Map<Value, Value>; null → null.
// ---------------------------------------------------------------------------

export type Value =
  | null
  | boolean
  | number
  | bigint
  | string
  | Uint8Array
  | Value[]
  | Map<Value, Value>
  | Row;

export interface Row {
  [field: string]: Value;
}

/** Whether a value is a struct's Row (not a list, map, bytes or primitive). Never throws. */
export function isRow(value: unknown): value is Row {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    !(value instanceof Uint8Array) &&
    !(value instanceof Map)
  );
}
