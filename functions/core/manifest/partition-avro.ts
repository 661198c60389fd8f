/**
 * The partition tuple in manifests: Iceberg partition type → Avro schema (as Iceberg Java's
 * TypeToSchema writes it), and partition values between the in-memory `Value` representation and the
 * values avsc encodes. Hand-written: no JS library maps Iceberg types to Avro.
 */
import { ValidationError } from '../errors.js';
import {
  bigintToMinimalBytes,
  bytesToUuid,
  decimalParams,
  fixedLength,
  minimalBytesToBigint,
  uuidToBytes,
} from '../spec/conversions.js';
import type { IcebergType, PartitionValues, StructType, Value } from '../spec/types.js';
import type { AvroComplexSchema, AvroField, AvroSchema } from './avro-type.js';

/** One partition field as the manifest's Avro record carries it. */
export interface PartitionAvroField {
  /** Partition field id (1000+), the Avro field's `field-id`. */
  id: number;
  /** The Iceberg partition field name (the key in `PartitionValues`). */
  name: string;
  /** The Avro field name: `name`, sanitised when it is not a valid Avro name. */
  avroName: string;
  type: IcebergType;
}

const AVRO_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Iceberg Java's AvroSchemaUtil.sanitize: a leading digit becomes `_<digit>`, any other character
 * that Avro names forbid becomes `_x<HEX code unit>`. (Java lets non-ASCII letters through; Avro's
 * spec and avsc do not, so here they are escaped too.)
 */
export function sanitizeAvroName(name: string): string {
  if (AVRO_NAME.test(name)) return name;
  let out = '';
  for (let i = 0; i < name.length; i++) {
    const ch = name[i];
    const allowed = i === 0 ? /[A-Za-z_]/.test(ch) : /[A-Za-z0-9_]/.test(ch);
    if (allowed) out += ch;
    else if (/[0-9]/.test(ch)) out += `_${ch}`;
    else out += `_x${ch.charCodeAt(0).toString(16).toUpperCase()}`;
  }
  return out;
}

/** The partition struct's fields with their Avro names. */
export function describePartitionFields(partitionStruct: StructType): PartitionAvroField[] {
  return partitionStruct.fields.map((f) => ({
    id: f.id,
    name: f.name,
    avroName: sanitizeAvroName(f.name),
    type: f.type,
  }));
}

/**
 * The `partition` record (Avro name `r102`): every field optional (`["null", T]`, default null),
 * with its partition field id as `field-id`, and `iceberg-field-name` when the name was sanitised.
 * @throws ValidationError for a nested partition type
 */
export function partitionAvroSchema(fields: readonly PartitionAvroField[]): AvroComplexSchema {
  const definedNames = new Set<string>();
  return {
    type: 'record',
    name: 'r102',
    fields: fields.map((f) => {
      const field: AvroField = {
        name: f.avroName,
        type: ['null', primitiveAvroSchema(f.type, definedNames)],
        default: null,
      };
      if (f.avroName !== f.name) field['iceberg-field-name'] = f.name;
      field['field-id'] = f.id;
      return field;
    }),
  };
}

/** Bytes of the smallest fixed that holds every unscaled value of a decimal(P, S) (Java TypeUtil). */
export function decimalRequiredBytes(precision: number): number {
  const limit = 10n ** BigInt(precision);
  let length = 1;
  while (2n ** BigInt(8 * length - 1) - 1n < limit) length++;
  return length;
}

function primitiveAvroSchema(type: IcebergType, definedNames: Set<string>): AvroSchema {
  if (typeof type !== 'string') {
    throw new ValidationError(`a partition field cannot have the nested type ${type.type}`);
  }
  // Avro names may be defined once per schema; later uses refer to them by name.
  const named = (schema: AvroComplexSchema & { name: string }): AvroSchema => {
    if (definedNames.has(schema.name)) return schema.name;
    definedNames.add(schema.name);
    return schema;
  };
  switch (type) {
    case 'boolean':
    case 'int':
    case 'long':
    case 'float':
    case 'double':
    case 'string':
      return type;
    case 'binary':
      return 'bytes';
    case 'date':
      return { type: 'int', logicalType: 'date' };
    case 'time':
      return { type: 'long', logicalType: 'time-micros' };
    case 'timestamp':
      return { type: 'long', logicalType: 'timestamp-micros', 'adjust-to-utc': false };
    case 'timestamptz':
      return { type: 'long', logicalType: 'timestamp-micros', 'adjust-to-utc': true };
    case 'timestamp_ns':
      return { type: 'long', logicalType: 'timestamp-nanos', 'adjust-to-utc': false };
    case 'timestamptz_ns':
      return { type: 'long', logicalType: 'timestamp-nanos', 'adjust-to-utc': true };
    case 'uuid':
      return named({ type: 'fixed', name: 'uuid_fixed', size: 16, logicalType: 'uuid' });
  }
  const decimal = decimalParams(type);
  if (decimal) {
    const { precision, scale } = decimal;
    return named({
      type: 'fixed',
      name: `decimal_${precision}_${scale}`,
      size: decimalRequiredBytes(precision),
      logicalType: 'decimal',
      precision,
      scale,
    });
  }
  const length = fixedLength(type);
  if (length !== undefined) return named({ type: 'fixed', name: `fixed_${length}`, size: length });
  throw new ValidationError(`unknown primitive type '${type}'`);
}

