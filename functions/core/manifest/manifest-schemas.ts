/**
 * The v2 and v3 Avro schemas of manifests (`manifest_entry`) and manifest lists (`manifest_file`), field
 * for field as Iceberg Java writes them (V2Metadata / V3Metadata + TypeToSchema): field ids as `field-id`, list element
 * ids as `element-id`, int-keyed maps as arrays of `k<keyId>_v<valueId>` records with
 * `logicalType: "map"`, nested records named `r<fieldId>`, optional fields as `["null", T]` with a
 * null default.
 */
import type { AvroComplexSchema, AvroField, AvroSchema } from './avro-type.js';

function required(id: number, name: string, type: AvroSchema): AvroField {
  return { name, type, 'field-id': id };
}

function optional(id: number, name: string, type: AvroSchema): AvroField {
  return { name, type: ['null', type], default: null, 'field-id': id };
}

function list(elementId: number, element: AvroSchema): AvroComplexSchema {
  return { type: 'array', items: element, 'element-id': elementId };
}

/** Iceberg map<int, V> in Avro: an array of key/value records (Avro maps allow only string keys). */
function intMap(keyId: number, valueId: number, value: AvroSchema): AvroComplexSchema {
  return {
    type: 'array',
    items: {
      type: 'record',
      name: `k${keyId}_v${valueId}`,
      fields: [required(keyId, 'key', 'int'), required(valueId, 'value', value)],
    },
    logicalType: 'map',
  };
}

/** The manifest format versions floe can write (v3 only for tests and tools: tables are written as v2). */
export type ManifestFormatVersion = 2 | 3;

/**
 * `data_file` (record `r2`), ids 100–140, around the given partition record (`r102`); v3 adds
 * first_row_id 142, referenced_data_file 143, content_offset 144, content_size_in_bytes 145.
 */
export function dataFileSchema(
  partition: AvroComplexSchema,
  version: ManifestFormatVersion = 2,
): AvroComplexSchema {
  return {
    type: 'record',
    name: 'r2',
    fields: [
      required(134, 'content', 'int'),
      required(100, 'file_path', 'string'),
      required(101, 'file_format', 'string'),
      required(102, 'partition', partition),
      required(103, 'record_count', 'long'),
      required(104, 'file_size_in_bytes', 'long'),
      optional(108, 'column_sizes', intMap(117, 118, 'long')),
      optional(109, 'value_counts', intMap(119, 120, 'long')),
      optional(110, 'null_value_counts', intMap(121, 122, 'long')),
      optional(137, 'nan_value_counts', intMap(138, 139, 'long')),
      optional(125, 'lower_bounds', intMap(126, 127, 'bytes')),
      optional(128, 'upper_bounds', intMap(129, 130, 'bytes')),
      optional(131, 'key_metadata', 'bytes'),
      optional(132, 'split_offsets', list(133, 'long')),
      optional(135, 'equality_ids', list(136, 'int')),
      optional(140, 'sort_order_id', 'int'),
      ...(version >= 3
        ? [
            optional(142, 'first_row_id', 'long'),
            optional(143, 'referenced_data_file', 'string'),
            optional(144, 'content_offset', 'long'),
            optional(145, 'content_size_in_bytes', 'long'),
          ]
        : []),
    ],
  };
}

/** `manifest_entry`: status 0, snapshot_id 1, sequence_number 3, file_sequence_number 4, data_file 2. */
export function manifestEntrySchema(
  partition: AvroComplexSchema,
  version: ManifestFormatVersion = 2,
): AvroComplexSchema {
  return {
    type: 'record',
    name: 'manifest_entry',
    fields: [
      required(0, 'status', 'int'),
      optional(1, 'snapshot_id', 'long'),
      optional(3, 'sequence_number', 'long'),
      optional(4, 'file_sequence_number', 'long'),
      required(2, 'data_file', dataFileSchema(partition, version)),
    ],
  };
}

/** `field_summary` (record `r508`): contains_null 509, contains_nan 518, lower_bound 510, upper_bound 511. */
const fieldSummarySchema: AvroComplexSchema = {
  type: 'record',
  name: 'r508',
  fields: [
    required(509, 'contains_null', 'boolean'),
    optional(518, 'contains_nan', 'boolean'),
    optional(510, 'lower_bound', 'bytes'),
    optional(511, 'upper_bound', 'bytes'),
  ],
};

/** `manifest_file`, ids 500–519; v3 adds first_row_id 520. */
export function manifestFileSchema(version: ManifestFormatVersion = 2): AvroComplexSchema {
  return {
    type: 'record',
    name: 'manifest_file',
    fields: [
      required(500, 'manifest_path', 'string'),
      required(501, 'manifest_length', 'long'),
      required(502, 'partition_spec_id', 'int'),
      required(517, 'content', 'int'),
      required(515, 'sequence_number', 'long'),
      required(516, 'min_sequence_number', 'long'),
      required(503, 'added_snapshot_id', 'long'),
      required(504, 'added_files_count', 'int'),
      required(505, 'existing_files_count', 'int'),
      required(506, 'deleted_files_count', 'int'),
      required(512, 'added_rows_count', 'long'),
      required(513, 'existing_rows_count', 'long'),
      required(514, 'deleted_rows_count', 'long'),
      optional(507, 'partitions', list(508, fieldSummarySchema)),
      optional(519, 'key_metadata', 'bytes'),
      ...(version >= 3 ? [optional(520, 'first_row_id', 'long')] : []),
    ],
  };
}
