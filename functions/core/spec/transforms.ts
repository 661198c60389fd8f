/**
 * Iceberg partition transforms (spec, "Partition Transforms" and Appendix B) on the in-memory `Value`
 * representation of types.ts, and Hive-style partition paths.
 */
import { ValidationError } from '../errors.js';
import { encodeValue, truncateBinaryLower, truncateStringLower } from './conversions.js';
import { daysToMonths, daysToYears, floorDivBig, microsToDays, microsToHours } from './epoch-time.js';
import { toHumanString } from './human-string.js';
import { murmur3x86_32 } from './murmur3.js';
import { findField } from './schema-index.js';
import type { IcebergType, PartitionSpec, PartitionValues, Schema, Transform, Value } from './types.js';

const SIMPLE_TRANSFORMS = new Set(['identity', 'year', 'month', 'day', 'hour', 'void']);
const TIMESTAMP_TYPES = new Set(['timestamp', 'timestamptz', 'timestamp_ns', 'timestamptz_ns']);
const TIME_TYPES = new Set(['date', ...TIMESTAMP_TYPES]);
const BUCKET_TYPES = new Set(['int', 'long', 'date', 'time', ...TIMESTAMP_TYPES, 'string', 'uuid', 'binary']);

/**
 * Reads a transform as the spec writes it: `identity`, `year`, `month`, `day`, `hour`, `void`,
 * `bucket[N]`, `truncate[W]` (N, W positive integers). Case-insensitive, as Iceberg Java is.
 * @throws ValidationError for anything else
 */
export function parseTransform(text: string): Transform {
  const lower = text.trim().toLowerCase();
  if (SIMPLE_TRANSFORMS.has(lower)) return lower as Transform;
  const m = /^(bucket|truncate)\[\s*(\d+)\s*\]$/.exec(lower);
  if (m) {
    const n = Number(m[2]);
    if (!Number.isSafeInteger(n) || n <= 0 || n > 2_147_483_647) {
      throw new ValidationError(`transform '${text}': ${m[1]} width must be a positive int, got ${m[2]}`);
    }
    return `${m[1] as 'bucket' | 'truncate'}[${n}]`;
  }
  throw new ValidationError(`unknown partition transform '${text}'`);
}

/** The N of `bucket[N]` or the W of `truncate[W]`; undefined for other transforms. */
export function transformParameter(transform: Transform): number | undefined {
  const m = /^(?:bucket|truncate)\[(\d+)\]$/.exec(transform);
  return m ? Number(m[1]) : undefined;
}

function isDecimal(type: IcebergType): boolean {
  return typeof type === 'string' && type.startsWith('decimal');
}

function isFixed(type: IcebergType): boolean {
  return typeof type === 'string' && type.startsWith('fixed');
}

/** Whether the spec defines `transform` on a column of `sourceType` (as Iceberg Java's `canTransform`). */
export function canTransform(transform: Transform, sourceType: IcebergType): boolean {
  if (transform === 'void') return true;
  if (typeof sourceType !== 'string') return false;
  if (transform === 'identity') return true;
  if (transform === 'year' || transform === 'month' || transform === 'day') return TIME_TYPES.has(sourceType);
  if (transform === 'hour') return TIMESTAMP_TYPES.has(sourceType);
  if (transform.startsWith('bucket[')) {
    return BUCKET_TYPES.has(sourceType) || isDecimal(sourceType) || isFixed(sourceType);
  }
  if (transform.startsWith('truncate[')) {
    return ['int', 'long', 'string', 'binary'].includes(sourceType) || isDecimal(sourceType);
  }
  return false;
}

function expectKind(ok: boolean, type: IcebergType, value: Value): void {
  if (!ok) {
    const kind = value instanceof Uint8Array ? 'bytes' : typeof value;
    throw new ValidationError(`a ${String(type)} value must not be a ${kind}`);
  }
}

function isInteger(value: Value): value is number | bigint {
  return typeof value === 'bigint' || (typeof value === 'number' && Number.isInteger(value));
}

function longBytes(value: number | bigint): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigInt64(0, BigInt(value), true);
  return out;
}

/**
 * The spec's 32-bit hash of a non-null value (Appendix B): murmur3_x86_32 with seed 0 over its
 * single-value bytes, except that int and date hash as 8-byte longs (so a column promoted from int to
 * long keeps its buckets) and a decimal as its minimal big-endian unscaled bytes.
 * @throws ValidationError for a type bucket does not apply to, or a value of the wrong representation
 */
