/**
 * JSON values → Iceberg values of a declared type, without silent loss: integers must fit, decimals
 * are converted from their text (never through a float), timestamps are parsed to exact microseconds.
 * Every refusal is a RecordDecodeError naming the field path, which sends the record to the DLQ.
 */
import { RecordDecodeError } from '../errors.js';
import { floorDivBig } from '../spec/epoch-time.js';
import { decimalParams, fixedLength, uuidToBytes } from '../spec/conversions.js';
import type { IcebergType, ListType, MapType, Row, StructType, Value } from '../spec/types.js';
import { parseDecimalText } from './decimal-text.js';
import { parseIsoDate, parseIsoTime, parseIsoTimestamp } from './parse-temporal.js';

/** A JSON number's exact text, kept when JSON.parse would round it (see parse-json.ts). */
export class JsonNumberText {
  constructor(readonly text: string) {}
}

const INT_MIN = -(2 ** 31);
const INT_MAX = 2 ** 31 - 1;
const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;
const MAX_DEPTH = 64;

function fail(path: string, message: string): never {
  throw new RecordDecodeError(`${path}: ${message}`, 'map');
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (v instanceof JsonNumberText) return `the number ${v.text}`;
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  return `${typeof v} ${String(v)}`;
}

function numberText(v: unknown): string | undefined {
  if (v instanceof JsonNumberText) return v.text;
  // Decoders of typed formats (Avro longs, ...) hand over bigints; they are exact integers.
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : undefined;
  return undefined;
}

/** Number text as a float/double column reads it (a JSON number, or a number spelt as a string). */
const FLOAT_TEXT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * The double of a JSON number's text, a bigint, or a string that spells a number: `"1.5"`, `"-0.0"`,
 * `"1e3"`, and `"NaN"`, `"Infinity"`, `"-Infinity"`, the only way JSON (and floe's Avro and Protobuf
 * decoders) can carry those. One rule for every string: a float/double column takes a string exactly
 * when it spells a number, so refusing `"1.5"` while taking `"NaN"` is gone, and nothing a producer
 * could send before is refused now. Surrounding whitespace is allowed, as for decimal text.
 * undefined for anything else.
 */
export function doubleOf(v: unknown): number | undefined {
  if (v instanceof JsonNumberText) return Number(v.text);
  if (typeof v === 'bigint') return Number(v);
  if (typeof v !== 'string') return undefined;
  const text = v.trim();
  if (text === 'NaN') return Number.NaN;
  if (text === 'Infinity' || text === '+Infinity') return Number.POSITIVE_INFINITY;
  if (text === '-Infinity') return Number.NEGATIVE_INFINITY;
  return FLOAT_TEXT.test(text) ? Number(text) : undefined;
}

function toLong(v: unknown, path: string, what: string): bigint {
  const text = numberText(v);
  if (text === undefined || !/^-?\d+$/.test(text)) {
    if (typeof v === 'number' && Number.isInteger(v)) {
      // Large doubles print in exponent form (1e+21): still integers, but they must be range-checked too.
      const n = BigInt(v);
      if (n < LONG_MIN || n > LONG_MAX) fail(path, `${String(v)} is out of range for a long`);
      return n;
    }
    fail(path, `expected an integer${what ? ` ${what}` : ''}, got ${describe(v)}`);
  }
  const n = BigInt(text);
  if (n < LONG_MIN || n > LONG_MAX) fail(path, `${text} is out of range for a long`);
  return n;
}

/** `local`: for a `timestamp` column (no zone), whose text may not carry a nonzero offset. */
function toEpochMicros(v: unknown, path: string, local = false): bigint {
  if (typeof v === 'string') {
    let micros: bigint;
    try {
      micros = parseIsoTimestamp(v, local);
    } catch (error) {
      fail(path, (error as Error).message);
    }
    // Six-digit ISO years parse, but most of them do not fit Iceberg's 64-bit microseconds.
    if (micros < LONG_MIN || micros > LONG_MAX) fail(path, `'${v}' is out of the timestamp range`);
    return micros;
  }
  // Numbers are epoch milliseconds (Kafka's and most producers' convention).
  const ms = toLong(v, path, 'epoch milliseconds or an ISO-8601 string');
  const micros = ms * 1000n;
  if (micros < LONG_MIN || micros > LONG_MAX) fail(path, `${ms} ms is out of the timestamp range`);
  return micros;
}