/**
 * The Avro record for one partition tuple.
 * @throws ValidationError when a field is missing from `values` or has the wrong representation
 */
export function toAvroPartition(
  fields: readonly PartitionAvroField[],
  values: PartitionValues,
): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  for (const f of fields) {
    if (!Object.hasOwn(values, f.name)) {
      throw new ValidationError(`partition value for '${f.name}' is missing (use null for a null value)`);
    }
    record[f.avroName] = toAvroValue(f, values[f.name]);
  }
  return record;
}

function toAvroValue(field: PartitionAvroField, value: Value): unknown {
  if (value === null || value === undefined) return null;
  const { type } = field;
  const wrong = () =>
    new ValidationError(
      `partition value for '${field.name}' (${String(type)}) is not valid: ${describe(value)}`,
    );
  switch (type) {
    case 'boolean':
      if (typeof value !== 'boolean') throw wrong();
      return value;
    case 'int':
    case 'date':
      if (typeof value !== 'number' || !Number.isInteger(value) || value !== (value | 0)) throw wrong();
      return value;
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      if (typeof value === 'bigint') return value;
      if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
      throw wrong();
    case 'float':
    case 'double':
      if (typeof value !== 'number') throw wrong();
      return value;
    case 'string':
      if (typeof value !== 'string') throw wrong();
      return value;
    case 'uuid':
      if (typeof value === 'string') return Buffer.from(uuidToBytes(value));
      if (value instanceof Uint8Array && value.length === 16) return Buffer.from(value);
      throw wrong();
    case 'binary':
      if (!(value instanceof Uint8Array)) throw wrong();
      return Buffer.from(value);
  }
  const decimal = decimalParams(type);
  if (decimal) {
    if (typeof value !== 'bigint') throw wrong();
    return signExtend(bigintToMinimalBytes(value), decimalRequiredBytes(decimal.precision), wrong);
  }
  const length = fixedLength(type);
  if (length !== undefined) {
    if (!(value instanceof Uint8Array) || value.length !== length) throw wrong();
    return Buffer.from(value);
  }
  throw wrong();
}

function signExtend(minimal: Uint8Array, size: number, wrong: () => Error): Buffer {
  if (minimal.length > size) throw wrong();
  const out = Buffer.alloc(size, minimal[0] & 0x80 ? 0xff : 0x00);
  out.set(minimal, size - minimal.length);
  return out;
}

function describe(value: Value): string {
  if (value instanceof Uint8Array) return `${value.length} bytes`;
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'object') return Array.isArray(value) ? 'a list' : 'an object';
  return `${typeof value} ${String(value)}`;
}

/** A decoded Avro partition record → `PartitionValues` keyed by partition field name. */
export function fromAvroPartition(
  fields: readonly PartitionAvroField[],
  record: Record<string, unknown>,
): PartitionValues {
  const values: PartitionValues = {};
  for (const f of fields) values[f.name] = fromAvroValue(f.type, record[f.avroName]);
  return values;
}

function fromAvroValue(type: IcebergType, avroValue: unknown): Value {
  if (avroValue === null || avroValue === undefined) return null;
  if (avroValue instanceof Uint8Array) {
    // Copy: decoded buffers are views into the whole (inflated) block.
    const bytes = new Uint8Array(avroValue);
    if (type === 'uuid') return bytesToUuid(bytes);
    if (decimalParams(type)) return minimalBytesToBigint(bytes);
    return bytes;
  }
  if (
    type === 'long' ||
    type === 'time' ||
    type === 'timestamp' ||
    type === 'timestamptz' ||
    type === 'timestamp_ns' ||
    type === 'timestamptz_ns'
  ) {
    // Tolerate writers that stored these as Avro int; the in-memory representation is bigint.
    return typeof avroValue === 'number' ? BigInt(avroValue) : (avroValue as bigint);
  }
  if (type === 'double' || type === 'float') return Number(avroValue);
  return avroValue as Value;
}

/**
 * Pairs the fields of a manifest's Avro partition record (the writer's schema) with the partition
 * type from its header, by field id (by name when a writer left the ids out).
 * @throws ValidationError when an Avro field matches no partition field
 */
export function resolvePartitionFields(
  partitionStruct: StructType,
  avroRecord: AvroComplexSchema,
): PartitionAvroField[] {
  return (avroRecord.fields ?? []).map((avroField) => {
    const id = avroField['field-id'];
    const icebergName = avroField['iceberg-field-name'];
    const name = typeof icebergName === 'string' ? icebergName : avroField.name;
    const match = partitionStruct.fields.find((f) =>
      typeof id === 'number' ? f.id === id : f.name === name,
    );
    if (!match) {
      throw new ValidationError(`manifest partition field '${name}' is not in the manifest's partition spec`);
    }
    return { id: match.id, name: match.name, avroName: avroField.name, type: match.type };
  });
}
