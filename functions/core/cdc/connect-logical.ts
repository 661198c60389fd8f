/**
 * Kafka Connect's JsonConverter (`schemas.enable=true`, its default) writes `{ schema, payload }`,
 * and the schema names each field's logical type. Debezium's defaults use them for values whose JSON
 * alone is ambiguous or misleading: decimals as base64 two's-complement bytes
 * (`decimal.handling.mode=precise`), dates as days since the epoch, timestamps with sub-millisecond
 * precision as microseconds or nanoseconds since the epoch, times as milli/micro/nanoseconds of the
 * day. Read as plain JSON, a date would be taken for epoch milliseconds (1970-01-01) and a
 * microsecond timestamp for milliseconds (a year in the tens of thousands), silently.
 *
 * This rewrites a payload by its schema into what the row conversion reads unambiguously: decimals as
 * exact number text, dates, times and timestamps as ISO-8601 text. Values without a logical type, or
 * that do not have the shape their logical type promises, are left as they are (the row conversion
 * then refuses them with the reason). Nanoseconds are floored to microseconds (Iceberg v2's unit).
 * The text is written by the formats layer's exact formatters (formats/value-text.ts), as for Avro.
 */
import { integerOf } from '../mapping/evolution/infer-type.js';
import {
  bigintFromTwosComplement,
  formatDecimal,
  formatEpochDate,
  formatEpochValue,
  formatTimeOfDay,
} from '../formats/value-text.js';
import { JsonNumberText } from '../records/json-to-value.js';
import { floorDivBig } from '../spec/epoch-time.js';
import type { PrimitiveType } from '../spec/types.js';

interface ConnectSchema {
  type?: unknown;
  name?: unknown;
  parameters?: unknown;
  fields?: unknown;
  items?: unknown;
  field?: unknown;
}

function asSchema(v: unknown): ConnectSchema | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as ConnectSchema) : undefined;
}

/** A big-endian two's-complement integer (Connect's Decimal) from base64. */
function unscaledOf(base64: unknown): bigint | undefined {
  if (typeof base64 !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(base64)) return undefined;
  return bigintFromTwosComplement(Buffer.from(base64, 'base64'));
}

function decimal(unscaled: bigint | undefined, scale: unknown): JsonNumberText | undefined {
  const s = typeof scale === 'string' ? Number(scale) : scale;
  if (unscaled === undefined || typeof s !== 'number' || !Number.isInteger(s)) return undefined;
  return new JsonNumberText(formatDecimal(unscaled, s));
}

const timestampText = (micros: bigint) => formatEpochValue(micros, 'micros', true);
const timeText = (micros: bigint) => formatTimeOfDay(micros, 'micros');

/** A value of a logical type in the form the row conversion reads; undefined: leave it as it is. */
function logicalValue(name: string, schema: ConnectSchema, v: unknown): unknown {
  const params = asSchema(schema.parameters) as Record<string, unknown> | undefined;
  // An integer count of some unit → text of the microseconds it is.
  const counted = (toMicros: (n: bigint) => bigint, text: (micros: bigint) => string | undefined) => {
    const n = integerOf(v);
    return n === undefined ? undefined : text(toMicros(n));
  };
  const millis = (n: bigint) => n * 1000n;
  const micros = (n: bigint) => n;
  const nanos = (n: bigint) => floorDivBig(n, 1000n);
  switch (name) {
    case 'org.apache.kafka.connect.data.Decimal':
      return decimal(unscaledOf(v), params?.scale);
    case 'io.debezium.data.VariableScaleDecimal': {
      const s = asSchema(v) as Record<string, unknown> | undefined;
      return s ? decimal(unscaledOf(s.value), s.scale) : undefined;
    }
    case 'org.apache.kafka.connect.data.Date':
    case 'io.debezium.time.Date': {
      const days = integerOf(v);
      return days === undefined ? undefined : formatEpochDate(Number(days));
    }
    case 'io.debezium.time.MicroTimestamp':
      return counted(micros, timestampText);
    case 'io.debezium.time.NanoTimestamp':
      return counted(nanos, timestampText);
    case 'org.apache.kafka.connect.data.Time':
    case 'io.debezium.time.Time':
      return counted(millis, timeText);
    case 'io.debezium.time.MicroTime':
      return counted(micros, timeText);
    case 'io.debezium.time.NanoTime':
      return counted(nanos, timeText);
    default:
      // Timestamp (epoch ms: floe's reading of a number), ZonedTimestamp (ISO text), ... as they are.
      return undefined;
  }
}