function toBytes(v: unknown, path: string): Uint8Array {
  // Bytes decoded from a typed format (Avro bytes, a header) arrive as they are.
  if (v instanceof Uint8Array) return v;
  if (typeof v !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(v))
    fail(path, `expected base64 bytes, got ${describe(v)}`);
  const buf = Buffer.from(v, 'base64');
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}

function toPrimitive(type: string, v: unknown, path: string): Value {
  switch (type) {
    case 'boolean':
      if (typeof v !== 'boolean') fail(path, `expected a boolean, got ${describe(v)}`);
      return v;
    case 'int': {
      const n = Number(toLong(v, path, ''));
      if (n < INT_MIN || n > INT_MAX) fail(path, `${n} is out of range for an int`);
      return n;
    }
    case 'long':
      return toLong(v, path, '');
    case 'float':
    case 'double': {
      // A number as it is (String() would turn -0 into "0" and lose its sign); text for the rest.
      const n = typeof v === 'number' ? (Number.isFinite(v) ? v : undefined) : doubleOf(v);
      if (n === undefined) fail(path, `expected a number, got ${describe(v)}`);
      const shown = typeof v === 'string' ? v.trim() : (numberText(v) ?? String(v));
      // Only the words NaN and Infinity mean those; a number too large is not Infinity.
      if (!Number.isFinite(n) && !(typeof v === 'string' && /^[+-]?Infinity$|^NaN$/.test(shown)))
        fail(path, `${shown} is out of range for a ${type}`);
      if (type === 'float' && Number.isFinite(n) && !Number.isFinite(Math.fround(n)))
        fail(path, `${shown} overflows a float`);
      return type === 'float' ? Math.fround(n) : n;
    }
    case 'date':
      if (typeof v === 'string') {
        try {
          if (v.length <= 10 || v[10] !== 'T') return parseIsoDate(v);
          // A date-time gives its written date; the rest must still be a valid time and offset.
          parseIsoTimestamp(v);
          return parseIsoDate(v.slice(0, 10));
        } catch (error) {
          fail(path, (error as Error).message);
        }
      }
      return Number(floorDivBig(toEpochMicros(v, path), 86_400_000_000n));
    case 'time':
      if (typeof v !== 'string') fail(path, `expected a time of day (HH:MM:SS), got ${describe(v)}`);
      try {
        return parseIsoTime(v);
      } catch (error) {
        fail(path, (error as Error).message);
      }
      break;
    case 'timestamp':
      return toEpochMicros(v, path, true);
    case 'timestamptz':
      return toEpochMicros(v, path);
    case 'string':
      if (typeof v !== 'string') fail(path, `expected a string, got ${describe(v)}`);
      // JSON may escape half a surrogate pair ("\ud800"); UTF-8 cannot hold it, so Parquet would
      // silently store U+FFFD instead. Refuse it rather than alter the text.
      if (!v.isWellFormed()) fail(path, 'the string holds an unpaired UTF-16 surrogate (not valid Unicode)');
      return v;
    case 'uuid':
      if (typeof v !== 'string') fail(path, `expected a uuid string, got ${describe(v)}`);
      try {
        uuidToBytes(v);
      } catch {
        fail(path, `'${v}' is not a uuid`);
      }
      return v.toLowerCase();
    case 'binary':
      return toBytes(v, path);
  }
  const dec = decimalParams(type as IcebergType);
  if (dec) {
    const text = numberText(v) ?? (typeof v === 'string' ? v : undefined);
    if (text === undefined) fail(path, `expected a decimal number, got ${describe(v)}`);
    return parseDecimalText(text, dec.precision, dec.scale, path);
  }
  const len = fixedLength(type as IcebergType);
  if (len !== undefined) {
    const bytes = toBytes(v, path);
    if (bytes.length !== len) fail(path, `expected ${len} bytes, got ${bytes.length}`);
    return bytes;
  }
  return fail(path, `unsupported type ${type}`);
}

