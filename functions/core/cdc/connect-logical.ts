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
 */
import { JsonNumberText } from '../ingest/json-to-value.js';

interface ConnectSchema {
  type?: unknown;
  name?: unknown;
  parameters?: unknown;
  fields?: unknown;
  items?: unknown;
  field?: unknown;
}

const DAY_MS = 86_400_000n;

function asSchema(v: unknown): ConnectSchema | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as ConnectSchema) : undefined;
}

/** An integer JSON value (number, or number text for 16+ digits) as a bigint. */
function integerOf(v: unknown): bigint | undefined {
  if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
  if (typeof v === 'bigint') return v;
  if (v instanceof JsonNumberText && /^-?\d+$/.test(v.text)) return BigInt(v.text);
  return undefined;
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

/** A big-endian two's-complement integer (Connect's Decimal) from base64. */
function unscaledOf(base64: unknown): bigint | undefined {
  if (typeof base64 !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(base64)) return undefined;
  const bytes = Buffer.from(base64, 'base64');
  if (bytes.length === 0) return 0n;
  const unsigned = BigInt(`0x${bytes.toString('hex')}`);
  return bytes[0] & 0x80 ? unsigned - (1n << BigInt(bytes.length * 8)) : unsigned;
}

/** The unscaled value at a scale as plain decimal text ("-12.30"). */
function decimalText(unscaled: bigint, scale: number): string {
  const negative = unscaled < 0n;
  const digits = (negative ? -unscaled : unscaled).toString();
  if (scale <= 0) return `${negative ? '-' : ''}${digits}${'0'.repeat(-scale)}`;
  const padded = digits.padStart(scale + 1, '0');
  return `${negative ? '-' : ''}${padded.slice(0, -scale)}.${padded.slice(-scale)}`;
}

function decimal(unscaled: bigint | undefined, scale: unknown): JsonNumberText | undefined {
  const s = typeof scale === 'string' ? Number(scale) : scale;
  if (unscaled === undefined || typeof s !== 'number' || !Number.isInteger(s)) return undefined;
  return new JsonNumberText(decimalText(unscaled, s));
}

/** ISO-8601 text of microseconds since the epoch (undefined beyond what Date can show). */
function timestampText(micros: bigint): string | undefined {
  const ms = floorDiv(micros, 1000n);
  const date = new Date(Number(ms));
  if (Number.isNaN(date.getTime())) return undefined;
  const sub = String(micros - ms * 1000n).padStart(3, '0');
  return `${date.toISOString().slice(0, -1)}${sub}Z`;
}

function dateText(days: bigint): string | undefined {
  const date = new Date(Number(days * DAY_MS));
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString().slice(0, 10);
}

/** HH:MM:SS.ffffff of microseconds of the day. */
function timeText(micros: bigint): string | undefined {
  if (micros < 0n || micros >= DAY_MS * 1000n) return undefined;
  const two = (n: bigint) => String(n).padStart(2, '0');
  const seconds = micros / 1_000_000n;
  const fraction = String(micros % 1_000_000n).padStart(6, '0');
  return `${two(seconds / 3600n)}:${two((seconds / 60n) % 60n)}:${two(seconds % 60n)}.${fraction}`;
}

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
  const nanos = (n: bigint) => floorDiv(n, 1000n);
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
      return days === undefined ? undefined : dateText(days);
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