/**
 * A Connect payload rewritten by its schema (structs field by field, arrays element by element, maps
 * value by value); anything the schema does not describe stays as it is.
 */
export function fromConnectSchema(schema: unknown, value: unknown, depth = 0): unknown {
  const s = asSchema(schema);
  if (!s || value === null || value === undefined || depth > 64) return value;
  if (typeof s.name === 'string') {
    const logical = logicalValue(s.name, s, value);
    if (logical !== undefined) return logical;
  }
  if (
    s.type === 'struct' &&
    Array.isArray(s.fields) &&
    asSchema(value) &&
    !(value instanceof JsonNumberText)
  ) {
    const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    for (const f of s.fields) {
      const field = asSchema(f);
      if (typeof field?.field === 'string' && Object.hasOwn(out, field.field)) {
        out[field.field] = fromConnectSchema(field, out[field.field], depth + 1);
      }
    }
    return out;
  }
  if (s.type === 'array' && Array.isArray(value)) {
    return value.map((item) => fromConnectSchema(s.items, item, depth + 1));
  }
  return value;
}

/** The Iceberg type of a Connect field's logical type; undefined: the value decides (e.g. variable scale). */
function logicalType(name: string, params: Record<string, unknown> | undefined): PrimitiveType | undefined {
  switch (name) {
    case 'org.apache.kafka.connect.data.Decimal': {
      const scale = Number(params?.scale);
      const declared = Number(params?.['connect.decimal.precision']);
      if (!Number.isInteger(scale) || scale < 0 || scale > 38) return undefined;
      // Without a declared precision the widest decimal holds every value of that scale.
      const precision =
        Number.isInteger(declared) && declared >= Math.max(1, scale) && declared <= 38 ? declared : 38;
      return `decimal(${precision}, ${scale})`;
    }
    case 'org.apache.kafka.connect.data.Date':
    case 'io.debezium.time.Date':
      return 'date';
    // Debezium's (Micro|Nano)Timestamp are the column's wall-clock time, without a zone.
    case 'org.apache.kafka.connect.data.Timestamp':
    case 'io.debezium.time.Timestamp':
    case 'io.debezium.time.MicroTimestamp':
    case 'io.debezium.time.NanoTimestamp':
      return 'timestamp';
    case 'io.debezium.time.ZonedTimestamp':
      return 'timestamptz';
    case 'org.apache.kafka.connect.data.Time':
    case 'io.debezium.time.Time':
    case 'io.debezium.time.MicroTime':
    case 'io.debezium.time.NanoTime':
      return 'time';
    case 'io.debezium.data.Uuid':
      return 'uuid';
    default:
      return undefined;
  }
}

const CONNECT_PRIMITIVES: Record<string, PrimitiveType> = {
  int8: 'int',
  int16: 'int',
  int32: 'int',
  int64: 'long',
  float32: 'float',
  float64: 'double',
  boolean: 'boolean',
  string: 'string',
  bytes: 'binary',
};

/**
 * The Iceberg types a Connect struct schema gives its primitive fields, by field name: what schema
 * evolution uses for a column the table does not have yet, instead of guessing from the rewritten
 * value (a date's ISO text would become a string column, a decimal a double). Fields whose type the
 * schema does not fix (structs, arrays, maps, variable-scale decimals, unknown logical types) are left
 * out: their values decide.
 */
export function connectFieldTypes(schema: unknown): Map<string, PrimitiveType> {
  const out = new Map<string, PrimitiveType>();
  const s = asSchema(schema);
  if (s?.type !== 'struct' || !Array.isArray(s.fields)) return out;
  for (const f of s.fields) {
    const field = asSchema(f);
    if (typeof field?.field !== 'string') continue;
    const params = asSchema(field.parameters) as Record<string, unknown> | undefined;
    const type =
      typeof field.name === 'string'
        ? logicalType(field.name, params)
        : typeof field.type === 'string'
          ? CONNECT_PRIMITIVES[field.type]
          : undefined;
    if (type) out.set(field.field, type);
  }
  return out;
}