/**
 * Converts a JSON value to the Value of an Iceberg type. `null`/missing → null (the caller checks
 * required fields). @throws RecordDecodeError
 */
export function jsonToValue(type: IcebergType, v: unknown, path: string, depth = 0): Value {
  if (v === null || v === undefined) return null;
  if (depth > MAX_DEPTH) fail(path, `nested deeper than ${MAX_DEPTH} levels`);
  if (typeof type === 'string') return toPrimitive(type, v, path);
  if (type.type === 'struct') {
    if (typeof v !== 'object' || Array.isArray(v) || v instanceof JsonNumberText) {
      fail(path, `expected an object, got ${describe(v)}`);
    }
    return jsonToRow(type, v as Record<string, unknown>, path, depth + 1);
  }
  if (type.type === 'list') return toList(type, v, path, depth);
  return toMap(type, v, path, depth);
}

function toList(type: ListType, v: unknown, path: string, depth: number): Value[] {
  if (!Array.isArray(v)) fail(path, `expected an array, got ${describe(v)}`);
  return v.map((item, i) => {
    const value = jsonToValue(type.element, item, `${path}[${i}]`, depth + 1);
    if (value === null && type['element-required']) fail(`${path}[${i}]`, 'element is required but null');
    return value;
  });
}

function toMap(type: MapType, v: unknown, path: string, depth: number): Map<Value, Value> {
  const out = new Map<Value, Value>();
  if (Array.isArray(v)) {
    // [{ "key": ..., "value": ... }] for maps whose keys are not strings
    v.forEach((e, i) => {
      const entry = e as { key?: unknown; value?: unknown } | null;
      if (!entry || typeof entry !== 'object' || !('key' in entry))
        fail(`${path}[${i}]`, 'expected { key, value }');
      const key = jsonToValue(type.key, entry.key, `${path}[${i}].key`, depth + 1);
      if (key === null) fail(`${path}[${i}].key`, 'map keys cannot be null');
      out.set(key, jsonToValue(type.value, entry.value, `${path}[${i}].value`, depth + 1));
    });
    return out;
  }
  if (typeof v !== 'object' || v instanceof JsonNumberText)
    fail(path, `expected an object or array of entries, got ${describe(v)}`);
  for (const [k, item] of Object.entries(v as Record<string, unknown>)) {
    const key = type.key === 'string' ? k : jsonToValue(type.key, k, `${path}.${k}`, depth + 1);
    const value = jsonToValue(type.value, item, `${path}.${k}`, depth + 1);
    if (value === null && type['value-required']) fail(`${path}.${k}`, 'value is required but null');
    out.set(key, value);
  }
  return out;
}

/** A JSON object → Row of a struct type; extra JSON fields are ignored, missing optional ones are null. */
export function jsonToRow(type: StructType, obj: Record<string, unknown>, path = '', depth = 0): Row {
  const row: Row = {};
  for (const field of type.fields) {
    const fieldPath = path ? `${path}.${field.name}` : field.name;
    // Own fields only: a record without `constructor` must not read Object.prototype's.
    const raw = Object.hasOwn(obj, field.name) ? obj[field.name] : undefined;
    const value = jsonToValue(field.type, raw, fieldPath, depth);
    if (value === null && field.required) fail(fieldPath, 'is required but missing or null');
    row[field.name] = value;
  }
  return row;
}

/** A short description of a decoded value for error messages (strings cut at 40 characters). */
export function describeJsonValue(v: unknown): string {
  return describe(v);
}
