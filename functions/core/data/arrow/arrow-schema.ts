/**
 * Iceberg schema → Arrow schema for the Parquet writers. Both floe's writer and parquet-wasm (arrow-rs)
 * turn the Arrow field metadata key `PARQUET:field_id` into the Parquet `field_id`, so every field —
 * struct children, list elements, map keys and values too — carries it: readers resolve Iceberg
 * columns by id, not name.
 */
import * as arrow from 'apache-arrow';
import { ValidationError } from '../../errors.js';
import { decimalParams, fixedLength } from '../../spec/conversions.js';
import type { IcebergType, ListType, MapType, StructType } from '../../spec/types.js';

/** Arrow field metadata key arrow-rs maps to and from the Parquet field_id. */
export const FIELD_ID_KEY = 'PARQUET:field_id';

const schemaCache = new WeakMap<StructType, arrow.Schema>();

/**
 * Arrow schema of an Iceberg struct (a table schema): one Arrow field per Iceberg field, ids in
 * `PARQUET:field_id` metadata at every level, required → non-nullable.
 * uuid becomes FixedSizeBinary(16): floe's Parquet writer (data/parquet/write/) annotates it UUID as Iceberg
 * Java does; the parquet-wasm fallback (snappy) writes a plain FIXED_LEN_BYTE_ARRAY(16), which Iceberg
 * readers accept too.
 * @throws ValidationError for a malformed type string
 */
export function toArrowSchema(schema: StructType): arrow.Schema {
  const cached = schemaCache.get(schema);
  if (cached) return cached;
  const result = new arrow.Schema(schema.fields.map((f) => toArrowField(f.name, f.id, f.required, f.type)));
  schemaCache.set(schema, result);
  return result;
}

/** One Arrow field carrying its Iceberg field id. @throws ValidationError for a malformed type */
export function toArrowField(name: string, id: number, required: boolean, type: IcebergType): arrow.Field {
  return new arrow.Field(name, toArrowType(type), !required, fieldIdMetadata(id));
}

function fieldIdMetadata(id: number): Map<string, string> {
  return new Map([[FIELD_ID_KEY, String(id)]]);
}

/** The field id an Arrow field carries, or undefined when it has none. */
export function getArrowFieldId(field: arrow.Field): number | undefined {
  const raw = field.metadata.get(FIELD_ID_KEY);
  if (raw === undefined) return undefined;
  const id = Number(raw);
  return Number.isInteger(id) ? id : undefined;
}

/** @throws ValidationError for a malformed or unknown type */
export function toArrowType(type: IcebergType): arrow.DataType {
  if (typeof type !== 'string') {
    if (type.type === 'struct') {
      return new arrow.Struct(type.fields.map((f) => toArrowField(f.name, f.id, f.required, f.type)));
    }
    if (type.type === 'list') return toArrowList(type);
    return toArrowMap(type);
  }
  switch (type) {
    case 'boolean':
      return new arrow.Bool();
    case 'int':
      return new arrow.Int32();
    case 'long':
      return new arrow.Int64();
    case 'float':
      return new arrow.Float32();
    case 'double':
      return new arrow.Float64();
    case 'date':
      return new arrow.DateDay();
    case 'time':
      return new arrow.TimeMicrosecond();
    case 'timestamp':
      return new arrow.TimestampMicrosecond();
    case 'timestamptz':
      // Any time zone marks the column adjusted-to-UTC in Parquet; the zone name itself is not written.
      return new arrow.TimestampMicrosecond('UTC');
    case 'timestamp_ns':
      return new arrow.TimestampNanosecond();
    case 'timestamptz_ns':
      return new arrow.TimestampNanosecond('UTC');
    case 'string':
      return new arrow.Utf8();
    case 'uuid':
      return new arrow.FixedSizeBinary(16);
    case 'binary':
      return new arrow.Binary();
  }
  const decimal = decimalParams(type);
  if (decimal) {
    if (decimal.precision < 1 || decimal.precision > 38 || decimal.scale > decimal.precision) {
      throw new ValidationError(`unsupported decimal type '${type}' (precision 1..38, scale ≤ precision)`);
    }
    return new arrow.Decimal(decimal.scale, decimal.precision, 128);
  }
  const length = fixedLength(type);
  if (length !== undefined) {
    if (length < 1) throw new ValidationError(`unsupported fixed type '${type}'`);
    return new arrow.FixedSizeBinary(length);
  }
  throw new ValidationError(`unknown Iceberg type '${String(type)}'`);
}

function toArrowList(type: ListType): arrow.DataType {
  return new arrow.List(toArrowField('element', type['element-id'], type['element-required'], type.element));
}

function toArrowMap(type: MapType): arrow.DataType {
  const entries = new arrow.Struct([
    toArrowField('key', type['key-id'], true, type.key),
    toArrowField('value', type['value-id'], type['value-required'], type.value),
  ]);
  return new arrow.Map_(new arrow.Field('key_value', entries, false));
}