export function hashValue(sourceType: IcebergType, value: Value): number {
  if (!canTransform('bucket[1]', sourceType) || typeof sourceType !== 'string') {
    throw new ValidationError(`bucket does not apply to ${typeToText(sourceType)}`);
  }
  if (sourceType === 'int' || sourceType === 'date' || sourceType === 'long') {
    expectKind(isInteger(value), sourceType, value);
    return murmur3x86_32(longBytes(value as number | bigint));
  }
  if (isNanos(sourceType)) {
    // Spec, Appendix B: hashLong(microsecsFromUnixEpoch(v)), so a value keeps its bucket from µs to ns.
    expectKind(isInteger(value), sourceType, value);
    return murmur3x86_32(longBytes(toMicros(sourceType, value)));
  }
  if (sourceType === 'time' || sourceType === 'timestamp' || sourceType === 'timestamptz') {
    expectKind(isInteger(value), sourceType, value);
  } else if (isDecimal(sourceType)) {
    expectKind(isInteger(value), sourceType, value);
    return murmur3x86_32(encodeValue(sourceType, BigInt(value as number | bigint)));
  } else if (sourceType === 'string') {
    expectKind(typeof value === 'string', sourceType, value);
  } else if (sourceType === 'uuid') {
    expectKind(typeof value === 'string' || value instanceof Uint8Array, sourceType, value);
  } else {
    expectKind(value instanceof Uint8Array, sourceType, value);
  }
  return murmur3x86_32(encodeValue(sourceType, value));
}

function typeToText(type: IcebergType): string {
  return typeof type === 'string' ? type : type.type;
}

/** v − (v mod W), the mod taken into [0, W), so negatives round down (−1 → −10 for W = 10). */
function truncateInteger(value: Value, width: number, type: IcebergType): Value {
  expectKind(isInteger(value), type, value);
  if (typeof value === 'bigint') {
    const w = BigInt(width);
    return value - (((value % w) + w) % w);
  }
  const v = value as number;
  return v - (((v % width) + width) % width);
}

function applyTruncate(width: number, type: IcebergType, value: Value): Value {
  if (type === 'string') {
    expectKind(typeof value === 'string', type, value);
    return truncateStringLower(value as string, width);
  }
  if (type === 'binary') {
    expectKind(value instanceof Uint8Array, type, value);
    return truncateBinaryLower(value as Uint8Array, width);
  }
  if (isDecimal(type)) {
    // W counts units of the unscaled value (truncate[50] on decimal(9,2) steps by 0.50).
    expectKind(isInteger(value), type, value);
    return truncateInteger(BigInt(value as number | bigint), width, type);
  }
  return truncateInteger(value, width, type);
}

function isNanos(type: IcebergType): boolean {
  return type === 'timestamp_ns' || type === 'timestamptz_ns';
}

/** µs since epoch of a timestamp (µs bigint) or a timestamp_ns (ns bigint, floored). */
function toMicros(type: IcebergType, value: Value): bigint {
  const v = BigInt(value as number | bigint);
  return isNanos(type) ? floorDivBig(v, 1000n) : v;
}

/** Days since epoch of a date (number) or a timestamp (µs or ns bigint). */
function toDays(type: IcebergType, value: Value): number {
  expectKind(isInteger(value), type, value);
  if (type === 'date') return Number(value);
  return microsToDays(toMicros(type, value));
}

/**
 * Applies a partition transform to one value of a column of `sourceType`. null → null for every
 * transform. Results: identity → the value; bucket → int (number); truncate → the source
 * representation; year/month/hour → int (number, since 1970, floored for earlier values);
 * day → date (days since epoch, number); void → null.
 * @throws ValidationError when the transform does not apply to the type, or the value's representation
 *   does not match the type
 */
export function applyTransform(transform: Transform, sourceType: IcebergType, value: Value): Value {
  if (!canTransform(transform, sourceType)) {
    throw new ValidationError(`transform ${transform} does not apply to ${typeToText(sourceType)}`);
  }
  if (value === null || transform === 'void') return null;
  switch (transform) {
    case 'identity':
      return value;
    case 'year':
      return daysToYears(toDays(sourceType, value));
    case 'month':
      return daysToMonths(toDays(sourceType, value));
    case 'day':
      return toDays(sourceType, value);
    case 'hour':
      expectKind(isInteger(value), sourceType, value);
      return microsToHours(toMicros(sourceType, value));
  }
  const parameter = transformParameter(transform)!;
  if (transform.startsWith('bucket[')) return (hashValue(sourceType, value) & 0x7fffffff) % parameter;
  return applyTruncate(parameter, sourceType, value);
}

/**
 * The Hive-style path of a partition tuple, `name=value/name2=value2`, each name and value
 * URL-encoded (encodeURIComponent; Iceberg Java's URLEncoder differs only in writing a space as `+`)
 * and each value rendered as Iceberg Java's human string (`2024-05-01`, `2024-05`, `2024-05-01-13`,
 * `null`). An unpartitioned spec gives ''.
 * @throws ValidationError when a partition field has no entry in `values` or its source is not in `schema`
 */
export function partitionPath(spec: PartitionSpec, schema: Schema, values: PartitionValues): string {
  return spec.fields
    .map((field) => {
      if (!(field.name in values) || values[field.name] === undefined) {
        throw new ValidationError(`partition tuple has no value for partition field '${field.name}'`);
      }
      const source = findField(schema, field['source-id']);
      if (!source) {
        throw new ValidationError(
          `partition field '${field.name}' has source-id ${field['source-id']}, not in schema ${schema['schema-id']}`,
        );
      }
      const text = toHumanString(field.transform, source.type, values[field.name]);
      return `${encodeURIComponent(field.name)}=${encodeURIComponent(text)}`;
    })
    .join('/');
}
